"""Benchmark: ``ddlsched solve --method exact`` on instances with real durations.

These instances need far more than 100,000 slots of 1 s, so the slotted models refuse them
and the portfolio solves them in continuous time (:mod:`ddlsched.formulations.continuous`). For
``generate --jobs 8 --servers 2 --gpus-per-server 4 --load 1.0 --seed S`` (S = 0..4) and 12
jobs on 4 x 4 GPUs (seeds 0..2; ``--load batch``: every job released at 0), runs the
command as a user would (a fresh process each time, start-up included) and prints per
instance the status, the objective, the bound, the gap, and the median wall time over
``--repeats`` runs.

    python benchmarks/bench_continuous.py
    python benchmarks/bench_continuous.py --time-limit 10 --repeats 3 --load batch
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAMILIES = (("2x4", 2, 4, 8, range(5)), ("4x4", 4, 4, 12, range(3)))
"""(name, servers, GPUs per server, jobs, seeds)."""


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    """``ddlsched`` with ``args`` in a fresh interpreter."""
    command = [sys.executable, "-m", "ddlsched.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, check=True)


def instance(folder: Path, shape: tuple[int, int, int], seed: int, load: str) -> Path:
    """The generated instance (``shape``: servers, GPUs per server, jobs), written to
    ``folder``; ``load`` ``"batch"`` releases every job at 0."""
    servers, gpus, jobs = shape
    path = folder / f"{servers}x{gpus}_{jobs}_{seed}.json"
    arrivals = [] if load == "batch" else ["--load", load]
    run(["generate", "--jobs", str(jobs), "--servers", str(servers), "--gpus-per-server",
         str(gpus), *arrivals, "--seed", str(seed), "--out", str(path)])  # fmt: skip
    return path


def measure(path: Path, limit: float, repeats: int) -> tuple[dict[str, object], list[float]]:
    """The last run's ``--json`` document and every run's wall time."""
    walls, document = [], {}
    for _ in range(repeats):
        began = time.perf_counter()
        done = run(["solve", str(path), "--method", "exact", "--time-limit", f"{limit:g}",
                    "--json"])  # fmt: skip
        walls.append(time.perf_counter() - began)
        document = json.loads(done.stdout)
    return document, walls


def row(name: str, jobs: int, seed: int, document: dict[str, object], walls: list[float]) -> str:
    """One table row."""
    gap = document["gap"]
    shown = "-" if gap is None else f"{float(gap):.2e}"  # type: ignore[arg-type]
    bound = document["best_bound"]
    bound_shown = "-" if bound is None else f"{float(bound):.10g}"  # type: ignore[arg-type]
    return (
        f"| {name} | {jobs} | {seed} | {document['status']} | "
        f"{float(document['total_completion_time']):.10g} | {bound_shown} | {shown} | "  # type: ignore[arg-type]
        f"{statistics.median(walls):.1f} | {max(walls):.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--load", default="1.0", help='offered load, or "batch" (all at 0)')
    args = parser.parse_args()
    print(
        f"# solve --method exact --time-limit {args.time_limit:g}, generate --load {args.load}, "
        f"{platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, median of {args.repeats} "
        "run(s) of the whole command"
    )
    print("| cluster | jobs | seed | status | objective | bound | gap | median s | worst s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for name, servers, gpus, jobs, seeds in FAMILIES:
            for seed in seeds:
                path = instance(Path(folder), (servers, gpus, jobs), seed, args.load)
                document, walls = measure(path, args.time_limit, args.repeats)
                print(row(name, jobs, seed, document, walls), flush=True)


if __name__ == "__main__":
    main()
