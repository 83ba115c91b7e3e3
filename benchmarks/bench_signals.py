"""How long each long-running command takes to stop after Ctrl-C (median of 5 runs).

Each command is started in its own session and, once it is surely at work (its solver
children run, or it has entered its event loop: see :mod:`tests.signal_target`), SIGINT
goes to its process group, as a terminal sends it. The figure is the time from the signal
to the command's exit, and then to the last process of its session ending. A benchmark,
not a test: it reports figures and asserts only the exit status (130).

    python -m benchmarks.bench_signals [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _session(session: int) -> list[str]:
    """``pid ppid args`` of the live processes of ``session``."""
    listing = subprocess.run(
        ["ps", "-ww", "-o", "pid=,ppid=,stat=,args=", "-s", str(session)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    return [line for line in listing if line.split()[2][0] not in "ZX"]


def _solver_child(session: int) -> bool:
    """Whether a fork server's child runs in ``session``."""
    listing = _session(session)
    servers = {line.split()[0] for line in listing if "forkserver" in line}
    return any(line.split()[1] in servers for line in listing)


def _poll(condition: Callable[[], bool], polls: int = 6000) -> None:
    pause = threading.Event()
    for _ in range(polls):
        if condition():
            return
        pause.wait(0.02)
    raise RuntimeError("gave up waiting")


def _stop_latency(
    argv: list[str], ready: Callable[[subprocess.Popen[bytes]], bool]
) -> tuple[float, float]:
    """Seconds from SIGINT to the command's exit, and to its session being empty."""
    process = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        start_new_session=True,
    )
    _poll(lambda: ready(process) or process.poll() is not None)
    if process.poll() is not None:
        raise RuntimeError(f"{argv[3:]} ended before it was interrupted")
    sent = time.perf_counter()
    os.killpg(process.pid, signal.SIGINT)
    code = process.wait()
    exited = time.perf_counter() - sent
    _poll(lambda: not _session(process.pid), polls=100_000)
    emptied = time.perf_counter() - sent
    if code != 130:
        raise RuntimeError(f"{argv[3:]} exited {code}, not 130")
    return exited, emptied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    folder = Path(tempfile.mkdtemp(prefix="bench-signals-"))
    cli = [sys.executable, "-m", "ddlsched.cli"]
    batch, big, trace = folder / "batch.json", folder / "big.json", folder / "long.csv"
    subprocess.run(
        [
            *cli,
            "generate",
            "--jobs",
            "24",
            "--servers",
            "4",
            "--gpus-per-server",
            "4",
            "--preset",
            "exact-friendly",
            "--seed",
            "0",
            "--out",
            str(batch),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*cli, "generate", "--jobs", "300", "--servers", "8", "--out", str(big)],
        check=True,
        capture_output=True,
    )
    rows = ["submit_time,duration,num_gpus"]
    rows += [f"{k},{50 + k % 977},{1 << (k % 3)}" for k in range(400_000)]
    trace.write_text("\n".join(rows) + "\n")
    config = folder / "sweep.toml"
    config.write_text(
        '[sweep]\nmethods = ["milp"]\nseeds = 40\ntime_limit = 60\n'
        "[sweep.grid]\nnum_jobs = [16]\nservers = [4]\ngpus_per_server = [4]\n"
        "[generator]\nintegral = true\nbandwidth_intra = 2.0\nload = 1.0\n"
    )
    marker = folder / "entered"
    children = lambda p: _solver_child(p.pid)  # noqa: E731
    commands: dict[str, tuple[list[str], Callable[[subprocess.Popen[bytes]], bool]]] = {
        "solve --method milp": ([*cli, "solve", str(batch), "--method", "milp"], children),
        "solve --method exact": ([*cli, "solve", str(batch), "--method", "exact"], children),
        "bound --lp": ([*cli, "bound", str(big), "--lp"], children),
        "check --random": ([*cli, "check", "--random", "50", "--jobs", "8"], children),
        "sweep": ([*cli, "sweep", str(config), "--results", str(folder / "r.sqlite")], children),
        "simulate (400,000 jobs)": (
            [
                sys.executable,
                "-m",
                "tests.signal_target",
                str(marker),
                "ddlsched.algorithms.simulator:_Simulation.run",
                "simulate",
                "--trace",
                str(trace),
                "--servers",
                "8",
            ],
            lambda p: marker.exists(),
        ),
    }
    print(f"{'command':<26} {'to exit (s)':>12} {'to no process (s)':>18}   ({runs} runs, median)")
    for name, (argv, ready) in commands.items():
        results = []
        for _ in range(runs):
            marker.unlink(missing_ok=True)
            (folder / "r.sqlite").unlink(missing_ok=True)
            results.append(_stop_latency(argv, ready))
        exited = statistics.median(r[0] for r in results)
        emptied = statistics.median(r[1] for r in results)
        print(f"{name:<26} {exited:>12.2f} {emptied:>18.2f}", flush=True)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
