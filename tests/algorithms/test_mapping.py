"""GPU mapping (ddlsched.algorithms.mapping): the heuristic's steps 1-2 (docs/guide/model.md), the
mapping
claim, quality against exact."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ddlsched.algorithms.mapping import (
    FirstFitMapper,
    FreeGPUs,
    GraphMapper,
    RandomMapper,
    choose_servers,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha, alpha_max, alpha_min
from ddlsched.core.model import Cluster, Job
from tests.strategies import clusters, jobs


def test_choose_servers_best_fit_then_fewest() -> None:
    """Best fit picks the tightest server that fits; otherwise fewest servers, most free first."""
    assert choose_servers(2, [4, 2, 3]) == {1: 2}
    assert choose_servers(3, [4, 2, 3]) == {2: 3}
    assert choose_servers(6, [4, 2, 3]) == {0: 4, 2: 2}
    assert choose_servers(10, [4, 2, 3]) is None


@settings(max_examples=40)
@given(clusters(max_servers=4, max_gpus=4), st.data())
def test_mapping_properties(cluster: Cluster, data: st.DataObject) -> None:
    """Mappings fit, lie in [alpha_min, alpha_max], and use one server when one suffices."""
    free = [data.draw(st.integers(0, g)) for g in cluster.gpus_per_server]
    if sum(free) == 0:
        return
    job = data.draw(jobs(min(sum(free), 6)))
    for mapper in (GraphMapper(), FirstFitMapper(), RandomMapper(np.random.default_rng(0))):
        mapping = mapper(job, cluster, free)
        assert mapping is not None and len(mapping) == job.gpus
        used = np.bincount(mapping, minlength=cluster.num_servers)
        assert np.all(used <= np.asarray(free))
        value = alpha(job, cluster, mapping)
        assert (
            alpha_min(job, cluster).value - 1e-12 <= value <= alpha_max(job, cluster).value + 1e-12
        )
    if max(free) >= job.gpus:
        assert len(set(GraphMapper()(job, cluster, free) or ())) == 1


def test_graph_mapper_keeps_tensor_groups_together() -> None:
    """A (dp=2, tp=4) job on 4+4: each tensor group of 4 lands on one server."""
    from ddlsched.core.graphs import build_job_graph
    from ddlsched.core.model import Parallelism
    from ddlsched.core.zoo import get_profile

    p = Parallelism(dp=2, pp=1, tp=4)
    compute, edges = build_job_graph(get_profile("gpt2_xl"), p)
    job = Job(id="g", release=0, iterations=1, compute_time=compute, gpus=8, edges=edges)
    mapping = GraphMapper()(job, Cluster((4, 4), 20.0, 1.0), [4, 4])
    assert mapping is not None
    for d in range(2):
        assert len({mapping[p.node(d, 0, t)] for t in range(4)}) == 1


def test_graph_mapper_matches_exact_on_small_graphs() -> None:
    """On random small spanning jobs the heuristic is within 5% of optimal on most graphs."""
    rng = np.random.default_rng(0)
    cluster = Cluster((3, 3, 3), 10.0, 1.0)
    ratios = []
    for _ in range(60):
        gpus = int(rng.integers(4, 9))
        pairs = [(u, v) for u in range(gpus) for v in range(u + 1, gpus)]
        keep = rng.random(len(pairs)) < 0.4
        edges = tuple(
            (u, v, float(rng.choice([0.5, 1, 4])))
            for (u, v), k in zip(pairs, keep, strict=True)
            if k
        )
        job = Job(id="r", release=0, iterations=1, compute_time=1.0, gpus=gpus, edges=edges)
        free = [3, 3, 3]
        mapping = GraphMapper()(job, cluster, free)
        assert mapping is not None
        best = min(
            alpha(job, cluster, m)
            for m in itertools.product(range(3), repeat=gpus)
            if max(np.bincount(m, minlength=3)) <= 3
            and sorted(np.bincount(m, minlength=3)) == sorted(np.bincount(mapping, minlength=3))
        )
        ratios.append(alpha(job, cluster, mapping) / best)
    assert min(ratios) >= 1 - 1e-12
    assert np.mean(np.array(ratios) <= 1.05) >= 0.9


def test_free_gpus_bookkeeping() -> None:
    """take/give keep counts, total and buckets consistent; over-taking is refused."""
    free = FreeGPUs([4, 2, 0])
    free.take((0, 0, 1))
    assert list(free) == [2, 1, 0] and free.total == 3
    assert free.best_fit(2) == 0 and free.best_fit(1) == 1
    assert free.most_free_first() == [0, 1]
    with pytest.raises(ValueError, match="server 1 has 1 free GPUs, 2 requested"):
        free.take((1, 1))
    free.give((0, 0, 1))
    assert list(free) == [4, 2, 0] and free.total == 6


def test_seeding_with_the_heaviest_node_finds_the_best_split() -> None:
    """A 5-worker job on free GPUs (3, 2): nodes 0, 2, 4 form a heavy triangle (traffic 5, 5, 2)
    that belongs on the 3-GPU server. Seeding the first part with the heaviest node finds it;
    a bad seed (the lightest node) leaves the swap pass stuck at a cut of 9 instead of 3.
    Truth: enumeration of every mapping with those counts."""
    edges = ((0, 2, 2.0), (0, 3, 1.0), (0, 4, 5.0), (1, 3, 2.0), (1, 4, 2.0), (2, 4, 5.0))
    job = Job(id="tri", release=0, iterations=1, compute_time=1.0, gpus=5, edges=edges)
    cluster = Cluster((3, 2), 10.0, 1.0)
    mapping = GraphMapper()(job, cluster, [3, 2])
    assert mapping is not None
    best = min(
        alpha(job, cluster, m)
        for m in itertools.product(range(2), repeat=5)
        if list(np.bincount(m, minlength=2)) == [3, 2]
    )
    assert alpha(job, cluster, mapping) == pytest.approx(best)


def test_placement_rules() -> None:
    """consolidated waits rather than spread; prefer-consolidated spreads only when it must."""
    from ddlsched.algorithms.mapping import (
        FirstFitMapper,
        PlacementRule,
        RandomMapper,
        fewest_servers,
    )

    cluster = Cluster.uniform(3, 4, 10.0, 1.0)
    job = Job(id="j", release=0.0, iterations=1, compute_time=1.0, gpus=4)
    wide = Job(id="w", release=0.0, iterations=1, compute_time=1.0, gpus=6)
    assert fewest_servers(4, cluster) == 1 and fewest_servers(6, cluster) == 2
    fragmented = [2, 3, 3]  # 8 free GPUs, none with 4
    assert FirstFitMapper()(job, cluster, fragmented) is not None  # "any" spreads
    assert PlacementRule("consolidated", FirstFitMapper())(job, cluster, fragmented) is None
    spread = PlacementRule("prefer-consolidated", FirstFitMapper())(job, cluster, fragmented)
    assert spread is not None and len(set(spread)) == 2
    # A random mapper that would spread is asked again with one server's GPUs only.
    rule = PlacementRule("consolidated", RandomMapper(np.random.default_rng(0)))
    for _ in range(20):
        mapping = rule(job, cluster, [4, 4, 1])
        assert mapping is not None and len(set(mapping)) == 1
    assert len(set(rule(wide, cluster, [4, 2, 4]) or ())) == 2
    assert rule(wide, cluster, [3, 2, 2]) is None  # 7 free, but only on three servers


def test_a_consolidating_rule_asks_a_typed_mapper_again_on_the_same_cluster() -> None:
    """Catches the second ask of :class:`PlacementRule` made without the cluster (or on
    another one): on a typed cluster the first fit spreads a 2-GPU job without traffic over
    two fast servers' single free GPUs (compute 0.5 s, against 1 s on the slow server);
    under ``consolidated`` it is asked again with only the slow server's two GPUs offered,
    which it must place by that cluster's types: both nodes on server 2."""
    from ddlsched.algorithms.mapping import FirstFitMapper, PlacementRule

    cluster = Cluster((2, 2, 2), 10.0, 1.0, server_types=("fast", "fast", "slow"))
    job = Job(
        id="j", release=0.0, iterations=1, compute_time=1.0, gpus=2, compute_times={"fast": 0.5}
    )
    free = [1, 1, 2]
    spread = FirstFitMapper()(job, cluster, free)
    assert spread is not None and sorted(spread) == [0, 1]
    assert alpha(job, cluster, spread) == pytest.approx(0.5)
    assert PlacementRule("consolidated", FirstFitMapper())(job, cluster, free) == (2, 2)
    assert PlacementRule("prefer-consolidated", FirstFitMapper())(job, cluster, free) == (2, 2)
    assert PlacementRule("any", FirstFitMapper())(job, cluster, free) == spread


@pytest.mark.parametrize("policy", ["fifo", "asrpt", "las", "srpt-naive"])
def test_consolidated_placement_never_spans(policy: str) -> None:
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched.api import simulate
    from ddlsched.core.generators import GeneratorConfig, generate
    from ddlsched.core.params import OnlineParams

    instance = generate(GeneratorConfig(num_jobs=30, servers=3, gpus_per_server=4), 4)
    result = simulate(instance, policy, params=OnlineParams(placement="consolidated"))
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    for entry in result.schedule.jobs:
        job = instance.jobs[instance.job_index[entry.id]]
        for piece in entry.pieces or (entry,):
            servers = len(set(piece.mapping or ()))
            assert servers <= -(-job.gpus // 4), (entry.id, piece.mapping)


def _two_types() -> Cluster:
    """Server 0: a slow type with fast links; servers 1-2: a fast type, slow links."""
    return Cluster(
        (4, 2, 2), 8.0, 1.0, server_types=("k80", "v100", "v100"), type_bandwidth={"v100": 2.0}
    )


@pytest.mark.parametrize("mapper", [GraphMapper(), FirstFitMapper()])
def test_typed_mapper_takes_the_least_alpha_choice(mapper: object) -> None:
    """The fast type when the job fits it; the slow type when consolidation there is
    quicker; never a mix slower than both (checked against every mapping by alpha)."""
    cluster = _two_types()
    solo = Job("solo", 0.0, 1, 1.0, 2, ((0, 1, 1.0),), compute_times={"k80": 4.0, "v100": 1.0})
    # v100: 1 + 1/2 = 1.5; k80: 4 + 1/8; the fast type wins.
    assert set(mapper(solo, cluster, [4, 2, 2])) <= {1, 2}  # type: ignore[operator]
    chatty = Job(
        "chatty",
        0.0,
        1,
        1.0,
        4,
        tuple((u, v, 8.0) for u in range(4) for v in range(u + 1, 4)),
        compute_times={"k80": 2.0, "v100": 1.0},
    )
    # 48 GB per iteration: on the k80 server 2 + 48/8 = 8; on the two v100 servers at
    # least 1 + 16/2 + 32/1 = 41 (four edges cut at best). Consolidating wins.
    mapping = mapper(chatty, cluster, [4, 2, 2])  # type: ignore[operator]
    assert set(mapping) == {0}
    assert alpha(chatty, cluster, mapping) == pytest.approx(8.0)


def _cut(adjacency: np.ndarray, part: np.ndarray) -> float:
    """Traffic between nodes of different parts, summed edge by edge (the tests' own)."""
    n = len(part)
    return sum(
        float(adjacency[u, v]) for u in range(n) for v in range(u + 1, n) if part[u] != part[v]
    )


def test_kl_swap_gain_subtracts_twice_the_edge_between_the_swapped_pair() -> None:
    """The swap gain of ``u`` and ``v`` counts their own edge twice: it stays cut.

    Four nodes in parts {0, 2} | {1, 3}, one edge 0-1 of traffic 10 (cut 10).
    Swapping 0 and 1 keeps the edge cut (true gain 10 + 10 - 2 * 10 = 0);
    swapping 0 and 3 (or 2 and 1) joins 0 and 1 (true gain 10). By hand the
    best swap is 0-3, giving parts {2, 3} | {0, 1} and cut 0, a fixed point.

    Catches the slip: the pair's edge subtracted once, added, or left out:
    then the useless 0-1 swap looks at least as good, is taken first (lowest
    index), and the refinement cycles on it and ends with cut 10.
    """
    from ddlsched.algorithms.mapping import refine_swaps

    adjacency = np.zeros((4, 4))
    adjacency[0, 1] = adjacency[1, 0] = 10.0
    refined = refine_swaps(adjacency, np.array([0, 1, 0, 1]))
    assert refined.tolist() == [1, 1, 0, 0]
    assert _cut(adjacency, refined) == 0.0
    assert refine_swaps(adjacency, refined).tolist() == [1, 1, 0, 0]


@settings(max_examples=30)
@given(
    st.integers(3, 7).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 3.0]), min_size=n * n, max_size=n * n),
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
        )
    )
)
def test_kl_refinement_never_raises_the_cut_and_ends_swap_optimal(
    drawn: tuple[int, list[float], list[int]],
) -> None:
    """Against a brute force over every single swap: the refined partition keeps the
    part sizes, its cut is at most the start's, and no swap of two nodes in
    different parts lowers the cut (recomputed edge by edge), so refining it
    again changes nothing.

    Catches slips in the swap gain's terms (a sign, a missing ``W(v, A)``, the
    pair's edge counted once), which take swaps that raise the cut or stop
    while an improving one remains, and a stopping rule that takes swaps of
    zero gain.
    """
    from ddlsched.algorithms.mapping import refine_swaps

    n, weights, labels = drawn
    upper = np.triu(np.array(weights).reshape(n, n), 1)
    adjacency = upper + upper.T
    start = np.array(labels)
    refined = refine_swaps(adjacency, start)
    assert sorted(np.bincount(refined, minlength=3)) == sorted(np.bincount(start, minlength=3))
    assert _cut(adjacency, refined) <= _cut(adjacency, start) + 1e-9
    for limit in (1, 1000):  # an odd limit: a zero-gain swap taken would show
        assert np.array_equal(refine_swaps(adjacency, refined, max_swaps=limit), refined)
    best = _cut(adjacency, refined)
    for u, v in itertools.combinations(range(n), 2):
        if refined[u] != refined[v]:
            swapped = refined.copy()
            swapped[u], swapped[v] = refined[v], refined[u]
            assert _cut(adjacency, swapped) >= best - 1e-9


@settings(max_examples=60, deadline=None)
@given(
    cluster=clusters(max_servers=4, max_gpus=3),
    data=st.data(),
)
def test_the_graph_mappers_partition_cache_answers_as_a_fresh_mapper(
    cluster: Cluster, data: st.DataObject
) -> None:
    """One long-lived mapper (its partitions cached per job and part sizes) against a fresh
    mapper per call, over a random sequence of calls on different jobs, two of them sharing
    an id string but not a graph, and changing free GPUs. Catches: a cache keyed on the
    job's id string (another job's partition returned), or on the GPUs taken without the
    part sizes' order."""
    widest = min(cluster.num_gpus, 6)
    pool = [data.draw(jobs(widest, job_id=f"j{k}")) for k in range(3)]
    pool.append(data.draw(jobs(widest, job_id="j0")))  # same id, its own graph
    kept = GraphMapper()
    for _ in range(data.draw(st.integers(1, 12))):
        job = data.draw(st.sampled_from(pool))
        free = [data.draw(st.integers(0, g)) for g in cluster.gpus_per_server]
        assert kept(job, cluster, free) == GraphMapper()(job, cluster, free)


def test_two_jobs_of_one_id_keep_their_own_partitions() -> None:
    """Two 4-GPU jobs both called "x" on 2 x 2 GPUs: one talks 0-1 and 2-3, the other 0-2
    and 1-3; each keeps its pairs together, whichever the mapper saw first. Catches: the
    partition cache keyed on the id string (the second job got the first one's split,
    paying the heavy edges across servers)."""
    cluster = Cluster((2, 2), 20.0, 1.0)

    def job(pairs: tuple[tuple[int, int], ...]) -> Job:
        edges = tuple((u, v, 4.0) for u, v in pairs)
        return Job(id="x", release=0.0, iterations=1, compute_time=1.0, gpus=4, edges=edges)

    first, second = job(((0, 1), (2, 3))), job(((0, 2), (1, 3)))
    mapper = GraphMapper()
    for one in (first, second, first):
        mapping = mapper(one, cluster, [2, 2])
        assert mapping is not None
        assert all(mapping[u] == mapping[v] for u, v, _ in one.edges)


def test_a_resumed_job_on_other_part_sizes_gets_its_own_partition() -> None:
    """A 5-node chain on four 2-GPU servers, placed with 2, 2, 1 GPUs free, then resumed
    with 2, 1, 1, 1 free: the second mapping must use only free GPUs and equal a fresh
    mapper's. Catches a partition cache keyed on the set of sizes (it hands back the 2+2+1
    split for 2+1+1+1 and puts 2 nodes on a server with 1 GPU free)."""
    cluster = Cluster((2, 2, 2, 2), 20.0, 1.0)
    edges = tuple((k, k + 1, 1.0) for k in range(4))
    job = Job(id="chain", release=0.0, iterations=1, compute_time=1.0, gpus=5, edges=edges)
    mapper = GraphMapper()
    for free in ([2, 2, 1, 0], [2, 1, 1, 1]):
        mapping = mapper(job, cluster, free)
        assert mapping == GraphMapper()(job, cluster, free)
        assert mapping is not None
        assert all(mapping.count(h) <= f for h, f in enumerate(free))


def test_growth_starts_with_the_largest_part_whatever_the_order_of_sizes() -> None:
    """By hand, a path 0-1-2-3 of unit traffic split 1 + 3: the part of 3 grows first from
    the heaviest node (1), takes 2 then 0, and node 3 is left alone: one edge cut. Growing
    the part of 1 first (sizes in the order given) takes node 1 alone and cuts two."""
    from ddlsched.algorithms.mapping import grow_partition

    path = np.zeros((4, 4))
    for a in range(3):
        path[a, a + 1] = path[a + 1, a] = 1.0
    assert grow_partition(path, [1, 3]).tolist() == [1, 1, 1, 0]


def test_a_job_without_traffic_is_placed_in_index_order() -> None:
    """With no edges the graph mapper does what first fit does: nodes in index order over
    the servers chosen (no partition is grown for a graph that has nothing to cut)."""
    cluster = Cluster((2, 2, 2), 2.0, 1.0)
    job = Job(id="j", release=0.0, iterations=1, compute_time=1.0, gpus=3)
    for free in ([2, 2, 2], [1, 2, 2], [2, 1, 2]):
        assert GraphMapper()(job, cluster, free) == FirstFitMapper()(job, cluster, free)
