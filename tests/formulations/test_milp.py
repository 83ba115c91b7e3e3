"""Exact solves of problems A and A1 (ddlsched.formulations.milp): hand-worked optima, brute
force."""

from __future__ import annotations

import math

import pytest
from ddlsched.formulations.milp import solve_milp
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job, Parallelism
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus
from tests.formulations.helpers import solve_verified, unit_job
from tests.oracles import brute_force_a, brute_force_a1
from tests.strategies import TINY_INTEGRAL, typed_instances

TINY = TINY_INTEGRAL.replace(num_jobs=3, duration_slots=(1, 2))
IN_PROCESS = ExactParams(time_limit=60, isolate=False)


def test_capacity_forces_serialisation_spt() -> None:
    """Two 2-GPU jobs on one 2-GPU server run one after the other, shortest first.

    Durations 1 and 3: SPT gives C = 1 and 4, total 5 (the other order, 3 + 4 = 7).
    """
    instance = Instance(Cluster((2,), 1.0, 1.0), (unit_job("long", 2, 3), unit_job("short", 2, 1)))
    assert solve_verified(instance, "A") == pytest.approx(5.0)


def test_release_respected() -> None:
    """A job released at 3 on an idle cluster completes at 3 + its duration."""
    instance = Instance(Cluster((1,), 1.0, 1.0), (unit_job("late", 1, 2, release=3.0),))
    assert solve_verified(instance, "A") == pytest.approx(5.0)


def test_mode_choice_splits_ring(ring_instance: Instance) -> None:
    """The 4-ring must split over two 2-GPU servers: best split cuts 2 edges.

    ring: 2 iterations x alpha 4 = 8 on all 4 GPUs; solo (released at 1)
    lasts 3. Ring first: 8 + 11 = 19. Solo first, ring waiting: solo ends
    at 4, ring at 12: 16. Optimum 16, and it needs the idle interval [0, 1).
    """
    assert solve_verified(ring_instance, "A") == pytest.approx(16.0)


def test_a1_rigid_pool() -> None:
    """A1: two 3-GPU jobs on 4 pooled GPUs cannot overlap; all-cut durations.

    Each is a 3-path with 1 GB edges, c = 1, B_inter = 1: alpha_max = 3,
    K = 1: durations 3 and 3: completions 3 and 6, total 9.
    """
    path = ((0, 1, 1.0), (1, 2, 1.0))
    instance = Instance(
        Cluster((2, 2), 2.0, 1.0),
        (unit_job("a", 3, 1, edges=path), unit_job("b", 3, 1, edges=path)),
    )
    assert solve_verified(instance, "A1") == pytest.approx(9.0)


def test_non_integral_is_not_called_optimal() -> None:
    """On a non-integral instance the result is the slotted optimum, not 'optimal', unless a
    combinatorial bound meets it: a 0.4 s job released at 0.5 starts at slot 1 and ends at
    1.4 against the job bound 0.9 (feasible); released at 0 it ends at 0.4, the job bound
    (optimal, said to be proven by that bound)."""
    job = unit_job("a", 1, 1).replace(compute_time=0.4, release=0.5)
    instance = Instance(Cluster((2,), 1.0, 1.0), (job,))
    result = solve_milp(instance, "A", ExactParams(time_limit=600))
    assert result.status == SolveStatus.FEASIBLE
    assert any("not integral" in note for note in result.notes)
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(1.4)  # true completion, not the slot
    assert result.best_bound == pytest.approx(0.9)
    at_zero = instance.replace(jobs=(job.replace(release=0.0),))
    proven = solve_milp(at_zero, "A", ExactParams(time_limit=600))
    assert proven.status == SolveStatus.OPTIMAL and proven.objective == pytest.approx(0.4)
    assert any("a proof for the instance" in note for note in proven.notes)


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]), st.booleans())
def test_a_matches_brute_force(seed: int, load: float | None, weighted: bool) -> None:
    """MILP optimum of A equals the brute-force optimum on tiny integral instances."""
    instance = generate(TINY.replace(load=load), seed)
    if weighted:
        instance = instance.replace(
            jobs=tuple(j.replace(weight=1.0 + k) for k, j in enumerate(instance.jobs))
        )
    assert solve_verified(instance, "A") == pytest.approx(brute_force_a(instance))


@settings(max_examples=12)
@given(typed_instances(integral=True))
def test_a_on_mixed_clusters_matches_brute_force(instance: Instance) -> None:
    """GPU types: the MILP's optimum of A equals the oracle's, which times every map
    (slowest used type, each edge at its server's bandwidth) independently."""
    assert solve_verified(instance, "A") == pytest.approx(brute_force_a(instance))


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]))
def test_a1_matches_brute_force(seed: int, load: float | None) -> None:
    """MILP optimum of A1 equals the brute-force optimum on tiny integral instances."""
    instance = generate(TINY.replace(load=load), seed)
    assert solve_verified(instance, "A1") == pytest.approx(brute_force_a1(instance))


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
    from ddlsched.formulations.prepared import ModelTooLarge

    instance = generate(GeneratorConfig(num_jobs=4), 0)  # hours-long jobs, slot 1 s
    with pytest.raises(ModelTooLarge, match=r'horizon of .* slots .* larger "slot"'):
        solve_milp(instance, "A")


def test_mode_explosion_refused_before_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    """One 16-GPU job on 16 x 8 has ~3e8 modes: refused, naming the count, before listing any."""
    import ddlsched.formulations.modes as modes
    from ddlsched.formulations.prepared import ModelTooLarge

    def never(*args: object) -> None:
        raise AssertionError("modes were enumerated before the size check")

    monkeypatch.setattr(modes, "count_vectors", never)
    job = Job(id="wide", release=0, iterations=1, compute_time=1.0, gpus=16)
    instance = Instance(Cluster.uniform(16, 8, 2.0, 1.0), (job,))
    with pytest.raises(ModelTooLarge, match="297,811,491 variables"):
        solve_milp(instance, "A", ExactParams(isolate=False))


def test_modes_off_the_grid_make_the_instance_non_integral() -> None:
    """Catches the integrality of the modes tested with ``any`` instead of ``all``: a
    2-GPU job with a 1 GB edge on 2 + 2 GPUs (B_intra 2, B_inter 1) lasts 1.5 s on one
    server (1 + 1/2) and 2 s across: one mode on the 1 s grid, one off. The instance is not
    integral, and the bound reported must not exceed the objective 1.5 (the slip reports
    2.0 as a valid bound)."""
    job = Job(id="a", release=0.0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    instance = Instance(Cluster((2, 2), 2.0, 1.0), (job,))
    result = solve_milp(instance, "A", IN_PROCESS)
    assert result.objective == pytest.approx(1.5)
    assert result.facts["integral"] is False
    assert not result.best_bound > result.objective + 1e-9


def test_modes_cut_short_are_reported_incomplete() -> None:
    """Catches ``modes_complete`` computed from the unproven modes instead of the
    unenumerated ones: with ``mode_limit=1`` the 2-GPU job above has more modes than the
    one kept, so its modes are not complete."""
    job = Job(id="a", release=0.0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    instance = Instance(Cluster((2, 2), 2.0, 1.0), (job,))
    result = solve_milp(instance, "A", IN_PROCESS.replace(mode_limit=1))
    assert result.facts["modes_complete"] is False


def test_the_slotted_milp_is_optimal_even_when_the_instance_is_not_integral() -> None:
    """Catches ``slotted_optimal`` read from the honest status (never optimal off the grid)
    instead of HiGHS's own: job b released at 0.5 s makes the instance non-integral, so
    the result is not called optimal, yet HiGHS proved the slotted model's optimum, and
    that fact is what lemma 1's check needs (``OPT(A1)`` on the grid)."""
    jobs = (
        Job(id="a", release=0.0, iterations=2, compute_time=1.0, gpus=1),
        Job(id="b", release=0.5, iterations=3, compute_time=1.0, gpus=2),
    )
    instance = Instance(Cluster((2, 2), 2.0, 1.0), jobs)
    result = solve_milp(instance, "A", IN_PROCESS)
    assert result.status is not SolveStatus.OPTIMAL
    assert result.facts["integral"] is False
    assert result.facts["slotted_optimal"] is True


def test_a_milp_stopped_before_its_first_incumbent_returns_the_warm_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Catches the time-limit branch of the MILP keyed on the wrong status (``is not`` for
    ``is``): HiGHS stopped at its limit with no incumbent (a stub: a real HiGHS loads the
    MIP start even at 1 ms) must give the warm start's schedule, verified, status
    feasible, with a bound no higher than it, not a bare time-limit result."""
    import ddlsched.formulations.milp as exact
    from ddlsched.formulations.solver import SolveOutcome

    from tests.examples import ring_instance

    def stopped(*args, **kwargs):  # type: ignore[no-untyped-def]
        return SolveOutcome(SolveStatus.TIME_LIMIT, math.nan, math.nan, 0.01, "maxTimeLimit")

    monkeypatch.setattr(exact, "solve_model", stopped)
    instance = ring_instance()
    result = solve_milp(instance, "A", ExactParams(time_limit=5, isolate=False))
    assert result.status is SolveStatus.FEASIBLE
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    assert not result.best_bound > result.objective
