"""How old this process is: a command's ``--time-limit`` counts from its start."""

from __future__ import annotations

import os
import time


def process_age() -> float:
    """Seconds since this process started (Linux's ``/proc``; 0 where it cannot be read).

    A command's ``--time-limit`` counts from here, so that the interpreter's and
    the imports' start-up (about a second with Pyomo) is inside the limit.
    """

    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start, in ticks
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    # A clock in another namespace than the process table (some containers) gives
    # nonsense: a start-up of over a minute is not believed.
    return age if 0.0 <= age <= STARTUP_BELIEVED else 0.0


STARTUP_BELIEVED = 60.0
"""Most seconds of start-up :func:`process_age` reports; more is taken as a clock mismatch."""
