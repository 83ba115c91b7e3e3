"""The GPU-mapping heuristic and the virtual SRPT machine."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms.mapping import (
    FirstFitMapper,
    FreeGPUs,
    GraphMapper,
    RandomMapper,
    choose_servers,
)
from algorithms.virtual import VirtualMachine, srpt
from ddlsched.core.alpha import alpha, alpha_max, alpha_min
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Job
from tests.oracles import brute_force_a2
from tests.strategies import TINY_INTEGRAL, clusters, jobs


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


def test_srpt_hand_worked() -> None:
    """SRPT on sizes 3 (r=0), 1 (r=1), 2 (r=1.5), worked by hand.

    t=0: only A (3). t=1: B (1) < A's remaining 2 -> B runs, done at 2.
    t=1.5: C (2) arrives; B has 0.5 left, keeps running. t=2: A has 2, C has
    2: tie goes to the earlier arrival, A, done at 4; C done at 6.
    """
    completions, pieces = srpt([3.0, 1.0, 2.0], [0.0, 1.0, 1.5], ["A", "B", "C"])
    assert completions == pytest.approx({"A": 4.0, "B": 2.0, "C": 6.0})
    assert pieces["A"] == [(0.0, 1.0), (2.0, 4.0)]
    assert pieces["B"] == [(1.0, 2.0)]


def test_virtual_machine_resize_keeps_work_done() -> None:
    """Growing a job's size keeps the work done; completion moves accordingly."""
    machine = VirtualMachine()
    machine.add("a", 2.0, 0.0)
    machine.advance(1.0)
    machine.resize("a", 5.0, 1.0)
    assert machine.remaining("a") == pytest.approx(4.0)
    assert machine.next_completion() == pytest.approx(5.0)


@settings(max_examples=20)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0, 3.0]))
def test_srpt_is_optimal_on_a2(seed: int, load: float | None) -> None:
    """SRPT's total completion time equals the brute-force A2 optimum (claim 1)."""
    instance = generate(TINY_INTEGRAL.replace(duration_slots=(1, 2), load=load), seed)
    m = instance.cluster.num_gpus
    sizes = [
        j.gpus * j.iterations * alpha_max(j, instance.cluster).value / m for j in instance.jobs
    ]
    completions, _ = srpt(sizes, [j.release for j in instance.jobs])
    assert sum(completions.values()) == pytest.approx(brute_force_a2(instance))


def test_scaled_graphs_share_alpha_min() -> None:
    """The metrics' shared alpha_min equals a fresh search for scaled copies of a graph."""
    from algorithms.simulator import _FastestAlpha
    from ddlsched.core.model import Instance

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
    shared = _FastestAlpha(Instance(cluster, jobs), budget=200_000)
    for job in jobs:
        value, exact = shared(job)
        assert exact and value == pytest.approx(alpha_min(job, cluster).value, rel=1e-9)
