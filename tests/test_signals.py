"""Signals at the edge of a process: every command ends cleanly, and no child outlives it.

A solve runs its solvers in child processes (a fork server's children, fresh interpreters for
CP-SAT, multiprocessing's resource tracker). Whatever ends the command (Ctrl-C, ``kill``, a
closed terminal or ssh session, ``kill -9``), none of them may keep running: an orphaned
HiGHS burns a core until someone finds it by hand.

No test here sleeps a fixed time: each waits for an observable state (the solver children
exist, then none is left), with a generous cap that only a broken build reaches.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddlsched.cli import main

CAP = 120.0
"""Seconds after which a wait counts as failed (only a broken build gets near it)."""


def _live(session: int) -> list[str]:
    """The processes of ``session`` that have not exited (zombies, already dead and waiting
    for their parent to read their status, are not running anything)."""
    listing = subprocess.run(
        ["ps", "-o", "pid=,stat=,args=", "-s", str(session)],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line for line in listing.stdout.splitlines() if line.split()[1][0] not in "ZX"]


def _wait(condition: object, what: str) -> None:
    began = time.monotonic()
    while not condition():  # type: ignore[operator]
        assert time.monotonic() - began < CAP, f"gave up waiting: {what}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 jobs released together on 4 x 4 GPUs: no backend proves them within its default
    minute (about 6% open after a minute of CP-SAT), so the solve is surely still running
    when the signal arrives."""
    path = tmp_path_factory.mktemp("signals") / "batch.json"
    assert main(["generate", "--jobs", "24", "--servers", "4", "--gpus-per-server", "4",
                 "--integral", "--seed", "0", "--out", str(path)]) == 0  # fmt: skip
    return path


def _solving(path: Path, method: str) -> subprocess.Popen[str]:
    """``ddlsched solve`` in its own session, returned once two of its children run."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ddlsched.cli", "solve", str(path), "--method", method],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    _wait(lambda: len(_live(process.pid)) >= 3 or process.poll() is not None, "solver children")
    assert process.poll() is None, "the solve ended before its children were seen"
    return process


@pytest.mark.parametrize(
    ("number", "method", "line"),
    [
        (signal.SIGINT, "milp", "ddlsched: interrupted"),
        (signal.SIGTERM, "milp", "ddlsched: terminated"),
        (signal.SIGHUP, "exact", "ddlsched: terminated"),
        (signal.SIGTERM, "cpsat", "ddlsched: terminated"),
    ],
    ids=["ctrl-c-milp", "sigterm-milp", "sighup-portfolio", "sigterm-cpsat"],
)
def test_a_signal_ends_the_solve_with_one_line_and_no_orphan(
    batch: Path, number: signal.Signals, method: str, line: str
) -> None:
    """Ctrl-C, SIGTERM and SIGHUP end a running exact solve with exit 128 + signal, one
    line on stderr, and every child gone.

    Catches: a signal that kills the main process by default (SIGHUP did: three children
    went on running), a handler that swallows the signal (HiGHS catches SIGINT), a child
    left behind because the signal arrived while it was starting.
    """
    process = _solving(batch, method)
    process.send_signal(number)
    _, err = process.communicate(timeout=CAP)
    assert process.returncode == 128 + number, err
    assert err.strip().splitlines() == [line], err
    _wait(lambda: not _live(process.pid), "every child of the killed solve to end")


def test_children_end_when_the_command_is_killed_outright(batch: Path) -> None:
    """``kill -9`` gives the command no chance to stop anything: its children notice that
    it is gone by themselves (within a fraction of a second) and end.

    Catches: a child that only stops when told to (it would solve on, an orphan, for the
    rest of its time limit), and a fork server kept alive by such a child.
    """
    process = _solving(batch, "exact")
    process.kill()
    process.wait(timeout=CAP)
    _wait(lambda: not _live(process.pid), "every child of the killed solve to end")
