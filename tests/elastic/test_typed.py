"""Typed elastic clusters: parsing and refusals, per-type speeds, the check of typed runs,
and Sia's ILP over (job, GPU type, nodes, GPUs) against a brute force."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest
from ddlsched.algorithms.elastic import ELASTIC_POLICIES, simulator
from ddlsched.algorithms.elastic.packing import assign_groups, pack_groups
from ddlsched.algorithms.elastic.policies import Pollux, Sia, TypedGreedy
from ddlsched.algorithms.elastic.round_milp import ChoiceProblem, choice_objective, solve_choice
from ddlsched.algorithms.elastic.simulator import (
    Allocation,
    JobState,
    RoundState,
    application_of,
    simulate_elastic,
)
from ddlsched.proofs_checks.elastic import check_elastic
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.core.elastic import (
    MODELS,
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    goodput_scale,
    type_slowdowns,
)
from tests.elastic.rounds import round_state
from tests.strategies import small_elastic_workloads, typed_elastic_clusters


@pytest.fixture
def typed_cluster() -> ElasticCluster:
    """One V100 node and one K80 node of four GPUs: the smallest cluster where the type a
    job lands on matters (cifar10 is about six times slower on the K80)."""
    return ElasticCluster.from_type_counts([("v100", 1), ("k80", 1)], 4)


def test_type_counts_give_nodes_of_each_type_in_order() -> None:
    """``v100:2,k80:1`` nodes of 4 GPUs: nodes 0-1 are V100s, node 2 a K80, 12 GPUs."""
    cluster = ElasticCluster.from_type_counts([("v100", 2), ("k80", 1)], 4)
    assert cluster.node_types == ("v100", "v100", "k80")
    assert cluster.gpu_types == ("v100", "k80")
    assert cluster.nodes_of("v100") == (0, 1)
    assert cluster.nodes_of("k80") == (2,)
    assert cluster.total_gpus == 12 and cluster.typed and cluster.gpus_of("v100") == 8
    assert not ElasticCluster(2, 4).typed and ElasticCluster(2, 4).nodes_of(None) == (0, 1)


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([("a100", 2)], "unknown GPU type 'a100'"),
        ([("v100", 0)], "nodes of type 'v100' must be a positive int, got 0"),
        ([("v100", 1.5)], "nodes of type 'v100' must be a positive int, got 1.5"),
        ([("v100", 1), ("v100", 2)], "'v100' named more than once"),
        ([], "no GPU types given"),
    ],
)
def test_bad_type_counts_are_refused_naming_the_value(
    counts: list[tuple[str, object]], message: str
) -> None:
    """Unknown types, non-positive or fractional counts, repeats and nothing at all."""
    with pytest.raises(ValueError, match=message):
        ElasticCluster.from_type_counts(counts, 4)  # type: ignore[arg-type]


def test_node_types_must_match_the_nodes() -> None:
    """A type list of the wrong length, or a bare string, is refused naming the field."""
    with pytest.raises(ValueError, match="node_types names 1 nodes, num_nodes is 2"):
        ElasticCluster(2, 4, ("v100",))
    with pytest.raises(ValueError, match="node_types must be a sequence"):
        ElasticCluster(4, 4, "v100")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--gpu-types", "a100:2"], "--gpu-types: ElasticCluster.node_types: unknown GPU type"),
        (["--gpu-types", "v100:2", "--servers", "3"], "--servers: not with --gpu-types"),
    ],
)
def test_the_command_line_refuses_bad_typed_clusters_in_one_line(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    """``simulate --trace <Pollux workload> --gpu-types ...``: one error line, no traceback."""
    code = main(["simulate", "--trace", "workload-1.csv", "--policy", "sia", *options])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert message in err and len(err.splitlines()) == 1


def test_slowdowns_are_the_geometric_mean_of_gavels_one_gpu_ratios() -> None:
    """ImageNet takes ResNet-50's four one-GPU rows (batch 16, 32, 64, 128), worked by hand
    from the shipped file; the V100, its fastest type, has slowdown 1; speed is the
    slowdown's inverse (1 on an untyped cluster)."""
    k80 = [11.396129 / 2.30052, 7.787265 / 1.236569, 4.394775 / 0.619028, 2.496766 / 0.347224]
    expected = math.prod(k80) ** 0.25
    assert type_slowdowns("imagenet")["k80"] == pytest.approx(expected, rel=1e-12)
    assert type_slowdowns("imagenet")["v100"] == 1.0
    assert goodput_scale("imagenet", "k80") == pytest.approx(1 / expected, rel=1e-12)
    assert goodput_scale("imagenet", None) == 1.0


@pytest.mark.parametrize("model", MODELS)
def test_no_type_runs_a_model_faster_than_profiled(model: str) -> None:
    """Every slowdown is at least 1 and the fastest type's is 1 (ncf's Gavel match runs
    fastest on the P100), so bounds on the profiled goodput hold on typed clusters."""
    slowdowns = type_slowdowns(model)
    assert min(slowdowns.values()) == pytest.approx(1.0, rel=1e-12)
    assert all(value >= 1.0 - 1e-12 for value in slowdowns.values())
    assert (model == "ncf") == (slowdowns["p100"] == pytest.approx(1.0, rel=1e-12))


def test_a_lone_job_runs_at_its_types_speed(typed_cluster: ElasticCluster) -> None:
    """BERT at its initial batch on one K80 GPU: its iterations take the slowdown times the
    fitted V100 time (by hand: 30 s restart, then ``target`` iterations)."""

    class OnK80:
        name = "on-k80"

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            return {j.job.name: Allocation(((1, 1),), 12, 0) for j in state.jobs}

    job = ElasticJob("bert-0", "bert", 0.0, 1, 12, epochs=1)
    result = simulate_elastic(ElasticWorkload((job,)), OnK80(), typed_cluster)
    app = application_of(job)
    per_iteration = (app.perf.alpha_grad + 12 * app.perf.beta_grad) * type_slowdowns("bert")["k80"]
    assert result.completion["bert-0"] == pytest.approx(
        30.0 + app.target_progress * per_iteration, rel=1e-9
    )
    assert check_elastic(result) == []


@pytest.mark.parametrize("policy", ELASTIC_POLICIES.names())
def test_every_policy_passes_the_check_on_a_typed_cluster(
    policy: str, mixed_workload: ElasticWorkload, typed_cluster: ElasticCluster
) -> None:
    """Type-aware and type-unaware policies alike: one type per job per round, per-type
    capacity, progress at the type's speed, restarts on every move (recomputed)."""
    result = simulate_elastic(mixed_workload, ELASTIC_POLICIES[policy](), typed_cluster)
    assert check_elastic(result) == []
    for record in result.records:
        for alloc in record.allocations.values():
            assert len({typed_cluster.type_of(node) for node, _ in alloc.placement}) == 1


@settings(max_examples=6, deadline=None, derandomize=True)
@given(
    typed_elastic_clusters(),
    small_elastic_workloads(models=("bert", "cifar10", "ncf", "yolov3")),
    st.sampled_from(ELASTIC_POLICIES.names()),
)
def test_typed_runs_pass_the_check(
    cluster: ElasticCluster, workload: ElasticWorkload, policy: str
) -> None:
    """Any policy on two or three GPU types, 2- or 4-GPU nodes, batch or spread arrivals:
    the run passes the independent check and every job runs on one type per round (the
    models with short epochs keep the runs short)."""
    result = simulate_elastic(workload, ELASTIC_POLICIES[policy](), cluster)
    assert check_elastic(result) == []
    for record in result.records:
        for alloc in record.allocations.values():
            assert len({cluster.type_of(node) for node, _ in alloc.placement}) == 1


def test_the_simulator_refuses_a_placement_across_types(typed_cluster: ElasticCluster) -> None:
    """A job on a V100 node and a K80 node at once is refused, naming both types."""

    class Straddle:
        name = "straddle"

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            return {j.job.name: Allocation(((0, 4), (1, 4)), 16, 0) for j in state.jobs}

    job = ElasticJob("cifar10-0", "cifar10", 0.0, 8, 128, epochs=1)
    with pytest.raises(ValueError, match=r"spans GPU types \['k80', 'v100'\]"):
        simulate_elastic(ElasticWorkload((job,)), Straddle(), typed_cluster)


def test_the_check_reports_a_placement_across_types(typed_cluster: ElasticCluster) -> None:
    """A run recorded on two untyped nodes, read as if node 0 were a V100 and node 1 a K80:
    the check reports the job that spans both types."""

    class Spread:
        name = "spread"

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            return {j.job.name: Allocation(((0, 4), (1, 4)), 16, 0) for j in state.jobs}

    job = ElasticJob("cifar10-0", "cifar10", 0.0, 8, 128, epochs=1)
    result = simulate_elastic(ElasticWorkload((job,)), Spread(), ElasticCluster(2, 4))
    relabelled = dataclasses.replace(result, cluster=typed_cluster)
    assert any("spans GPU types" in line for line in check_elastic(relabelled))


def test_the_check_catches_a_wrong_per_type_speed(
    monkeypatch: pytest.MonkeyPatch,
    mixed_workload: ElasticWorkload,
    typed_cluster: ElasticCluster,
) -> None:
    """A simulator that runs every type at the V100's speed (a plausible one-line bug in the
    per-type goodput) is caught: progress differs from the recomputed one."""
    monkeypatch.setattr(simulator, "goodput_scale", lambda model, gpu_type: 1.0)
    result = simulate_elastic(mixed_workload, Sia(), typed_cluster)
    assert any("recomputed" in line for line in check_elastic(result))


def test_the_check_catches_a_free_move_between_types(
    monkeypatch: pytest.MonkeyPatch, typed_cluster: ElasticCluster
) -> None:
    """A simulator that restarts a job only when its GPU count changes lets a move from the
    V100 node to the K80 node go free; the check charges the restart and reports it."""

    class Hopper:
        name = "hopper"

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            node = int(state.time // 60) % 2
            return {j.job.name: Allocation(((node, 1),), 12, 0) for j in state.jobs}

    def moves(previous: Allocation | None, alloc: Allocation) -> bool:
        return previous is None or previous.replicas != alloc.replicas

    job = ElasticJob("bert-0", "bert", 0.0, 1, 12, epochs=1)
    honest = simulate_elastic(ElasticWorkload((job,)), Hopper(), typed_cluster)
    assert check_elastic(honest) == []
    monkeypatch.setattr(simulator, "_moves", moves)
    planted = simulate_elastic(ElasticWorkload((job,)), Hopper(), typed_cluster)
    assert any("recomputed" in line for line in check_elastic(planted))


def test_type_aware_policies_put_a_lone_job_on_the_fast_type(
    typed_cluster: ElasticCluster,
) -> None:
    """A lone cifar10 job (about 6x slower on a K80): Sia and the typed greedy run it on the
    V100 node; type-unaware Pollux may land on either (it does not know)."""
    job = ElasticJob("cifar10-0", "cifar10", 0.0, 1, 128, epochs=1)
    state = round_state([job], typed_cluster, 0.0)
    for policy in (Sia(), TypedGreedy()):
        alloc = policy.allocate(state)["cifar10-0"]
        assert {typed_cluster.type_of(node) for node, _ in alloc.placement} == {"v100"}
    assert Pollux().allocate(state)["cifar10-0"].replicas >= 1


def test_a_type_unaware_count_that_fits_no_type_shrinks() -> None:
    """Pollux's 8 GPUs on a cluster of two 4-GPU nodes of different types: 4 GPUs on one type."""
    cluster = ElasticCluster.from_type_counts([("v100", 1), ("p100", 1)], 4)
    job = ElasticJob("imagenet-0", "imagenet", 0.0, 8, 512, epochs=1)
    alloc = Pollux().allocate(round_state([job], cluster, 0.0))["imagenet-0"]
    assert alloc.replicas == 4 and alloc.num_nodes == 1


def test_assign_groups_by_hand() -> None:
    """Groups of 8 and 4 GPUs; counts 8, 4, 4 (allowed 1, 2, 4, 8): the kept job stays in its
    group, the 8 takes the roomiest group left, the last 4 has 0 left and gets nothing."""
    allowed = {"a": (1, 2, 4, 8), "b": (1, 2, 4), "c": (1, 2, 4)}
    chosen = assign_groups(
        {"a": 8, "b": 4, "c": 4}, allowed, {"b": "small"}, {"big": 8, "small": 4}
    )
    assert chosen == {"b": ("small", 4), "a": ("big", 8)}
    shrunk = assign_groups({"a": 8}, allowed, {}, {"big": 4, "small": 2})
    assert shrunk == {"a": ("big", 4)}


def test_pack_groups_keeps_jobs_on_their_nodes_and_types() -> None:
    """Two types of two nodes each: a job that stays in its type keeps its nodes; one that
    changes type is placed on the other type's nodes."""
    groups = {"v100": (0, 1), "k80": (2, 3)}
    previous = {"a": ((1, 2),), "b": ((0, 4),)}
    placed = pack_groups({"a": ("v100", 2), "b": ("k80", 4)}, previous, groups, 4)
    assert placed["a"] == ((1, 2),)
    assert placed["b"][0][0] in (2, 3)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 1), st.floats(-5, 5)), max_size=4),
        min_size=1,
        max_size=4,
    ),
    st.tuples(st.integers(0, 6), st.integers(0, 6)),
)
def test_choice_with_two_pools_equals_brute_force(
    jobs: list[list[tuple[int, int, float]]], capacity: tuple[int, int]
) -> None:
    """The round MILP with one capacity row per pool attains the brute-force optimum
    (option 0 of every job is free and empty, so every problem is feasible)."""
    costs = tuple((0.0, *(c for _, _, c in options)) for options in jobs)
    gpus = tuple((0, *(g for g, _, _ in options)) for options in jobs)
    pools = tuple((0, *(p for _, p, _ in options)) for options in jobs)
    problem = ChoiceProblem(costs, gpus, capacity, pools)
    best = math.inf
    for combo in itertools.product(*[range(len(c)) for c in costs]):
        used = [0, 0]
        for j, c in enumerate(combo):
            used[pools[j][c]] += gpus[j][c]
        if used[0] <= capacity[0] and used[1] <= capacity[1]:
            best = min(best, sum(costs[j][c] for j, c in enumerate(combo)))
    assert choice_objective(problem, solve_choice(problem)) == pytest.approx(best, abs=1e-9)


def _configurations(job: JobState, cluster: ElasticCluster) -> list[tuple[str, int, float]]:
    """Every (type, GPUs, goodput) Sia may give the job, enumerated from the definition:
    1, 2, 4 GPUs on one node or k >= 2 whole nodes of one type, at most the job's limit."""
    app = job.app
    cap = min(64, app.max_replicas)
    found = []
    for gpu_type in dict.fromkeys(cluster.node_types):
        nodes = cluster.node_types.count(gpu_type)
        shapes = [(1, g) for g in (1, 2, 4)] + [(k, 4 * k) for k in range(2, nodes + 1)]
        for num_nodes, gpus in shapes:
            if gpus <= cap:
                good = app.best_batch(num_nodes, gpus, job.epoch).goodput
                found.append((gpu_type, gpus, good / type_slowdowns(job.job.model)[gpu_type]))
    return found


def _sia_value(
    job: JobState,
    cluster: ElasticCluster,
    configs: list[tuple[str, int, float]],
    pick: tuple[str, int] | None,
) -> float:
    """Sia's term of one job (p = -0.5, lambda_n = 1.1, clip 3000) from its definition."""
    if pick is None:
        return 1.1
    base = min(good for _, _, good in configs if good > 0)
    good = next(g for t, n, g in configs if (t, n) == pick)
    current = None
    if job.allocation is not None:
        node = job.allocation.placement[0][0]
        current = (cluster.node_types[node], job.allocation.replicas)
    factor = 1.0
    if job.age >= 30 and pick != current:
        factor = max(job.age - job.num_restarts * 30, 0) / (job.age + 30)
    return min((good / base * factor) ** -0.5, 3000.0)


@pytest.mark.parametrize(
    ("counts", "models", "time", "held"),
    [
        ([("v100", 1), ("k80", 1)], ["cifar10", "bert", "yolov3"], 20.0, {}),
        ([("v100", 1), ("k80", 1)], ["cifar10", "imagenet", "bert"], 300.0, {"bert-2": (1, 2)}),
        ([("v100", 1), ("p100", 1), ("k80", 1)], ["imagenet", "deepspeech2"], 90.0, {}),
        (
            [("v100", 2), ("k80", 1)],
            ["cifar10", "imagenet", "yolov3"],
            600.0,
            {"cifar10-0": (2, 4)},
        ),
        (
            [("p100", 1), ("k80", 1)],
            ["bert", "bert", "cifar10", "yolov3", "deepspeech2"],
            45.0,
            {},
        ),
    ],
)
def test_sia_round_on_types_equals_brute_force(
    counts: list[tuple[str, int]],
    models: list[str],
    time: float,
    held: dict[str, tuple[int, int]],
) -> None:
    """Sia's typed choice attains the least value of its objective over every set of
    (type, GPUs) configurations that fits each type's GPUs.

    The brute force enumerates configurations and evaluates Sia's objective from its
    definition (goodput normalised by the job's least over every type, restart factor off
    the held (type, GPUs), powered, lambda_n when paused) without sia_costs, the options
    code or the MILP; held jobs are old enough to be discounted, and the last case has
    more jobs than one type's GPUs.
    """
    cluster = ElasticCluster.from_type_counts(counts, 4)
    jobs = [ElasticJob(f"{m}-{i}", m, 0.0, 1, 128) for i, m in enumerate(models)]
    state = round_state(jobs, cluster, time, held)
    configs = [_configurations(job, cluster) for job in state.jobs]
    room = {t: cluster.node_types.count(t) * 4 for t in cluster.node_types}
    best = math.inf
    for combo in itertools.product(*[[None, *((t, n) for t, n, _ in c)] for c in configs]):
        used = dict.fromkeys(room, 0)
        for pick in combo:
            if pick is not None:
                used[pick[0]] += pick[1]
        if all(used[t] <= room[t] for t in room):
            total = math.fsum(
                _sia_value(j, cluster, c, p)
                for j, c, p in zip(state.jobs, configs, combo, strict=True)
            )
            best = min(best, total)
    allocations = Sia().allocate(state)
    chosen: list[tuple[str, int] | None] = [
        (
            cluster.node_types[allocations[j.job.name].placement[0][0]],
            allocations[j.job.name].replicas,
        )
        if j.job.name in allocations
        else None
        for j in state.jobs
    ]
    reached = math.fsum(
        _sia_value(j, cluster, c, p) for j, c, p in zip(state.jobs, configs, chosen, strict=True)
    )
    assert reached == pytest.approx(best, rel=1e-9)
