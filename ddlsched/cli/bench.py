"""``ddlsched bench``: the certified benchmark library (:mod:`ddlsched.bench`).

``bench list`` prints its entries, ``bench export`` writes one entry's instance (and
schedule) for other tools, ``bench verify`` re-checks every certificate; ``bench run``,
``leaderboard`` and ``improve`` (:mod:`ddlsched.cli.bench_score`) score schedulers on it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ddlsched.cli import bench_score
from ddlsched.cli.options import EXIT_NO, EXIT_OK, Commands, add_json, name_list, new_command
from ddlsched.cli.output import print_json
from ddlsched.core.jsontypes import JsonObject

if TYPE_CHECKING:
    from ddlsched.bench.library import Entry
    from ddlsched.bench.verify import EntryCheck


def add(commands: Commands) -> None:
    """Register ``bench`` and its subcommands."""
    bench = new_command(commands, "bench")
    bench.set_defaults(handler=run_list, tier=None, library=None, json=False)
    sub = bench.add_subparsers(dest="bench_action", metavar="ACTION")

    listing = new_command(
        sub, "list", what="one line per entry: tier, name, jobs, optimum (the default)"
    )
    _tier_and_library(listing)
    add_json(listing, "print the entries as JSON")
    listing.set_defaults(handler=run_list)

    export = new_command(sub, "export", what="write one entry's instance (and schedule)")
    export.add_argument("name", help="the entry's name (see bench list)")
    export.add_argument("--out", required=True, help="the instance file to write")
    export.add_argument(
        "--schedule", metavar="FILE", help="also write the certificate's schedule (JSON) here"
    )
    export.add_argument(
        "--format",
        choices=("json", "csv"),
        default="json",
        help="json: the project's instance format; csv: a job table (id, submit, duration "
        "at the stored schedule's mapping, gpus, weight) for tools that read traces",
    )
    _library(export)
    export.set_defaults(handler=run_export)

    verify = new_command(sub, "verify", what="re-check every certificate; exit 1 if one fails")
    _tier_and_library(verify)
    verify.add_argument(
        "--full",
        action="store_true",
        help="recompute the expensive bounds too (an exact solve's proof, the start-time "
        "Lagrangian): minutes",
    )
    add_json(verify, "print each entry's check as JSON")
    verify.set_defaults(handler=run_verify)

    bench_score.add(sub)


def _library(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--library", metavar="PATH", help="a library folder (default: the shipped library)"
    )


def _tier_and_library(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--tier",
        type=lambda text: name_list(text, "--tier", "tiers"),
        help="only these tiers, separated by commas (S, M, L, T; default: all)",
    )
    _library(command)


def _cluster(item: Entry) -> str:
    cluster = item.instance.cluster
    sizes = set(cluster.gpus_per_server)
    shape = (
        f"{cluster.num_servers}x{cluster.gpus_per_server[0]}"
        if len(sizes) == 1
        else "+".join(map(str, cluster.gpus_per_server))
    )
    if cluster.server_types:
        kinds = sorted(set(cluster.server_types))
        shape += " (" + ",".join(f"{k}:{cluster.server_types.count(k)}" for k in kinds) + ")"
    return shape


def _row(item: Entry) -> JsonObject:
    """An entry's line of ``bench list --json``: the certificate on ``sum w C`` and on the
    weighted flow ``sum w (C - r)``."""
    certificate = item.certificate
    return {
        "tier": item.tier,
        "name": item.name,
        "jobs": item.instance.num_jobs,
        "cluster": _cluster(item),
        "status": certificate.status,
        "optimum": certificate.optimum,
        "lower_bound": certificate.lower_bound,
        "upper_bound": certificate.upper_bound,
        "flow_optimum": item.flow_optimum,
        "flow_lower_bound": item.flow_lower_bound,
        "flow_upper_bound": item.flow_upper_bound,
        "lower_bound_name": certificate.lower_bound_name,
    }


def run_list(args: argparse.Namespace) -> int:
    """Print the chosen entries."""
    from ddlsched.bench.library import entries

    chosen = entries(args.tier, path=args.library)
    if args.json:
        print_json([_row(item) for item in chosen])
        return EXIT_OK
    width = max((len(item.name) for item in chosen), default=4)
    print(f"tier {'name':<{width}} {'jobs':>5}  {'cluster':<16} optimum sum w C or [LB, UB]")
    for item in chosen:
        certificate = item.certificate
        value = (
            f"{certificate.upper_bound:.6g}"
            if certificate.optimum is not None
            else f"[{certificate.lower_bound:.6g}, {certificate.upper_bound:.6g}]"
        )
        print(
            f"{item.tier:<4} {item.name:<{width}} {item.instance.num_jobs:>5}  "
            f"{_cluster(item):<16} {value}"
        )
    print(f"{len(chosen)} entries")
    return EXIT_OK


def run_export(args: argparse.Namespace) -> int:
    """Write the entry's instance (JSON or a CSV job table) and, if asked, its schedule."""
    from ddlsched.bench.library import entry, job_table
    from ddlsched.core.io import write_instance, write_schedule, write_text_atomic

    item = entry(args.name, args.library)
    if args.format == "csv":
        write_text_atomic(args.out, job_table(item))
    else:
        write_instance(item.instance, args.out)
    print(f"wrote {args.out} ({item.instance.num_jobs} jobs, {args.format})", file=sys.stderr)
    if args.schedule is not None:
        write_schedule(item.certificate.schedule, args.schedule)
        print(f"wrote {args.schedule} (the certificate's schedule)", file=sys.stderr)
    return EXIT_OK


def _check_document(check: EntryCheck) -> JsonObject:
    return {
        "tier": check.tier,
        "name": check.name,
        "holds": check.holds,
        "problems": list(check.problems),
        "skipped": list(check.skipped),
        "seconds": check.seconds,
    }


def run_verify(args: argparse.Namespace) -> int:
    """Check the chosen certificates with progress on stderr; exit 1 naming each that fails
    (Ctrl-C: what was checked is reported, exit 130 as elsewhere)."""
    from ddlsched.bench.verify import VerifyInterrupted, verify_library

    def progress(done: int, total: int, check: EntryCheck) -> None:
        word = "ok" if check.holds else "FAILS"
        print(
            f"bench verify: [{done}/{total}] {check.name}: {word} ({check.seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    try:
        checks = verify_library(args.tier, args.full, args.library, progress)
    except VerifyInterrupted as interrupt:
        _report(interrupt.done, args.json, interrupted=True)
        raise KeyboardInterrupt from None
    return _report(checks, args.json, interrupted=False)


def _report(checks: list[EntryCheck], as_json: bool, interrupted: bool) -> int:
    failing = [check for check in checks if not check.holds]
    if as_json:
        print_json(
            {
                "checked": len(checks),
                "interrupted": interrupted,
                "entries": [_check_document(c) for c in checks],
            }
        )
    else:
        for check in failing:
            for problem in check.problems:
                print(f"{check.name}: {problem}")
        skipped = sum(1 for check in checks if check.skipped)
        more = f"; {skipped} with an expensive bound left to --full" if skipped else ""
        cut = " before Ctrl-C" if interrupted else ""
        print(
            f"{len(checks) - len(failing)} of {len(checks)} certificates hold{cut}{more}"
            + (f"; failing: {', '.join(c.name for c in failing)}" if failing else "")
        )
    return EXIT_NO if failing else EXIT_OK
