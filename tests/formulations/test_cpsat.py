"""The CP-SAT backend (formulations.cpsat): equal to the brute force and to the MILP."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import ExactParams, Problem, SolveStatus, solve
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from formulations.cpsat import solve_cpsat
from proofs_checks.verifier import verify
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
    """Non-integral: feasible, never optimal, no bound (A and A2); odd weights: a clear error."""
    job = Job(id="j", release=0.0, iterations=1, compute_time=1.05, gpus=1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    for problem in (Problem.A, Problem.A2):
        result = solve_cpsat(instance, problem, LIMIT)
        assert result.status is SolveStatus.FEASIBLE and result.facts["integral"] is False
        assert result.best_bound != result.best_bound  # nan
        assert result.schedule is not None and verify(instance, result.schedule).feasible
    odd = instance.replace(jobs=(job.replace(weight=2**0.5),))
    with pytest.raises(ValueError, match="ratio of small integers"):
        solve_cpsat(odd, Problem.A, LIMIT)
