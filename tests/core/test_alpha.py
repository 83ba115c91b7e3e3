"""alpha, alpha_min, alpha_max and rho against brute force over all mappings."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import (
    AlphaMinCache,
    alpha,
    alpha_max,
    alpha_min,
    extreme_cut,
    fastest_processing,
    min_cut_bound,
    rho,
)
from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import all_alphas
from tests.strategies import clusters, jobs, same_shape_jobs, typed_clusters


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


# Each test below names the one-line slip it catches; every one was
# planted by hand in ddlsched/core/alpha.py and seen to fail the test.


def _two_types(own: float = 4.0) -> Cluster:
    """A slow-type server (B_intra 1) and a fast-type one (B_intra ``own``), 2 GPUs each,
    B_inter 1: which server holds an edge decides its time."""
    return Cluster((2, 2), 1.0, 1.0, server_types=("slow", "fast"), type_bandwidth={"fast": own})


def test_typed_fallback_uses_the_fastest_bandwidth() -> None:
    """Catches the typed fallback (search out of budget) charging uncut edges at the
    slowest B_intra (``min(intra)``) instead of the fastest. Hand value: a 2-node job with
    a 4 GB edge computes 1 s on either type; both nodes on the fast server cost
    1 + 4/4 = 2, the best map (brute force agrees). With budget 1 the search gives up,
    and the bound must be <= 2 and say it is a bound; the slip gives 1 + 4/1 = 5."""
    cluster = _two_types()
    job = Job(id="e", release=0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 4.0),))
    assert min(all_alphas(job, cluster)) == pytest.approx(2.0)
    assert alpha_min(job, cluster).value == pytest.approx(2.0)
    bounded = alpha_min(job, cluster, search_budget=1)
    assert not bounded.exact
    assert bounded.value <= 2.0 + 1e-12


@settings(max_examples=25)
@given(typed_clusters(), st.data())
def test_typed_fallback_never_exceeds_brute_force(cluster: Cluster, data: st.DataObject) -> None:
    """Catches any fallback term that is not a lower bound on a typed cluster (slowest
    B_intra for uncut edges, the cut bound from the smallest server, the slowest compute
    level): with a budget of 1 branch node every search gives up, and the value must stay
    at most the least alpha of all maps (enumerated by the oracle) and be flagged inexact
    whenever the job has an edge."""
    job = data.draw(jobs(min(cluster.num_gpus, 5)))
    times = st.sampled_from([0.25, 0.5, 1.0, 3.0])
    job = job.replace(compute_times={t: data.draw(times) for t in set(cluster.server_types)})
    truth = min(all_alphas(job, cluster))
    bounded = alpha_min(job, cluster, search_budget=1)
    assert bounded.value <= truth * (1 + 1e-12)
    if job.edges:
        assert not bounded.exact
    else:
        assert bounded.value == pytest.approx(truth)


@settings(max_examples=25)
@given(clusters(max_servers=4, max_gpus=3), st.data())
def test_untyped_fallback_never_exceeds_brute_force(cluster: Cluster, data: st.DataObject) -> None:
    """Catches a min-cut fallback that counts parts from the smallest server (or forgets
    the halving): with budget 1 the least cut falls back to ``ceil(g / G_max) lambda / 2``,
    which must stay at most the brute-force least alpha, flagged inexact."""
    job = data.draw(jobs(min(cluster.num_gpus, 6)))
    truth = min(all_alphas(job, cluster))
    bounded = alpha_min(job, cluster, search_budget=1)
    assert bounded.value <= truth * (1 + 1e-12)
    if bounded.exact:
        assert bounded.value == pytest.approx(truth)


def _cache_agrees(cluster: Cluster, sequence: list[Job]) -> None:
    """The cache, a cleared cache and no cache give the same alpha_min, equal to the
    oracle's least alpha over every node-to-server map, for each job in turn."""
    cache = AlphaMinCache(cluster)
    for job in sequence:
        truth = min(all_alphas(job, cluster))
        cached, cached_exact = cache(job)
        fresh, fresh_exact = AlphaMinCache(cluster)(job)
        direct = alpha_min(job, cluster, cache.budget)
        assert cached == pytest.approx(truth, rel=1e-9), (job, cached, truth)
        assert fresh == pytest.approx(cached, rel=1e-9)
        assert direct.value == pytest.approx(cached, rel=1e-9)
        assert cached_exact == fresh_exact == direct.exact


@settings(max_examples=25)
@given(clusters(max_servers=3, max_gpus=3), st.data())
def test_cache_matches_no_cache_on_jobs_of_one_shape(
    cluster: Cluster, data: st.DataObject
) -> None:
    """Catches a cache keyed without the traffic (``(gpus, edge pairs)``) or with raw
    instead of normalised traffic scaled wrongly: a sequence of different jobs sharing GPU
    count and edge set (traffic, compute times differ; some are scaled copies) gets the
    same values from the cache as with no cache, and the oracle's."""
    _cache_agrees(cluster, data.draw(same_shape_jobs(cluster)))


@settings(max_examples=25)
@given(typed_clusters(), st.data())
def test_typed_cache_matches_no_cache_on_jobs_of_one_shape(
    cluster: Cluster, data: st.DataObject
) -> None:
    """Catches a typed cache keyed without per-type compute times (or without traffic):
    jobs of one shape differing in ``compute_times`` or traffic get, in sequence, the
    uncached value, the oracle's least alpha over every map."""
    _cache_agrees(cluster, data.draw(same_shape_jobs(cluster)))


def test_cache_keyed_on_traffic_by_hand() -> None:
    """Catches a cache keyed on the edge pairs without traffic. A 4-path 0-1-2-3 on 2 + 2
    GPUs, B_intra 2, B_inter 1, split 2 + 2: {01|23} cuts the middle edge, {03|12} the two
    end ones. Traffic (1, 4, 1): cut the ends, 2 GB: 1 + 4/2 + 2 = 5. Traffic (4, 1, 4):
    cut the middle, 1 GB: 1 + 8/2 + 1 = 6. The second job, asked after the first, must
    get 6; keyed on edge pairs it would reuse the cut fraction 1/3 (3 GB): 7."""
    cluster = Cluster((2, 2), 2.0, 1.0)
    first = Job(
        id="a",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=4,
        edges=((0, 1, 1.0), (1, 2, 4.0), (2, 3, 1.0)),
    )
    second = first.replace(id="b", edges=((0, 1, 4.0), (1, 2, 1.0), (2, 3, 4.0)))
    cache = AlphaMinCache(cluster)
    assert cache(first) == (pytest.approx(5.0), True)
    assert cache(second) == (pytest.approx(6.0), True)
    assert min(all_alphas(second, cluster)) == pytest.approx(6.0)


def test_typed_cache_keyed_on_compute_times_by_hand() -> None:
    """Catches a typed cache keyed without ``compute_times``: two 2-node jobs, one 4 GB
    edge, compute_time 1 on both, but the second computes 0.25 s on the fast type. On
    :func:`_two_types` the first's best is 1 + 1 = 2, the second's 0.25 + 1 = 1.25; the
    slip hands the second the first's 2 (above its optimum: not a lower bound)."""
    cluster = _two_types()
    first = Job(id="a", release=0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 4.0),))
    second = first.replace(id="b", compute_times={"fast": 0.25})
    cache = AlphaMinCache(cluster)
    assert cache(first)[0] == pytest.approx(2.0)
    assert cache(second)[0] == pytest.approx(1.25)
    assert min(all_alphas(second, cluster)) == pytest.approx(1.25)


def test_typed_cache_keyed_on_traffic_by_hand() -> None:
    """Catches a typed cache keyed without ``job.edges``: two 2-node jobs computing 1 s,
    one with a 10 GB edge, then one with 1 GB. On :func:`_two_types` both are best on the
    fast server (B_intra 4): 1 + 10/4 = 3.5, then 1 + 1/4 = 1.25. The slip hands the
    second the first's 3.5, above its optimum: a "lower bound" exceeding the optimum."""
    cluster = _two_types()
    first = Job(id="a", release=0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 10.0),))
    second = first.replace(id="b", edges=((0, 1, 1.0),))
    cache = AlphaMinCache(cluster)
    assert cache(first)[0] == pytest.approx(3.5)
    assert cache(second)[0] == pytest.approx(1.25)
    assert min(all_alphas(second, cluster)) == pytest.approx(1.25)


def test_fastest_processing_per_job_against_brute_force() -> None:
    """Catches a shared search returning one job's ``K alpha_min`` for another in
    :func:`fastest_processing`: three jobs of one shape (traffic, compute times and K
    differ) on a typed cluster each get K times the oracle's least alpha."""
    cluster = _two_types()
    base = Job(
        id="a", release=0, iterations=2, compute_time=1.0, gpus=3, edges=((0, 1, 4.0), (1, 2, 2.0))
    )
    sequence = (
        base,
        base.replace(id="b", compute_times={"fast": 0.25}),
        base.replace(id="c", iterations=3, edges=((0, 1, 1.0), (1, 2, 8.0))),
    )
    instance = Instance(cluster, sequence)
    processing, inexact = fastest_processing(instance)
    expected = [job.iterations * min(all_alphas(job, cluster)) for job in sequence]
    assert processing == pytest.approx(expected)
    assert inexact == 0


def test_rho_exact_only_when_every_alpha_min_is() -> None:
    """Catches ``any`` for ``all`` in rho's exactness: a small exact job and a big one
    whose alpha_min is only bounded (budget 3) make rho an upper bound, not exact; the
    big job attains rho (argmax 1) and rho is at least the exact value."""
    small = Job(id="s", release=0, iterations=1, compute_time=1.0, gpus=1)
    big = Job(
        id="big",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=8,
        edges=tuple((u, (u + 1) % 8, 1.0) for u in range(8)),
    )
    instance = Instance(Cluster((3, 3, 3), 4.0, 1.0), (small, big))
    exact = rho(instance)
    bounded = rho(instance, search_budget=3)
    assert exact.rho.exact and exact.argmax == 1
    assert bounded.alpha_min[0].exact and not bounded.alpha_min[1].exact
    assert not bounded.rho.exact
    assert bounded.rho.value >= exact.rho.value


def test_typed_exact_flag_honest_at_every_budget() -> None:
    """Catches alpha_min calling itself exact when *some* compute level was proven
    rather than the level attaining the least value. Three fast servers of 2 GPUs (0.25 s,
    B_intra 4) and a slow one of 4 (1 s, B_intra 2), B_inter 1; a 3-node star with two
    2 GB edges. Truth (brute force) 2.75: the fast level, one edge cut, 0.25 + 2/4 + 2.
    At budgets where the fast level is proven (2.75) but the slow level's search gives
    up (its bound, 1 + 4/4 = 2, is lower), the value is 2 and must not claim to be
    exact. Every budget from 1 to 40 is tried, so the test does not hang on one."""
    cluster = Cluster(
        (2, 2, 2, 4),
        2.0,
        1.0,
        server_types=("fast", "fast", "fast", "slow"),
        type_bandwidth={"fast": 4.0},
    )
    job = Job(
        id="star",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=3,
        edges=((0, 1, 2.0), (0, 2, 2.0)),
        compute_times={"fast": 0.25, "slow": 1.0},
    )
    truth = min(all_alphas(job, cluster))
    assert truth == pytest.approx(2.75)
    seen_bound_below = False
    for budget in range(1, 41):
        found = alpha_min(job, cluster, search_budget=budget)
        assert found.value <= truth + 1e-12
        if found.exact:
            assert found.value == pytest.approx(truth), budget
        seen_bound_below |= found.value < truth - 1e-9
    assert seen_bound_below  # some budget does stop a search early
    assert alpha_min(job, cluster).exact


@settings(max_examples=25)
@given(typed_clusters(), st.data(), st.sampled_from([2, 4, 6, 10, 20]))
def test_typed_exact_flag_honest_against_brute_force(
    cluster: Cluster, data: st.DataObject, budget: int
) -> None:
    """Catches any dishonest exactness on a typed cluster under a small search budget: the
    value is at most the brute-force least alpha, and equal to it whenever called exact."""
    job = data.draw(jobs(min(cluster.num_gpus, 5)))
    times = st.sampled_from([0.25, 0.5, 1.0, 3.0])
    job = job.replace(compute_times={t: data.draw(times) for t in set(cluster.server_types)})
    truth = min(all_alphas(job, cluster))
    found = alpha_min(job, cluster, search_budget=budget)
    assert found.value <= truth * (1 + 1e-12)
    if found.exact:
        assert found.value == pytest.approx(truth, rel=1e-12)


@st.composite
def _one_named_type(draw: st.DrawFn) -> Cluster:
    """A cluster of one *named* GPU type with its own intra-server bandwidth: one type, so
    the cut form of alpha applies, but with the type's bandwidth and compute times."""
    base = draw(clusters(max_servers=3, max_gpus=3))
    own = base.bandwidth_inter * draw(st.sampled_from([1.0, 3.0, 8.0]))
    return base.replace(server_types=("v100",) * base.num_servers, type_bandwidth={"v100": own})


@settings(max_examples=25)
@given(_one_named_type(), st.data())
def test_one_named_type_uses_its_own_bandwidth_and_compute(
    cluster: Cluster, data: st.DataObject
) -> None:
    """Catches the one-type formula reading the cluster's default B_intra or the job's
    default compute time instead of the type's: on a cluster of one named type with its
    own bandwidth, jobs with their own compute time there get, cached and uncached, the
    oracle's least alpha."""
    _cache_agrees(cluster, data.draw(same_shape_jobs(cluster)))


def test_edgeless_job_on_one_named_type_by_hand() -> None:
    """Catches the no-traffic shortcut of the cache returning ``compute_time`` rather than
    the compute time on the cluster's type: a 2-GPU job without edges computing 1 s by
    default but 0.5 s on v100 has alpha_min 0.5 on a v100 cluster."""
    cluster = Cluster((2, 2), 2.0, 1.0, server_types=("v100", "v100"))
    job = Job(
        id="free", release=0, iterations=1, compute_time=1.0, gpus=2, compute_times={"v100": 0.5}
    )
    assert min(all_alphas(job, cluster)) == pytest.approx(0.5)
    assert AlphaMinCache(cluster)(job) == (pytest.approx(0.5), True)
    assert alpha_min(job, cluster).value == pytest.approx(0.5)


def test_alpha_refuses_a_server_the_cluster_does_not_have() -> None:
    """``alpha`` on a 2-server cluster with server index 7 (or -1) is a ValueError naming the
    index, never a number (it returned 2.0: both nodes 'shared' server 7). Catches a mapping
    checked for its length only."""
    from ddlsched.core.alpha import alpha
    from ddlsched.core.model import Cluster, Job

    job = Job(id="j", release=0.0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    cluster = Cluster((2, 2), 2.0, 1.0)
    assert alpha(job, cluster, (1, 1)) == 1.5
    for bad in ((7, 7), (0, -1)):
        with pytest.raises(ValueError, match="the cluster has servers 0 to 1"):
            alpha(job, cluster, bad)


def test_alpha_refuses_mappings_and_arguments_of_the_wrong_kind() -> None:
    """A mapping of fractions, booleans or a string, or an instance or a number where the job
    or cluster goes, is a TypeError naming the argument. NumPy integers are whole numbers.
    Catches ``(0.5, 0.5)`` read as server 0 and giving a number, ``"01"`` read as servers 0
    and 1, and an instance failing with an AttributeError."""
    import numpy as np

    from ddlsched.core.alpha import alpha, alpha_max, alpha_min
    from ddlsched.core.model import Cluster, Instance, Job

    job = Job(id="j", release=0.0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    cluster = Cluster((2, 2), 2.0, 1.0)
    assert alpha(job, cluster, np.array([0, 1])) == 2.0  # 1 + 1 GB over 1 GB/s
    for bad in ((0.5, 0.5), (True, False), "01", ((0, 1),)):
        with pytest.raises(TypeError, match="mapping: expected a server index"):
            alpha(job, cluster, bad)  # type: ignore[arg-type]
    instance = Instance(cluster, (job,))
    for function in (alpha_min, alpha_max):
        with pytest.raises(TypeError, match=r"job: expected a Job .*got Instance"):
            function(instance, cluster)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="cluster: expected a Cluster, got int"):
            function(job, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cluster: expected a Cluster, got Instance"):
        alpha(job, instance, (0, 0))  # type: ignore[arg-type]


class _CountedCapacities(list[int]):
    """Capacities that count how often a server's capacity is read."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        type(self).reads += 1
        return super().__getitem__(index)

    def __iter__(self):  # type: ignore[no-untyped-def]
        for index in range(len(self)):
            yield self[index]


def test_extreme_cut_work_per_branch_node_does_not_grow_with_servers() -> None:
    """The search reads each server's capacity a few times in all, not once per branch
    node (``simulate --servers 1000000`` answers in seconds, not minutes), and extra
    empty servers of a kind already present change neither the cut nor the mapping
    (truth: the answer on the small cluster)."""
    job = Job(
        id="ring",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=8,
        edges=(*((u, (u + 1) % 8, 1.0) for u in range(8)), (0, 4, 2.0)),
    )
    small = extreme_cut(job, [3, 3, 3, 3], maximize=False)
    servers = 20_000
    _CountedCapacities.reads = 0
    many = extreme_cut(job, _CountedCapacities([3] * servers), maximize=False)
    assert many == small
    assert _CountedCapacities.reads <= 4 * servers  # a few passes in all, none per node


def test_extreme_cut_gives_up_when_asked() -> None:
    """``give_up`` (a caller's deadline) ends the search like an exhausted budget: asked
    after the first thousand nodes and answering yes, no cut is claimed where the same
    search without it finds one (a 12-node clique on three 4-GPU servers: about 7,000
    nodes)."""
    job = Job(
        id="clique12",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=12,
        edges=tuple((u, v, 1.0 + (u * v) % 5) for u in range(12) for v in range(u + 1, 12)),
    )
    asked = []

    def give_up() -> bool:
        asked.append(True)
        return True

    assert extreme_cut(job, [4, 4, 4], maximize=False, give_up=give_up) is None
    assert asked == [True]
    assert extreme_cut(job, [4, 4, 4], maximize=False, give_up=lambda: False) is not None
