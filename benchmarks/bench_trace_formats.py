"""Benchmark: how long the published-format readers and the trace check take at scale.

Writes seeded synthetic files in each published shape (a Helios ``cluster_log.csv``, an
Acme ``trace_seren.csv``, a raw Philly ``cluster_job_log``, PAI job and task tables) of
``--rows`` jobs in a temporary folder, then times :func:`ddlsched.core.trace_check.
check_trace` (reading every row, then checking them on 64 x 8 GPUs) on each, the median
of ``--repeats`` runs, and prints rows per second and the process's peak memory. It
asserts only that every row was read; the figures are for the docs and the report.

    python benchmarks/bench_trace_formats.py                 # 100,000 jobs per format
    python benchmarks/bench_trace_formats.py --rows 300000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from ddlsched.core.trace_check import check_trace

STATES = ("COMPLETED", "FAILED", "CANCELLED")


def _times(rng: np.random.Generator, rows: int) -> list[datetime]:
    gaps = np.cumsum(rng.integers(1, 60, rows))
    start = datetime(2020, 4, 1)
    return [start + timedelta(seconds=int(gap)) for gap in gaps]


def write_files(folder: Path, rows: int, seed: int) -> dict[str, Path]:
    """One file per format, ``rows`` jobs each, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    gpus = rng.choice([0, 1, 2, 4, 8, 16], rows)
    durations = rng.integers(1, 20_000, rows)
    states = rng.choice(STATES, rows)
    times = _times(rng, rows)
    helios = [
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"
    ]
    acme = [
        "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time"
    ]
    jobs, tasks, philly = [], [], []
    for k in range(rows):
        moment, g, d, s = times[k], int(gpus[k]), int(durations[k]), str(states[k])
        helios.append(f"{k},u{k % 500},vc{k % 20},{g},4,1,{s},{moment},{moment},{moment},{d},0")
        zoned = f"{moment}+08:00"
        acme.append(f"{k},u{k % 500},1,{g},4,Other,{s},{zoned},{zoned},{zoned},{d},0,0")
        submit = (moment - times[0]).total_seconds() + 100
        jobs.append(f"j{k},i{k},u{k % 500},Terminated,{submit},{submit + d}")
        tasks.append(
            f"j{k},worker,1,Terminated,{submit + 1},{submit + 1 + d},400,10,{100 * g},V100"
        )
        started = moment + timedelta(seconds=30)
        philly.append(
            {
                "status": "Pass",
                "vc": f"v{k % 14}",
                "jobid": f"app_{k}",
                "attempts": [
                    {
                        "start_time": str(started),
                        "end_time": str(started + timedelta(seconds=d)),
                        "detail": [{"ip": "m1", "gpus": [f"gpu{i}" for i in range(min(g, 8))]}],
                    }
                ],
                "submitted_time": str(moment),
                "user": f"u{k % 300}",
            }
        )
    paths = {
        "helios": folder / "cluster_log.csv",
        "acme": folder / "trace_seren.csv",
        "philly-raw": folder / "cluster_job_log",
        "pai2020": folder / "pai_job_table.csv",
    }
    paths["helios"].write_text("\n".join(helios) + "\n")
    paths["acme"].write_text("\n".join(acme) + "\n")
    paths["philly-raw"].write_text(json.dumps(philly, indent=4))
    paths["pai2020"].write_text("\n".join(jobs) + "\n")
    (folder / "pai_task_table.csv").write_text("\n".join(tasks) + "\n")
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{platform.node()} ({platform.machine()}), {args.rows:,} jobs per format")
    with tempfile.TemporaryDirectory() as folder:
        for name, path in write_files(Path(folder), args.rows, args.seed).items():
            walls = []
            for _ in range(args.repeats):
                began = time.perf_counter()
                report = check_trace(path, 64, 8, format=name)
                walls.append(time.perf_counter() - began)
                assert report.rows_read == args.rows, (name, report.rows_read)
            wall = statistics.median(walls)
            print(
                f"{name:>10}: {wall:6.2f} s (median of {args.repeats}), "
                f"{args.rows / wall:,.0f} rows/s; {len(report.check.findings)} findings"
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of the process: {peak:,.0f} MB")


if __name__ == "__main__":
    main()
