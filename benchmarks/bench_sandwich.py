"""The optimal total JCT of the whole Philly trace, pinned from both sides in each model.

For each offered load (the trace as recorded, and each ``--target-load``) and each model
(problem A, non-preemptive; the preemptive model), one child process computes
:func:`ddlsched.sandwich.flow_sandwich`: the best lower bound valid for the model, the
best verified schedule, ``UB / LB`` on the total JCT, the seconds of each side and the
child's peak resident memory (``ru_maxrss``, so the figure covers loading the trace too)
and CPU seconds (user and system: what the row costs on an idle core, whatever else runs;
``--jobs`` children run at once, each with its own figures).
A row per load and model, as a Markdown table.

    nice -n 10 python benchmarks/bench_sandwich.py --target-loads 0.9 --jobs 4
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from typing import Any

from ddlsched.formulations.start_lagrangian import StartLagrangianSettings

from ddlsched import Cluster, data_path, load_trace
from ddlsched.core.offered_load import at_load, offered_load
from ddlsched.sandwich import flow_sandwich


def one(args: argparse.Namespace) -> dict[str, Any]:
    """One load and model, in this process: the sandwich's figures."""
    cluster = Cluster.uniform(args.servers, args.gpus_per_server, 20.0, 1.0)
    instance = load_trace(args.trace, cluster).instance
    if args.load is not None:
        instance, _ = at_load(instance, args.load)
    settings = StartLagrangianSettings(rounds=args.rounds)
    sandwich = flow_sandwich(instance, preemptive=args.preemptive, settings=settings)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "load": offered_load(instance),
        **sandwich.to_dict(),
        "peak_mib": usage.ru_maxrss / 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }


def _row(figures: dict[str, Any], wall: float) -> str:
    """A Markdown row of one child's figures."""
    return (
        f"| {figures['load']:.2f} | {figures['model']} | {figures['flow_lower_bound']:.4g} "
        f"({figures['lower_bound']['name']}) | {figures['flow_upper_bound']:.4g} "
        f"({figures['upper_bound_schedule']}) | {figures['ratio']:.3f} | "
        f"{figures['lower_runtime_s']:.0f} | {figures['upper_runtime_s']:.0f} | "
        f"{figures['cpu_s']:.0f} | {wall:.0f} | {figures['peak_mib']:,.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(data_path("traces", "philly_jobs.csv")))
    parser.add_argument("--servers", type=int, default=32)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--target-loads", nargs="*", type=float, default=[0.9])
    parser.add_argument("--rounds", type=int, default=StartLagrangianSettings().rounds)
    parser.add_argument("--jobs", type=int, default=1, help="children at once")
    parser.add_argument("--load", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--preemptive", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args)))
        return
    print(
        f"# {args.trace} on {args.servers}x{args.gpus_per_server}, {platform.machine()}, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}, "
        f"{args.rounds} rounds"
    )
    print(
        "| load | model | LB total JCT (which) | UB total JCT (schedule) | UB/LB | LB s | "
        "UB s | CPU s | wall s | peak MiB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = [(load, preemptive) for load in [None, *args.target_loads] for preemptive in (0, 1)]
    children = []
    for load, preemptive in rows:
        command = [sys.executable, __file__, "--one", "--trace", args.trace]
        command += ["--servers", str(args.servers), "--rounds", str(args.rounds)]
        command += ["--gpus-per-server", str(args.gpus_per_server)]
        command += [] if load is None else ["--load", str(load)]
        command += ["--preemptive"] if preemptive else []
        children.append((time.perf_counter(), subprocess.Popen(command, stdout=subprocess.PIPE)))
        if len(children) == args.jobs or (load, preemptive) == rows[-1]:
            for began, child in children:
                out, _ = child.communicate()
                figures = json.loads(out.decode().strip().splitlines()[-1])
                print(_row(figures, time.perf_counter() - began), flush=True)
            children = []


if __name__ == "__main__":
    main()
