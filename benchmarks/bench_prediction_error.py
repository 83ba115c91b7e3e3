"""Guided A-SRPT under prediction error: the bound's worst ratios, its tightness, the trace study.

Three tables (docs/prediction_bound.md quotes them):

1. the theorem of ``ddlsched.proofs_checks.prediction`` on generated tiny instances whose
   ``OPT(A)`` the brute-force oracle of ``tests/oracles.py`` proves, per error
   ``E``: the worst ``lhs / rhs`` over all-over, all-under and seeded random
   perturbations, and over the worst of every extreme assignment (3^n runs);
2. the under-prediction family: ``sum C / OPT(A)`` against the bound ``2 + b``;
3. the error study on trace slices: mean, median and 95th-percentile JCT of
   guided and greedy A-SRPT, SJF with the same predictions, LAS and FIFO per
   error level, the error at which LAS's mean (median) JCT drops below guided
   A-SRPT's, and where their JCT CDFs cross.

It asserts only correctness (every conclusive check holds), never a time.

    python benchmarks/bench_prediction_error.py --instances 200 --jobs 2000
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from ddlsched.proofs_checks.bounds import rho_of
from ddlsched.proofs_checks.claims import ClaimStatus, Value
from ddlsched.proofs_checks.prediction import prediction_theorem1

from ddlsched import Cluster, GeneratorConfig, generate
from ddlsched.experiments.prediction_error import (
    error_study,
    guided_schedule,
    prediction_records,
    trace_slice,
    under_prediction_family,
    worst_predictions,
)
from tests.oracles import brute_force_a

ERRORS = (0.0, 0.5, 1.0, 2.0)
TRACES = ("philly_jobs.csv", "muri_trace1.csv", "muri_trace2.csv")


def bound_table(instances: int, errors: tuple[float, ...]) -> pd.DataFrame:
    """Worst ``lhs / rhs`` per error level over ``instances`` tiny instances."""
    config = GeneratorConfig.exact_friendly(4, 2, 2, load=1.0).replace(
        max_iterations=6, duration_slots=(1, 3)
    )
    rows = []
    for error in errors:
        worst = {"over": 0.0, "under": 0.0, "random": 0.0, "search": 0.0, "instance (*)": 0.0}
        for seed in range(instances):
            instance = generate(config, seed)
            rho = rho_of(instance)
            if not rho.exact:
                continue
            opt_a = Value(brute_force_a(instance), True)
            for record in prediction_records(instance, error, opt_a, rho, seed=seed):
                assert record.status is ClaimStatus.HOLDS, (record.name, seed)
                how = record.name.split("[", 1)[1].split()[0]
                if record.name.startswith("prediction_theorem1"):
                    worst[how] = max(worst[how], record.ratio)
                else:
                    worst["instance (*)"] = max(worst["instance (*)"], record.ratio)
            searched, _ = worst_predictions(instance, error, opt_a, rho)
            assert searched.status is ClaimStatus.HOLDS, (searched.name, seed)
            worst["search"] = max(worst["search"], searched.ratio)
        rows.append({"E": error, **worst})
    return pd.DataFrame(rows).set_index("E")


def family_table() -> pd.DataFrame:
    """``sum C / OPT(A)`` on the under-prediction family against ``2 + b``."""
    rows = []
    for under, head, smalls in (
        (1, 1000, 30),
        (2, 1000, 30),
        (4, 2000, 60),
        (10, 4000, 120),
        (30, 4000, 200),
        (100, 8000, 800),
    ):
        instance, predictions, opt = under_prediction_family(under, head, smalls)
        schedule = guided_schedule(instance, predictions)
        record = prediction_theorem1(
            instance, schedule, predictions, Value(opt, True), rho_of(instance)
        )
        assert record.status is ClaimStatus.HOLDS
        rows.append(
            {
                "b": under,
                "head": head,
                "smalls": smalls,
                "sum C / OPT(A)": record.lhs / opt,
                "1 + b": 1 + under,
                "bound 2 + b": record.bound,
                "lhs / rhs": record.ratio,
            }
        )
    return pd.DataFrame(rows).set_index("b")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=100, help="tiny instances per E")
    parser.add_argument("--jobs", type=int, default=1000, help="jobs per trace slice")
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--seeds", type=int, default=3, help="perturbation seeds per level")
    args = parser.parse_args()
    pd.set_option("display.width", 160)

    began = time.perf_counter()
    print(f"== worst lhs/rhs of the theorem ({args.instances} instances per E) ==")
    print(bound_table(args.instances, ERRORS).round(4).to_string())
    print("\n== the under-prediction family (a = 1, rho = 1, kappa = 1) ==")
    print(family_table().round(4).to_string())

    cluster = Cluster.uniform(args.servers, args.gpus_per_server, 20.0, 1.0)
    errors = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)
    for name in TRACES:
        instance = trace_slice(name, args.jobs, cluster, args.load)
        study = error_study(instance, errors, seeds=tuple(range(args.seeds)))
        print(
            f"\n== {name}: first {instance.num_jobs} jobs on {args.servers}x"
            f"{args.gpus_per_server} GPUs, offered load {args.load} =="
        )
        table = study.summary().unstack("error")["mean_jct"]
        print("mean JCT (s) per error E:")
        print(table.round(0).to_string())
        print("median JCT (s) per error E:")
        print(study.summary().unstack("error")["p50_jct"].round(0).to_string())
        for incumbent in ("asrpt", "asrpt-greedy"):
            print(
                f"LAS below {incumbent}: mean from E = "
                f"{study.crossover(incumbent=incumbent)}, median from E = "
                f"{study.crossover(incumbent=incumbent, statistic='p50_jct')}"
            )
        for error in (0.0, 2.0):
            crossings = ", ".join(
                f"{leader} from {x:,.0f} s" for x, leader in study.cdf_crossings(error)
            )
            print(f"CDF leader (LAS vs guided A-SRPT) at E = {error}: {crossings}")
    print(f"\nwall time {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
