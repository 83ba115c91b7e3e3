"""Elastic jobs on a mixed-GPU cluster: Sia against type-unaware Pollux on the Pollux workloads.

Runs the eight 160-job workloads (``workload-1.csv`` ... ``workload-8.csv``, shipped) on a
typed cluster (default ``v100:6,p100:5,k80:5`` nodes of 4 GPUs, 64 GPUs; 60 s rounds,
30 s restarts) with each policy, checks every run with the independent check
(:func:`ddlsched.proofs_checks.elastic.check_elastic`, which recomputes per-type speeds
from Gavel's file), and prints: each Pollux model's Gavel match and slowdowns with their
spread over Gavel's batch sizes (the mapping's error), the mean JCT and restarts per
workload and policy, and each policy's median wall-clock time per round (the only figures
that depend on the machine; never asserted).

Usage::

    python benchmarks/bench_elastic_typed.py                      # all 8 workloads
    python benchmarks/bench_elastic_typed.py --workloads 6 --policies sia pollux
"""

from __future__ import annotations

import argparse
import statistics
import time

from ddlsched.algorithms.elastic import ELASTIC_POLICIES, ElasticResult, simulate_elastic
from ddlsched.proofs_checks.elastic import check_elastic

from ddlsched.core.data import data_path
from ddlsched.core.elastic import (
    GAVEL_MATCH,
    MODELS,
    ElasticCluster,
    load_pollux_workload,
    slowdown_spread,
    type_slowdowns,
)

DEFAULT_TYPES = "v100:6,p100:5,k80:5"
"""The mixed cluster of the Sia comparison: 16 nodes, 6 V100, 5 P100 and 5 K80."""


def _type_counts(text: str) -> list[tuple[str, int]]:
    pairs = [item.partition(":") for item in text.split(",")]
    return [(name.strip(), int(count)) for name, _, count in pairs]


def print_mapping() -> None:
    """Each Pollux model's Gavel match, slowdowns (geometric mean) and their spread."""
    print("GPU-type slowdowns (seconds per iteration over the fastest type's; Gavel, one GPU)")
    print(f"{'model':<12} {'gavel model':<15} {'same':<5} {'p100':>18} {'k80':>18}")
    for model in MODELS:
        gavel, same = GAVEL_MATCH[model]
        slow, spread = type_slowdowns(model), slowdown_spread(model)
        cells = [
            f"{slow[t]:5.2f} ({spread[t][0]:.2f}-{spread[t][1]:.2f})" for t in ("p100", "k80")
        ]
        kind = "yes" if same else "proxy"
        print(f"{model:<12} {gavel:<15} {kind:<5} {cells[0]:>18} {cells[1]:>18}")


def run_one(number: int, name: str, cluster: ElasticCluster) -> ElasticResult:
    """One workload under one policy, checked (an assertion: a failed check stops the run)."""
    workload = load_pollux_workload(data_path("pollux", "workloads", f"workload-{number}.csv"))
    started = time.perf_counter()
    result = simulate_elastic(workload, ELASTIC_POLICIES[name](), cluster)
    wall = time.perf_counter() - started
    problems = check_elastic(result)
    assert not problems, problems[:3]
    print(
        f"workload-{number} {name:<13} mean JCT {result.mean_jct:8.0f} s  "
        f"({len(result.records)} rounds, {sum(result.restarts.values())} (re)starts, "
        f"median round {statistics.median(result.decision_seconds) * 1000:.1f} ms, "
        f"{wall:.1f} s wall, verified)",
        flush=True,
    )
    return result


def print_tables(results: dict[int, dict[str, ElasticResult]], policies: list[str]) -> None:
    """Mean JCT and restarts per workload and policy; Sia against Pollux; time per round."""
    print()
    print("Mean JCT (s) per workload and policy")
    print(f"{'workload':<10}" + "".join(f"{name:>14}" for name in policies))
    for number, row in results.items():
        print(f"{number:<10}" + "".join(f"{row[n].mean_jct:>14.0f}" for n in policies))
    means = {n: statistics.mean(row[n].mean_jct for row in results.values()) for n in policies}
    print(f"{'mean':<10}" + "".join(f"{means[n]:>14.0f}" for n in policies))
    restarts = {
        n: sum(sum(row[n].restarts.values()) for row in results.values()) for n in policies
    }
    print(f"{'(re)starts':<10}" + "".join(f"{restarts[n]:>14}" for n in policies))
    if "sia" in policies and "pollux" in policies:
        wins = sum(row["sia"].mean_jct < row["pollux"].mean_jct for row in results.values())
        print(
            f"\nsia below pollux on {wins} of {len(results)} workloads; mean "
            f"{means['sia']:.0f} s against {means['pollux']:.0f} s "
            f"({means['sia'] / means['pollux'] - 1:+.1%})"
        )
    print()
    print("Wall-clock time per round (machine-dependent, never asserted)")
    for name in policies:
        seconds = [s for row in results.values() for s in row[name].decision_seconds]
        worst = max(statistics.median(row[name].decision_seconds) for row in results.values())
        print(
            f"{name:<14} median {statistics.median(seconds) * 1000:8.2f} ms over {len(seconds)} "
            f"rounds (worst workload's median {worst * 1000:.2f} ms, max {max(seconds):.2f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, nargs="*", default=list(range(1, 9)))
    parser.add_argument(
        "--policies", nargs="*", default=["sia", "pollux", "typed-greedy", "las-pollux"]
    )
    parser.add_argument("--gpu-types", default=DEFAULT_TYPES)
    parser.add_argument("--gpus-per-node", type=int, default=4)
    args = parser.parse_args()
    ELASTIC_POLICIES.check(args.policies, "--policies")
    cluster = ElasticCluster.from_type_counts(_type_counts(args.gpu_types), args.gpus_per_node)
    print_mapping()
    print(f"\nCluster: {args.gpu_types} nodes of {args.gpus_per_node} GPUs ({cluster.total_gpus})")
    results = {
        number: {name: run_one(number, name, cluster) for name in args.policies}
        for number in args.workloads
    }
    print_tables(results, args.policies)


if __name__ == "__main__":
    main()
