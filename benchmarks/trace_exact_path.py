"""Follow one instance through an exact solve and count how its path moves between modules.

Does the exact pipeline go one way through its modules? A profiler
hook records, in the calling thread, every call into and return to a function of the
project (``ddlsched``, ``formulations``, ``algorithms``, ``proofs_checks``), and the run of
modules the path visits (consecutive repeats merged). Printed: the modules entered, the
re-entries (entering a module the path had already left), the sideways calls (from a
function of one module into another module of the same floor of
:data:`ddlsched.formulations.FLOORS`) and the
climbs (into a module of a higher floor). The floors are the order the exact pipeline
runs in: data model, slotted data and HiGHS, modes, prepared problem and outcome, the
certified bound, the backends, the portfolio.
Solver children (HiGHS, CP-SAT, the bounds) run in other processes and are not traced;
the portfolio's watcher threads are not traced either.

    python benchmarks/trace_exact_path.py
    python benchmarks/trace_exact_path.py --method milp --jobs 6
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from ddlsched import GeneratorConfig, generate
from ddlsched.core.model import Problem
from ddlsched.core.params import ExactParams

PROJECT = ("ddlsched",)


def floor(module: str) -> int:
    """The floor of ``module``: ``ddlsched.core`` at the bottom, then the floors of
    :data:`ddlsched.formulations.FLOORS`, then everything else."""
    from ddlsched.formulations import FLOORS

    if module == "ddlsched.core" or module.startswith("ddlsched.core."):
        return 0
    name = module.removeprefix("ddlsched.formulations.")
    for k, names in enumerate(FLOORS):
        if module.startswith("ddlsched.formulations.") and name in names:
            return k + 1
    return len(FLOORS) + 1


def trace(method: str, jobs: int, seed: int) -> tuple[list[str], Counter[tuple[str, str]]]:
    """The run of project modules the path visits while ``method`` solves a generated
    instance of ``jobs`` jobs on 2 x 4 GPUs (integral, spread releases), and the number of
    calls from one module into another, by ``(caller, callee)``."""
    from ddlsched.formulations.registry import EXACT_METHODS

    instance = generate(
        GeneratorConfig(num_jobs=jobs, servers=2, gpus_per_server=4, integral=True),
        seed=seed,
    )
    solver = EXACT_METHODS[method]
    moves: list[str] = []
    calls: Counter[tuple[str, str]] = Counter()

    def module_of(frame: Any) -> str | None:
        while frame is not None:
            name = frame.f_globals.get("__name__", "")
            if name.split(".")[0] in PROJECT:
                return str(name)
            frame = frame.f_back
        return None

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            here = module_of(frame)
            caller = module_of(frame.f_back)
            if here is not None and caller is not None and here != caller:
                calls[caller, here] += 1
        elif event == "return":
            here = module_of(frame.f_back)
        else:
            return
        if here is not None and (not moves or moves[-1] != here):
            moves.append(here)

    sys.setprofile(hook)
    try:
        solver(instance, Problem.A, ExactParams(time_limit=60, threads=1), None)
    finally:
        sys.setprofile(None)
    return moves, calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="exact", help="exact method (default: exact)")
    parser.add_argument("--jobs", type=int, default=6, help="jobs (default: 6)")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default: 0)")
    args = parser.parse_args(argv)
    moves, calls = trace(args.method, args.jobs, args.seed)
    formulations = [m for m in moves if m.startswith("ddlsched.formulations")]
    seen: set[str] = set()
    reentries: Counter[str] = Counter()
    last = None
    for module in formulations:
        if module != last and module in seen:
            reentries[module] += 1
        seen.add(module)
        last = module
    climbs = {
        f"{caller} -> {callee}": count
        for (caller, callee), count in calls.items()
        if callee.startswith("ddlsched.formulations") and floor(callee) > floor(caller)
    }
    print(f"method {args.method}, {args.jobs} jobs on 2 x 4 GPUs, seed {args.seed}")
    print(f"formulations modules entered: {len(seen)} ({', '.join(sorted(seen))})")
    print(f"re-entries into a formulations module already left: {sum(reentries.values())}")
    for module, count in reentries.most_common():
        print(f"  {module}: {count}")
    sideways = {
        f"{caller} -> {callee}": count
        for (caller, callee), count in calls.items()
        if callee.startswith("ddlsched.formulations") and floor(callee) == floor(caller)
    }
    print(f"sideways (calls into another module of the same floor): {sum(sideways.values())}")
    for move, count in sorted(sideways.items(), key=lambda item: -item[1]):
        print(f"  {move}: {count}")
    print(f"climbs (calls into a higher floor): {sum(climbs.values())}")
    for move, count in sorted(climbs.items(), key=lambda item: -item[1]):
        print(f"  {move}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
