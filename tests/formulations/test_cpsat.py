"""The CP-SAT backend (ddlsched.formulations.cpsat): equal to the brute force and to the MILP."""

from __future__ import annotations

import pytest
from ddlsched.formulations.cpsat import solve_cpsat
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import ExactParams, Problem, SolveStatus, solve
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import brute_force_a, brute_force_a1, brute_force_a2
from tests.strategies import TINY_INTEGRAL, typed_instances

LIMIT = ExactParams(time_limit=600)


def _verified(instance: Instance, problem: Problem) -> float:
    result = solve_cpsat(instance, problem, LIMIT)
    assert result.status is SolveStatus.OPTIMAL, result.notes
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.objective == pytest.approx(report.total_completion_time, abs=1e-9)
    assert result.best_bound <= result.objective + 1e-6
    return result.objective


@settings(max_examples=10)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]), st.booleans())
def test_a_equals_the_brute_force(seed: int, load: float | None, weighted: bool) -> None:
    """Problem A: CP-SAT's optimum is the enumerated one (weights 1-2 included)."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3, load=load), seed)
    if weighted:
        instance = instance.replace(
            jobs=tuple(j.replace(weight=1.0 + (k % 2)) for k, j in enumerate(instance.jobs))
        )
    assert _verified(instance, Problem.A) == pytest.approx(brute_force_a(instance))


@settings(max_examples=10)
@given(typed_instances(integral=True))
def test_a_on_mixed_clusters_equals_the_brute_force(instance: Instance) -> None:
    """GPU types: CP-SAT's optimum of A is the enumerated one."""
    assert _verified(instance, Problem.A) == pytest.approx(brute_force_a(instance))


@settings(max_examples=8)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]), st.booleans())
def test_a2_equals_the_brute_force(seed: int, load: float | None, weighted: bool) -> None:
    """Problem A2 (preemptive, one machine): CP-SAT's optimum is the dynamic program's, weights
    1-2 included (where SRPT alone is not optimal)."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3, load=load), seed)
    if weighted:
        instance = instance.replace(
            jobs=tuple(j.replace(weight=1.0 + (k % 2)) for k, j in enumerate(instance.jobs))
        )
    assert _verified(instance, Problem.A2) == pytest.approx(brute_force_a2(instance))


@settings(max_examples=8)
@given(st.integers(0, 10_000))
def test_a1_equals_the_brute_force(seed: int) -> None:
    """Problem A1 (rigid jobs on the pooled GPUs): the enumerated optimum."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), seed)
    assert _verified(instance, Problem.A1) == pytest.approx(brute_force_a1(instance))


@settings(max_examples=6)
@given(st.integers(0, 10_000), st.sampled_from([(2, 4), (3, 2)]))
def test_cpsat_and_milp_agree(seed: int, shape: tuple[int, int]) -> None:
    """Two independent exact methods prove the same optimum; a disagreement names the seed."""
    config = TINY_INTEGRAL.replace(
        num_jobs=6, servers=shape[0], gpus_per_server=shape[1], load=1.0, max_job_gpus=None
    )
    instance = generate(config, seed)
    cpsat = solve(instance, "cpsat", params=LIMIT, bound=False)
    milp = solve(instance, "milp", params=LIMIT, bound=False)
    assert cpsat.proven_optimal and milp.proven_optimal, (seed, shape)
    assert cpsat.objective == pytest.approx(milp.objective), (seed, shape)


def test_honest_status_and_clear_refusals() -> None:
    """Non-integral: the slotted optimum is not 'optimal' and its solver bound is withdrawn
    (A and A2); on A only a combinatorial bound that meets the schedule proves it (a lone
    1.05 s job: the job bound is 1.05), while a job released at 0.5, rounded up to start
    at 1, ends at 2 against the bound 1.5: feasible, gap from that bound. Odd weights: a
    clear error."""
    job = Job(id="j", release=0.0, iterations=1, compute_time=1.05, gpus=1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    a2 = solve_cpsat(instance, Problem.A2, LIMIT)
    assert a2.status is SolveStatus.FEASIBLE and a2.facts["integral"] is False
    assert a2.best_bound != a2.best_bound  # nan
    proven = solve_cpsat(instance, Problem.A, LIMIT)
    assert proven.status is SolveStatus.OPTIMAL and proven.facts["integral"] is False
    assert any("a proof for the instance" in note for note in proven.notes)
    # The slotted model's own value is kept beside it: 1.05 s rounds up to 2 slots of 1 s.
    assert proven.objective == pytest.approx(1.05) and proven.metrics["slotted_objective"] == 2.0
    late = instance.replace(jobs=(job.replace(release=0.5, compute_time=1.0),))
    result = solve_cpsat(late, Problem.A, LIMIT)
    assert result.status is SolveStatus.FEASIBLE and result.objective == pytest.approx(2.0)
    # The gap is judged on the flow time (2 - 0.5), which the release does not inflate.
    assert result.best_bound == pytest.approx(1.5) and result.gap == pytest.approx(0.5 / 1.5)
    for each in (a2, proven, result):
        assert (
            each.schedule is not None
            and verify(late if each is result else instance, each.schedule).feasible
        )
    odd = instance.replace(jobs=(job.replace(weight=2**0.5),))
    with pytest.raises(ValueError, match="ratio of small integers"):
        solve_cpsat(odd, Problem.A, LIMIT)


def _fractional_instance(slot: float) -> Instance:
    """Three jobs weighted 1/2, 2/3 and 3/2 on 2 x 2 GPUs, durations multiples of ``slot``."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3, load=1.0), 3)
    weights = (0.5, 2 / 3, 1.5)
    jobs = tuple(
        j.replace(weight=w, compute_time=j.compute_time * slot, release=j.release * slot)
        for j, w in zip(instance.jobs, weights, strict=True)
    )
    return instance.replace(jobs=jobs, slot=slot)


def test_weights_half_and_two_thirds_scale_by_their_common_multiple() -> None:
    """1/2 and 2/3 together scale to 3 and 4 (by 6), keeping every ratio exact.

    Catches: scaling by the largest denominator (3: 1/2 becomes 1, ratio 1:2 not 3:4) or
    truncating a fraction."""
    from ddlsched.formulations.cpsat_runtime import integer_weights

    assert integer_weights(["a", "b"], [0.5, 2 / 3]) == [3, 4]
    scaled = integer_weights(["a", "b", "c"], [1.5, 2 / 3, 0.5])
    assert scaled == [9, 4, 3]


def test_cpsat_weights_with_denominators_up_to_a_thousand() -> None:
    """Catches the weights' rational approximation limited to denominators of 100: 1 and
    0.123 are 1000 : 123 exactly, which CP-SAT must accept."""
    from ddlsched.formulations.cpsat_runtime import integer_weights

    assert list(integer_weights(["a", "b"], [1.0, 0.123])) == [1000, 123]


@pytest.mark.parametrize("problem", [Problem.A, Problem.A2])
def test_cpsat_bound_is_in_seconds_and_meets_the_optimum(problem: Problem) -> None:
    """Slots of 0.5 s and weights 1/2, 2/3, 3/2: CP-SAT's proven bound, converted from its
    integer units back to ``sum w C`` in seconds, equals the brute-force optimum.

    Catches: the bound left in CP-SAT's units, the slot length (or A2's ``Delta / M``)
    left out of the conversion, or the weight scale inverted."""
    instance = _fractional_instance(0.5)
    optimum = (brute_force_a if problem is Problem.A else brute_force_a2)(instance)
    result = solve_cpsat(instance, problem, LIMIT)
    assert result.status is SolveStatus.OPTIMAL, result.notes
    assert result.objective == pytest.approx(optimum)
    assert result.best_bound == pytest.approx(optimum)


def test_cpsat_stopped_by_its_deterministic_limit_is_feasible_not_optimal() -> None:
    """CP-SAT stopped by a tiny deterministic time on a 16-job instance answers FEASIBLE
    (its own status, in ``facts``); the result is ``feasible``, its bound below its
    objective. Catches: CP-SAT's FEASIBLE mapped to ``optimal``."""
    from ddlsched.core.generators import GeneratorConfig

    instance = generate(GeneratorConfig.exact_friendly(16, 4, 4, 1.0), 1)
    stopped = solve_cpsat(instance, Problem.A, LIMIT.replace(deterministic_limit=0.02))
    assert "CP-SAT: FEASIBLE" in stopped.notes, stopped.notes  # the test means something
    assert stopped.status is SolveStatus.FEASIBLE
    assert stopped.best_bound < stopped.objective


def test_cpsat_stopped_at_mip_gap_is_feasible_not_optimal() -> None:
    """With ``mip_gap=0.5`` CP-SAT stops at once and calls that OPTIMAL; its bound does
    not meet its objective, so the result is ``feasible``. Catches: a gap stop trusted as a
    proof (ExactParams: optimal only when the gap is closed)."""
    from ddlsched.core.generators import GeneratorConfig

    instance = generate(GeneratorConfig.exact_friendly(16, 4, 4, 1.0), 1)
    result = solve_cpsat(instance, Problem.A, LIMIT.replace(mip_gap=0.5))
    assert result.best_bound < result.objective - 1e-6
    assert result.status is SolveStatus.FEASIBLE, result.notes


@pytest.mark.parametrize("problem", [Problem.A, Problem.A2])
def test_without_a_cp_sat_solution_the_fallback_schedule_is_returned(
    problem: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Catches the fallback plan lost (``None``) when CP-SAT stops without a solution: the
    result still carries a verified schedule (preemptive SRPT for A2, a list schedule for
    A), says so in its notes, is feasible and never optimal, with no bound above OPT."""
    import ddlsched.formulations.cpsat as cpsat
    from ddlsched.formulations.cpsat_runtime import Answer

    def no_solution(task, cancel=None, on_plan=None):  # type: ignore[no-untyped-def]
        return Answer("UNKNOWN", None, float("nan"))

    monkeypatch.setattr(cpsat, "_run_child", no_solution)
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 7)
    result = solve_cpsat(instance, problem, LIMIT)
    assert result.status is SolveStatus.FEASIBLE
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(
        verify(instance, result.schedule).total_completion_time
    )
    assert any(note.startswith("no CP-SAT solution;") for note in result.notes), result.notes
    optimum = (brute_force_a if problem is Problem.A else brute_force_a2)(instance)
    assert result.objective >= optimum - 1e-9
    # No bound from CP-SAT; any bound reported (A's pooled bound) is still below OPT.
    assert not result.best_bound > optimum + 1e-9
