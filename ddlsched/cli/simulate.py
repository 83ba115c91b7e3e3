"""``ddlsched simulate``: replay a real trace with an online policy."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ddlsched.cli.files import check_outputs, output_extension
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    Commands,
    add_json,
    add_online,
    add_seed,
    big_count,
    new_command,
    non_negative,
)
from ddlsched.cli.output import figure_format, print_json, progress_bar, save_figure, types_text
from ddlsched.cli.replay import add_replay_options, left_out_lines, trace_replay
from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from ddlsched.core.result import Result
    from ddlsched.experiments.trace_study import TraceReplay


def add(commands: Commands) -> None:
    """Register the command."""
    from ddlsched.algorithms.registry import POLICIES
    from ddlsched.algorithms.simulator import MAX_PREEMPTIONS
    from ddlsched.core.params import DEFAULT_RESTART_COST, PLACEMENTS, OnlineParams

    sim = new_command(commands, "simulate")
    add_replay_options(sim)
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES
    from ddlsched.cli.elastic import explain_cluster_defaults

    explain_cluster_defaults(sim)

    elastic = tuple(name for name in ELASTIC_POLICIES.names() if name not in POLICIES)
    sim.add_argument(
        "--policy",
        default=POLICIES.names()[0],
        choices=(*POLICIES.names(), *elastic),
        help=f"online policy (on a Pollux workload: {', '.join(ELASTIC_POLICIES.names())})",
    )
    add_online(sim)
    sim.add_argument(
        "--restart-cost",
        type=non_negative,
        help="seconds a preempted job restores on resuming (None: the policy's reference "
        f"value: 0 for las-tiresias, else {DEFAULT_RESTART_COST:g})",
    )
    sim.add_argument(
        "--max-preemptions",
        type=big_count,
        help="stop a preemptive run with an error past this many preemptions (each keeps a "
        f"piece in memory: a run stopped at the default {MAX_PREEMPTIONS:,} holds under 1 GB)",
    )
    sim.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default=OnlineParams().placement,
        help="any free GPUs, consolidated only (wait, as YARN), or consolidated when possible",
    )
    add_seed(sim)
    sim.add_argument(
        "--upper-bound",
        action="store_true",
        help="also the sandwich of the policy's model: its strongest lower bounds and the best "
        "verified offline schedule (minutes on a full trace; default: the fast bounds and "
        "the policy's own run)",
    )
    sim.add_argument(
        "--out",
        help="write the schedule here as JSON, a .json file (a Pollux workload: the run, every "
        "job and round)",
    )
    sim.add_argument(
        "--plot",
        help="write a figure (JCT CDF; Gantt chart if small; a Pollux workload: GPUs in use) "
        "to this .png, .pdf or .svg",
    )
    add_json(sim)
    sim.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Simulate, then print the metrics, what the trace reader did, and the lower bound."""
    from ddlsched.api import simulate_trace
    from ddlsched.cli import elastic
    from ddlsched.core.data import resolve_trace
    from ddlsched.core.io import write_schedule
    from ddlsched.core.params import OnlineParams
    from ddlsched.core.result import SolveStatus

    args.trace = str(resolve_trace(args.trace))
    if elastic.is_pollux_workload(args.trace):
        return elastic.run(args)
    from ddlsched.algorithms.registry import POLICIES

    if args.policy not in POLICIES:
        raise InputError(
            f"--policy: {args.policy!r} schedules elastic jobs: give it a Pollux workload "
            "(header name,time,application,num_replicas,batch_size), e.g. "
            "pollux/workloads/workload-6.csv"
        )
    check_outputs({"--out": args.out, "--plot": args.plot}, [args.trace])
    output_extension("--out", args.out, ".json", "the schedule is written as JSON")
    if args.plot:
        figure_format("--plot", args.plot)
    replay = trace_replay(args)
    instance = replay.instance
    progress, close = progress_bar(instance.num_jobs, args.policy, unit="job")
    params = OnlineParams(
        predictor=args.predictor,
        mapper=args.mapper,
        restart_cost=args.restart_cost,
        placement=args.placement,
        max_preemptions=args.max_preemptions,
    )
    try:
        run = simulate_trace(
            replay,
            args.policy,
            params=params,
            seed=args.seed,
            upper_bound=args.upper_bound,
            progress=progress,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    finally:
        close()
    result = run.result
    if args.out and result.schedule is not None:
        write_schedule(result.schedule, args.out)
    if args.plot and result.schedule is not None:
        save_figure("simulation_figure", args.plot, instance, result.schedule, args.policy)
    summary = run.summary()
    if args.json:
        print_json(summary)
    else:
        _print(args, replay, summary, result)
        for what, path in (("schedule", args.out), ("figure", args.plot)):
            if path and result.schedule is not None:
                print(f"{what} written to {path}")
    if result.schedule is None:  # Ctrl-C: the metrics above are partial
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if result.status is not SolveStatus.FEASIBLE:  # the verifier rejects the schedule
        print(f"ddlsched: error: {result.notes[0]}", file=sys.stderr)
        return EXIT_NO
    return EXIT_OK


_MODEL_NAMES: Mapping[object, str] = {"A": "problem A", "preemptive": "the preemptive model"}
"""Each model's name in a sentence, by the ``flow_model`` of a run's summary."""


def _print(
    args: argparse.Namespace,
    replay: TraceReplay,
    summary: Mapping[str, object],
    result: Result,
) -> None:
    """The heading, total JCT over the lower bound of the policy's model first, the
    metrics, what the reader left out, the model's interval, notes and warning."""
    from ddlsched.algorithms.simulator import REPORTED_METRICS

    loaded, instance, load = replay.loaded, replay.instance, replay.offered_load
    factor = replay.arrival_scale
    print(
        f"{args.policy} on {args.trace} ({loaded.format}, {loaded.instance.num_jobs} jobs; "
        f"{loaded.dropped_wide} too wide, {loaded.skipped_invalid} invalid rows skipped) "
        f"on {args.servers} x {args.gpus_per_server} GPUs{types_text(instance.cluster)}, "
        f"offered load "
        f"{f'{load:.3g}' if math.isfinite(load) else 'unbounded (all jobs arrive at once)'}"
        f"{f' (arrivals compressed x{factor:.4g})' if factor != 1 else ''}:"
    )
    bound = result.lower_bound
    if bound is not None and summary.get("flow_ratio") is not None:
        print(
            f"  {'total JCT / LB':>20}: {summary['flow_ratio']:.4f} (certified: total JCT / "
            f"OPT is at most this; total JCT {summary['total_jct']:.6g}, lower bound "
            f"{bound.flow_value:.6g} on {_MODEL_NAMES[summary.get('flow_model', 'A')]}, "
            f"{bound.name})"
        )
    for key in REPORTED_METRICS:
        value = summary.get(key)
        if value is not None:
            print(f"  {key:>20}: {value:.6g}")
    for line in fairness_lines(summary):
        print(f"  {line}")
    print(
        f"  {loaded.unnamed_jobs} jobs had no known model ({loaded.unnamed_rule} rule); "
        f"{summary['jobs_over_2x_recorded_duration']} ran more than 2x their recorded duration"
    )
    for line in left_out_lines(loaded, args.trace):
        print(f"  {line}")
    if loaded.unmatched_models:
        names = sorted(loaded.unmatched_models.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{name} ({count})" for name, count in names[:8])
        print(f"  model names not in the zoo: {shown}{' ...' if len(names) > 8 else ''}")
    if summary.get("flow_upper_bound") is not None:
        low = summary["flow_lower_bound"]
        print(
            f"  {'total JCT interval':>20}: [{low if low is not None else float('nan'):.6g}, "
            f"{summary['flow_upper_bound']:.6g}] on {_MODEL_NAMES[summary['flow_model']]} "
            f"(upper: {summary['flow_upper_bound_method']}, verified); the policy is at "
            f"{summary['flow_policy_over_upper']:.4g}x the upper end"
        )
    elif summary.get("flow_upper_bound_note"):
        print(f"  {'optimum from above':>20}: {summary['flow_upper_bound_note']}")
    for note in result.notes:
        print(f"  note: {note}")
    if summary.get("warning"):
        print(f"  warning: {summary['warning']}")


GROUPS_SHOWN = 10
"""Users (or virtual clusters) a summary names, the worst ``rho`` first (``--json``: all)."""


def fairness_lines(summary: Mapping[str, object]) -> list[str]:
    """The run's finish-time fairness: mean and worst ``rho``, then per user and per
    virtual cluster where the trace names them."""
    if summary.get("rho_max") is None:
        return []
    lines = [
        f"{'rho (fairness)':>20}: mean {summary['rho_mean']:.4g}, max {summary['rho_max']:.4g} "
        f"(job {summary['rho_max_job']}; rho = JCT / time alone on a 1/N share)"
    ]
    for grouping, what in (("user", "user"), ("vc", "virtual cluster")):
        groups = summary.get(f"fairness_by_{grouping}")
        if not isinstance(groups, Mapping):
            continue
        worst = sorted(groups.items(), key=lambda item: -item[1]["rho_max"])
        lines.append(f"{'per ' + what:>20}: {len(groups)}, the worst rho first")
        lines += [
            f"{name:>22}: {g['jobs']} job{'s' if g['jobs'] != 1 else ''}, mean JCT "
            f"{g['mean_jct']:.6g}, rho mean "
            f"{g['rho_mean']:.4g}, max {g['rho_max']:.4g}"
            for name, g in worst[:GROUPS_SHOWN]
        ]
        if len(worst) > GROUPS_SHOWN:
            lines.append(f"{'':>22}  ... {len(worst) - GROUPS_SHOWN} more (--json: all)")
    return lines
