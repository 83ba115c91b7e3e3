"""Contracts every exact backend keeps, over the hard families.

Backends: ``milp`` (HiGHS), ``cpsat`` and the portfolio ``exact``. Instances
(:func:`tests.strategies.exact_family_instances`): fractional weights (1/2 and 2/3
together, 1.5), multi-GPU jobs, typed clusters, and non-integral releases, all small
enough for the brute-force oracles of :mod:`tests.oracles`, which share no code with
the methods. The contracts:

- an ``optimal`` result's objective is the brute-force optimum (A, A1, A2);
- ``best_bound`` never exceeds the true optimum, and no objective is below it;
- a solve stopped by a deterministic limit is ``optimal`` only with a closed gap;
- on an instance that is not integral nothing is ``optimal`` and no bound is claimed;
- the reported objective is the verifier's recomputation from the schedule.
"""

from __future__ import annotations

import math

import pytest
from ddlsched.formulations.registry import EXACT_METHODS
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.model import Instance, Problem
from ddlsched.core.params import ExactParams
from ddlsched.core.result import Result, SolveStatus
from tests.oracles import brute_force_a, brute_force_a1, brute_force_a2
from tests.strategies import exact_family_instances

BACKENDS = ("milp", "cpsat", "exact")
SAFETY_NET = ExactParams(time_limit=600, threads=1)
"""Tests that need a finished proof: a wall-clock limit only as a safety net."""

STOPPED = SAFETY_NET.replace(node_limit=0, deterministic_limit=1e-6)
"""Both backends stopped before any search (deterministic: the same on every machine)."""

ORACLES = {Problem.A: brute_force_a, Problem.A1: brute_force_a1, Problem.A2: brute_force_a2}


def _checked(instance: Instance, result: Result, optimum: float) -> None:
    """The contracts every result keeps, whatever its status."""
    assert result.schedule is not None, result.notes
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.objective == pytest.approx(report.total_completion_time, abs=1e-9)
    assert result.objective >= optimum - 1e-6
    assert math.isnan(result.best_bound) or result.best_bound <= optimum + 1e-6, result.notes
    if result.status is SolveStatus.OPTIMAL:
        assert result.objective == pytest.approx(optimum), result.notes
        assert result.best_bound == pytest.approx(result.objective), result.notes


@settings(max_examples=5)
@given(exact_family_instances(), st.sampled_from(list(ORACLES)))
def test_every_backend_proves_the_brute_force_optimum(
    instance: Instance, problem: Problem
) -> None:
    """Integral instances with weights 1/2, 2/3 and 1.5, multi-GPU jobs, GPU types: every
    backend proves the enumerated optimum, with a bound equal to it and the verifier's
    objective. Catches: a weight scaled wrongly (CP-SAT), a bound in the wrong unit."""
    optimum = ORACLES[problem](instance)
    for name in BACKENDS:
        result = EXACT_METHODS[name](instance, problem, SAFETY_NET, None)
        assert result.status is SolveStatus.OPTIMAL, (name, result.notes)
        _checked(instance, result, optimum)


@settings(max_examples=5)
@given(exact_family_instances(), st.sampled_from(list(ORACLES)))
def test_a_deterministic_limit_never_yields_an_unproven_optimal(
    instance: Instance, problem: Problem
) -> None:
    """Stopped by ``node_limit=0`` (HiGHS) and a near-zero ``deterministic_limit``
    (CP-SAT), every backend still returns a verified schedule, no better than the optimum,
    with a bound no higher than it; ``optimal`` only where the bound meets the objective."""
    optimum = ORACLES[problem](instance)
    for name in BACKENDS:
        _checked(instance, EXACT_METHODS[name](instance, problem, STOPPED, None), optimum)


@settings(max_examples=5)
@given(exact_family_instances(integral=False), st.sampled_from([Problem.A, Problem.A1]))
def test_non_integral_releases_are_never_optimal(instance: Instance, problem: Problem) -> None:
    """A release off the slot grid: the slotted optimum is only an upper bound, so no
    backend claims its solver's bound, and each is no better than the continuous brute
    force. On A the bound is the combinatorial one, at most the continuous optimum, and
    the result is ``optimal`` only where that bound meets it (said in the notes); on A1
    there is no bound and the result is ``feasible``. The portfolio may go on in
    continuous time: then its bound is at most the optimum and ``optimal`` means the
    optimum. Catches: an exactness gate that forgets the releases."""
    optimum = ORACLES[problem](instance)
    for name in BACKENDS:
        result = EXACT_METHODS[name](instance, problem, SAFETY_NET, None)
        assert result.facts["integral"] is False
        if any("solved in continuous time" in note for note in result.notes):
            assert name == "exact" and "bracket_closed" in result.facts
            assert result.best_bound <= optimum * (1 + 1e-9), (name, result.best_bound)
            if result.proven_optimal:
                assert result.objective == pytest.approx(optimum, rel=1e-6)
        elif problem is Problem.A:
            assert result.best_bound <= optimum * (1 + 1e-9), (name, result.best_bound)
            assert result.status is SolveStatus.FEASIBLE or any(
                "a proof for the instance" in note for note in result.notes
            ), (name, result.notes)
        else:
            assert result.status is SolveStatus.FEASIBLE, (name, result.notes)
            assert math.isnan(result.best_bound)
        _checked(instance, result, optimum)


@settings(max_examples=3)
@given(exact_family_instances(integral=False))
def test_a2_with_non_integral_releases_is_never_optimal(instance: Instance) -> None:
    """Problem A2 with a release off its grid of ``Delta / M``: ``feasible`` with no bound
    from every backend, and a verified schedule."""
    for name in BACKENDS:
        result = EXACT_METHODS[name](instance, Problem.A2, SAFETY_NET, None)
        assert result.status is SolveStatus.FEASIBLE, (name, result.notes)
        assert math.isnan(result.best_bound)
        assert result.schedule is not None and verify(instance, result.schedule).feasible


def _late_release(problem: Problem) -> Instance:
    """One GPU; ``long`` (3 s) at 0 and ``short`` (1 s) released off the grid.

    A and A1: ``short`` released at 0.5; the continuous optimum runs it at once and
    ``long`` after, 1.5 + 4.5 = 6, but its slotted release is 1, where the best is 7.
    A2 (``Delta / M`` = 1 s): released at 0.3.
    """
    from ddlsched.core.model import Cluster
    from tests.formulations.helpers import unit_job

    release = 0.3 if problem is Problem.A2 else 0.5
    jobs = (unit_job("long", 1, 3), unit_job("short", 1, 1, release=release))
    return Instance(Cluster((1,), 1.0, 1.0), jobs)


@pytest.mark.parametrize("problem", [Problem.A1, Problem.A2])
@pytest.mark.parametrize("name", BACKENDS)
def test_a1_and_a2_with_a_non_integral_release_are_never_exact(
    name: str, problem: Problem
) -> None:
    """A1 and A2 with a release off the grid: ``feasible``, not integral, no bound, from
    every slotted answer (for A1 the slotted optimum, 7, is not the optimum, 6); the
    portfolio on A1 goes on in continuous time and proves 6. Catches: the release left out
    of A1's or A2's exactness gate."""
    instance = _late_release(problem)
    result = EXACT_METHODS[name](instance, problem, SAFETY_NET, None)
    if name == "exact" and problem is Problem.A1:
        assert result.status is SolveStatus.OPTIMAL and result.facts["integral"] is False
        assert result.objective == pytest.approx(6.0) and result.notes[0].startswith(
            "the slotted models are not exact"
        )
        return
    assert result.status is SolveStatus.FEASIBLE and result.facts["integral"] is False
    assert math.isnan(result.best_bound)
    if problem is Problem.A1:
        assert brute_force_a1(instance) == pytest.approx(6.0)
        assert result.objective >= 6.0


@pytest.mark.parametrize("integral", [True, False])
def test_the_milp_child_reports_no_slotted_bound_on_a_non_integral_instance(
    monkeypatch: pytest.MonkeyPatch, integral: bool
) -> None:
    """The MILP's incumbents, reported to the portfolio, carry HiGHS's bound only where it
    bounds the instance: on a non-integral one it is ``nan`` (on an integral one it passes).
    Called directly, as HiGHS calls it. Catches: the child passing a slotted bound."""
    import ddlsched.formulations.milp as exact
    import numpy as np

    instance = _late_release(Problem.A)
    if integral:
        instance = instance.replace(jobs=(instance.jobs[0], instance.jobs[1].replace(release=1)))
    built = exact.build(instance, Problem.A)
    assert built.exact is integral and built.incumbent_plan is not None
    reports: list[tuple[str, object, float]] = []
    monkeypatch.setattr(exact, "report", reports.append)
    hooks = exact._exchange(built, None)
    assert hooks.on_incumbent is not None
    keys = list(built.model.INDEX)
    chosen = {(i, m, t) for i, (m, t) in enumerate(built.incumbent_plan)}
    values = np.array([1.0 if key in chosen else 0.0 for key in keys])
    hooks.on_incumbent(values, 7.0, 5.0)
    ((_, _, bound),) = reports
    assert bound == 5.0 if integral else math.isnan(bound)


def test_the_covering_horizon_holds_every_jobs_longest_mode() -> None:
    """Each job's latest completion from the covering horizon alone leaves room for every
    one of its modes after its release. A 2-GPU job with a heavy edge on servers of 2, 1
    and 1 GPUs: 2 slots on the big server, 8 split. Catches: the horizon summing the
    shortest modes (the long mode, and the optimum that needs it, cut off)."""
    from ddlsched.formulations.modes import problem_a
    from ddlsched.formulations.slotted import latest_completions

    from ddlsched.core.model import Cluster
    from tests.formulations.helpers import unit_job

    job = unit_job("pair", 2, 1, release=1.0, edges=((0, 1, 7.0),))
    instance = Instance(Cluster((2, 1, 1), 7.0, 1.0), (job, unit_job("solo", 1, 2)))
    slotted = problem_a(instance)
    assert {mode.slots for mode in slotted.jobs[0].modes} == {2, 8}
    latest = latest_completions(slotted, 1e9)  # no incumbent: the covering horizon alone
    for i, sjob in enumerate(slotted.jobs):
        assert all(sjob.release_slot + mode.slots <= latest[i] for mode in sjob.modes)


def test_highs_stopped_at_mip_gap_is_feasible_not_optimal() -> None:
    """With ``mip_gap=0.5`` HiGHS stops at once and reports "optimal" (205 against a bound of
    184, one thread: deterministic); the gap is open, so the result is ``feasible`` with that
    bound. Catches: a gap stop trusted as a proof (ExactParams: optimal only when closed)."""
    from ddlsched.formulations.milp import solve_milp

    from ddlsched.core.generators import GeneratorConfig, generate

    instance = generate(GeneratorConfig.exact_friendly(10, 2, 4, 1.0), 8)
    result = solve_milp(instance, Problem.A, SAFETY_NET.replace(mip_gap=0.5, isolate=False))
    said = [note for note in result.notes if note.startswith("HiGHS's own word: optimal")]
    assert said and "by its gap tolerance" in said[0]  # the test means something only if so
    assert result.best_bound < result.objective - 1e-6
    assert result.status is SolveStatus.FEASIBLE
