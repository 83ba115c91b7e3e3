"""``ddlsched sweep`` (a grid of experiments on Dask, results in SQLite) and ``results``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ddlsched.cli.files import check_outputs, csv_output
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    OUT,
    Commands,
    add_json,
    count,
    new_command,
    refuse_given,
)
from ddlsched.cli.output import figure_format, print_json, progress_bar, save_figure, write_csv

if TYPE_CHECKING:
    import pandas as pd


def add(commands: Commands) -> None:
    """Register ``sweep`` and ``results``."""
    sweep = new_command(commands, "sweep")
    sweep.add_argument("config", help="TOML file with a [sweep] table (required)")
    sweep.add_argument(
        "--scheduler", help="address of a running Dask scheduler (default: start a local cluster)"
    )
    sweep.add_argument("--workers", type=count, default=2, help="local cluster workers")
    sweep.add_argument("--results", default=f"{OUT}/results.sqlite", help="SQLite results file")
    sweep.add_argument(
        "--allow-mixed-versions",
        action="store_true",
        help="add rows to a results file produced by another version or git revision "
        "(refused otherwise); the rows added are marked mixed",
    )
    sweep.set_defaults(handler=run)

    results = new_command(commands, "results")
    results.add_argument("results", help="SQLite results file of 'ddlsched sweep'")
    results.add_argument(
        "--csv",
        metavar="ROWS.CSV",
        help="write every task's row (method, seed, generator settings, status, objective, "
        "OPT, bound, C/OPT, C/LB, the command regenerating the instance) to this CSV file "
        "(default: none)",
    )
    results.add_argument(
        "--plot",
        help="write per method the distribution of C/OPT (and of C/LB) over the instances "
        "to this .png, .pdf or .svg (default: none)",
    )
    add_json(results, "print the summary table as JSON")
    results.set_defaults(handler=run_results)


def run(args: argparse.Namespace) -> int:
    """Run the tasks not yet in the results file; exit 1 if any failed, 130 if interrupted."""
    from ddlsched.sweeps import read_sweep, run_sweep

    check_outputs({"--results": args.results}, [args.config])
    if args.scheduler is not None:
        refuse_given(args, ("--workers",), "only for the local cluster; --scheduler names one")
    config = read_sweep(args.config)
    total = sum(1 for _ in config.tasks())
    progress, close = progress_bar(total, "sweep", unit="task")
    try:
        outcome = run_sweep(
            config,
            args.results,
            scheduler=args.scheduler,
            workers=args.workers,
            progress=progress,
            allow_mixed=args.allow_mixed_versions,
            quiet_after_interrupt=True,
        )
    finally:
        close()
    resume = " (interrupted: finished rows are kept; run again to resume)"
    failed = (
        f", {outcome.failed} failed (their messages: ddlsched results {args.results}; a re-run "
        "retries them)"
        if outcome.failed
        else ""
    )
    print(
        f"{outcome.total} tasks: {outcome.skipped} already in {args.results}, {outcome.ran} run"
        f"{failed}{resume if outcome.interrupted else ''}"
    )
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_NO if outcome.failed else EXIT_OK


def run_results(args: argparse.Namespace) -> int:
    """Summarise a results file: one row per method and setting, and the failed tasks."""
    from ddlsched.sweeps import load_results, producers, ratio_samples, summarise

    check_outputs({"--csv": args.csv, "--plot": args.plot}, [args.results])
    csv_output("--csv", args.csv)
    if args.plot:
        figure_format("--plot", args.plot)
    frame = load_results(args.results)
    table = summarise(frame)
    if args.csv:
        write_csv(_rows(frame), args.csv)
    if args.plot:
        save_figure(
            "ratios_figure", args.plot, ratio_samples(frame, "C/OPT"), ratio_samples(frame, "C/LB")
        )
    if args.json:
        print_json(_rows(table))
        return EXIT_OK
    print(f"{len(frame)} rows in {args.results}, produced by:")
    for row in producers(frame).itertuples():
        mixed = f", {row.mixed} added as mixed" if row.mixed else ""
        print(f"  ddlsched {row.version} (revision {row.revision}): {row.rows} rows{mixed}")
    print(table.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    failed = frame[frame["status"] == "failed"]
    for row in failed.head(10).itertuples():
        print(f"  failed: {row.method} seed {row.seed}: {row.message}")
    if len(failed) > 10:
        print(f"  ... and {len(failed) - 10} more failed tasks")
    invalid = frame[frame["invalid"] != ""]
    for row in invalid.head(10).itertuples():
        print(f"  invalid: {row.method} seed {row.seed} (key {row.key}): {row.invalid}")
    if len(invalid) > 10:
        print(f"  ... and {len(invalid) - 10} more invalid rows (left out of the ratios)")
    for option, path in (("rows", args.csv), ("figure", args.plot)):
        if path:
            print(f"{option} written to {path}")
    return EXIT_OK


def _rows(frame: pd.DataFrame) -> list[dict[str, object]]:
    """``frame``'s rows as plain Python values at full precision (``None`` where unknown),
    as ``compare`` writes its own."""
    plain = frame.astype(object).where(frame.notna(), None)
    return [
        {key: value.item() if hasattr(value, "item") else value for key, value in row.items()}
        for row in plain.to_dict("records")
    ]
