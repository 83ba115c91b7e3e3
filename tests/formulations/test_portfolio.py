"""The portfolio ``exact`` (formulations.portfolio): the brute force's optimum, honest status."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import ExactParams, Problem, SolveStatus, solve
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.result import Result
from formulations.portfolio import _combine
from proofs_checks.verifier import verify
from tests.oracles import brute_force_a, brute_force_a1, brute_force_a2
from tests.strategies import TINY_INTEGRAL

LIMIT = ExactParams(time_limit=600)


@settings(max_examples=6)
@given(st.integers(0, 10_000), st.sampled_from([Problem.A, Problem.A1]))
def test_portfolio_equals_the_brute_force(seed: int, problem: Problem) -> None:
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), seed)
    result = solve(instance, "exact", problem=problem, params=LIMIT, bound=False)
    assert result.method == "exact" and result.status is SolveStatus.OPTIMAL, result.notes
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    oracle = brute_force_a(instance) if problem is Problem.A else brute_force_a1(instance)
    assert result.objective == pytest.approx(oracle)
    assert result.metrics["first_proof_milp"] + result.metrics["first_proof_cpsat"] == 1


def test_portfolio_a2_races_both_and_equals_the_oracle() -> None:
    """A2 is raced too (CP-SAT now models it); weights 1-2, where SRPT is not optimal."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=4, load=1.0), 1)
    instance = instance.replace(
        jobs=tuple(j.replace(weight=1.0 + (k % 2)) for k, j in enumerate(instance.jobs))
    )
    result = solve(instance, "exact", problem=Problem.A2, params=LIMIT, bound=False)
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == pytest.approx(brute_force_a2(instance))
    assert result.metrics["first_proof_milp"] + result.metrics["first_proof_cpsat"] == 1


def test_portfolio_refuses_what_both_refuse() -> None:
    """A model too large for both backends is one clear error, not a silent empty result."""
    from formulations.exact import ModelTooLarge

    instance = generate(GeneratorConfig(num_jobs=4), 0)  # realistic durations, 1 s slot
    with pytest.raises(ModelTooLarge):
        solve(instance, "exact", params=LIMIT, bound=False)


def _result(name: str, status: SolveStatus, objective: float, bound: float) -> Result:
    return Result(name, Problem.A, status, objective, objective, bound, 1.0, schedule=None)


def test_joint_proof_needs_a_bound_meeting_a_schedule() -> None:
    """A bound from one and a schedule of equal value from the other prove the optimum."""
    from ddlsched.core.model import Schedule, ScheduledJob

    schedule = Schedule((ScheduledJob("j", 0.0, 1.0, (0,)),))
    milp = _result("milp", SolveStatus.FEASIBLE, 12.0, 10.0)
    cpsat = _result("cpsat", SolveStatus.FEASIBLE, 10.0, 7.0)
    cpsat = Result(**{**cpsat.__dict__, "schedule": schedule})
    milp = Result(**{**milp.__dict__, "schedule": schedule})
    joint = _combine({"milp": milp, "cpsat": cpsat}, [], 2.0)
    assert joint.status is SolveStatus.OPTIMAL and joint.objective == 10.0
    assert joint.best_bound == 10.0 and joint.runtime_s == 2.0
    apart = _combine(
        {"milp": Result(**{**milp.__dict__, "best_bound": 9.0}), "cpsat": cpsat}, [], 2.0
    )
    assert apart.status is SolveStatus.FEASIBLE and apart.best_bound == 9.0
    unbounded = _combine(
        {"milp": Result(**{**milp.__dict__, "best_bound": math.nan}), "cpsat": cpsat}, [], 2.0
    )
    assert unbounded.best_bound == 7.0 and unbounded.status is SolveStatus.FEASIBLE


def test_milp_starts_at_once_when_cpsat_refuses() -> None:
    """CP-SAT refuses a weight that is not a ratio of small integers; the MILP, which
    waits for CP-SAT's head start, then runs at once and proves the optimum alone."""
    import math

    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 2)
    weighted = instance.replace(
        jobs=(instance.jobs[0].replace(weight=math.pi), *instance.jobs[1:])
    )
    result = solve(weighted, "exact", params=LIMIT, bound=False)
    assert result.status is SolveStatus.OPTIMAL and result.metrics["first_proof_milp"] == 1
    assert any("cpsat failed" in note for note in result.notes)
    assert result.objective == pytest.approx(brute_force_a(weighted))
