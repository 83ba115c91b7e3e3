"""One HiGHS object as the small in-process MILPs want it: silent, exact, seeded.

Every in-process ``highspy.Highs`` is made by :func:`new_highs` (silent from its
first construction). The elastic round MILP (:mod:`ddlsched.algorithms.elastic.round_milp`) and
the slotted elastic optimum (:mod:`ddlsched.formulations.elastic`) solve in this process with
``highspy`` directly; both ask the same of HiGHS, so the settings live here once.
Imported lazily: ``import ddlsched`` does not load HiGHS.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import highspy

_constructed = threading.Event()
_construct_lock = threading.Lock()


def flush_c_stdio() -> None:
    """Flush the C library's stdout buffer (what native code printed is written now, to
    where file descriptor 1 points now, not later to wherever it points then)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)


def new_highs() -> highspy.Highs:
    """``highspy.Highs()``; the first in a process with the C library's standard output sent
    to the null device: highspy 1.16 prints its banner ("Running HiGHS ...") there when the
    first object is made, before any option can silence it, which put two lines on the
    terminal of every elastic ``simulate`` run (and on stderr under ``--json``)."""
    import highspy

    if _constructed.is_set():
        return highspy.Highs()
    with _construct_lock:
        if _constructed.is_set():
            return highspy.Highs()
        if sys.stdout is not None:
            sys.stdout.flush()
        try:
            saved = os.dup(1)
        except OSError:  # descriptor 1 is closed: the banner has nowhere to go
            _constructed.set()
            return highspy.Highs()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            highs = highspy.Highs()
            flush_c_stdio()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        _constructed.set()
        return highs


def exact_highs() -> highspy.Highs:
    """A ``highspy.Highs`` with no output, gaps 0 (an optimum is proven, not approached) and
    seed 0.

    No ``threads`` option: HiGHS sizes one thread scheduler per process at its first
    solve and refuses a later, different count, so setting it would make this solve
    depend on what ran before it in the process. Its branch and bound is deterministic
    either way.
    """
    highs = new_highs()
    for option, value in (
        ("output_flag", False),
        ("mip_rel_gap", 0.0),
        ("mip_abs_gap", 0.0),
        ("random_seed", 0),
    ):
        highs.setOptionValue(option, value)
    return highs
