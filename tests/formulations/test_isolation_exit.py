"""A solver child stopped from outside leaves nothing for the caller to warn about at exit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import threading
from ddlsched.formulations.isolation import Cancelled, run_isolated
from tests.formulations.helpers import pyomo_lock_then_wait

stop = threading.Event()
try:
    run_isolated(pyomo_lock_then_wait, fresh=True, reuse=True, cancel=stop,
                 on_report=lambda message: stop.set())
except Cancelled:
    print("stopped after:", "lock made")
"""


def test_a_stopped_child_leaks_no_semaphore() -> None:
    """The portfolio stops its loser (a reused CP-SAT interpreter that has imported Pyomo)
    from outside; the caller printed "resource_tracker: There appear to be 1 leaked
    semaphore objects" at exit, after every exact compare. The child is stopped once it says
    Pyomo's lock exists (no timing involved). Catches children whose locks are registered
    with the caller's resource tracker."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "stopped after" in done.stdout
    assert "leaked" not in done.stderr and "Warning" not in done.stderr, done.stderr
