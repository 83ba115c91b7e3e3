"""The benchmark library's front door, :mod:`ddlsched.bench`, as its docstring shows it: the
shipped library listed and a policy scored against proven optima (the small tier's
certificates are re-checked through the same ``verify_library`` in ``test_shipped.py``)."""

from __future__ import annotations

import ddlsched
from ddlsched.bench import score, verify


def test_the_front_door_lists_verifies_and_scores_the_small_tier() -> None:
    """Every tier is present with at least 100 entries in all, and a built-in policy scored
    through the front door gives one row per S entry, each at least the optimum, its ratio
    the policy's total weighted JCT over the stored optimal one."""
    bench = ddlsched.bench
    shipped = bench.entries()
    assert len(shipped) >= 100
    assert {e.tier for e in shipped} == {"S", "M", "L", "T"}
    small = bench.entries(tiers=["S"])
    scored = bench.run("asrpt-greedy", tiers=["S"])
    assert [row.name for row in scored.rows] == [e.name for e in small]
    by_name = {e.name: e for e in small}
    for row in scored.rows:
        optimum = by_name[row.name].flow_optimum
        assert optimum is not None and row.error == ""
        assert row.ratio >= 1.0
        assert abs(row.ratio - row.total_jct / optimum) <= 1e-12 * row.ratio
        assert row.reference_jct == optimum
    assert bench.run is score.run and bench.leaderboard is score.leaderboard
    assert bench.verify_library is verify.verify_library
