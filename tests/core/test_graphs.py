"""Job graphs (ddlsched.core.graphs): hand-worked traffic of each kind of parallelism."""

from __future__ import annotations

import pytest

from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import Parallelism
from ddlsched.core.zoo import ModelProfile

TOY = ModelProfile(
    name="toy",
    parameters=1_000_000_000,
    bytes_per_parameter=1,
    layers=4,
    activation_bytes_per_sample=1e8,
    batch_size=10,
    step_compute_time=8.0,
    max_tp=2,
    max_pp=2,
    typical_iterations=100,
)


def test_graph_hand_worked_dp2_pp2_tp2() -> None:
    """(dp, pp, tp) = (2, 2, 2) of a toy profile, traffic worked out by hand.

    Activations A = 10 * 1e8 B = 1 GB; 2 layers per stage.
    tensor: 4 * 2 * 2A / 2 = 8 GB; pipeline: A / 2 = 0.5 GB; data-parallel
    ring of 2: 2 * 1/2 * (1 GB / 4) = 0.25 GB. Compute 8 / 4 * (8+1)/8.
    """
    p = Parallelism(dp=2, pp=2, tp=2)
    compute, edges = build_job_graph(TOY, p)
    assert compute == pytest.approx(8.0 / 4 * 9 / 8)
    q = {(u, v): w for u, v, w in edges}
    assert len(edges) == 4 + 4 + 4
    assert q[(p.node(0, 0, 0), p.node(0, 0, 1))] == pytest.approx(8.0)
    assert q[(p.node(1, 1, 0), p.node(1, 1, 1))] == pytest.approx(8.0)
    assert q[(p.node(0, 0, 1), p.node(0, 1, 1))] == pytest.approx(0.5)
    assert q[(p.node(0, 1, 0), p.node(1, 1, 0))] == pytest.approx(0.25)


def test_graph_ring_dp4() -> None:
    """dp=4 is a 4-cycle with 2*(3/4)*gradient on each edge."""
    _, edges = build_job_graph(TOY, Parallelism(dp=4))
    assert sorted((u, v) for u, v, _ in edges) == [(0, 1), (0, 3), (1, 2), (2, 3)]
    assert all(w == pytest.approx(1.5) for _, _, w in edges)
