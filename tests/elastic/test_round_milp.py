"""The per-round allocation: the MILP's choice equals a brute force; chain packing always fits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ddlsched.algorithms.elastic.packing import chain_sizes, most_free_placement, pack_chain
from ddlsched.algorithms.elastic.policies import Pollux
from ddlsched.algorithms.elastic.round_milp import ChoiceProblem, choice_objective, solve_choice
from ddlsched.algorithms.elastic.simulator import JobState, RoundState, application_of

from ddlsched.core.elastic import ElasticCluster, ElasticJob


def brute_force(costs: list[list[float]], gpus: list[list[int]], capacity: int) -> float:
    """The least total cost over every combination of one option per job that fits."""
    best = float("inf")
    for combo in itertools.product(*[range(len(c)) for c in costs]):
        if sum(gpus[j][c] for j, c in enumerate(combo)) <= capacity:
            best = min(best, sum(costs[j][c] for j, c in enumerate(combo)))
    return best


@pytest.mark.parametrize("seed", range(20))
def test_milp_equals_brute_force_on_random_knapsacks(seed: int) -> None:
    """On 2-4 jobs with random costs and sizes, HiGHS finds the brute-force optimum."""
    rng = np.random.default_rng(seed)
    jobs = int(rng.integers(2, 5))
    costs = [[1000.0, *rng.uniform(0.1, 5.0, size=4).tolist()] for _ in range(jobs)]
    gpus = [[0, 1, 2, 4, 8] for _ in range(jobs)]
    capacity = int(rng.integers(1, 12))
    problem = ChoiceProblem(tuple(map(tuple, costs)), tuple(map(tuple, gpus)), capacity)
    picks = solve_choice(problem)
    assert sum(gpus[j][c] for j, c in enumerate(picks)) <= capacity
    assert choice_objective(problem, picks) == pytest.approx(brute_force(costs, gpus, capacity))


def _state(jobs: list[ElasticJob], cluster: ElasticCluster, time: float) -> RoundState:
    return RoundState(
        time=time,
        cluster=cluster,
        jobs=tuple(
            JobState(j, application_of(j), 0.0, None, 0, 0.0, time - j.submit_time) for j in jobs
        ),
        round_length=60.0,
        restart_time=30.0,
    )


@pytest.mark.parametrize(
    ("num_nodes", "models"),
    [(1, ["cifar10", "bert"]), (2, ["cifar10", "bert", "yolov3"]), (2, ["imagenet", "ncf"])],
)
def test_pollux_round_equals_brute_force(num_nodes: int, models: list[str]) -> None:
    """Pollux's round choice attains the best harmonic-mean objective over all option sets.

    The brute force evaluates Pollux's objective, sum_j 1 / (s_j * f_j + eps),
    itself from each option's speedup, with no shared code with the MILP.
    """
    cluster = ElasticCluster(num_nodes=num_nodes, gpus_per_node=4)
    jobs = [ElasticJob(f"{m}-{i}", m, 0.0, 1, 128) for i, m in enumerate(models)]
    state = _state(jobs, cluster, 45.0)
    policy = Pollux()
    _, options = policy.problem(state)
    factor = 45.0 / (45.0 + 30.0)  # a new job's first start, restarts = 0
    eps = policy.params.epsilon

    def cost(opts: object, c: int) -> float:
        scaled = opts.speedup[c] / 4 * (factor if opts.gpus[c] else 1.0)  # type: ignore[attr-defined]
        return 1.0 / (scaled + eps)

    costs = [[cost(o, c) for c in range(len(o.gpus))] for o in options]
    gpus = [list(o.gpus) for o in options]
    best = brute_force(costs, gpus, cluster.total_gpus)
    allocations = policy.allocate(state)
    chosen = 0.0
    for job, opts in zip(state.jobs, options, strict=True):
        alloc = allocations.get(job.job.name)
        count = alloc.replicas if alloc else 0
        chosen += cost(opts, opts.gpus.index(count))
    assert chosen == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_chain_packing_always_fits(seed: int) -> None:
    """Any chain-size request whose total fits is placed within every node's GPUs."""
    rng = np.random.default_rng(seed)
    nodes, size_g = int(rng.integers(1, 5)), 4
    counts: dict[str, int] = {}
    left = nodes * size_g
    for j in range(12):
        options = [g for g in chain_sizes(size_g) if g <= left]
        options += [k * size_g for k in range(2, nodes + 1) if k * size_g <= left]
        if not options:
            break
        counts[f"j{j}"] = int(rng.choice(options))
        left -= counts[f"j{j}"]
    placed = pack_chain(counts, {}, nodes, size_g)
    used = [0] * nodes
    for name, placement in placed.items():
        assert sum(g for _, g in placement) == counts[name]
        assert counts[name] <= size_g or all(g == size_g for _, g in placement)
        for node, gpus in placement:
            used[node] += gpus
    assert max(used) <= size_g


def test_chain_packing_keeps_unchanged_jobs() -> None:
    """Jobs whose GPU count is unchanged stay on their nodes when a new one arrives."""
    previous = {"a": ((1, 2),), "b": ((0, 4),), "c": ((2, 4), (3, 4))}
    counts = {"a": 2, "b": 4, "c": 8, "d": 2}
    placed = pack_chain(counts, previous, 4, 4)
    assert placed["a"] == ((1, 2),) and placed["b"] == ((0, 4),)
    assert placed["c"] == ((2, 4), (3, 4)) and placed["d"] == ((1, 2),)


def test_a_new_job_avoids_the_gpus_an_unchanged_job_will_keep() -> None:
    """Catches the reservation ignored when a new job picks a node: on 2 nodes of 8, J (4)
    and K (2) stay on node 0; the new N (4) is placed before K (larger first), and node 0
    still shows 4 free GPUs, but 2 of them are K's: N must go to node 1, or K is pushed off
    its node and restarts."""
    previous = {"J": ((0, 4),), "K": ((0, 2),)}
    placed = pack_chain({"J": 4, "N": 4, "K": 2}, previous, 2, 8)
    assert placed == {"J": ((0, 4),), "N": ((1, 4),), "K": ((0, 2),)}


def test_most_free_placement_spreads_from_the_emptiest_node() -> None:
    """Tiresias's placement takes the node with most free GPUs first, lowest index on ties."""
    free = [2, 4, 3]
    assert most_free_placement(free, 6) == ((1, 4), (2, 2))
    assert free == [2, 0, 1]
