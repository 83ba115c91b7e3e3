"""Waiting for an observable state of another process, without reading a clock.

Tests of signals and of killed sweeps must act when something has happened (a solver child
runs, a first result row is written, every child has ended), never after a fixed sleep. A
process's state can only be polled; :func:`wait_until` polls it and fails after a number
of polls so large (two minutes' worth) that only a broken build reaches it, so no test
depends on how fast the machine is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

POLLS = 2400
"""Polls before a wait counts as failed."""

INTERVAL = 0.05
"""Seconds between polls (how long a poll gives the other process, not a deadline)."""


def wait_until(condition: Callable[[], bool], what: str, polls: int = POLLS) -> None:
    """Return as soon as ``condition()`` holds; fail naming ``what`` after ``polls`` polls."""
    pause = threading.Event()  # never set: wait() is a pause that reads no clock of ours
    for _ in range(polls):
        if condition():
            return
        pause.wait(INTERVAL)
    raise AssertionError(f"gave up waiting: {what}")
