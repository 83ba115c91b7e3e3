"""The independent bounds (ddlsched.proofs_checks.bounds): the fallback is a valid lower bound;
rho's
exactness needs every alpha_min exact."""

from __future__ import annotations

import pytest
from ddlsched.proofs_checks import bounds
from ddlsched.proofs_checks.bounds import (
    all_cut_time,
    fastest_time,
    per_iteration_time,
    rho_of,
    theorem1_constant,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.graphs import ring_edges
from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import all_alphas, per_iteration_on
from tests.strategies import clusters, jobs, typed_clusters


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


# Each test below names the one-line slip it catches; every one was
# planted by hand in proofs_checks/bounds.py and seen to fail the test.


def _two_types() -> Cluster:
    """A slow-type server (B_intra 1) and a fast-type one (B_intra 4), 2 GPUs each, B_inter 1."""
    return Cluster((2, 2), 1.0, 1.0, server_types=("slow", "fast"), type_bandwidth={"fast": 4.0})


def _edge_job(**changes: object) -> Job:
    """Two nodes, one 4 GB edge, 1 s per iteration unless changed."""
    job = Job(id="e", release=0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 4.0),))
    return job.replace(**changes)


@settings(max_examples=25)
@given(clusters(max_servers=3, max_gpus=3), st.data())
def test_fastest_time_matches_brute_force(cluster: Cluster, data: st.DataObject) -> None:
    """Catches an enumeration that misses maps (capacity checked with ``<``) or times them
    wrongly: the independent alpha_min is exact and equals the least alpha over all maps,
    as the tests' oracle enumerates them."""
    job = data.draw(jobs(min(cluster.num_gpus, 5)))
    found = fastest_time(job, cluster)
    assert found.exact
    assert found.value == pytest.approx(min(all_alphas(job, cluster)), rel=1e-12)


@settings(max_examples=25)
@given(typed_clusters(), st.data())
def test_fastest_time_matches_brute_force_on_mixed_clusters(
    cluster: Cluster, data: st.DataObject
) -> None:
    """Catches a typed map timed at the fastest used type (``min`` for ``max``) or every
    edge at the default B_intra: exact, equal to the oracle's least alpha; and each map's
    per_iteration_time equals the oracle's."""
    job = data.draw(jobs(min(cluster.num_gpus, 4)))
    times = st.sampled_from([0.25, 0.5, 1.0, 3.0])
    job = job.replace(compute_times={t: data.draw(times) for t in set(cluster.server_types)})
    found = fastest_time(job, cluster)
    assert found.exact
    assert found.value == pytest.approx(min(all_alphas(job, cluster)), rel=1e-12)
    mapping = [data.draw(st.integers(0, cluster.num_servers - 1)) for _ in range(job.gpus)]
    assert per_iteration_time(job, cluster, mapping) == pytest.approx(
        per_iteration_on(job, cluster, mapping), rel=1e-12
    )


@settings(max_examples=30)
@given(st.data(), st.booleans())
def test_fallback_is_a_lower_bound_and_says_so(data: st.DataObject, typed: bool) -> None:
    """Catches a fallback above the true alpha_min (parts from the smallest server, no
    halving, slowest bandwidth or compute) or flagged exact: with enumeration disabled
    (its limit set to 0, deterministically) the value is at most the oracle's least alpha,
    and it is exact only where it must equal it (an untyped job fitting one server)."""
    cluster = data.draw(typed_clusters() if typed else clusters(max_servers=3, max_gpus=3))
    job = data.draw(jobs(min(cluster.num_gpus, 5)))
    if typed:
        times = st.sampled_from([0.25, 0.5, 1.0, 3.0])
        job = job.replace(compute_times={t: data.draw(times) for t in set(cluster.server_types)})
    truth = min(all_alphas(job, cluster))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounds, "ENUMERATION_LIMIT", 0)
        found = fastest_time(job, cluster)
    assert found.value <= truth * (1 + 1e-12)
    if found.exact:
        assert found.value == pytest.approx(truth, rel=1e-12)
    if typed or (job.edges and job.gpus > cluster.max_gpus_per_server):
        assert not found.exact


def test_typed_fallback_uses_the_fastest_bandwidth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches the typed fallback charging traffic at the slowest B_intra: the 4 GB edge
    is best inside the fast server, 1 + 4/4 = 2 (oracle); the bound must be <= 2 (the
    slip gives 1 + 4/1 = 5) and not exact."""
    cluster = _two_types()
    job = _edge_job()
    assert min(all_alphas(job, cluster)) == pytest.approx(2.0)
    monkeypatch.setattr(bounds, "ENUMERATION_LIMIT", 0)
    found = fastest_time(job, cluster)
    assert not found.exact and found.value <= 2.0 + 1e-12


def test_typed_fallback_uses_the_fastest_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches the typed fallback taking the slowest type's compute time: computing 0.25 s
    on the fast type, the job's best is 0.25 + 1 = 1.25; the bound must not exceed it."""
    cluster = _two_types()
    job = _edge_job(compute_times={"fast": 0.25})
    assert min(all_alphas(job, cluster)) == pytest.approx(1.25)
    monkeypatch.setattr(bounds, "ENUMERATION_LIMIT", 0)
    assert fastest_time(job, cluster).value <= 1.25 + 1e-12


def test_all_cut_time_takes_the_slowest_type() -> None:
    """Catches alpha_max from the fastest type: compute 0.25 s on fast, 1 s on slow, 4 GB
    cut at 1 GB/s: 1 + 4 = 5, which the split map attains (oracle's greatest alpha)."""
    cluster = _two_types()
    job = _edge_job(compute_times={"fast": 0.25})
    assert all_cut_time(job, cluster) == pytest.approx(5.0)
    assert max(all_alphas(job, cluster)) == pytest.approx(5.0)


def test_rho_is_the_largest_ratio_by_hand(ring_instance: Instance) -> None:
    """Catches rho as the least (or first) ratio: the 4-ring on 2 + 2 GPUs has 5/4; a
    2-node job with a 4 GB edge fitting one server (alpha_min 1 + 4/2 = 3, alpha_max
    1 + 4/1 = 5) has 5/3, so rho = 5/3 (exact: both alpha_min exact)."""
    ring = ring_instance.jobs[0]
    instance = Instance(ring_instance.cluster, (ring, _edge_job()))
    report = rho_of(instance)
    assert report.alpha_max == pytest.approx((5.0, 5.0))
    assert [low.value for low in report.alpha_min] == pytest.approx([4.0, 3.0])
    assert report.rho == pytest.approx(5 / 3) and report.exact


def test_rho_exact_needs_every_alpha_min_exact_even_when_the_argmax_is(
    monkeypatch: pytest.MonkeyPatch, ring_instance: Instance
) -> None:
    """Catches rho's exactness taken from the job attaining it only (or from ``any``): with
    enumeration disabled the 4-ring's alpha_min is the min-cut bound (2 parts, lambda 2:
    a 2 GB cut, 4, tight here but not proven), while the 2-node job, which attains rho,
    stays exact; rho is not exact."""
    instance = Instance(ring_instance.cluster, (ring_instance.jobs[0], _edge_job()))
    monkeypatch.setattr(bounds, "ENUMERATION_LIMIT", 0)
    report = rho_of(instance)
    assert not report.alpha_min[0].exact and report.alpha_min[1].exact
    assert not report.exact


@pytest.mark.parametrize(
    ("gpus", "widest", "constant"),
    [(4, 4, 6.0), (4, 1, 3.0), (8, 3, 2 + 8 / 6), (16, 8, 2 + 16 / 9)],
)
def test_theorem1_constant_by_hand(gpus: int, widest: int, constant: float) -> None:
    """Catches an off-by-one in ``2 + M / (M - g_max + 1)`` (``M - g_max``, ``+ 2``, ``1 +``):
    hand values at several M and g_max."""
    assert theorem1_constant(gpus, widest) == pytest.approx(constant, rel=1e-12)


def test_per_iteration_time_by_hand_on_mixed_servers() -> None:
    """Catches an edge inside a server timed at the default B_intra instead of its type's:
    on :func:`_two_types`, both nodes on the fast server take 1 + 4/4 = 2, both on the
    slow one 1 + 4/1 = 5, split 1 + 4/1 = 5; computing 0.25 s on fast, 1.25 there."""
    cluster = _two_types()
    job = _edge_job()
    assert per_iteration_time(job, cluster, (1, 1)) == pytest.approx(2.0)
    assert per_iteration_time(job, cluster, (0, 0)) == pytest.approx(5.0)
    assert per_iteration_time(job, cluster, (0, 1)) == pytest.approx(5.0)
    fast = _edge_job(compute_times={"fast": 0.25})
    assert per_iteration_time(fast, cluster, (1, 1)) == pytest.approx(1.25)
    assert per_iteration_time(fast, cluster, (0, 1)) == pytest.approx(5.0)


def test_typed_fallback_cut_bound_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches the typed min-cut bound counting parts from the smallest server or without
    the halving. A unit 4-ring on a slow server of 1 GPU and a fast one of 3 (B_intra 4,
    B_inter 1), compute 1 s: the best map puts 3 nodes on the fast server, cutting 2 edges:
    1 + 2/4 + 2 = 3.5 (oracle). The bound: 1 + 4/4 + (1 - 1/4) * ceil(4/3) * lambda / 2
    with lambda = 2: 3.5, tight; parts from the 1-GPU server (4) or no halving give 5."""
    cluster = Cluster(
        (1, 3), 1.0, 1.0, server_types=("slow", "fast"), type_bandwidth={"fast": 4.0}
    )
    ring = _ring(4)
    assert min(all_alphas(ring, cluster)) == pytest.approx(3.5)
    monkeypatch.setattr(bounds, "ENUMERATION_LIMIT", 0)
    found = fastest_time(ring, cluster)
    assert not found.exact
    assert found.value == pytest.approx(3.5)


@settings(max_examples=25)
@given(clusters(max_servers=3, max_gpus=3), st.data())
def test_one_named_type_uses_its_own_bandwidth_and_compute(
    cluster: Cluster, data: st.DataObject
) -> None:
    """On a cluster of one *named* GPU type with its own intra-server bandwidth, the
    independent alpha_min uses the type's B_intra and compute time. Exact, it must equal
    the oracle's least alpha; with enumeration disabled, stay at most it. Catches the
    cluster's default B_intra or the job's default compute time used instead, which can
    exceed the true least alpha (claim 4 then reports a false breach and rho is wrong)."""
    own = cluster.bandwidth_inter * data.draw(st.sampled_from([1.0, 3.0, 8.0]))
    cluster = cluster.replace(
        server_types=("v100",) * cluster.num_servers, type_bandwidth={"v100": own}
    )
    job = data.draw(jobs(min(cluster.num_gpus, 5)))
    job = job.replace(compute_times={"v100": data.draw(st.sampled_from([0.25, 1.0, 3.0]))})
    truth = min(all_alphas(job, cluster))
    found = fastest_time(job, cluster)
    assert found.exact and found.value == pytest.approx(truth, rel=1e-12)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounds, "ENUMERATION_LIMIT", 0)
        bounded = fastest_time(job, cluster)
    assert bounded.value <= truth * (1 + 1e-12)
    assert rho_of(Instance(cluster, (job,))).rho == pytest.approx(
        all_cut_time(job, cluster) / truth
    )


def test_fastest_time_enumerates_every_chunk_of_maps() -> None:
    """Catches the enumeration of maps stopping after its first chunk of 65,536 (``servers
    * gpus`` for ``servers ** gpus`` as its end): 4 servers give 4^9 = 262,144 maps of a
    9-node job, and the first chunk puts node 8 on server 0 always. Server 0 has 1 GPU,
    servers 1-3 have 3; node 8 is a hub with 10 GB to each of the 8 others. By hand:
    the hub with two of its leaves on a 3-GPU server cuts 6 edges (60 GB), the best;
    alone on server 0 it cuts all 8 (80 GB). With compute 1 s, B_intra 10, B_inter 1:
    alpha_min = 1 + 80/10 + (1 - 1/10) x 60 = 63 (the slip gives 81)."""
    cluster = Cluster((1, 3, 3, 3), 10.0, 1.0)
    hub = Job(
        id="hub",
        release=0.0,
        iterations=1,
        compute_time=1.0,
        gpus=9,
        edges=tuple((k, 8, 10.0) for k in range(8)),
    )
    found = fastest_time(hub, cluster)
    assert found.exact
    assert found.value == pytest.approx(63.0)


def test_min_cut_fallback_counts_a_partly_filled_server() -> None:
    """Catches the parts of the min-cut bound rounded down (``//`` for ``ceil``): an
    11-node ring (1 GB per edge, 1 s compute) on 4 x 4 GPUs (B_intra 4, B_inter 1) is past
    the enumeration limit (4^11 maps); it needs ceil(11/4) = 3 servers, and the bound is
    1 + 11/4 + (1 - 1/4) x 3 x 2 / 2 = 6.0 (the slip's 2 parts give 5.25)."""
    ring = _ring(11)
    found = fastest_time(ring, Cluster((4, 4, 4, 4), 4.0, 1.0))
    assert not found.exact
    assert found.value == pytest.approx(6.0)
