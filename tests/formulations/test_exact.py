"""The MILPs of A, A1, A2 against hand-worked optima and independent oracles."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job, Parallelism, Schedule, ScheduledJob
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus
from formulations.exact import build, solve_milp
from formulations.modes import count_vectors
from proofs_checks.verifier import verify
from tests.oracles import brute_force_a, brute_force_a1, brute_force_a2
from tests.strategies import TINY_INTEGRAL


def _solve_verified(instance: Instance, problem: str, **kwargs: object) -> float:
    """Solve, check status, verify the schedule and the reported objective."""
    result = solve_milp(instance, problem, ExactParams(time_limit=60), **kwargs)  # type: ignore[arg-type]
    assert result.status == SolveStatus.OPTIMAL, result.notes
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.objective == pytest.approx(report.total_completion_time, abs=1e-9)
    assert result.total_jct == pytest.approx(report.total_jct, abs=1e-9)
    assert result.best_bound <= result.objective + 1e-6
    return result.objective


def _job(name: str, gpus: int, iterations: int, release: float = 0.0, **kw: object) -> Job:
    return Job(id=name, release=release, iterations=iterations, compute_time=1.0, gpus=gpus, **kw)  # type: ignore[arg-type]


def test_capacity_forces_serialisation_spt() -> None:
    """Two 2-GPU jobs on one 2-GPU server run one after the other, shortest first.

    Durations 1 and 3: SPT gives C = 1 and 4, total 5 (the other order, 3 + 4 = 7).
    """
    instance = Instance(Cluster((2,), 1.0, 1.0), (_job("long", 2, 3), _job("short", 2, 1)))
    assert _solve_verified(instance, "A") == pytest.approx(5.0)


def test_release_respected() -> None:
    """A job released at 3 on an idle cluster completes at 3 + its duration."""
    instance = Instance(Cluster((1,), 1.0, 1.0), (_job("late", 1, 2, release=3.0),))
    assert _solve_verified(instance, "A") == pytest.approx(5.0)


def test_mode_choice_splits_ring(ring_instance: Instance) -> None:
    """The 4-ring must split over two 2-GPU servers: best split cuts 2 edges.

    ring: 2 iterations x alpha 4 = 8 on all 4 GPUs; solo (released at 1)
    lasts 3. Ring first: 8 + 11 = 19. Solo first, ring waiting: solo ends
    at 4, ring at 12: 16. Optimum 16, and it needs the idle interval [0, 1).
    """
    assert _solve_verified(ring_instance, "A") == pytest.approx(16.0)


def test_a1_rigid_pool() -> None:
    """A1: two 3-GPU jobs on 4 pooled GPUs cannot overlap; all-cut durations.

    Each is a 3-path with 1 GB edges, c = 1, B_inter = 1: alpha_max = 3,
    K = 1: durations 3 and 3: completions 3 and 6, total 9.
    """
    path = ((0, 1, 1.0), (1, 2, 1.0))
    instance = Instance(
        Cluster((2, 2), 2.0, 1.0), (_job("a", 3, 1, edges=path), _job("b", 3, 1, edges=path))
    )
    assert _solve_verified(instance, "A1") == pytest.approx(9.0)


def test_a2_hand_worked_preemption(ring_instance: Instance) -> None:
    """A2 on the ring instance: sizes ring 10 (r=0), solo 0.75 (r=1).

    SRPT preempts the ring at 1 for solo: solo ends 1.75, ring 10.75;
    total 12.5 (without preemption: 10 + 10.75 = 20.75).
    """
    assert _solve_verified(ring_instance, "A2") == pytest.approx(12.5)


def test_symmetric_servers_lose_no_optimum() -> None:
    """Symmetry breaking on 3 identical servers keeps the optimum (brute force agrees)."""
    jobs = tuple(
        _job(f"j{k}", g, k + 1, edges=((0, 1, 1.0),) if g == 2 else ())
        for k, g in enumerate((2, 1, 2))
    )
    instance = Instance(Cluster((1, 1, 1), 2.0, 1.0), jobs)
    assert _solve_verified(instance, "A") == pytest.approx(brute_force_a(instance))


def test_count_vectors() -> None:
    """Count vectors: every split of g over servers within capacity, nothing else."""
    vectors = set(count_vectors(3, (2, 2)))
    assert vectors == {(2, 1), (1, 2)}
    assert len(set(count_vectors(4, (4, 4, 4, 4)))) == 35


def test_non_integral_is_not_called_optimal() -> None:
    """On a non-integral instance the result is the slotted optimum, not 'optimal'."""
    instance = Instance(Cluster((2,), 1.0, 1.0), (_job("a", 1, 1).replace(compute_time=0.4),))
    result = solve_milp(instance, "A", ExactParams(time_limit=10))
    assert result.status == SolveStatus.FEASIBLE
    assert any("not integral" in note for note in result.notes)
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(0.4)  # true completion, not the slot


def test_warm_start_accepted_and_optimum_unchanged() -> None:
    """A (poor) warm start is repaired onto the grid; the optimum does not change."""
    config = GeneratorConfig(num_jobs=5, integral=True, bandwidth_intra=2.0, max_job_gpus=4)
    instance = generate(config, 11)
    plain = solve_milp(instance, "A", ExactParams(time_limit=60))
    # Serial schedule: every job alone, nodes filling servers in order.
    entries, time = [], 0.0
    for job in instance.jobs:
        mapping = tuple(min(k // 4, 1) for k in range(job.gpus))
        entries.append(ScheduledJob(job.id, max(time, job.release), None, mapping))
        time = max(time, job.release) + 100.0
    warm = solve_milp(
        instance, "A", ExactParams(time_limit=60), warm_start=Schedule(tuple(entries))
    )
    assert warm.status == plain.status == SolveStatus.OPTIMAL
    assert warm.objective == pytest.approx(plain.objective)


def test_horizon_never_cuts_the_optimum() -> None:
    """Every job's latest completion is at least its completion in the found optimum."""
    instance = generate(
        GeneratorConfig(num_jobs=6, integral=True, bandwidth_intra=2.0, load=1.5, max_job_gpus=4),
        5,
    )
    built = build(instance, "A")
    result = solve_milp(instance, "A")
    assert result.schedule is not None
    ends = {entry.id: entry.end for entry in result.schedule.jobs}
    for job in instance.jobs:
        latest_slot = max(
            t + built.slotted.jobs[i].modes[m].slots  # type: ignore[union-attr]
            for i, m, t in built.model.INDEX
            if i == instance.job_index[job.id]
        )
        assert ends[job.id] <= latest_slot * instance.slot + 1e-9


TINY = TINY_INTEGRAL.replace(num_jobs=3, duration_slots=(1, 2))


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]), st.booleans())
def test_a_matches_brute_force(seed: int, load: float | None, weighted: bool) -> None:
    """MILP optimum of A equals the brute-force optimum on tiny integral instances."""
    instance = generate(TINY.replace(load=load), seed)
    if weighted:
        instance = instance.replace(
            jobs=tuple(j.replace(weight=1.0 + k) for k, j in enumerate(instance.jobs))
        )
    assert _solve_verified(instance, "A") == pytest.approx(brute_force_a(instance))


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]))
def test_a1_matches_brute_force(seed: int, load: float | None) -> None:
    """MILP optimum of A1 equals the brute-force optimum on tiny integral instances."""
    instance = generate(TINY.replace(load=load), seed)
    assert _solve_verified(instance, "A1") == pytest.approx(brute_force_a1(instance))


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]))
def test_a2_matches_brute_force(seed: int, load: float | None) -> None:
    """MILP optimum of A2 equals the slot-by-slot dynamic program on tiny integral instances."""
    instance = generate(TINY.replace(load=load), seed)
    assert _solve_verified(instance, "A2") == pytest.approx(brute_force_a2(instance))


def test_a_with_mixed_parallelism_graph() -> None:
    """A (2,1,2) job (tensor pairs heavy) on 2+2 GPUs: the MILP keeps tensor pairs together."""
    from ddlsched.core.graphs import build_job_graph
    from ddlsched.core.zoo import get_profile

    p = Parallelism(dp=2, pp=1, tp=2)
    compute, edges = build_job_graph(get_profile("bert_base"), p)
    job = Job(
        id="bert",
        release=0.0,
        iterations=1,
        compute_time=compute,
        gpus=4,
        parallelism=p,
        edges=edges,
    )
    instance = Instance(Cluster((2, 2), 20.0, 1.0), (job,))
    result = solve_milp(instance, "A")
    assert result.schedule is not None
    mapping = result.schedule.jobs[0].mapping
    assert mapping is not None
    assert mapping[p.node(0, 0, 0)] == mapping[p.node(0, 0, 1)]
    assert mapping[p.node(1, 0, 0)] == mapping[p.node(1, 0, 1)]


def test_oversized_model_refused_clearly() -> None:
    """Realistic durations with a 1 s slot would need millions of variables: a clear error."""
    from formulations.exact import ModelTooLarge

    instance = generate(GeneratorConfig(num_jobs=4), 0)  # hours-long jobs, slot 1 s
    with pytest.raises(ModelTooLarge, match="use a larger slot"):
        solve_milp(instance, "A")
