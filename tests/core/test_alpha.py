"""alpha, alpha_min, alpha_max and rho against brute force over all mappings."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha, alpha_max, alpha_min, extreme_cut, min_cut_bound, rho
from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import all_alphas
from tests.strategies import clusters, jobs


def test_ring_hand_worked(ring_instance: Instance) -> None:
    """The 4-ring on 2+2 GPUs: alpha_min 4 (two edges cut), alpha_max 5 (all cut)."""
    ring = ring_instance.jobs[0]
    cluster = ring_instance.cluster
    assert alpha(ring, cluster, [0, 0, 1, 1]) == pytest.approx(4.0)
    assert alpha(ring, cluster, [0, 1, 0, 1]) == pytest.approx(5.0)
    assert alpha_min(ring, cluster).value == pytest.approx(4.0)
    assert alpha_min(ring, cluster).exact
    assert alpha_max(ring, cluster).value == pytest.approx(5.0)
    assert alpha_max(ring, cluster).exact
    report = rho(ring_instance)
    assert report.rho.value == pytest.approx(5.0 / 4.0)
    assert report.rho.exact and report.argmax == 0


def test_alpha_max_bound_not_exact_on_triangle(triangle_job: Job) -> None:
    """A triangle on two servers cannot have all three edges cut: not exact."""
    triangle = triangle_job
    cluster = Cluster((2, 2), 2.0, 1.0)
    bound = alpha_max(triangle, cluster)
    assert bound.value == pytest.approx(4.0)
    assert not bound.exact
    assert max(all_alphas(triangle, cluster)) < bound.value


@given(clusters(), st.data())
def test_alpha_min_matches_brute_force(cluster: Cluster, data: st.DataObject) -> None:
    """alpha_min equals the least alpha over all feasible mappings."""
    job = data.draw(jobs(min(cluster.num_gpus, 6)))
    values = all_alphas(job, cluster)
    found = alpha_min(job, cluster)
    assert found.exact
    assert found.value == pytest.approx(min(values), rel=1e-12)
    maximum = alpha_max(job, cluster)
    assert maximum.value >= max(values) - 1e-12
    assert maximum.exact == math.isclose(maximum.value, max(values), rel_tol=1e-12)


@given(clusters(), st.data())
def test_random_mappings_between_bounds(cluster: Cluster, data: st.DataObject) -> None:
    """alpha_min <= alpha(x) <= alpha_max for random feasible mappings x."""
    job = data.draw(jobs(min(cluster.num_gpus, 6)))
    free = list(cluster.gpus_per_server)
    mapping = []
    for _ in range(job.gpus):
        server = data.draw(st.sampled_from([h for h, f in enumerate(free) if f > 0]))
        free[server] -= 1
        mapping.append(server)
    value = alpha(job, cluster, mapping)
    assert alpha_min(job, cluster).value <= value + 1e-12
    assert value <= alpha_max(job, cluster).value + 1e-12


def test_extreme_cut_returns_a_mapping_attaining_it() -> None:
    """The mapping returned by the search really has the reported cut."""
    job = Job(
        id="k",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=6,
        edges=tuple((u, v, float(1 + (u * v) % 3)) for u in range(6) for v in range(u + 1, 6)),
    )
    for maximize in (False, True):
        found = extreme_cut(job, (3, 3, 2), maximize=maximize)
        assert found is not None
        cut, mapping = found
        recomputed = sum(q for u, v, q in job.edges if mapping[u] != mapping[v])
        assert cut == pytest.approx(recomputed)
        assert max(np.bincount(mapping, minlength=3) - np.array([3, 3, 2])) <= 0


def test_budget_exhausted_gives_a_valid_lower_bound() -> None:
    """With too small a budget alpha_min says 'bound', and the bound is below the truth."""
    job = Job(
        id="big",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=8,
        edges=(*((u, (u + 1) % 8, 1.0) for u in range(8)), (0, 4, 2.0)),
    )
    cluster = Cluster((3, 3, 3), 4.0, 1.0)
    exact = alpha_min(job, cluster)
    bounded = alpha_min(job, cluster, search_budget=3)
    assert exact.exact and not bounded.exact
    assert bounded.value <= exact.value
    assert min_cut_bound(job, 3) > 0  # a connected graph split 3 ways cuts something


def test_rho_inexact_when_bound_used() -> None:
    """rho is flagged inexact when some alpha_min is only a bound, and is not lower."""
    job = Job(
        id="big",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=8,
        edges=tuple((u, (u + 1) % 8, 1.0) for u in range(8)),
    )
    instance = Instance(Cluster((3, 3, 3), 4.0, 1.0), (job,))
    exact = rho(instance)
    bounded = rho(instance, search_budget=3)
    assert exact.rho.exact and not bounded.rho.exact
    assert bounded.rho.value >= exact.rho.value


def test_alpha_rejects_wrong_length() -> None:
    """A mapping of the wrong length is an error naming both lengths."""
    job = Job(id="a", release=0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    with pytest.raises(ValueError, match="mapping has 3 entries, job 'a' has 2"):
        alpha(job, Cluster((2,), 1.0, 1.0), [0, 0, 0])
