"""``ddlsched verify``: check a schedule against an instance with the independent verifier."""

from __future__ import annotations

import argparse

from ddlsched.cli.files import read_instance_file
from ddlsched.cli.options import EXIT_NO, EXIT_OK, Commands, add_json, new_command
from ddlsched.cli.output import print_json


def add(commands: Commands) -> None:
    """Register the command."""
    ver = new_command(commands, "verify")
    ver.add_argument("instance", help="instance file (JSON)")
    ver.add_argument("schedule", help="schedule file (JSON, from 'ddlsched solve --out')")
    add_json(ver, "print a JSON report")
    ver.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 for a feasible schedule, 1 (with each violation) for an infeasible one."""
    from ddlsched.core.io import read_schedule
    from ddlsched.proofs_checks.verifier import verify

    instance = read_instance_file(args.instance, "verify")
    schedule = read_schedule(args.schedule)
    report = verify(instance, schedule)
    if args.json:
        print_json(report.to_dict())
    elif report.feasible:
        print(
            f"feasible (problem {schedule.problem}): total completion time "
            f"{report.total_completion_time:.6g}, total JCT "
            f"{report.total_jct:.6g}"
        )
    else:
        print(f"infeasible: {len(report.violations)} violation(s)")
        for line in report.violations:
            print(f"  - {line}")
    return EXIT_OK if report.feasible else EXIT_NO
