"""The optimal total JCT of the whole Philly trace, pinned from both sides in each model.

For each offered load (the trace as recorded, and each ``--target-load``) and each model
(problem A, non-preemptive; the preemptive model), the two sides of
:func:`ddlsched.sandwich.flow_sandwich`, each in a child process of its own so that its
figures are its own: first the upper side
(:func:`ddlsched.algorithms.offline.best_upper_bound`, the best verified schedule), then
the lower side (:func:`ddlsched.sandwich.model_lower_bounds`, every bound valid for the
model, given the upper side's objective as ``flow_sandwich`` gives it, and the largest
flow value kept by :func:`ddlsched.sandwich.best_flow_bound`). Per side: wall seconds, CPU
seconds (user and system: what the side costs on an idle core, whatever else runs) and
the child's peak resident memory (``ru_maxrss``, loading the trace included); per row
``UB / LB`` on the total JCT, and every bound's flow value (after the table, and on
stderr as each row is done). A child that fails prints its error as its row; the run
goes on.

    nice -n 10 python benchmarks/bench_sandwich.py --target-loads 0.9
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
from ddlsched.core.model import Instance
from ddlsched.core.offered_load import at_load, offered_load


def _instance(args: argparse.Namespace) -> Instance:
    """The trace on the cluster, at the requested load."""
    cluster = Cluster.uniform(args.servers, args.gpus_per_server, 20.0, 1.0)
    instance = load_trace(args.trace, cluster).instance
    if args.load is not None:
        instance, _ = at_load(instance, args.load)
    return instance


def _usage(began: float) -> dict[str, float]:
    """This process's wall seconds since ``began``, CPU seconds and peak MiB."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "wall_s": time.perf_counter() - began,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
    }


def upper_side(args: argparse.Namespace) -> dict[str, Any]:
    """The best verified schedule of the model, in this process."""
    from ddlsched.algorithms.offline import best_upper_bound

    began = time.perf_counter()
    instance = _instance(args)
    upper = best_upper_bound(instance, preemptive=args.preemptive)
    return {
        "load": offered_load(instance),
        "objective": upper.objective,
        "total_jct": upper.total_jct,
        "schedule": upper.method,
        **_usage(began),
    }


def lower_side(args: argparse.Namespace) -> dict[str, Any]:
    """Every bound valid for the model and the best, in this process."""
    from ddlsched.sandwich import best_flow_bound, model_lower_bounds

    began = time.perf_counter()
    instance = _instance(args)
    settings = StartLagrangianSettings(rounds=args.rounds)
    bounds = model_lower_bounds(
        instance, preemptive=args.preemptive, upper_bound=args.upper_bound, settings=settings
    )
    best = best_flow_bound(bounds)
    return {
        "flow_lower_bound": best.flow_value,
        "name": best.name,
        "bounds": {bound.name: bound.flow_value for bound in bounds if bound.valid},
        **_usage(began),
    }


def _child(
    args: argparse.Namespace,
    side: str,
    load: float | None,
    preemptive: bool,
    upper_bound: float | None = None,
) -> dict[str, Any]:
    """One side of one row in a child process: its figures, or ``{"error": ...}``."""
    command = [sys.executable, __file__, "--side", side, "--trace", args.trace]
    command += ["--servers", str(args.servers), "--rounds", str(args.rounds)]
    command += ["--gpus-per-server", str(args.gpus_per_server)]
    command += [] if load is None else ["--load", str(load)]
    command += ["--preemptive"] if preemptive else []
    command += [] if upper_bound is None else ["--upper-bound", repr(upper_bound)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"{side} side exited {done.returncode}: {last}"}
    return dict(json.loads(lines[-1]))


def _row(
    load: float | None, preemptive: bool, upper: dict[str, Any], lower: dict[str, Any]
) -> str:
    """A Markdown row of one load and model."""
    model = "preemptive" if preemptive else "non-preemptive"
    where = f"| {upper.get('load', load or 0.0):.2f} | {model} |"
    if "error" in upper or "error" in lower:
        return f"{where} {upper.get('error', '')} {lower.get('error', '')} |"
    ratio = upper["total_jct"] / lower["flow_lower_bound"]
    return (
        f"{where} {lower['flow_lower_bound']:.5g} ({lower['name']}) | "
        f"{upper['total_jct']:.5g} ({upper['schedule']}) | {ratio:.3f} | "
        f"{lower['wall_s']:.0f} | {lower['cpu_s']:.0f} | {lower['peak_mib']:,.0f} | "
        f"{upper['wall_s']:.0f} | {upper['cpu_s']:.0f} | {upper['peak_mib']:,.0f} |"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(data_path("traces", "philly_jobs.csv")))
    parser.add_argument("--servers", type=int, default=32)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--target-loads", nargs="*", type=float, default=[0.9])
    parser.add_argument("--rounds", type=int, default=StartLagrangianSettings().rounds)
    parser.add_argument("--load", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--preemptive", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--side", choices=("upper", "lower"), help=argparse.SUPPRESS)
    parser.add_argument("--upper-bound", type=float, help=argparse.SUPPRESS)
    return parser


def main() -> None:
    args = _parser().parse_args()
    if args.side is not None:
        print(json.dumps(upper_side(args) if args.side == "upper" else lower_side(args)))
        return
    print(
        f"# {args.trace} on {args.servers}x{args.gpus_per_server}, {platform.machine()}, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}, "
        f"start-lagrangian {args.rounds} rounds"
    )
    print(
        "| load | model | LB total JCT (bound) | UB total JCT (schedule) | UB/LB | "
        "LB wall s | LB CPU s | LB peak MiB | UB wall s | UB CPU s | UB peak MiB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    every = []
    for load in [None, *args.target_loads]:
        for preemptive in (False, True):
            upper = _child(args, "upper", load, preemptive)
            lower = _child(args, "lower", load, preemptive, upper.get("objective"))
            print(_row(load, preemptive, upper, lower), flush=True)
            every.append((load, preemptive, lower.get("bounds", {})))
            print(f"{load}, preemptive={preemptive}: {every[-1][2]}", file=sys.stderr, flush=True)
    print("\nEvery bound's flow value (total JCT, s):")
    for load, preemptive, bounds in every:
        listed = ", ".join(f"{name} {value:.5g}" for name, value in bounds.items())
        print(f"- load {load or 'as recorded'}, {'preemptive' if preemptive else 'A'}: {listed}")


if __name__ == "__main__":
    main()
