"""``ddlsched data``: the real data that ships with the package (name, rows, source, licence)."""

from __future__ import annotations

import argparse
import os

from ddlsched.cli.options import EXIT_OK, Commands, add_json, new_command
from ddlsched.cli.output import print_json


def add(commands: Commands) -> None:
    """Register the command."""
    data = new_command(commands, "data")
    data.add_argument(
        "--all",
        action="store_true",
        help="one line per file (default: traces and workloads by file, profiles by kind)",
    )
    add_json(data)
    data.set_defaults(handler=run)


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
