"""asrpt-elastic against pollux on the eight Pollux workloads: mean JCT, restarts, who wins.

Runs ``workload-1.csv`` ... ``workload-8.csv`` (shipped) with ``pollux`` and
``asrpt-elastic`` on 16 nodes x 4 GPUs (60 s rounds, 30 s restarts), checks every
run with the independent check (:func:`ddlsched.proofs_checks.elastic.check_elastic`),
and prints per workload: both mean JCTs, the relative difference, both (re)start
counts (first starts included); then the totals against the target (lower mean
JCT on at least 7 of 8 workloads, at least 5 % lower on the mean, no more
restarts in total); then, per workload, each model's mean JCT under both policies
and the jobs asrpt-elastic loses most on. The runs are deterministic; only the
wall-clock times depend on the machine (never asserted).

Usage::

    python benchmarks/bench_asrpt_elastic.py                  # all 8 workloads
    python benchmarks/bench_asrpt_elastic.py --workloads 3 6  # a few
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from ddlsched.algorithms.elastic import ELASTIC_POLICIES, ElasticResult, simulate_elastic
from ddlsched.proofs_checks.elastic import check_elastic

from ddlsched.core.data import data_path
from ddlsched.core.elastic import ElasticCluster, load_pollux_workload

POLICIES = ("pollux", "asrpt-elastic")


def run(number: int, name: str) -> tuple[ElasticResult, float]:
    """One checked run of ``name`` on workload ``number`` and its wall-clock seconds."""
    workload = load_pollux_workload(data_path("pollux", "workloads", f"workload-{number}.csv"))
    started = time.perf_counter()
    result = simulate_elastic(workload, ELASTIC_POLICIES[name](), ElasticCluster(16, 4))
    wall = time.perf_counter() - started
    problems = check_elastic(result)
    assert not problems, problems[:3]
    return result, wall


def by_model(result: ElasticResult) -> dict[str, float]:
    """Mean JCT of each model's jobs."""
    groups: dict[str, list[float]] = defaultdict(list)
    models = {job.name: job.model for job in result.workload.jobs}
    for name, jct in result.jct.items():
        groups[models[name]].append(jct)
    return {model: statistics.fmean(values) for model, values in sorted(groups.items())}


def report_workload(number: int, base: ElasticResult, ours: ElasticResult) -> None:
    """Per model, both mean JCTs; the three jobs asrpt-elastic loses most on."""
    print(f"workload-{number}: mean JCT per model (s), pollux -> asrpt-elastic")
    ours_models = by_model(ours)
    counts = defaultdict(int)
    for job in base.workload.jobs:
        counts[job.model] += 1
    for model, value in by_model(base).items():
        print(f"  {model:<12} {counts[model]:>3} jobs  {value:8.0f} -> {ours_models[model]:8.0f}")
    base_jct, ours_jct = base.jct, ours.jct
    worst = sorted(base_jct, key=lambda n: base_jct[n] - ours_jct[n])[:3]
    losses = ", ".join(f"{n} {base_jct[n]:.0f} -> {ours_jct[n]:.0f}" for n in worst)
    print(f"  largest losses: {losses}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, nargs="*", default=list(range(1, 9)))
    args = parser.parse_args()
    rows = {}
    seconds: dict[str, list[float]] = {name: [] for name in POLICIES}
    for number in args.workloads:
        results = {}
        for name in POLICIES:
            results[name], wall = run(number, name)
            seconds[name].extend(results[name].decision_seconds)
            print(f"workload-{number} {name:<14} ran in {wall:.1f} s (checked)", flush=True)
        report_workload(number, results["pollux"], results["asrpt-elastic"])
        rows[number] = {
            name: (r.mean_jct, sum(r.restarts.values())) for name, r in results.items()
        }
    print()
    print("workload  JCT pollux  JCT asrpt-elastic   change  restarts pollux  restarts asrpt")
    for number, row in rows.items():
        (base, base_r), (ours, ours_r) = row["pollux"], row["asrpt-elastic"]
        print(
            f"{number:<8} {base:>11.0f} {ours:>18.0f} {ours / base - 1:>+8.1%} "
            f"{base_r:>16} {ours_r:>15}"
        )
    base_mean = statistics.fmean(r["pollux"][0] for r in rows.values())
    ours_mean = statistics.fmean(r["asrpt-elastic"][0] for r in rows.values())
    base_total = sum(r["pollux"][1] for r in rows.values())
    ours_total = sum(r["asrpt-elastic"][1] for r in rows.values())
    wins = sum(r["asrpt-elastic"][0] < r["pollux"][0] for r in rows.values())
    print(
        f"{'mean':<8} {base_mean:>11.0f} {ours_mean:>18.0f} {ours_mean / base_mean - 1:>+8.1%} "
        f"{base_total:>16} {ours_total:>15}"
    )
    print(f"asrpt-elastic lower on {wins} of {len(rows)} workloads")
    for name, values in seconds.items():
        print(f"{name:<14} median {statistics.median(values) * 1e3:7.2f} ms per round (machine)")


if __name__ == "__main__":
    main()
