"""Child-process hook for mutmut's stats run (put on ``PYTHONPATH`` by
``tools/mutmut_run.py``; a no-op everywhere else).

mutmut 3 learns which tests reach which function by recording trampoline hits
in the process that runs pytest. The solvers run in child processes
(``formulations/isolation.py``: a ``forkserver`` child, or a fresh ``spawn``
interpreter for CP-SAT), whose hits mutmut never sees: every function that runs
only in a child would be reported "no tests". In a fresh interpreter started
while ``MUTANT_UNDER_TEST=stats`` (a fork-server or spawned child), this module
makes each trampoline hit append the function's name, once per process, to a
file in ``$MUTMUT_CHILD_HITS``; the pytest plugin ``mutmut_child_stats`` adds
those names to the running test's hits before mutmut reads them.
"""

from __future__ import annotations

import os

_DIR = os.environ.get("MUTMUT_CHILD_HITS", "")

if _DIR and os.environ.get("MUTANT_UNDER_TEST") == "stats":
    try:
        import mutmut.mutation.trampoline as _trampoline
    except ImportError:  # mutmut not installed: nothing to hook
        _trampoline = None  # type: ignore[assignment]

    if _trampoline is not None:
        _seen: set[str] = set()
        _pid = os.getpid()

        def _record_hit(name: str, caller: str | None = None) -> None:
            global _pid
            if os.getpid() != _pid:  # a child forked from this one: report its own hits
                _pid = os.getpid()
                _seen.clear()
            if name in _seen:
                return
            _seen.add(name)
            path = os.path.join(_DIR, f"{_pid}.hits")
            with open(path, "a", encoding="utf-8") as out:
                out.write(name + "\n")

        _trampoline.record_trampoline_hit = _record_hit
