"""The independent bounds (proofs_checks.bounds): the fallback is a valid lower bound; rho's
exactness needs every alpha_min exact."""

from __future__ import annotations

import pytest

from ddlsched.core.graphs import ring_edges
from ddlsched.core.model import Cluster, Instance, Job
from proofs_checks.bounds import fastest_time, rho_of


def _ring(nodes: int, name: str = "ring") -> Job:
    return Job(
        id=name,
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=nodes,
        edges=ring_edges(nodes, 1.0),
    )


def test_fallback_bound_is_valid_and_tight_on_a_ring() -> None:
    """A 24-node unit ring on 3 servers of 8 is beyond enumeration (3^24 mappings), so the
    bound ``ceil(24/8) * lambda / 2`` is used: lambda = 2 gives a cut of 3, exactly the best
    (three arcs of 8). Hand value: 1 + 21/4 + 3/1 = 9.25; it must not exceed that."""
    cluster = Cluster((8, 8, 8), 4.0, 1.0)
    checked = fastest_time(_ring(24), cluster)
    assert not checked.exact
    assert checked.value <= 9.25 + 1e-9
    assert checked.value == pytest.approx(9.25)


def test_rho_is_exact_only_when_every_alpha_min_is() -> None:
    """One exact job and one bounded one: rho is an upper bound, not exact."""
    cluster = Cluster((8, 8, 8), 4.0, 1.0)
    instance = Instance(cluster, (_ring(2, "small"), _ring(24, "big")))
    report = rho_of(instance)
    assert report.alpha_min[0].exact and not report.alpha_min[1].exact
    assert not report.exact
