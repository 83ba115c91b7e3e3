"""Benchmark: replaying the Philly trace with the event-driven simulator.

Prints, per policy and cluster, the median over ``--repeats`` runs of the
simulation wall time (the event loop, excluding loading and the metrics
pass) and the jobs per second it means, with the largest number of jobs
waiting at once. A small cluster makes queues long: if a policy's cost per
event grew with the queue, its jobs/s would collapse there.

    python benchmarks/bench_simulator.py                # full trace, 256x8 and 32x8
    python benchmarks/bench_simulator.py --limit 20000 --clusters 16x8
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

from ddlsched import simulate
from ddlsched.core.model import Cluster
from ddlsched.core.traces import data_dir, load_trace

TRACE = data_dir() / "traces" / "philly_jobs.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--clusters", nargs="+", default=["256x8", "32x8"])
    parser.add_argument(
        "--policies",
        nargs="+",
        default=["asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive", "las", "las-tiresias"],
    )
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"# simulator on {Path(args.trace).name}, {platform.machine()}, "
        f"{time.strftime('%Y-%m-%d')}, median of {args.repeats} runs, one process"
    )
    print("| cluster | policy | jobs | load s | median sim s | jobs/s | max waiting |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for shape in args.clusters:
        servers, gpus = (int(x) for x in shape.split("x"))
        cluster = Cluster.uniform(servers, gpus, 20.0, 1.0)
        began = time.perf_counter()
        loaded = load_trace(args.trace, cluster, limit=args.limit)
        load_s = time.perf_counter() - began
        instance = loaded.instance
        for policy in args.policies:
            times, waiting = [], 0.0
            for _ in range(args.repeats):
                result = simulate(instance, policy)
                times.append(result.metrics["wall_time_s"])
                waiting = result.metrics["max_waiting"]
            median = statistics.median(times)
            print(
                f"| {shape} | {policy} | {instance.num_jobs} | {load_s:.1f} | {median:.2f} | "
                f"{instance.num_jobs / median:,.0f} | {waiting:,.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
