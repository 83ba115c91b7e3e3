"""pytest plugin for mutmut's stats run: hits recorded in solver child processes.

Loaded by ``tools/mutmut_run.py`` (``PYTEST_PLUGINS=mutmut_child_stats``);
does nothing unless ``MUTANT_UNDER_TEST=stats`` (mutmut's run that maps tests to
functions). At each test's teardown, before mutmut's own collector reads the
test's hits, it

* stops the idle reusable CP-SAT interpreters (``ddlsched.formulations.isolation``), so
  that the next test's calls run in a new child that reports its hits afresh
  (a child reports a function once: see ``sitecustomize.py``), and
* adds the function names that children wrote to ``$MUTMUT_CHILD_HITS`` to
  mutmut's hits for this test.

Mutant runs are untouched: a child started under a mutant inherits
``MUTANT_UNDER_TEST`` and runs the mutant.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


def _active() -> bool:
    return os.environ.get("MUTANT_UNDER_TEST") == "stats" and bool(
        os.environ.get("MUTMUT_CHILD_HITS")
    )


def _stop_idle_workers() -> None:
    """``ddlsched.formulations.isolation._close_idle_workers`` without calling it (a call of a
    mutated function would itself count as a hit of this test)."""
    isolation = sys.modules.get("ddlsched.formulations.isolation")
    if isolation is None:
        return
    with isolation._idle_lock:
        workers = list(isolation._idle_workers)
        isolation._idle_workers.clear()
    for worker in workers:
        worker.connection.close()
    for worker in workers:
        worker.process.join(10)
        if worker.process.is_alive():
            worker.process.terminate()
            worker.process.join()


def _collect() -> set[str]:
    names: set[str] = set()
    folder = Path(os.environ["MUTMUT_CHILD_HITS"])
    for path in folder.glob("*.hits"):
        try:
            text = path.read_text(encoding="utf-8")
            path.unlink()
        except OSError:
            continue
        names.update(line for line in text.splitlines() if line)
    return names


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if not _active():
        return
    from mutmut.state import state

    _stop_idle_workers()
    state()._stats.update(_collect())
