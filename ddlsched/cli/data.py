"""``ddlsched data [list]``: the real data that ships with the package (name, rows, source,
licence); ``ddlsched data check TRACE``: a trace read and checked against a cluster
(:func:`ddlsched.core.trace_check.check_trace`)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable

from ddlsched.cli.options import EXIT_OK, Commands, add_json, count, new_command
from ddlsched.cli.output import print_json

CHECK_HELP = (
    "read a trace and check it against a cluster: what the reader leaves out, jobs wider "
    "than a server or the cluster, host GPU counts over a server's, offered load over 1, "
    "duplicate ids, durations not > 0 (findings are not errors: exit 0; --servers and "
    "--gpus-per-server required)"
)
"""What ``ddlsched data check`` does."""


def add(commands: Commands) -> None:
    """Register the command and its two actions (``list``, the default, and ``check``)."""
    from ddlsched.cli.replay import add_reading_options

    data = new_command(commands, "data")
    _list_options(data)
    data.set_defaults(handler=run)
    actions = data.add_subparsers(dest="data_action", metavar="{list,check}")
    listing = new_command(actions, "list", "list the shipped traces and profiles (the default)")
    _list_options(listing)
    check = new_command(actions, "check", CHECK_HELP)
    check.add_argument("trace", metavar="TRACE", help="the trace file (as simulate --trace)")
    check.add_argument("--servers", type=count, required=True, help="servers of the cluster")
    check.add_argument("--gpus-per-server", type=count, required=True, help="GPUs per server")
    add_reading_options(check)
    add_json(check)
    check.set_defaults(handler=run_check)


def _list_options(command: argparse.ArgumentParser) -> None:
    """``--all`` and ``--json`` of the listing."""
    command.add_argument(
        "--all",
        action="store_true",
        help="one line per file (default: traces and workloads by file, profiles by kind)",
    )
    add_json(command)


def run_check(args: argparse.Namespace) -> int:
    """Print what the trace's reading left out and what its check found (text or JSON)."""
    from ddlsched.cli.replay import parse_columns_option
    from ddlsched.core.trace_check import check_trace

    columns = None if args.columns is None else parse_columns_option(args.columns)
    close = _heartbeat(args.trace)
    try:
        report = check_trace(
            args.trace,
            args.servers,
            args.gpus_per_server,
            format=args.format,
            columns=columns,
            time_unit=args.time_unit,
            states=args.states,
            fractional=args.fractional,
        )
    finally:
        close()
    if args.json:
        print_json(report.to_dict())
    else:
        print("\n".join(report.lines()))
    return EXIT_OK


def _heartbeat(trace: str) -> Callable[[], None]:
    """A line on stderr every :data:`~ddlsched.cli.output.HEARTBEAT_S` seconds while a
    large trace is read (Helios and Acme run to hundreds of thousands of rows); the
    returned function stops it."""
    from ddlsched.cli.output import HEARTBEAT_S

    began, stop = time.monotonic(), threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            elapsed = time.monotonic() - began
            print(f"data check: reading {trace}; {elapsed:.0f} s", file=sys.stderr, flush=True)

    thread = threading.Thread(target=beat, name="data-check-progress", daemon=True)
    thread.start()

    def close() -> None:
        stop.set()
        thread.join()

    return close


def run(args: argparse.Namespace) -> int:
    """Print every shipped file, or one line per kind of profile, and where a user's own
    folder would come first."""
    from ddlsched.core.data import (
        DATA_ENV,
        DataFile,
        bundled_data_dir,
        shipped_files,
        user_data_dir,
    )

    files = shipped_files()
    user = user_data_dir()
    overridden = [f.name for f in files if user is not None and os.path.lexists(user / f.name)]
    if args.json:
        print_json(
            {
                "folder": str(bundled_data_dir()),
                "user_folder": None if user is None else str(user),
                "overridden": overridden,
                "files": [f.as_dict() for f in files],
            }
        )
        return EXIT_OK
    print(f"shipped in {bundled_data_dir()} (licence texts in its LICENSES/)")
    if user is not None:
        print(f"{DATA_ENV}={user}: its files come first; it replaces {len(overridden)} of these")
        for name in overridden:
            print(f"  {name}: read from {user / name}")
    groups: dict[str, list[DataFile]] = {}
    for file in files:
        by_file = args.all or file.dataset.pattern.startswith(("traces/", "pollux/workloads/"))
        groups.setdefault(file.name if by_file else file.dataset.pattern, []).append(file)
    lines = []
    for name, members in groups.items():
        label = name if len(members) == 1 else f"{name} ({len(members)} files)"
        lines.append((label, sum(f.rows for f in members), members[0].dataset))
    width = max(len(label) for label, _, _ in lines)
    print(f"{'name':<{width}} {'rows':>7}  {'licence':<10} source")
    for label, rows, dataset in lines:
        print(f"{label:<{width}} {rows:>7,}  {dataset.licence:<10} {dataset.source}")
    print("a bare name (philly_jobs.csv, workload-6.csv) works in simulate, bound and predict")
    return EXIT_OK
