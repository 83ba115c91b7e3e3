"""Elastic jobs on the Pollux study's workloads: mean JCT per workload and policy.

Runs the eight 160-job workloads (``workload-1.csv`` ... ``workload-8.csv``, shipped) with
each elastic policy on 16 nodes x 4 GPUs (60 s rounds, 30 s restarts), checks
every run with the independent check (:func:`ddlsched.proofs_checks.elastic.check_elastic`),
and prints: the throughput fit's error per model, the mean JCT and the flow ratio
(:mod:`ddlsched.formulations.elastic_bounds`) per workload
and policy, the published workload-6 figures beside ours, and each policy's
median wall-clock time per round (the only figures that depend on the
machine; never asserted).

Usage::

    python benchmarks/bench_elastic.py                    # all 8 workloads
    python benchmarks/bench_elastic.py --workloads 6      # workload 6 only
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from ddlsched.algorithms.elastic import ELASTIC_POLICIES, simulate_elastic
from ddlsched.formulations.elastic_bounds import elastic_flow_bound
from ddlsched.proofs_checks.elastic import check_elastic

from ddlsched.core.data import data_path
from ddlsched.core.elastic import MODELS, ElasticCluster, load_application, load_pollux_workload

PUBLISHED_WORKLOAD6 = {"pollux": 2446.0, "las-pollux": 3470.0}
"""Mean JCT (s) on workload 6 in the Pollux paper (Qiao et al., OSDI 2021): Pollux, Tiresias."""
FIDELITY = {"pollux": 0.15, "las-pollux": 0.20}
"""The relative gap to the published figure we aim for."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, nargs="*", default=list(range(1, 9)))
    parser.add_argument("--policies", nargs="*", default=list(ELASTIC_POLICIES.names()))
    args = parser.parse_args()
    ELASTIC_POLICIES.check(args.policies, "--policies")

    print("Throughput fit: relative error of the step time over the profiles")
    print(f"{'model':<12} {'rows':>5} {'median':>8} {'worst':>8}")
    for model in MODELS:
        fit = load_application(model).fit
        print(f"{model:<12} {fit.rows:>5} {fit.median:>8.1%} {fit.worst:>8.1%}")

    cluster = ElasticCluster(16, 4)
    table: dict[int, dict[str, float]] = {}
    ratios: dict[int, dict[str, float]] = {}
    round_seconds: dict[str, list[float]] = {name: [] for name in args.policies}
    for number in args.workloads:
        workload = load_pollux_workload(data_path("pollux", "workloads", f"workload-{number}.csv"))
        table[number], ratios[number] = {}, {}
        bound = elastic_flow_bound(workload.jobs, cluster.total_gpus)
        for name in args.policies:
            started = time.perf_counter()
            result = simulate_elastic(workload, ELASTIC_POLICIES[name](), cluster)
            wall = time.perf_counter() - started
            problems = check_elastic(result)
            assert not problems, problems[:3]
            table[number][name] = result.mean_jct
            ratios[number][name] = math.fsum(result.jct.values()) / bound.value
            round_seconds[name].extend(result.decision_seconds)
            print(
                f"workload-{number} {name:<11} mean JCT {result.mean_jct:8.0f} s  "
                f"({len(result.records)} rounds, {sum(result.restarts.values())} (re)starts, "
                f"{wall:.1f} s wall)",
                flush=True,
            )

    print()
    print("Mean JCT (s) per workload and policy")
    print(f"{'workload':<10}" + "".join(f"{name:>15}" for name in args.policies))
    for number, row in table.items():
        print(f"{number:<10}" + "".join(f"{row[name]:>15.0f}" for name in args.policies))
    if len(table) > 1:
        means = {n: statistics.mean(row[n] for row in table.values()) for n in args.policies}
        print(f"{'mean':<10}" + "".join(f"{means[n]:>15.0f}" for n in args.policies))
    print()
    print(
        "Flow ratio (total JCT over ddlsched.formulations.elastic_bounds' lower bound, "
        "valid for any "
        "run of this simulator)"
    )
    print(f"{'workload':<10}" + "".join(f"{name:>15}" for name in args.policies))
    for number, row in ratios.items():
        print(f"{number:<10}" + "".join(f"{row[name]:>15.2f}" for name in args.policies))
    if 6 in table:
        print()
        print("Workload 6 against the Pollux paper")
        for name, published in PUBLISHED_WORKLOAD6.items():
            if name in table[6]:
                ours = table[6][name]
                gap = ours / published - 1
                verdict = "within" if abs(gap) <= FIDELITY[name] else "outside"
                print(
                    f"{name:<11} ours {ours:6.0f} s  published {published:6.0f} s  "
                    f"gap {gap:+.1%} ({verdict} the {FIDELITY[name]:.0%} target)"
                )
    print()
    print("Wall-clock time per round (machine-dependent, never asserted)")
    for name, seconds in round_seconds.items():
        if seconds:
            print(
                f"{name:<14} median {statistics.median(seconds) * 1000:8.3f} ms "
                f"(max {max(seconds) * 1000:6.0f} ms) over {len(seconds)} rounds"
            )


if __name__ == "__main__":
    main()
