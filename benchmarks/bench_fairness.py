"""Benchmark: finish-time fairness of the fair policies against the others on a trace.

Replays a trace (default the shipped Philly trace, its first 2,000 jobs, on 32 x 8
GPUs) under each policy through :func:`ddlsched.experiments.trace_study.trace_study`
(every run checked by the verifier; no bounds computed) and prints, per policy, the
worst and mean finish-time fairness ``rho`` (Themis, NSDI 2020; defined in
:mod:`ddlsched.core.fairness`), the mean JCT, the makespan, the GPU utilisation, the
jobs preempted and the run's wall time, then each policy's worst user. It asserts
only that every run was verified and completed every job; the figures are for the
docs (``docs/guide/online.md``, "Fair schedulers").

    python benchmarks/bench_fairness.py                      # Philly, 2,000 jobs, 32 x 8
    python benchmarks/bench_fairness.py --limit 5000
    python benchmarks/bench_fairness.py --trace tiresias_60_job.csv --servers 4 \\
        --gpus-per-server 4
"""

from __future__ import annotations

import argparse
import platform
import time

from ddlsched.experiments.trace_study import trace_study

POLICIES = ("themis", "maxmin-users", "fifo", "asrpt", "las")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="philly_jobs.csv")
    parser.add_argument("--servers", type=int, default=32)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--limit", type=int, default=2000, help="first jobs (0: all)")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    study = trace_study(
        args.trace,
        servers=args.servers,
        gpus_per_server=args.gpus_per_server,
        limit=args.limit or None,
        policies=args.policies.split(","),
        bounds="none",
        workers=args.workers,
    )
    wall = time.perf_counter() - started
    table = study.table()
    jobs = study.replays[None].instance.num_jobs
    print(
        f"{args.trace}, {jobs} jobs, {args.servers} x {args.gpus_per_server} GPUs, offered "
        f"load {study.replays[None].offered_load:.3g}; {platform.node()}, "
        f"{args.workers} workers, {wall:.0f} s wall in all (run: one policy's simulation)\n"
    )
    print("| policy | rho max | rho mean | mean JCT (s) | makespan (s) | GPU use | preempted jobs "
          "| run (s) |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in table.itertuples():
        assert row.verified, f"{row.policy}: the verifier rejected the run"
        print(
            f"| {row.policy} | {row.rho_max:.3f} | {row.rho_mean:.3f} | {row.mean_jct:,.0f} | "
            f"{row.makespan:,.0f} | {row.gpu_utilisation:.3f} | {row.preempted_jobs:.0f} | "
            f"{row.runtime_s:.1f} |"
        )
    every_job = study.jobs().groupby("policy").size()
    assert (every_job == jobs).all(), every_job
    groups = study.groups()
    if not groups.empty:
        users = groups[groups["grouping"] == "user"]
        worst = users.loc[users.groupby("policy")["rho_max"].idxmax()]
        print("\nEach policy's worst user (largest rho of its jobs):\n")
        print("| policy | user | jobs | mean JCT (s) | rho mean | rho max |")
        print("| --- | --- | --- | --- | --- | --- |")
        for row in worst.itertuples():
            print(
                f"| {row.policy} | {row.group} | {row.jobs} | {row.mean_jct:,.0f} | "
                f"{row.rho_mean:.3f} | {row.rho_max:.3f} |"
            )


if __name__ == "__main__":
    main()
