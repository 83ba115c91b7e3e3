"""The trace options shared by ``simulate`` and ``bound``, and the trace they describe."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from ddlsched.cli.options import add_gpu_types, count, positive
from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from ddlsched.core.model import Instance
    from ddlsched.core.traces import LoadedTrace
    from ddlsched.experiments.trace_study import LeftOutFields, TraceReplay

Arguments = ParamSpec("Arguments")
Answer = TypeVar("Answer")


def add_replay_options(command: argparse.ArgumentParser, required: bool = True) -> None:
    """``--trace`` and how to read it, the cluster it runs on, and the load to run it at."""
    from ddlsched.core.traces import UNNAMED_RULES

    command.add_argument(
        "--trace",
        required=required,
        help="trace: a CSV file (philly, muri, tiresias, helios, acme, or minimal: submit "
        "time, duration, GPUs), a raw Philly cluster_job_log, or a PAI pai_job_table.csv",
    )
    add_reading_options(command)
    command.add_argument(
        "--unnamed",
        choices=UNNAMED_RULES,
        default=UNNAMED_RULES[0],
        help="how rows without a known model become jobs: data-parallel (resnet50's "
        "profile, pure data parallel), zoo-data-parallel (a zoo model drawn among those "
        "pure data parallel at the row's GPU count) or zoo (any zoo model, tensor-parallel "
        "ones included: a spread job may run far beyond its recorded duration) (default: "
        f"{UNNAMED_RULES[0]}; generate and compare --from-trace draw zoo-data-parallel)",
    )
    command.add_argument("--servers", type=count, default=256, help="servers of the cluster")
    command.add_argument("--gpus-per-server", type=count, default=8, help="GPUs per server")
    command.add_argument("--bandwidth-intra", type=positive, default=20.0, help="GB/s")
    command.add_argument("--bandwidth-inter", type=positive, default=1.0, help="GB/s")
    add_gpu_types(
        command,
        "a mixed cluster: servers per type adding up to --servers, e.g. "
        "v100:64,k80:192 (per-type times from Gavel's measurements)",
    )
    command.add_argument("--limit", type=count, help="only the first N jobs by submit time")
    load = command.add_mutually_exclusive_group()
    load.add_argument(
        "--load-factor", type=positive, help="compress inter-arrival times by this factor"
    )
    load.add_argument(
        "--target-load", type=positive, help="compress arrivals to this offered load"
    )


def add_reading_options(command: argparse.ArgumentParser, prefix: str = "") -> None:
    """How a trace file is read: ``--format``, ``--columns``, ``--time-unit``,
    ``--states``, ``--fractional`` (``prefix`` leads each help text)."""
    from ddlsched.core.traces import FIELDS, FORMAT_NAMES, FRACTIONAL_RULES, TIME_UNITS

    command.add_argument(
        "--format",
        choices=FORMAT_NAMES,
        help=f"{prefix}the trace's format (default: recognised from the file)",
    )
    command.add_argument(
        "--columns",
        help=f"{prefix}map fields to your columns, e.g. submit=submission_time,gpus=num_gpu "
        f"(fields: {', '.join(FIELDS)})",
    )
    command.add_argument(
        "--time-unit",
        choices=list(TIME_UNITS),
        help=f"{prefix}unit of numeric submit and duration columns (default: the format's)",
    )
    command.add_argument(
        "--states",
        help=f"{prefix}job states to keep, e.g. COMPLETED,FAILED (default: every state)",
    )
    command.add_argument(
        "--fractional",
        choices=FRACTIONAL_RULES,
        default=FRACTIONAL_RULES[0],
        help=f"{prefix}a fractional GPU count (PAI's plan_gpu 50): refuse the trace, round "
        "it up to whole GPUs per instance, or drop the job",
    )


def load_replay(args: argparse.Namespace) -> tuple[LoadedTrace, Instance, float, float]:
    """The trace as an instance, at the asked load: (loaded, instance, factor, offered load)."""
    replay = trace_replay(args)
    return replay.loaded, replay.instance, replay.arrival_scale, replay.offered_load


def trace_replay(args: argparse.Namespace) -> TraceReplay:
    """The trace the options describe, at the asked load
    (:class:`~ddlsched.experiments.trace_study.TraceReplay`)."""
    from ddlsched.experiments.trace_study import at_load

    loaded, source = read_replay_trace(args)
    return option_errors(at_load, loaded, source, args.target_load, args.load_factor)


def read_replay_trace(args: argparse.Namespace) -> tuple[LoadedTrace, str]:
    """The trace the options describe, read on their cluster, and its path."""
    from ddlsched.experiments.trace_study import read_trace

    loaded, args.trace = option_errors(
        read_trace,
        args.trace,
        servers=args.servers,
        gpus_per_server=args.gpus_per_server,
        gpu_types=args.gpu_types,
        bandwidth_intra=getattr(args, "bandwidth_intra", 20.0),
        bandwidth_inter=getattr(args, "bandwidth_inter", 1.0),
        limit=args.limit,
        seed=args.seed,
        unnamed=args.unnamed,
        columns=None if args.columns is None else parse_columns_option(args.columns),
        time_unit=args.time_unit,
        format=args.format,
        states=args.states,
        fractional=args.fractional,
    )
    return loaded, args.trace


OPTION_OF = {
    "target_load": "--target-load",
    "target_loads": "--target-load",
    "load_factor": "--load-factor",
    "gpu_types": "--gpu-types",
    "policies": "--policies",
    "bounds": "--bounds",
    "workers": "--workers",
}
"""The command-line option of an API argument an error may name first."""


def option_errors(
    call: Callable[Arguments, Answer], *args: Arguments.args, **kwargs: Arguments.kwargs
) -> Answer:
    """``call(*args, **kwargs)``, an error naming an API argument first (``target_load:
    ...``) raised as an :class:`InputError` naming its option (``--target-load: ...``)."""
    try:
        return call(*args, **kwargs)
    except ValueError as error:
        name, colon, rest = str(error).partition(":")
        if colon and name in OPTION_OF:
            text = f"{OPTION_OF[name]}:{rest}".replace(" servers is ", " --servers is ")
            raise InputError(text) from None
        raise InputError(str(error)) from None


def left_out_fields(loaded: LoadedTrace) -> LeftOutFields:
    """What the trace reader left out, for ``--json``: the counts and the first
    :data:`~ddlsched.core.traces.LEFT_OUT_SHOWN` rows (line, column, value, kind, reason)."""
    from ddlsched.core.traces import LEFT_OUT_SHOWN

    return {
        "rows_read": loaded.rows_read,
        "rows_skipped": loaded.skipped_invalid,
        "jobs_dropped_too_wide": loaded.dropped_wide,
        "rows_left_out_first": [row.to_dict() for row in loaded.left_out[:LEFT_OUT_SHOWN]],
    }


def left_out_lines(loaded: LoadedTrace, trace: str) -> list[str]:
    """What the trace reader left out, as text (the reader's own report, which
    :func:`load_replay` keeps from being warned a second time), the states kept, and what
    the trace's check found that the report does not already say (jobs too wide for the
    cluster and durations that are not positive are among the rows left out)."""
    from ddlsched.core.traces import left_out_report

    lines = left_out_report(loaded.left_out, loaded.rows_read, trace) + loaded.summary_lines()
    if loaded.check is not None:
        said = ("wider than the cluster", "duration not > 0")
        lines += [f"check: {line}" for line in loaded.check.lines(skip=said)]
    return lines


def parse_columns_option(text: str) -> dict[str, str]:
    """``--columns``: FIELD=COLUMN pairs; an empty value is refused, not read as none."""
    from ddlsched.core.traces import parse_columns

    if not text.replace(",", "").strip():
        raise InputError(
            f"--columns: expected FIELD=COLUMN pairs separated by commas "
            f"(e.g. submit=submission_time,gpus=num_gpu), got {text!r}"
        )
    return parse_columns(text)
