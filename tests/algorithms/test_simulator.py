"""The event-driven simulator (algorithms.simulator): events, metrics, the policy protocol."""

from __future__ import annotations

import pytest

from ddlsched.core.alpha import alpha_min
from ddlsched.core.model import Cluster, Job


def test_scaled_graphs_share_alpha_min() -> None:
    """The metrics' shared alpha_min equals a fresh search for scaled copies of a graph."""
    from ddlsched.core.alpha import AlphaMinCache

    cluster = Cluster((3, 3, 3), 10.0, 1.0)
    ring = tuple((u, (u + 1) % 7, 1.0 + u % 3) for u in range(7))
    edges = tuple((min(u, v), max(u, v), q) for u, v, q in ring)
    jobs = tuple(
        Job(
            id=f"s{k}",
            release=0,
            iterations=1,
            compute_time=0.5 * k + 1,
            gpus=7,
            edges=tuple((u, v, q * scale) for u, v, q in edges),
        )
        for k, scale in enumerate((1.0, 0.37, 12.5))
    )
    shared = AlphaMinCache(cluster, budget=200_000)
    for job in jobs:
        value, exact = shared(job)
        assert exact and value == pytest.approx(alpha_min(job, cluster).value, rel=1e-9)
