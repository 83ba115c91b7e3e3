"""``ddlsched simulate`` on a Pollux workload: elastic jobs, round by round.

A trace whose header is Pollux's workload format (``name,time,application,num_replicas,
batch_size``) holds elastic jobs (a model, an epoch budget, the GPUs and batch size the user
asked for); ``simulate`` then runs the elastic simulator
(:func:`ddlsched.algorithms.elastic.simulate_elastic`, 60 s rounds) with a policy of
:data:`ddlsched.algorithms.elastic.ELASTIC_POLICIES` (``pollux``, ``sia``, ``asrpt-elastic``,
``las-pollux``, ``fifo``), and checks the run with the independent
:func:`ddlsched.proofs_checks.elastic.check_elastic`.
"""

from __future__ import annotations

import argparse
import math
import statistics

from ddlsched.cli.options import EXIT_NO, EXIT_OK, refuse_given
from ddlsched.cli.output import print_json
from ddlsched.core.model import InputError

RIGID_ONLY = (
    "--out",
    "--plot",
    "--restart-cost",
    "--mapper",
    "--predictor",
    "--placement",
    "--seed",
    "--limit",
    "--gpu-types",
    "--columns",
    "--time-unit",
    "--unnamed",
    "--bandwidth-intra",
    "--bandwidth-inter",
    "--load-factor",
    "--target-load",
)
"""Options of ``simulate`` that have no meaning for elastic jobs (refused, not ignored): the
workload's own columns and times are read as they are, the elastic simulator places and
predicts nothing the user picks, and it draws nothing at random."""


def is_pollux_workload(path: str) -> bool:
    """Whether the file's first line is the Pollux workload header (read from a regular file
    only: a pipe or a device is refused first, one line, never read)."""
    from ddlsched.core.elastic import WORKLOAD_COLUMNS
    from ddlsched.core.io import check_regular_file

    check_regular_file(path, "CSV trace")
    with open(path, "rb") as handle:
        header = handle.readline(4096).decode("utf-8-sig", errors="replace").strip()
    return tuple(name.strip() for name in header.split(",")) == WORKLOAD_COLUMNS


def run(args: argparse.Namespace) -> int:
    """Simulate the workload with the elastic policy; print its JCTs and the check."""
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES, simulate_elastic
    from ddlsched.core.elastic import ElasticCluster, load_pollux_workload
    from ddlsched.formulations.elastic_bounds import elastic_flow_bound
    from ddlsched.proofs_checks.elastic import check_elastic

    if args.policy not in ELASTIC_POLICIES:
        raise InputError(
            f"--policy: {args.policy!r} is a rigid policy; a Pollux workload ({args.trace}) "
            f"needs one of {', '.join(ELASTIC_POLICIES.names())}"
        )
    refuse_given(args, RIGID_ONLY, f"not available for elastic jobs ({args.trace})")
    workload = load_pollux_workload(args.trace)
    cluster = ElasticCluster(args.servers, args.gpus_per_server)
    result = simulate_elastic(workload, ELASTIC_POLICIES[args.policy](), cluster)
    problems = check_elastic(result)
    jcts = sorted(result.jct.values())
    bound = elastic_flow_bound(
        workload.jobs,
        cluster.total_gpus,
        result.params.round_length,
        result.params.restart_time,
    )
    flow = math.fsum(jcts)
    summary = {
        "method": args.policy,
        "trace_format": "pollux-workload",
        "jobs": len(jcts),
        "cluster": f"{cluster.num_nodes} x {cluster.gpus_per_node}",
        "mean_jct": result.mean_jct,
        "total_flow_time": flow,
        "flow_lower_bound": bound.value,
        "flow_ratio": flow / bound.value if bound.value > 0 else None,
        "p50_jct": statistics.median(jcts),
        "p95_jct": jcts[min(len(jcts) - 1, int(0.95 * len(jcts)))],
        "makespan": max(result.completion.values()),
        "rounds": len(result.records),
        "restarts": sum(result.restarts.values()),
        "median_decision_s": statistics.median(result.decision_seconds or (0.0,)),
        "verified": not problems,
        "violations": problems[:10],
    }
    if args.json:
        print_json(summary)
    else:
        print(
            f"{args.policy} on {args.trace} (Pollux workload, {len(jcts)} elastic jobs) on "
            f"{summary['cluster']} GPUs, {summary['rounds']} rounds of 60 s:"
        )
        for key in ("mean_jct", "p50_jct", "p95_jct", "makespan", "restarts"):
            print(f"  {key:>20}: {summary[key]:.6g}")
        if summary["flow_ratio"] is not None:
            print(
                f"  {'flow_ratio':>20}: {summary['flow_ratio']:.4g} (total JCT over a lower "
                f"bound, {bound.value:.6g} s, valid for any run of this simulator)"
            )
        state = "passes" if not problems else f"FAILS ({len(problems)} violations)"
        print(f"  the run {state} the independent check (capacity, progress, JCTs)")
        for line in problems[:10]:
            print(f"  - {line}")
    return EXIT_OK if not problems else EXIT_NO
