"""Does a solver child process run the mutant under test? (docs/mutation.md)

Run from a worktree where mutmut has written ``mutants/``::

    python tools/mutmut_support/check_children.py

It calls ``ddlsched.formulations.timeindexed.slots_needed`` through
``ddlsched.formulations.isolation.run_isolated`` in each kind of child (fork-server child,
fresh interpreter, reused interpreter) with mutant 1 of that function active
(``max(None, ...)``, which raises): a child that raises runs the mutant.

Part 1 sets the mutant before any child starts, as each mutant's test run does under
``process_isolation = "forkserver"``: every child must run the mutant. Part 2 first
starts the fork server and a reusable interpreter under ``MUTANT_UNDER_TEST=stats``,
as mutmut's default ``fork`` isolation leaves them behind its stats run: the children
forked from that server, and the reused interpreter, keep the environment they started
with and run the original code (false "survived"), which is why the project uses the
``forkserver`` isolation.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

MUTANTS = Path.cwd() / "mutants"
MUTANT = "ddlsched.formulations.timeindexed.x_slots_needed__mutmut_1"
KINDS: tuple[dict[str, bool], ...] = ({}, {"fresh": True}, {"reuse": True})


def _try(isolation: Any, function: Any, label: str) -> bool:
    active = True
    for kind in KINDS:
        try:
            isolation.run_isolated(function, 10.0, 1.0, **kind)
            active = False
            print(f"  {label} {kind or {'forkserver': True}}: original code ran")
        except TypeError:
            print(f"  {label} {kind or {'forkserver': True}}: the mutant ran")
    return active


def main() -> None:
    if not (MUTANTS / "formulations" / "timeindexed.py").exists():
        raise SystemExit("run from a worktree where mutmut has written mutants/")
    # mutmut runs the tests in mutants/; so must this (Python 3.11's fork server imports
    # its preloaded modules from its working directory and PYTHONPATH, not sys.path).
    os.chdir(MUTANTS)
    sys.path.insert(0, str(MUTANTS))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(MUTANTS), os.environ.get("PYTHONPATH", "")])
    from ddlsched.formulations import isolation
    from ddlsched.formulations.grid import slots_needed

    part = (sys.argv[1:] or ["1"])[0] == "2"
    if part:
        os.environ["MUTANT_UNDER_TEST"] = "stats"
        isolation.run_isolated(slots_needed, 10.0, 1.0)
        isolation.run_isolated(slots_needed, 10.0, 1.0, reuse=True)
    os.environ["MUTANT_UNDER_TEST"] = MUTANT
    print("part 2: children started before the mutant" if part else "part 1: fresh children")
    ok = _try(isolation, slots_needed, "child")
    print("every child ran the mutant" if ok else "some child did NOT run the mutant")
    raise SystemExit(0 if ok or part else 1)


if __name__ == "__main__":
    main()
