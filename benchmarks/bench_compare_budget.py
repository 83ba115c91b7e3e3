"""Benchmark: where ``compare --from-trace ... --time-limit T`` spends each instance.

Samples of the Philly trace (``--jobs`` each) compared with ``--methods`` under a budget of
``--time-limit`` seconds per instance. Prints, per instance, the wall time of each phase
(sampling the instance, each online method, rho, the fast bounds, the exact solve and the
verifier), the instance's phases together against ``T`` and what the budget cut, with the
machine and its load: wall times on a shared machine are upper figures. Asserts only
correctness: every schedule verified, no ``C/OPT`` without a proven optimum.

    python benchmarks/bench_compare_budget.py                       # 500 and 2,000 jobs, T = 5
    python benchmarks/bench_compare_budget.py --jobs 20000 --time-limit 10
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import platform
import time
from collections.abc import Callable
from typing import Any

from ddlsched.core.params import OnlineParams
from ddlsched.experiments import CompareConfig

compare_module = importlib.import_module("ddlsched.experiments.compare")

PHASES = ("solve", "rho_of_instance", "_fast_bounds", "_verified")
"""The module's phase functions timed (``solve`` is an online method or the exact solve)."""


def _timed(name: str, function: Callable[..., Any], log: list[tuple[str, float]]) -> Any:
    """``function`` recording ``(phase, seconds)`` in ``log`` at each call."""

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        out = function(*args, **kwargs)
        if name == "solve":
            online = isinstance(kwargs.get("params"), OnlineParams)
            label = f"online {args[1]}" if online else "exact"
        else:
            label = name.strip("_").removesuffix("_of_instance")
        log.append((label, time.monotonic() - began))
        return out

    return timed


def run(jobs: int, time_limit: float, methods: tuple[str, ...], instances: int) -> None:
    """Compare and print each instance's phases."""
    log: list[tuple[str, float]] = []
    originals = {name: getattr(compare_module, name) for name in PHASES}
    sample = CompareConfig.instance
    for name, function in originals.items():
        setattr(compare_module, name, _timed(name, function, log))
    CompareConfig.instance = _timed("sample", sample, log)  # type: ignore[method-assign]
    config = CompareConfig(
        jobs=jobs,
        instances=instances,
        methods=methods,
        time_limit=time_limit,
        from_trace="philly_jobs.csv",
    )
    try:
        began = time.monotonic()
        report = compare_module.compare(config)
        total = time.monotonic() - began
    finally:
        for name, function in originals.items():
            setattr(compare_module, name, function)
        CompareConfig.instance = sample  # type: ignore[method-assign]
    load = os.getloadavg()[0]
    print(f"{jobs} Philly jobs on 4 x 4 GPUs, T = {time_limit:g} s, {', '.join(methods)}:")
    starts = [k for k, (label, _) in enumerate(log) if label == "sample"]
    for k, row in enumerate(report.rows):
        phases = log[starts[k] : starts[k + 1] if k + 1 < len(starts) else len(log)]
        within = sum(seconds for label, seconds in phases if label not in ("sample", "verified"))
        cells = ", ".join(f"{label} {seconds:.2f}" for label, seconds in phases)
        print(f"  seed {row.seed}: {cells} (s)")
        print(
            f"    budgeted phases {within:.2f} s against T = {time_limit:g} s; exact "
            f"{row.optimum.status.value}; cut: {', '.join(row.skipped) or 'nothing'}"
        )
        assert all(row.verified[m] for m in methods)
        for record in report.records():
            assert math.isnan(record["C/OPT"]) or row.optimum.proven_optimal
    print(f"  whole compare() {total:.2f} s; load average {load:.1f} on {os.cpu_count()} CPUs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--methods", default="asrpt")
    parser.add_argument("--instances", type=int, default=1)
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {platform.processor() or 'cpu'}")
    for jobs in args.jobs:
        run(jobs, args.time_limit, tuple(args.methods.split(",")), args.instances)


if __name__ == "__main__":
    main()
