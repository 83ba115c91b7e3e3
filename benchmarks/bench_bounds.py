"""Tightness of the lower bounds: LB / OPT per bound on generated integral instances.

For each cluster shape and job count, several seeds of ``GeneratorConfig.exact_friendly``
(Poisson arrivals at load 1) are solved exactly (MILP, HiGHS); every bound of
:mod:`ddlsched.formulations.lower_bounds` is divided by the proven optimum (instances the
MILP does not prove are skipped and counted). Prints the median and worst ratio per
bound, and of the best one, and the same for the flow time (total JCT): the best flow
bound over ``OPT - sum w r``. Two families: ``spread`` (Poisson arrivals at ``--load``) and
``batch`` (all released at 0). Asserts only validity (every ratio <= 1), never a time.

    python benchmarks/bench_bounds.py --families spread batch --shapes 4x4 --jobs 10 16 --seeds 5
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from ddlsched.formulations.lower_bounds import BOUNDS, LpSettings, lower_bounds

from ddlsched import ExactParams, GeneratorConfig, generate, solve
from ddlsched.api import best_policy_objective
from ddlsched.core.result import best_lower_bound


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=["2x4", "3x4", "4x4"])
    parser.add_argument("--jobs", nargs="+", type=int, default=[6, 10, 16, 20])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--load", type=float, default=1.0)
    parser.add_argument("--families", nargs="+", default=["spread"], choices=["spread", "batch"])
    parser.add_argument("--method", default="milp", choices=["milp", "cpsat", "exact"])
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    names = [*BOUNDS.names(), "lp", "best", "best flow"]
    print(
        f"# LB / OPT, {platform.machine()}, {time.strftime('%Y-%m-%d')}, load {args.load}, "
        f"{args.seeds} seeds, MILP limit {args.time_limit:g} s"
    )
    print(
        "| family | cluster | jobs | proven | "
        + " | ".join(f"{n} median / worst" for n in names)
        + " |"
    )
    print("| --- | --- | --- | --- | " + " | ".join("---" for _ in names) + " |")
    for family, shape in ((f, s) for f in args.families for s in args.shapes):
        servers, gpus = (int(x) for x in shape.split("x"))
        for jobs in args.jobs:
            ratios: dict[str, list[float]] = {n: [] for n in names}
            proven = 0
            for seed in range(args.seeds):
                load = args.load if family == "spread" else None
                config = GeneratorConfig.exact_friendly(jobs, servers, gpus, load)
                instance = generate(config, seed)
                optimum = solve(
                    instance,
                    args.method,
                    params=ExactParams(time_limit=args.time_limit),
                    bound=False,
                )
                if not optimum.proven_optimal:
                    continue
                proven += 1
                upper = best_policy_objective(instance)
                found = lower_bounds(
                    instance, lp=LpSettings(max_variables=100_000), upper_bound=upper
                )
                for bound in found:
                    ratio = bound.value / optimum.objective
                    assert ratio <= 1 + 1e-9, (shape, jobs, seed, bound)
                    ratios[bound.name].append(ratio)
                best = best_lower_bound(found)
                if best is not None:
                    ratios["best"].append(best.value / optimum.objective)
                    flow = best.flow_value / optimum.total_flow_time
                    assert flow <= 1 + 1e-9, (shape, jobs, seed, best)
                    ratios["best flow"].append(flow)
            cells = [
                f"{statistics.median(ratios[n]):.3f} / {min(ratios[n]):.3f}" if ratios[n] else "-"
                for n in names
            ]
            print(
                f"| {family} | {shape} | {jobs} | {proven}/{args.seeds} | "
                + " | ".join(cells)
                + " |",
                flush=True,
            )


if __name__ == "__main__":
    main()
