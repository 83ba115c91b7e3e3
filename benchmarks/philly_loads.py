"""Every policy on the whole Philly trace at several offered loads, with certified ratios.

The trace is loaded once on a cluster of ``--servers x --gpus-per-server`` GPUs; its
inter-arrival times are compressed so that the offered load (``ddlsched.core.offered_load``)
equals each target; every policy replays it; ``sum C / LB`` uses the best fast lower
bound on ``OPT(A)`` (``ddlsched.formulations.lower_bounds``), so it bounds the ratio to the
optimum from above.

    python benchmarks/philly_loads.py --loads 0.7 0.9 1.1
"""

from __future__ import annotations

import argparse
import platform
import time

from ddlsched.formulations.lower_bounds import lower_bounds

from ddlsched import Cluster, data_path, load_trace, simulate
from ddlsched.core.offered_load import at_load
from ddlsched.core.result import best_lower_bound
from ddlsched.core.traces import UNNAMED_RULES, stretched_jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(data_path("traces", "philly_jobs.csv")))
    parser.add_argument("--servers", type=int, default=256)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--loads", nargs="+", type=float, default=[0.7, 0.9, 1.1])
    parser.add_argument(
        "--policies",
        nargs="+",
        default=["asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive", "las-tiresias"],
    )
    parser.add_argument(
        "--unnamed", default=UNNAMED_RULES[0], choices=UNNAMED_RULES, help="rows without a model"
    )
    args = parser.parse_args()
    cluster = Cluster.uniform(args.servers, args.gpus_per_server, 20.0, 1.0)
    trace = load_trace(args.trace, cluster, unnamed=args.unnamed).instance
    print(
        f"# {trace.num_jobs} jobs on {args.servers}x{args.gpus_per_server} ({args.unnamed} rule), "
        f"{platform.machine()}, {time.strftime('%Y-%m-%d')}"
    )
    print(
        "| load | policy | mean JCT (s) | p99 JCT (s) | sum C / LB | LB (which) | over 2x "
        "recorded | sim s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for load in args.loads:
        instance, _ = at_load(trace, load)
        bound = best_lower_bound(lower_bounds(instance))
        assert bound is not None
        for policy in args.policies:
            result = simulate(instance, policy, bound=False)
            print(
                f"| {load:g} | {policy} | {result.metrics['mean_jct']:,.0f} | "
                f"{result.metrics['p99_jct']:,.0f} | {bound.ratio(result.objective):.3f} | "
                f"{bound.value:.4g} ({bound.name}) | "
                f"{stretched_jobs(instance, result.schedule) if result.schedule else 'n/a'} | "
                f"{result.metrics['wall_time_s']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
