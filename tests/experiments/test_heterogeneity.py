"""The heterogeneity study (ddlsched.experiments.heterogeneity)."""

from __future__ import annotations

import pytest

from ddlsched.experiments.heterogeneity import heterogeneity_study


def test_study_rows_are_verified_and_consistent() -> None:
    """Every schedule verified, optima proven, no method below its cluster's optimum."""
    frame = heterogeneity_study(jobs=5, instances=2, methods=["fifo", "gavel"])
    assert set(frame.cluster) == {"mixed", "all v100"}
    assert set(frame.method) == {"optimum", "fifo", "gavel"}
    assert frame.verified.all() and frame.proven.all()
    assert (frame.ratio >= 1 - 1e-9).all()
    # Every job computes at least as fast on a V100 as on a K80 (Gavel's data), so every
    # mapping is at least as fast on all-V100 servers: that optimum is never worse.
    optima = frame[frame.method == "optimum"].pivot_table(
        index="seed", columns="cluster", values="objective"
    )
    assert (optima["all v100"] <= optima["mixed"] + 1e-9).all()


def test_unknown_method_is_named() -> None:
    with pytest.raises(ValueError, match="nope"):
        heterogeneity_study(jobs=2, instances=1, methods=["nope"])
