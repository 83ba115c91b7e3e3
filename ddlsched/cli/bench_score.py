"""``ddlsched bench run``, ``bench leaderboard`` and ``bench improve``: schedulers scored
against the certified library, and the library's intervals narrowed
(:mod:`ddlsched.bench.score`)."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ddlsched.cli.files import check_outputs, csv_output
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    Commands,
    add_json,
    add_seed,
    count,
    name_list,
    new_command,
    positive,
)
from ddlsched.cli.output import print_json, print_table, progress_bar, write_csv
from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from ddlsched.bench.score import BenchRun, TierScore

RATIO_NOTE = (
    "ratio: total weighted JCT, sum w (C - r), over the optimal one where proven, else over "
    "its certified lower bound (an upper figure on the true ratio)"
)
C_RATIO_NOTE = "C ratio: the same on sum w C, which the releases pull towards 1 (not the score)"


def add(commands: Commands) -> None:
    """Add ``run``, ``leaderboard``, ``improve`` and ``copy`` to the ``bench`` command's
    subcommands."""
    _add_run(commands)
    _add_leaderboard(commands)
    _add_improve(commands)
    _add_copy(commands)


def _add_selection(command: argparse.ArgumentParser, names: bool = True) -> None:
    """``--tier``, ``--names`` (when ``names``) and ``--library``."""
    command.add_argument("--tier", help="comma-separated tiers, some of S, M, L, T (default: all)")
    if names:
        command.add_argument("--names", help="comma-separated entry names (default: all)")
    command.add_argument(
        "--library", help="a library folder (default: the one shipped with the package)"
    )


def _add_run(commands: Commands) -> None:
    from ddlsched.bench.score import leaderboard_policies

    run_ = new_command(commands, "run", what="score a scheduler on the library's entries")
    run_.add_argument(
        "--policy",
        required=True,
        help=f"a built-in policy ({', '.join(leaderboard_policies())}), module:Class or "
        "path/to/file.py:Class (a class of the Policy protocol, called with the cluster)",
    )
    _add_selection(run_)
    add_seed(run_, what="the policy's random seed")
    run_.add_argument("--out", help="write one row per entry to this .csv file")
    add_json(run_)
    run_.set_defaults(handler=run)


def _add_leaderboard(commands: Commands) -> None:
    from ddlsched.bench.score import leaderboard_policies

    board = new_command(
        commands, "leaderboard", what="every built-in policy scored on the library, per tier"
    )
    board.add_argument(
        "--policies",
        help=f"comma-separated policies (default: {','.join(leaderboard_policies())})",
    )
    _add_selection(board, names=False)
    add_seed(board, what="the policies' random seed")
    add_json(board)
    board.set_defaults(handler=leaderboard)


def _add_improve(commands: Commands) -> None:
    improve_ = new_command(
        commands,
        "improve",
        what="solve entries again and write a certificate wherever it is strictly better",
    )
    _add_selection(improve_)
    improve_.add_argument(
        "--time-limit", type=positive, default=60.0, help="seconds of each exact solve"
    )
    improve_.add_argument(
        "--work-limit", type=positive, help="CP-SAT's deterministic time per solve (work units)"
    )
    improve_.add_argument("--node-limit", type=count, help="the MILP's branch-and-bound nodes")
    add_json(improve_)
    improve_.set_defaults(handler=improve)


class _Progress:
    """A progress bar (:func:`~ddlsched.cli.output.progress_bar`) made at the first call,
    which brings the total (the number of entries is known once the library is read)."""

    def __init__(self, label: str, unit: str) -> None:
        self.label, self.unit = label, unit
        self.update: Callable[[int, int], None] | None = None
        self.close: Callable[[], None] = lambda: None

    def __call__(self, done: int, total: int) -> None:
        if self.update is None:
            self.update, self.close = progress_bar(total, self.label, unit=self.unit)
        self.update(done, total)


def _add_copy(commands: Commands) -> None:
    copy = new_command(
        commands, "copy", what="copy the library to a new folder (for bench improve to write)"
    )
    copy.add_argument("destination", help="the new folder")
    copy.add_argument(
        "--library", help="the library to copy (default: the one shipped with the package)"
    )
    copy.set_defaults(handler=copy_library)


def _list(text: str | None, option: str) -> tuple[str, ...] | None:
    return None if text is None else name_list(text, option)


def _library(args: argparse.Namespace) -> Path | None:
    return None if args.library is None else Path(args.library)


def run(args: argparse.Namespace) -> int:
    """Score the policy, print its rows and tiers (or JSON, or a CSV file); exit 1 when a row
    has an error, 130 on Ctrl-C after printing the rows done."""
    from ddlsched.bench.score import run as score

    check_outputs({"--out": args.out})
    csv_output("--out", args.out)
    tiers, names = _list(args.tier, "--tier"), _list(args.names, "--names")
    progress = _Progress(f"bench run {args.policy}", "instance")
    try:
        scored = score(
            args.policy, tiers, names, path=_library(args), seed=args.seed, progress=progress,
            partial=True,
        )  # fmt: skip
    finally:
        progress.close()
    if args.out:
        write_csv([row.to_dict() for row in scored.rows], args.out)
    if args.json:
        print_json(scored.to_dict())
    else:
        _print_run(scored)
        if args.out:
            print(f"rows written to {args.out}")
    for row in scored.errors:
        print(f"ddlsched: error: {row.name}: {row.error}", file=sys.stderr)
    if scored.interrupted:
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_NO if scored.errors else EXIT_OK


def _ratio(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"


def _print_run(scored: BenchRun) -> None:
    """Each entry's row, then each tier's mean and worst."""
    print(f"{scored.policy} on {len(scored.rows)} entries of the library")
    print_table(
        ("tier", "name", "jobs", "total JCT", "against", "its total JCT", "ratio", "C ratio"),
        [
            (
                row.tier,
                row.name,
                row.jobs,
                f"{row.total_jct:.6g}",
                row.reference,
                f"{row.reference_jct:.6g}",
                _ratio(row.ratio) if not row.error else "error",
                _ratio(row.completion_ratio),
            )
            for row in scored.rows
        ],
    )
    print(C_RATIO_NOTE)
    print()
    print_scores(scored.tiers())


def print_scores(scores: tuple[TierScore, ...]) -> None:
    """The per-tier table of ``bench run`` and of ``bench leaderboard`` (what the
    leaderboard page shows: ``benchmarks/leaderboard.py``), and what a ratio is."""
    print_table(
        ("tier", "policy", "instances", "against", "mean ratio", "worst ratio", "worst instance"),
        [
            (
                score.tier,
                score.policy,
                f"{score.instances}" + (f" ({score.errors} errors)" if score.errors else ""),
                score.reference,
                _ratio(score.mean_ratio),
                _ratio(score.worst_ratio),
                score.worst_instance or "-",
            )
            for score in scores
        ],
    )
    print(RATIO_NOTE)


def leaderboard(args: argparse.Namespace) -> int:
    """Score every policy, print one row per policy per tier; exit 1 when a row has an
    error."""
    from ddlsched.bench.score import leaderboard as board

    policies, tiers = _list(args.policies, "--policies"), _list(args.tier, "--tier")
    progress = _Progress("bench leaderboard", "run")
    try:
        scores = board(policies, tiers, path=_library(args), seed=args.seed, progress=progress)
    finally:
        progress.close()
    if args.json:
        print_json([score.to_dict() for score in scores])
    else:
        print_scores(scores)
    return EXIT_NO if any(score.errors for score in scores) else EXIT_OK


def improve(args: argparse.Namespace) -> int:
    """Improve the certificates of the library ``--library`` names, printing what changed;
    refused without ``--library`` (it would write into the installed package)."""
    from ddlsched.bench.score import improve as narrow
    from ddlsched.core.params import ExactParams

    if args.library is None:
        raise InputError(
            "--library: improve writes certificates; name the library to write, a copy "
            "(ddlsched bench copy DEST makes one) or the shipped one by its path"
        )
    limits = {"deterministic_limit": args.work_limit, "node_limit": args.node_limit}
    params = ExactParams(time_limit=args.time_limit, **limits)
    progress = _Progress("bench improve", "instance")
    try:
        done = narrow(
            Path(args.library),
            _list(args.tier, "--tier"),
            _list(args.names, "--names"),
            params=params,
            progress=progress,
            partial=True,
        )
    finally:
        progress.close()
    if args.json:
        print_json(done.to_dict())
    else:
        for item in done.improvements:
            print(item.describe())
        print(
            f"{len(done.written)} of {len(done.improvements)} certificates improved in "
            f"{args.library}"
        )
    if done.interrupted:
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


def copy_library(args: argparse.Namespace) -> int:
    """Copy the library and say where."""
    from ddlsched.bench.score import copy_library as copy

    copied = copy(Path(args.destination), _library(args))
    print(
        f"{copied} entries copied to {args.destination}; improve them with ddlsched bench "
        f"improve --library {args.destination}"
    )
    return EXIT_OK
