"""The elastic sandwich on the Pollux workloads: a proven lower bound and the best checked run.

For each of ``workload-1.csv`` ... ``workload-8.csv`` (shipped) on 16 nodes x 4 GPUs (60 s
rounds, 30 s restarts), :func:`ddlsched.experiments.elastic.elastic_sandwich` runs every
registered elastic policy and the offline clairvoyant ``srpt-ceiling`` through the
simulator, keeps the runs the independent check accepts, and bounds the total JCT from
below (:func:`ddlsched.formulations.elastic_bounds.elastic_flow_bound`: per-job floors,
SRPT on the squashed machine, and the two combined rank by rank; and
:func:`ddlsched.formulations.elastic_lagrangian.elastic_lagrangian_bound`). Prints one Markdown row
per workload: the lower bound and its parts, the upper bound and its schedule, UB/LB, the
best online policy over LB, and the wall-clock seconds (machine-dependent, never asserted).
The runs are deterministic; the only assertion is that the bound is below every run.

Usage::

    nice -n 10 python benchmarks/bench_elastic_sandwich.py                  # all 8
    nice -n 10 python benchmarks/bench_elastic_sandwich.py --workloads 3 6  # a few
    nice -n 10 python benchmarks/bench_elastic_sandwich.py --policies asrpt-elastic pollux
"""

from __future__ import annotations

import argparse
import time

from ddlsched.algorithms.elastic import ElasticSimParams

from ddlsched.core.data import data_path
from ddlsched.core.elastic import ElasticCluster, load_pollux_workload
from ddlsched.experiments.elastic import elastic_sandwich

HEADER = (
    "| workload | LB (s) | per-job | squashed | combined | Lagrangian | UB (s) | UB schedule "
    "| UB/LB | best online | online/LB | seconds |\n"
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: |"
)


def row(number: int, policies: list[str] | None, offline: list[str] | None, steps: int) -> str:
    """The sandwich of workload ``number`` as one Markdown row (``policies``, ``offline``:
    the online policies and offline schedules to run, default all; ``steps``: the
    Lagrangian bound's)."""
    workload = load_pollux_workload(data_path("pollux", "workloads", f"workload-{number}.csv"))
    started = time.perf_counter()
    sandwich = elastic_sandwich(
        workload,
        ElasticCluster(16, 4),
        ElasticSimParams(),
        policies,
        offline,
        lagrangian_steps=steps,
    )
    seconds = time.perf_counter() - started
    record = sandwich.to_dict()
    assert not sandwich.failed, sandwich.failed
    assert all(total >= sandwich.lower for total in sandwich.totals.values())
    totals = ", ".join(f"{name} {total:.0f}" for name, total in sandwich.totals.items())
    print(f"<!-- workload {number}: {totals} -->", flush=True)
    return (
        f"| {number} | {record['flow_lower_bound']:.0f} | {record['lower_per_job']:.0f} "
        f"| {record['lower_squashed']:.0f} | {record['lower_combined']:.0f} "
        f"| {record['lower_lagrangian']:.0f} "
        f"| {record['flow_upper_bound']:.0f} | {record['flow_upper_bound_method']} "
        f"| {record['flow_upper_over_lower']:.3f} | {record['best_online']} "
        f"| {record['best_online_over_lower']:.3f} | {seconds:.0f} |"
    )


def lower_row(number: int, steps: int) -> str:
    """Workload ``number``'s lower bounds only (no runs): fast bound parts and Lagrangian."""
    from ddlsched.formulations.elastic_bounds import elastic_flow_bound
    from ddlsched.formulations.elastic_lagrangian import elastic_lagrangian_bound

    jobs = load_pollux_workload(data_path("pollux", "workloads", f"workload-{number}.csv")).jobs
    started = time.perf_counter()
    fast = elastic_flow_bound(jobs, 64)
    lagrangian = elastic_lagrangian_bound(jobs, 64, steps=steps).value
    return (
        f"| {number} | {max(fast.value, lagrangian):.0f} | {fast.per_job:.0f} "
        f"| {fast.squashed:.0f} | {fast.combined:.0f} | {lagrangian:.0f} "
        f"| {time.perf_counter() - started:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, nargs="*", default=list(range(1, 9)))
    parser.add_argument("--policies", nargs="*", help="online policies to run (default all)")
    parser.add_argument("--offline", nargs="*", help="offline schedules to run (default all)")
    parser.add_argument("--steps", type=int, default=100, help="Lagrangian supergradient steps")
    parser.add_argument("--lower-only", action="store_true", help="the lower bounds only")
    args = parser.parse_args()
    if args.lower_only:
        print("| workload | LB (s) | per-job | squashed | combined | Lagrangian | seconds |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |", flush=True)
        for number in args.workloads:
            print(lower_row(number, args.steps), flush=True)
        return
    print(HEADER, flush=True)
    for number in args.workloads:
        print(row(number, args.policies, args.offline, args.steps), flush=True)


if __name__ == "__main__":
    main()
