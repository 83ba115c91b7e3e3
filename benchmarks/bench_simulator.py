"""Benchmark: replaying the Philly trace with the event-driven simulator.

Prints, per policy and cluster, the median over ``--repeats`` runs of the
simulation wall time (the event loop, excluding loading and the metrics
pass) and the jobs per second it means, with the largest number of jobs
waiting at once, and its event-loop time over FIFO's in the same run with
the limit it is held to (LAS within 3x, Gavel within 30x: its rounds
preempt and restart jobs every 6 minutes, real work; every other policy
within 5x). "call" is the whole ``simulate`` call (with the schedule,
metrics and flow certificate), for comparison.
A small cluster makes queues long: if a policy's cost per event grew with
the queue, its jobs/s would collapse there.

    python benchmarks/bench_simulator.py                # full trace, 256x8 and 32x8
    python benchmarks/bench_simulator.py --limit 20000 --clusters 16x8
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
from pathlib import Path

from ddlsched import simulate
from ddlsched.core.data import data_path
from ddlsched.core.model import Cluster
from ddlsched.core.offered_load import at_load, offered_load
from ddlsched.core.traces import load_trace

TRACE = data_path("traces", "philly_jobs.csv")
LIMITS = {"las": 3.0, "las-tiresias": 3.0, "gavel": 30.0}
"""Each policy's simulation time over FIFO's that it must stay within; 5 otherwise."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(TRACE))
    parser.add_argument("--clusters", nargs="+", default=["256x8", "32x8"])
    parser.add_argument(
        "--policies",
        nargs="+",
        default=[
            "fifo",
            "asrpt",
            "asrpt-greedy",
            "sjf",
            "srpt-naive",
            "las",
            "las-tiresias",
            "gavel",
        ],
    )
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--target-load", type=float, help="stretch arrivals to this offered load (at_load)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"# simulator on {Path(args.trace).name}, {platform.machine()}, "
        f"{time.strftime('%Y-%m-%d')}, median of {args.repeats} runs, one process"
    )
    print(
        "| cluster | policy | jobs | load s | median sim s | jobs/s | max waiting "
        "| x FIFO | call s | call x FIFO | limit | mean JCT s | flow ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    over = []
    offered: dict[str, float] = {}
    for shape in args.clusters:
        servers, gpus = (int(x) for x in shape.split("x"))
        cluster = Cluster.uniform(servers, gpus, 20.0, 1.0)
        began = time.perf_counter()
        loaded = load_trace(args.trace, cluster, limit=args.limit)
        load_s = time.perf_counter() - began
        instance = loaded.instance
        if args.target_load is not None:
            instance, _ = at_load(instance, args.target_load)
        offered[shape] = offered_load(instance)
        fifo_s = fifo_call = None
        for policy in ["fifo", *(p for p in args.policies if p != "fifo")]:
            times, calls, waiting = [], [], 0.0
            for _ in range(args.repeats):
                began = time.perf_counter()
                result = simulate(instance, policy)
                calls.append(time.perf_counter() - began)
                times.append(result.metrics["wall_time_s"])
                waiting = result.metrics["max_waiting"]
            median, call = statistics.median(times), statistics.median(calls)
            if policy == "fifo":
                fifo_s, fifo_call = median, call
            ratio = median / fifo_s if fifo_s else float("nan")
            limit = LIMITS.get(policy, 5.0)
            if ratio > limit:
                over.append(f"{policy} at {shape}: {ratio:.1f}x FIFO > {limit:g}x")
            print(
                f"| {shape} | {policy} | {instance.num_jobs} | {load_s:.1f} | {median:.2f} | "
                f"{instance.num_jobs / median:,.0f} | {waiting:,.0f} | {ratio:.1f} | "
                f"{call:.1f} | {call / fifo_call if fifo_call else math.nan:.1f} | {limit:g} "
                f"| {result.metrics['mean_jct']:,.0f} | {result.flow_ratio:.2f} |",
                flush=True,
            )
    print()
    print("offered load: " + ", ".join(f"{k} {v:.2f}" for k, v in offered.items()))
    print("every policy within its limit" if not over else "over the limit: " + "; ".join(over))
    print(
        "(flow ratio: total weighted JCT over the certified lower bound on the optimal one, "
        "ddlsched.Result.flow_ratio; an upper bound on the distance to the optimum)"
    )


if __name__ == "__main__":
    main()
