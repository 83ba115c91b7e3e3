"""One HiGHS object as the small in-process MILPs want it: silent, exact, seeded.

The elastic round MILP (:mod:`algorithms.elastic.round_milp`) and the slotted elastic
optimum (:mod:`formulations.elastic`) solve in this process with ``highspy`` directly; both
ask the same of HiGHS, so the settings live here once. Imported lazily: ``import ddlsched``
does not load HiGHS.
"""

from __future__ import annotations

from typing import Any


def exact_highs() -> Any:
    """A ``highspy.Highs`` with no output, gaps 0 (an optimum is proven, not approached) and
    seed 0.

    No ``threads`` option: HiGHS sizes one thread scheduler per process at its first
    solve and refuses a later, different count, so setting it would make this solve
    depend on what ran before it in the process. Its branch and bound is deterministic
    either way.
    """
    import highspy

    highs = highspy.Highs()
    for option, value in (
        ("output_flag", False),
        ("mip_rel_gap", 0.0),
        ("mip_abs_gap", 0.0),
        ("random_seed", 0),
    ):
        highs.setOptionValue(option, value)
    return highs
