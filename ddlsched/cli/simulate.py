"""``ddlsched simulate``: replay a real trace with an online policy."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ddlsched.cli.files import check_outputs, output_extension
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    add_json,
    add_online,
    add_seed,
    big_count,
    new_command,
    non_negative,
)
from ddlsched.cli.output import figure_format, print_json, progress_bar, save_figure, types_text
from ddlsched.cli.replay import add_replay_options, left_out_fields, left_out_lines, load_replay
from ddlsched.core.model import InputError


def add(commands: Any) -> None:
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
    from ddlsched.api import simulate
    from ddlsched.cli import elastic
    from ddlsched.core.data import resolve_trace
    from ddlsched.core.io import write_schedule
    from ddlsched.core.params import OnlineParams
    from ddlsched.core.result import SolveStatus
    from ddlsched.core.traces import stretched_jobs

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
    loaded, instance, factor, load = load_replay(args)
    progress, close = progress_bar(instance.num_jobs, args.policy, unit="job")
    try:
        result = simulate(
            instance,
            args.policy,
            params=OnlineParams(
                predictor=args.predictor,
                mapper=args.mapper,
                restart_cost=args.restart_cost,
                placement=args.placement,
                max_preemptions=args.max_preemptions,
            ),
            seed=args.seed,
            progress=progress,
            partial=True,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    finally:
        close()
    if args.out and result.schedule is not None:
        write_schedule(result.schedule, args.out)
    if args.plot and result.schedule is not None:
        save_figure("simulation_figure", args.plot, instance, result.schedule, args.policy)
    result, interval = _interval(args, instance, result)
    summary = result.summary()
    if interval is not None:
        summary.update(interval.to_dict())
        summary["problem"] = interval.model  # "preemptive" for a preemptive policy
    # Waiting counts from the first start (S - r) and after a preemption (a preemptive
    # policy such as LAS starts every job on arrival and still makes some wait).
    idle = (
        result.metrics.get("mean_queueing_delay") == 0
        and result.metrics.get("preempted_jobs") == 0
    )
    warning = (
        "no job ever waited: every work-conserving policy gives this same schedule; raise the "
        "load (--target-load, --load-factor) or shrink the cluster to compare policies"
        if idle
        else None
    )
    stretched = stretched_jobs(instance, result.schedule) if result.schedule is not None else None
    summary.update(
        {
            "trace_format": loaded.format,
            "jobs": instance.num_jobs,
            **left_out_fields(loaded),
            "unnamed_rule": loaded.unnamed_rule,
            "jobs_without_known_model": loaded.unnamed_jobs,
            "unmatched_models": loaded.unmatched_models,
            "jobs_over_2x_recorded_duration": stretched,
            "arrival_scale": factor,
            "offered_load": load,
        }
    )
    if warning:
        summary["warning"] = warning
    if args.json:
        print_json(summary)
    else:
        _print(args, loaded, instance, factor, load, summary, result, stretched, warning)
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


_MODEL_NAMES = {"A": "problem A", "preemptive": "the preemptive model"}


def _interval(args: argparse.Namespace, instance: Any, result: Any) -> tuple[Any, Any]:
    """The run, and its model's flow interval (``None`` for an interrupted run); with
    ``--upper-bound`` narrowed by the model's sandwich, whose lower bound becomes the
    run's one bound when larger (so every ratio printed uses the same bound)."""
    import dataclasses

    from ddlsched.algorithms.offline import flow_interval
    from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES
    from ddlsched.core.result import SolveStatus

    if result.status is not SolveStatus.FEASIBLE:  # interrupted, or rejected by the verifier
        return result, None
    preemptive = args.policy in PREEMPTIVE_POLICIES
    if not args.upper_bound:
        return result, flow_interval(instance, result, preemptive=preemptive)
    from ddlsched.sandwich import flow_sandwich

    sandwich = flow_sandwich(instance, preemptive=preemptive, restart_cost=args.restart_cost)
    if sandwich.lower.flow_value > result.flow_lower_bound:
        result = dataclasses.replace(result, lower_bound=sandwich.lower)
    interval = flow_interval(instance, result, preemptive=preemptive, offline=sandwich.upper)
    return result, interval


def _print(
    args: argparse.Namespace,
    loaded: Any,
    instance: Any,
    factor: float,
    load: float,
    summary: dict[str, Any],
    result: Any,
    stretched: int | None,
    warning: str | None,
) -> None:
    from ddlsched.algorithms.simulator import REPORTED_METRICS

    print(
        f"{args.policy} on {args.trace} ({loaded.format}, {loaded.instance.num_jobs} jobs; "
        f"{loaded.dropped_wide} too wide, {loaded.skipped_invalid} invalid rows skipped) "
        f"on {args.servers} x {args.gpus_per_server} GPUs{types_text(instance.cluster)}, "
        f"offered load "
        f"{f'{load:.3g}' if math.isfinite(load) else 'unbounded (all jobs arrive at once)'}"
        f"{f' (arrivals compressed x{factor:.4g})' if factor != 1 else ''}:"
    )
    for key in REPORTED_METRICS:
        value = summary.get(key)
        if value is not None:
            print(f"  {key:>20}: {value:.6g}")
    print(
        f"  {loaded.unnamed_jobs} jobs had no known model ({loaded.unnamed_rule} rule); "
        f"{stretched} ran more than 2x their recorded duration"
    )
    for line in left_out_lines(loaded, args.trace):
        print(f"  {line}")
    if loaded.unmatched_models:
        names = sorted(loaded.unmatched_models.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{name} ({count})" for name, count in names[:8])
        print(f"  model names not in the zoo: {shown}{' ...' if len(names) > 8 else ''}")
    bound = result.lower_bound
    if bound is not None:
        print(
            f"  {'lower bound on OPT':>20}: {bound.value:.6g} ({bound.name}); sum C / LB = "
            f"{bound.ratio(result.objective):.4f} (certified: sum C / OPT is at most this)"
        )
    if summary.get("flow_upper_bound") is not None:
        low = summary["flow_lower_bound"]
        print(
            f"  {'total JCT interval':>20}: [{low if low is not None else float('nan'):.6g}, "
            f"{summary['flow_upper_bound']:.6g}] on {_MODEL_NAMES[summary['flow_model']]} "
            f"(upper: {summary['flow_upper_bound_method']}, verified); the policy is at "
            f"{summary['flow_policy_over_upper']:.4g}x the upper end"
        )
    for note in result.notes:
        print(f"  note: {note}")
    if warning:
        print(f"  warning: {warning}")
