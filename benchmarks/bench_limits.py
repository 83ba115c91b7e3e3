"""Benchmark: does ``ddlsched solve --time-limit T`` answer within T + 1 s?

Runs the command as a user would (a fresh process each time, start-up included) on three
hard families: one 64-GPU job on 16 x 4 GPUs (its single mapping MILP is the slow part), a
32-GPU job beside a 4-GPU one on 8 x 4, and 24 jobs released together on 4 x 4 (the batch
family, seed 0), for each exact method and limit; prints the median wall time over
``--repeats`` runs, its excess over T, and the status.

    python benchmarks/bench_limits.py
    python benchmarks/bench_limits.py --limits 2 10 --repeats 5
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
from pathlib import Path

from ddlsched import Cluster, GeneratorConfig, Instance, generate, write_instance, zoo_job


def instances(folder: Path) -> dict[str, Path]:
    """The three families, written to ``folder``."""
    made = {
        "one 64-GPU job, 16x4": Instance(
            Cluster.uniform(16, 4, 20.0, 1.0),
            (zoo_job("megatron_8b", dp=4, pp=4, tp=4, iterations=3),),
        ),
        "32 + 4 GPUs, 8x4": Instance(
            Cluster.uniform(8, 4, 20.0, 1.0),
            (
                zoo_job("gpt2_xl", dp=8, pp=2, tp=2, iterations=3, job_id="b"),
                zoo_job("resnet50", dp=4, iterations=5, job_id="c"),
            ),
        ),
        "batch of 24, 4x4": generate(
            GeneratorConfig(num_jobs=24, servers=4, gpus_per_server=4, integral=True), 0
        ),
    }
    paths = {}
    for k, (name, instance) in enumerate(made.items()):
        paths[name] = folder / f"family{k}.json"
        write_instance(instance, paths[name])
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=["milp", "cpsat", "exact"])
    parser.add_argument("--limits", nargs="+", type=float, default=[2.0, 5.0, 10.0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"# solve --time-limit T, {platform.machine()}, {time.strftime('%Y-%m-%d')}, "
        f"median of {args.repeats} runs of the whole command"
    )
    print("| family | method | T s | median wall s | over T s | worst over T s | status |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for family, path in instances(Path(folder)).items():
            for method in args.methods:
                for limit in args.limits:
                    walls, statuses = [], set()
                    for _ in range(args.repeats):
                        began = time.perf_counter()
                        done = subprocess.run(
                            [sys.executable, "-m", "ddlsched.cli", "solve", str(path),
                             "--method", method, "--time-limit", f"{limit:g}", "--json"],
                            capture_output=True, text=True, check=True,
                        )  # fmt: skip
                        walls.append(time.perf_counter() - began)
                        statuses.add(json.loads(done.stdout)["status"])
                    wall = statistics.median(walls)
                    print(
                        f"| {family} | {method} | {limit:g} | {wall:.2f} | {wall - limit:+.2f} "
                        f"| {max(walls) - limit:+.2f} | {'/'.join(sorted(statuses))} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
