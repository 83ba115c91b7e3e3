"""``ddlsched bound``: proven lower bounds on OPT(A) of an instance or a trace."""

from __future__ import annotations

import argparse
from typing import Any

from ddlsched.cli.options import (
    EXIT_OK,
    add_json,
    add_seed,
    big_count,
    new_command,
    positive,
)
from ddlsched.cli.output import print_json
from ddlsched.cli.replay import add_replay_options, load_replay
from ddlsched.core.model import InputError


def add(commands: Any) -> None:
    """Register the command."""
    bound = new_command(
        commands, "bound", "proven lower bounds on OPT(A) of an instance or a trace"
    )
    bound.add_argument("instance", nargs="?", help="an instance file (or use --trace)")
    add_replay_options(bound, required=False)
    add_seed(bound, what="model draws of trace rows")
    bound.add_argument("--lp", action="store_true", help="also the LP relaxation (slower)")
    bound.add_argument(
        "--lp-max-variables",
        type=big_count,
        default=400_000,
        help="most LP variables (the slot comes from the instance; coarsened to fit)",
    )
    bound.add_argument("--lp-time-limit", type=positive, default=300.0, help="seconds for the LP")
    add_json(bound)
    bound.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Compute every bound, print each with its validity and the best."""
    from ddlsched.api import lower_bounds
    from ddlsched.core.io import read_instance
    from formulations.lower_bounds import LpSettings, best_lower_bound

    if (args.instance is None) == (args.trace is None):
        raise InputError("bound: give an INSTANCE file or --trace FILE (one of them)")
    if args.instance is not None:
        instance, source = read_instance(args.instance), args.instance
    else:
        _, instance, _, load = load_replay(args)
        source = f"{args.trace} on {args.servers} x {args.gpus_per_server} GPUs, load {load:.3g}"
    try:
        settings = LpSettings(args.lp_max_variables, args.lp_time_limit) if args.lp else None
    except ValueError as error:
        raise InputError(str(error)) from None
    found = lower_bounds(instance, lp=settings)
    best = best_lower_bound(found)
    if args.json:
        print_json(
            {
                "source": source,
                "jobs": instance.num_jobs,
                "bounds": [b.to_dict() for b in found],
                "best": best.to_dict() if best else None,
            }
        )
        return EXIT_OK
    print(f"{source}: {instance.num_jobs} jobs; lower bounds on OPT(A) = min sum w C:")
    for b in found:
        state = "valid" if b.valid else "NOT valid"
        print(f"  {b.name:>15}: {b.value:.8g}  ({state}, {b.runtime_s:.2f} s)")
    if best is not None:
        print(f"  best: {best.name} = {best.value:.8g}")
    notes = sorted({note for b in found for note in b.notes})
    for note in notes:
        print(f"  note: {note}")
    return EXIT_OK
