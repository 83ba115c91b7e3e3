"""The trace options shared by ``simulate`` and ``bound``, and the trace they describe."""

from __future__ import annotations

import argparse
import warnings
from typing import Any

from ddlsched.cli.options import add_gpu_types, count, positive
from ddlsched.core.model import InputError


def add_replay_options(command: argparse.ArgumentParser, required: bool = True) -> None:
    """``--trace`` and how to read it, the cluster it runs on, and the load to run it at."""
    from ddlsched.core.traces import FIELDS, TIME_UNITS, UNNAMED_RULES

    command.add_argument(
        "--trace",
        required=required,
        help="CSV trace: philly, muri, tiresias, or minimal (submit time, duration, GPUs)",
    )
    command.add_argument(
        "--columns",
        help=f"map fields to your columns, e.g. submit=submission_time,gpus=num_gpu "
        f"(fields: {', '.join(FIELDS)})",
    )
    command.add_argument(
        "--time-unit",
        choices=list(TIME_UNITS),
        help="unit of numeric submit and duration columns (default: the format's)",
    )
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


def load_replay(args: argparse.Namespace) -> tuple[Any, Any, float, float]:
    """The trace as an instance, at the asked load: (loaded, instance, factor, offered load)."""
    from ddlsched.core.data import resolve_trace
    from ddlsched.core.io import check_regular_file
    from ddlsched.core.model import Cluster, expand_types
    from ddlsched.core.offered_load import at_load, offered_load, scale_arrivals
    from ddlsched.core.traces import RowsLeftOut, load_trace

    args.trace = str(resolve_trace(args.trace))  # a bare name: the data folder's file
    check_regular_file(args.trace, "CSV trace")
    try:
        cluster = Cluster.uniform(
            args.servers, args.gpus_per_server, args.bandwidth_intra, args.bandwidth_inter
        )
        if args.gpu_types:
            kinds = expand_types(args.gpu_types)
            if len(kinds) != args.servers:
                raise InputError(
                    f"--gpu-types: lists {len(kinds)} servers but --servers is {args.servers}"
                )
            cluster = cluster.replace(server_types=kinds)
        with warnings.catch_warnings():  # named by the command itself
            warnings.simplefilter("ignore", RowsLeftOut)
            loaded = load_trace(
                args.trace,
                cluster,
                seed=args.seed,
                limit=args.limit,
                unnamed=args.unnamed,
                columns=None if args.columns is None else _columns(args.columns),
                time_unit=args.time_unit,
            )
    except ValueError as error:
        raise InputError(str(error)) from None
    instance, factor = loaded.instance, 1.0
    try:
        if args.target_load is not None:
            instance, factor = at_load(instance, args.target_load)
        elif args.load_factor is not None:
            factor = args.load_factor
            instance = scale_arrivals(instance, factor)
    except ValueError as error:  # the factor, or the horizon it gives the trace
        option = "--target-load" if args.target_load is not None else "--load-factor"
        raise InputError(f"{option}: {error}") from None
    return loaded, instance, factor, offered_load(instance)


def left_out_fields(loaded: Any) -> dict[str, Any]:
    """What the trace reader left out, for ``--json``: the counts and the first
    :data:`~ddlsched.core.traces.LEFT_OUT_SHOWN` rows (line, column, value, kind, reason)."""
    from ddlsched.core.traces import LEFT_OUT_SHOWN

    return {
        "rows_read": loaded.rows_read,
        "rows_skipped": loaded.skipped_invalid,
        "jobs_dropped_too_wide": loaded.dropped_wide,
        "rows_left_out_first": [row.to_dict() for row in loaded.left_out[:LEFT_OUT_SHOWN]],
    }


def left_out_lines(loaded: Any, trace: str) -> list[str]:
    """What the trace reader left out, as text (the reader's own report, which
    :func:`load_replay` keeps from being warned a second time)."""
    from ddlsched.core.traces import left_out_report

    return left_out_report(loaded.left_out, loaded.rows_read, trace)


def _columns(text: str) -> dict[str, str]:
    """``--columns``: FIELD=COLUMN pairs; an empty value is refused, not read as none."""
    from ddlsched.core.traces import parse_columns

    if not text.replace(",", "").strip():
        raise InputError(
            f"--columns: expected FIELD=COLUMN pairs separated by commas "
            f"(e.g. submit=submission_time,gpus=num_gpu), got {text!r}"
        )
    return parse_columns(text)
