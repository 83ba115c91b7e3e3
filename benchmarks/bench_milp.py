"""Benchmark: the problem-A MILP on generated integral instances.

Prints, per cluster shape and job count, the median build time, solve time
and gap over several seeds at a time limit, and how many were proven
optimal. Every schedule is checked by the verifier; a wrong objective is an
error, a slow solve is a figure. Run:

    python benchmarks/bench_milp.py                      # the README table
    python benchmarks/bench_milp.py --shapes 2x4 --jobs 6 8 --seeds 3

Instances: ``GeneratorConfig`` defaults in integral mode with
``bandwidth_intra / bandwidth_inter = 2``, jobs of up to 8 GPUs, all released
at time 0 (``--load`` for Poisson arrivals).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

from ddlsched.formulations.milp import build, solve_built
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.io import write_text_atomic
from ddlsched.core.params import ExactParams


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=["2x4", "3x4", "4x4"])
    parser.add_argument("--jobs", nargs="+", type=int, default=[6, 10, 16, 20])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--load", type=float, default=None)
    parser.add_argument("--out", help="write the raw figures as JSON here")
    args = parser.parse_args()

    options = ExactParams(time_limit=args.time_limit, threads=args.threads)
    rows = []
    print(
        f"# problem A MILP, {platform.processor() or platform.machine()}, "
        f"{time.strftime('%Y-%m-%d')}, time limit {args.time_limit:g} s"
    )
    print(
        "| cluster | jobs | seeds | optimal | median build s | median solve s | median gap "
        "| median variables |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in args.shapes:
        servers, gpus = (int(x) for x in shape.split("x"))
        for jobs in args.jobs:
            builds, solves, gaps, sizes, optimal = [], [], [], [], 0
            for seed in range(args.seeds):
                config = GeneratorConfig.exact_friendly(jobs, servers, gpus, args.load).replace(
                    max_job_gpus=8
                )
                instance = generate(config, seed)
                built = build(instance, "A", options=options)
                result = solve_built(built, options)
                if result.schedule is not None:
                    report = verify(instance, result.schedule)
                    if not report.feasible or abs(
                        report.total_completion_time - result.objective
                    ) > 1e-6 * max(1.0, result.objective):
                        raise SystemExit(f"seed {seed}: schedule failed verification")
                optimal += result.proven_optimal
                builds.append(result.build_time_s)
                solves.append(result.runtime_s)
                gaps.append(result.gap if result.gap == result.gap else 1.0)
                sizes.append(result.metrics["variables"])
                rows.append(
                    {
                        "cluster": shape,
                        "jobs": jobs,
                        "seed": seed,
                        "status": result.status.value,
                        "build_s": result.build_time_s,
                        "solve_s": result.runtime_s,
                        "gap": result.gap,
                        "variables": result.metrics["variables"],
                    }
                )
            print(
                f"| {shape} | {jobs} | {args.seeds} | {optimal}/{args.seeds} | "
                f"{statistics.median(builds):.2f} | {statistics.median(solves):.1f} | "
                f"{statistics.median(gaps):.3f} | {statistics.median(sizes):.0f} |",
                flush=True,
            )
    if args.out:
        write_text_atomic(args.out, json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
