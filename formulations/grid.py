"""Counting times in slots: one rule for "a multiple of the slot" and for rounding to it.

Every time-indexed model and grid bound counts releases and durations in whole slots.
The test that a time lies on the grid and the rounding of a time to the grid must forgive
the same floating-point noise: if the test forgave more, a time a hair past a multiple
would be called exact and then rounded a whole slot up (a "lower bound" or a slotted
"optimum" a slot above the truth). Kept apart from the models, without a solver import, so
the fast bounds can use it too.
"""

from __future__ import annotations

import math

GRID_NOISE = 1e-10
"""Relative noise forgiven when a time is counted in whole slots: ten times below the
verifier's tolerance, so a time rounded to the grid still passes the independent check."""


def grid_noise(ratio: float) -> float:
    """How far (in slots) ``ratio`` may lie from a whole number and still count as one.

    :func:`on_grid` and :func:`slots_needed` share it, so a value is called a multiple
    of the slot exactly when rounding it up gives that multiple: a duration a little
    past the grid is never rounded up a whole slot while the model says it is exact.
    """
    return GRID_NOISE * max(1.0, abs(ratio))


def slots_needed(duration: float, slot: float) -> int:
    """``ceil(duration / slot)``, forgiving floating-point noise (:func:`grid_noise`)."""
    ratio = duration / slot
    return max(1, math.ceil(ratio - grid_noise(ratio)))


def release_slots(release: float, slot: float) -> int:
    """The first slot a job released at ``release`` may start in: ``ceil(release / slot)``,
    forgiving the same noise as :func:`on_grid` (0 for a release within it of 0)."""
    ratio = release / slot
    return max(0, math.ceil(ratio - grid_noise(ratio)))


def on_grid(value: float, slot: float) -> bool:
    """Whether ``value`` is a multiple of ``slot`` (to the noise :func:`grid_noise` forgives)."""
    ratio = value / slot
    return abs(ratio - round(ratio)) <= grid_noise(ratio)
