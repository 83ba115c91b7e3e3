"""``ddlsched solve``: schedule one instance exactly (MILP, CP-SAT, portfolio) or by a policy."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys

from ddlsched.cli.files import check_outputs, output_extension, read_instance_file
from ddlsched.cli.options import (
    EXIT_NO,
    EXIT_OK,
    Commands,
    add_json,
    add_online,
    add_seed,
    new_command,
    non_negative,
    positive,
    refuse_given,
    threads,
)
from ddlsched.cli.output import one_line, print_json, progress_bar
from ddlsched.core.model import PROBLEMS, InputError

EXACT_ONLY = (
    "--time-limit",
    "--mip-gap",
    "--threads",
    "--warm-start",
    "--verbose",
    "--memory-limit",
)
"""Options of ``solve`` for the exact methods (refused with an online policy)."""
ONLINE_ONLY = ("--predictor", "--mapper", "--seed")
"""Options of ``solve`` for the online policies (refused with an exact method, which draws
nothing at random)."""


def add(commands: Commands) -> None:
    """Register the command."""
    from ddlsched.api import method_names
    from ddlsched.core.params import DEFAULT_MEMORY_LIMIT, ExactParams

    exact = ExactParams()
    solve = new_command(commands, "solve")
    solve.add_argument("instance", help="instance file (JSON, from 'ddlsched generate')")
    solve.add_argument(
        "--method",
        default=method_names()[0],
        choices=method_names(),
        help="an exact method or an online policy",
    )
    solve.add_argument(
        "--problem",
        default=PROBLEMS[0].value,
        choices=[p.value for p in PROBLEMS],
        help="the problem solved (see docs/guide/model.md)",
    )
    solve.add_argument(
        "--time-limit",
        type=positive,
        default=exact.time_limit,
        help="seconds for the whole command, its start-up included: it answers within "
        "this plus 1 s, children stopped (exact methods)",
    )
    solve.add_argument(
        "--mip-gap", type=non_negative, default=exact.mip_gap, help="relative gap (exact methods)"
    )
    solve.add_argument("--threads", type=threads, help="solver threads (exact methods)")
    solve.add_argument(
        "--memory-limit",
        type=positive,
        metavar="GIB",
        help=f"GiB a model may need, estimated before it is built; larger is refused "
        f"(default {DEFAULT_MEMORY_LIMIT / 2**30:g}; exact methods)",
    )
    solve.add_argument("--warm-start", help="schedule file to start from (exact methods)")
    add_online(solve, " (online methods)")
    add_seed(solve)
    solve.add_argument("--out", help="write the schedule here (JSON: a .json file)")
    add_json(solve)
    solve.add_argument("--verbose", action="store_true", help="show the solver log")
    solve.set_defaults(handler=run)


ANSWER_RESERVE = {"milp": 0.3, "exact": 0.7, "cpsat": 0.9}
"""Seconds of a command's ``--time-limit`` kept for answering, per method: the MILP's hard
stop comes 0.5 s past its limit (:data:`ddlsched.formulations.milp.OVERRUN_GRACE`), the portfolio's
stop as late (:data:`ddlsched.formulations.portfolio.STOP_SLACK`; with 0.5 s it answered up to
1.06 s
past the limit, in 2 of 27 runs), and CP-SAT first starts a fresh
interpreter (about 0.6 s); then the answer is printed. Measured with
``benchmarks/bench_limits.py`` (docs/guide/exact.md)."""
LEAST_BUDGET = 0.05
"""The solver's least time limit, when start-up took all of the command's: the list
schedule and the quick modes are still returned."""


def solver_budget(args: argparse.Namespace) -> float | None:
    """The solver's time limit: what is left of ``--time-limit`` after the start-up, less
    the method's :data:`ANSWER_RESERVE`.

    The solver's modules (Pyomo's import alone takes about a second) are imported first,
    so that their cost is counted before the budget is fixed.
    """
    import time

    if args.time_limit is None:
        return None
    import ddlsched.formulations.milp
    import ddlsched.formulations.portfolio  # noqa: F401

    spent = time.monotonic() - getattr(args, "started", time.monotonic())
    reserve = ANSWER_RESERVE.get(args.method, max(ANSWER_RESERVE.values()))
    return max(LEAST_BUDGET, args.time_limit - spent - reserve)


def _nothing() -> None:
    """No progress report to close (exact methods report none)."""


def run(args: argparse.Namespace) -> int:
    """Solve, write the schedule if asked, print the result; exit 1 on a solver error."""
    from ddlsched.api import exact_method_names, solve
    from ddlsched.core.io import read_schedule, write_schedule
    from ddlsched.core.params import DEFAULT_MEMORY_LIMIT, ExactParams, OnlineParams
    from ddlsched.core.result import SolveStatus

    check_outputs({"--out": args.out}, [args.instance, args.warm_start])
    output_extension("--out", args.out, ".json", "the schedule is written as JSON")
    if args.method in exact_method_names():
        refuse_given(args, ONLINE_ONLY, f"only for online policies; {args.method!r} is exact")
    else:
        refuse_given(
            args, EXACT_ONLY, f"only for exact methods; {args.method!r} is an online policy"
        )
    instance = read_instance_file(args.instance, "solve")
    warm = read_schedule(args.warm_start) if args.warm_start else None
    progress, close = None, _nothing
    try:
        params: ExactParams | OnlineParams
        if args.method in exact_method_names():
            params = ExactParams(
                time_limit=solver_budget(args),
                mip_gap=args.mip_gap,
                threads=args.threads,
                verbose=args.verbose,
                memory_limit=DEFAULT_MEMORY_LIMIT
                if args.memory_limit is None
                else math.ceil(args.memory_limit * 2**30),
            )
        else:
            params = OnlineParams(predictor=args.predictor, mapper=args.mapper)
            # A policy on a large instance runs for minutes: say how far it got.
            progress, close = progress_bar(instance.num_jobs, args.method, unit="job")
        result = solve(
            instance,
            args.method,
            problem=args.problem,
            params=params,
            seed=args.seed,
            warm_start=warm,
            progress=progress,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    finally:
        close()
    if isinstance(params, ExactParams) and params.time_limit is not None:
        note = (
            f"--time-limit {args.time_limit:g} s for the command: the solver was given "
            f"{params.time_limit:.2f} s after the start-up"
        )
        result = dataclasses.replace(result, notes=(*result.notes, note))
    if args.out and result.schedule is not None:
        write_schedule(result.schedule, args.out)
    if args.json:
        print_json(result.summary())
    else:
        print(
            f"{result.method} on problem {result.problem.value}: {result.status.value}; "
            f"total completion time {result.objective:.6g}, total JCT {result.total_jct:.6g}; "
            f"bound {_or_none(result.best_bound)}, gap {_or_none(result.gap, '.3g')}; "
            f"{result.runtime_s:.2f} s in all (building {result.build_time_s:.2f} s)"
        )
        for note in result.notes:
            print(f"  note: {note}")
        if args.out and result.schedule is not None:
            print(f"  schedule written to {args.out}")
    if result.status is SolveStatus.ERROR:
        reason = result.notes[0] if result.notes else "solver error"
        print(f"ddlsched: error: {one_line(reason)}", file=sys.stderr)
        return EXIT_NO
    return EXIT_OK


def _or_none(value: float, spec: str = ".6g") -> str:
    """A number for the text report, "none" where there is none (``nan``: no bound)."""
    return "none" if math.isnan(value) else format(value, spec)
