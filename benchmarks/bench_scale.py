"""The exact method at scale: the families and targets of the project's frontier table.

Each row generates its instances with ``ddlsched generate`` (seeds 0, 1, 2) and runs the
whole command ``ddlsched solve FILE --method exact --time-limit T --json`` in a child
process, as a user would: the wall time is the command's (interpreter start-up, the online
policies' warm start, the race), the peak memory the largest sum of the resident sets of
the command and all its children, sampled every 0.1 s (``psutil``). Per row: how many
seeds were proven optimal, the median wall time, the median and worst certified gap on the
flow time (``flow_gap``: ``1 - flow lower bound / total JCT``, the bound the result names),
and the peak memory. A row whose target is a proof within 10 minutes and that is not
proven within its first limit is run again with ``--time-limit 600`` (a second line).

    python benchmarks/bench_scale.py            # every row, 3 seeds (about 25-60 min)
    python benchmarks/bench_scale.py --quick    # seed 0 only, the 200-job row at 120 s

Figures only: nothing is asserted on time. Every answer is checked by the CLI itself (the
schedule goes through the verifier before a bound may prove it).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass(frozen=True)
class Row:
    """One family of the table: ``generate`` arguments, the limit, and the target."""

    name: str
    generate: tuple[str, ...]
    limit: float
    target: str
    retry: float | None = None


def _shape(jobs: int, servers: int, gpus: int, *more: str) -> tuple[str, ...]:
    """``generate``'s arguments for ``jobs`` jobs on ``servers`` x ``gpus`` GPUs."""
    return ("--jobs", str(jobs), "--servers", str(servers), "--gpus-per-server", str(gpus), *more)


FRIENDLY = ("--preset", "exact-friendly")
AT_LOAD = (*FRIENDLY, "--load", "1.0")

ROWS = (
    Row("exact-friendly batch", _shape(48, 4, 8, *FRIENDLY), 60.0, "3/3 proven in 60 s"),
    Row("exact-friendly load 1.0", _shape(64, 8, 8, *AT_LOAD), 60.0, "3/3 proven in 60 s"),
    Row(
        "exact-friendly load 1.0",
        _shape(100, 8, 8, *AT_LOAD),
        60.0,
        "3/3 within 1% in 60 s, proven in 600 s",
        retry=600.0,
    ),
    Row("exact-friendly load 1.0", _shape(200, 16, 8, *AT_LOAD), 600.0, "gap <= 3% in 600 s"),
    Row("realistic batch", _shape(24, 4, 4), 60.0, "3/3 within 0.5% in 60 s"),
)


@dataclass(frozen=True)
class Run:
    """One solve: its status, certified flow gap, wall seconds and peak bytes."""

    status: str
    gap: float
    wall: float
    peak: int


def _tree_rss(process: psutil.Process) -> int:
    """The resident bytes of ``process`` and all its descendants now."""
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            continue
    return total


def solve_command(path: Path, limit: float) -> Run:
    """``ddlsched solve`` on ``path`` in a child; its answer and what it cost."""
    command = [sys.executable, "-m", "ddlsched.cli", "solve", str(path), "--method", "exact"]
    command += ["--time-limit", f"{limit:g}", "--json"]
    began = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    watched = psutil.Process(child.pid)
    peak = 0
    while child.poll() is None:
        peak = max(peak, _tree_rss(watched))
        time.sleep(0.1)
    wall = time.perf_counter() - began
    assert child.stdout is not None
    try:
        answer = json.loads(child.stdout.read())
    except json.JSONDecodeError:  # the command failed: its one-line error went to stderr
        return Run(f"error (exit {child.returncode})", 1.0, wall, peak)
    return Run(answer["status"], float(answer["flow_gap"]), wall, peak)


def generated(row: Row, seed: int, folder: Path) -> Path:
    """The row's instance of ``seed``, written by ``ddlsched generate``."""
    path = folder / f"{row.generate[1]}_{seed}.json"
    command = [sys.executable, "-m", "ddlsched.cli", "generate", *row.generate]
    command += ["--seed", str(seed), "--out", str(path)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return path


def _line(row: Row, limit: float, runs: list[Run]) -> str:
    """The table's line of ``runs`` of ``row`` under ``limit``."""
    jobs, servers, gpus = row.generate[1], row.generate[3], row.generate[5]
    proven = sum(run.status == "optimal" for run in runs)
    gaps = [run.gap for run in runs]
    return (
        f"| {row.name} | {jobs} | {servers} x {gpus} | {limit:g} | {proven}/{len(runs)} | "
        f"{statistics.median(run.wall for run in runs):.1f} | "
        f"{100 * statistics.median(gaps):.2f}% | {100 * max(gaps):.2f}% | "
        f"{max(run.peak for run in runs) / 2**20:.0f} | {row.target} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seed 0 only; 200 jobs at 120 s")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    seeds = range(1 if args.quick else args.seeds)
    print(
        f"# ddlsched solve --method exact at scale: {platform.node()} ({psutil.cpu_count()} "
        f"cores, {psutil.virtual_memory().total / 2**30:.1f} GiB), "
        f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, seeds {list(seeds)}",
        flush=True,
    )
    print("| family | jobs | cluster | limit s | proven | median wall s | median gap | ", end="")
    print("worst gap | peak MiB | target |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for row in ROWS:
            limit = 120.0 if args.quick and row.limit > 120 else row.limit
            paths = [generated(row, seed, Path(folder)) for seed in seeds]
            runs = []
            for seed, path in zip(seeds, paths, strict=True):
                runs.append(solve_command(path, limit))
                print(f"  {row.generate[1]} jobs seed {seed}: {runs[-1]}", file=sys.stderr)
            print(_line(row, limit, runs), flush=True)
            unproven = [p for p, run in zip(paths, runs, strict=True) if run.status != "optimal"]
            if row.retry is not None and unproven and not args.quick:
                again = [solve_command(path, row.retry) for path in unproven]
                print(_line(row, row.retry, again) + " (the unproven seeds again)", flush=True)


if __name__ == "__main__":
    main()
