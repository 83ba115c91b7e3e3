"""``ddlsched bound``: proven lower bounds on OPT(A) of an instance or a trace."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_json,
    add_seed,
    big_count,
    new_command,
    positive,
    refuse_given,
)
from ddlsched.cli.output import print_json
from ddlsched.cli.replay import add_replay_options, left_out_fields, left_out_lines, load_replay
from ddlsched.core.model import InputError

TRACE_ONLY = (
    "--columns",
    "--time-unit",
    "--unnamed",
    "--servers",
    "--gpus-per-server",
    "--bandwidth-intra",
    "--bandwidth-inter",
    "--gpu-types",
    "--format",
    "--states",
    "--fractional",
    "--limit",
    "--load-factor",
    "--target-load",
    "--seed",
)
"""Options of ``bound`` that describe how to read a trace (refused with an instance file)."""
LP_ONLY = ("--lp-max-variables", "--lp-time-limit")
"""Options of ``bound`` that set up the LP relaxation (refused without ``--lp``)."""
SANDWICH_ONLY = ("--effort", "--no-cache")
"""Options of ``bound`` that set up the sandwich (refused without ``--sandwich``)."""


def add(commands: Any) -> None:
    """Register the command."""
    bound = new_command(commands, "bound")
    bound.add_argument("instance", nargs="?", help="an instance file (or use --trace)")
    add_replay_options(bound, required=False)
    add_seed(bound, what="model draws of trace rows")
    bound.add_argument("--lp", action="store_true", help="also the LP relaxation (slower)")
    bound.add_argument(
        "--pooled",
        action="store_true",
        help="also the pooled integral relaxation (slower still; the strongest on batch "
        "arrivals; sized and limited by the --lp-* options)",
    )
    bound.add_argument(
        "--sandwich",
        action="store_true",
        help="also, for each model (non-preemptive and preemptive), the best lower bound "
        "valid for it, the best verified schedule and UB/LB on the total JCT (minutes at "
        "trace scale; progress on stderr, Ctrl-C keeps what finished)",
    )
    bound.add_argument(
        "--effort",
        choices=("fast", "full"),
        default="full",
        help="the sandwich's effort: full (the local search and, for problem A, the "
        "start-time Lagrangian) or fast (the fast bounds and the fixed candidate schedules)",
    )
    bound.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the sandwich cache ($DDLSCHED_CACHE_DIR, else "
        "$XDG_CACHE_HOME/ddlsched, else ~/.cache/ddlsched)",
    )
    bound.add_argument(
        "--lp-max-variables",
        type=big_count,
        default=400_000,
        help="most LP variables (the slot comes from the instance; coarsened to fit)",
    )
    bound.add_argument("--lp-time-limit", type=positive, default=300.0, help="seconds for the LP")
    add_json(bound)
    bound.set_defaults(handler=run)


def _read(args: argparse.Namespace) -> tuple[Any, str, Any]:
    """The instance, how to name it, and the loaded trace (``None`` for an instance file),
    whose rows left out are named as ``simulate`` names them."""
    from ddlsched.cli.files import read_instance_file

    if args.instance is not None:
        refuse_given(
            args, TRACE_ONLY, "only with --trace (the instance file fixes the cluster and jobs)"
        )
        return read_instance_file(args.instance, "bound"), args.instance, None
    loaded, instance, _, load = load_replay(args)
    source = f"{args.trace} on {args.servers} x {args.gpus_per_server} GPUs, load {load:.3g}"
    return instance, source, loaded


def run(args: argparse.Namespace) -> int:
    """Compute every bound, print each with its validity and the best."""
    from ddlsched.api import lower_bounds
    from ddlsched.core.result import best_lower_bound
    from ddlsched.formulations.lower_bounds import LpSettings

    if (args.instance is None) == (args.trace is None):
        raise InputError("bound: give an INSTANCE file or --trace FILE (one of them)")
    if not args.lp:
        refuse_given(args, LP_ONLY, "only with --lp")
    if not args.sandwich:
        refuse_given(args, SANDWICH_ONLY, "only with --sandwich")
    instance, source, loaded = _read(args)
    try:
        settings = LpSettings(args.lp_max_variables, args.lp_time_limit)
    except ValueError as error:
        raise InputError(str(error)) from None
    pooled = dataclasses.replace(settings, integer=True) if args.pooled else None
    found = lower_bounds(instance, lp=settings if args.lp else None, pooled=pooled)
    best = best_lower_bound(found)
    sandwiches, stop = _sandwiches(instance, args, found) if args.sandwich else ([], None)
    if args.json:
        print_json(
            {
                "source": source,
                "jobs": instance.num_jobs,
                **(left_out_fields(loaded) if loaded else {}),
                "bounds": [b.to_dict() for b in found],
                "best": best.to_dict() if best else None,
                **({"models": [s.to_dict() for s in sandwiches]} if sandwiches else {}),
                **({"interrupted": _cut_lines(stop)} if stop is not None else {}),
            }
        )
        return _ended(stop)
    print(f"{source}: {instance.num_jobs} jobs; lower bounds on OPT(A) = min sum w C:")
    for line in left_out_lines(loaded, args.trace) if loaded else ():
        print(f"  {line}")
    for b in found:
        state = "valid" if b.valid else "NOT valid"
        print(f"  {b.name:>15}: {b.value:.8g}  ({state}, {b.runtime_s:.2f} s)")
    if best is not None:
        print(f"  best: {best.name} = {best.value:.8g}")
    notes = sorted({note for b in found for note in b.notes})
    for note in notes:
        print(f"  note: {note}")
    for line in _sandwich_lines(sandwiches):
        print(line)
    for line in _cut_lines(stop) if stop is not None else ():
        print(line)
    return _ended(stop)


def _sandwiches(
    instance: Any, args: argparse.Namespace, found: list[Any]
) -> tuple[list[Any], Any]:
    """:func:`ddlsched.sandwich.study_sandwiches` of both models (the fast bounds ``found``
    already), progress on stderr, and on Ctrl-C what finished with the interrupt (else
    ``None``)."""
    from ddlsched.sandwich import SandwichInterrupted, study_sandwiches

    def say(line: str) -> None:
        print(f"sandwich: {line}", file=sys.stderr, flush=True)

    try:
        found = study_sandwiches(
            instance,
            effort=args.effort,
            seed=args.seed or 0,
            progress=say,
            cache=not args.no_cache,
            fast_bounds=found,
        )
    except SandwichInterrupted as stop:
        kept = stop.sandwich
        return [*stop.finished, *([kept] if kept is not None else [])], stop
    return found, None


def _cut_lines(stop: Any) -> list[str]:
    """What Ctrl-C cut short, and the side kept of a sandwich not kept whole."""
    model = "preemptive" if stop.preemptive else "non-preemptive (problem A)"
    lines = [f"{model}: {stop.cut}"]
    if stop.sandwich is None and stop.lower is not None:
        lines.append(
            f"  lower side only: optimal total JCT >= {stop.lower.flow_value:.6g} "
            f"({stop.lower.name}); no verified schedule yet"
        )
    return lines


def _ended(stop: Any) -> int:
    """The exit code, with the one-line message of an interrupted run."""
    if stop is None:
        return EXIT_OK
    print("ddlsched: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _sandwich_lines(sandwiches: list[Any]) -> list[str]:
    """Each model's interval on the optimal total JCT, as text."""
    lines = []
    for s in sandwiches:
        model = "preemptive" if s.preemptive else "non-preemptive (problem A)"
        cut = f" (interrupted: {s.interrupted})" if s.interrupted else ""
        lines += [
            f"{model}: optimal total JCT in [{s.lower.flow_value:.6g}, "
            f"{s.upper.total_jct:.6g}], UB/LB {s.ratio:.3f}{cut}",
            f"  lower: {s.lower.name} ({s.runtime_s:.1f} s); upper: {s.upper_name} "
            f"(verified, {s.upper.runtime_s:.1f} s)",
        ]
    return lines
