"""The best bound on exact results (ddlsched.formulations.certify, the portfolio's bound race) and
the
flow-time bounds: every bound below the optimum and every policy, the gap from the best one,
``optimal`` only with a proof.

Each test names the slip it catches; every one was planted in a private copy of the code
(a git worktree) and seen to fail the test.
"""

from __future__ import annotations

import math

import pytest
from ddlsched.formulations.certify import (
    BoundSet,
    RawAnswer,
    certify,
    combinatorial_bound,
    exact_lp_bound,
)
from ddlsched.formulations.cpsat import solve_cpsat
from ddlsched.formulations.lower_bounds import BoundInputs, lagrangian_terms, lower_bounds
from ddlsched.formulations.outcome import objectives
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import ExactParams, SolveStatus, simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Problem
from ddlsched.core.result import LowerBound, Result, fixed_part, gap_closed
from tests.formulations.helpers import unit_job
from tests.oracles import brute_force_a
from tests.strategies import (
    TINY_INTEGRAL,
    hand_instances,
    typed_instances,
    weighted_instances,
)

POLICIES = ("asrpt", "asrpt-greedy", "fifo", "sjf", "las-tiresias")


def _certified(
    result: Result,
    instance: Instance,
    extra: tuple[LowerBound, ...] = (),
    fast: LowerBound | None = None,
) -> Result:
    """``result`` certified with the fast bounds of ``instance`` (or ``fast`` alone) and
    ``extra`` ones."""
    known = BoundSet.of(instance)
    if fast is not None:
        known = BoundSet(instance, (fast,), None, fixed_part(instance))
    return certify(RawAnswer.of(result), known.added(*extra))


def _release_weight(instance: Instance) -> float:
    return sum(job.weight * job.release for job in instance.jobs)


def _flow_bounds_below(instance: Instance, optimum: float) -> None:
    """Every fast bound's flow value <= OPT's flow time; so is the best one's."""
    flow = optimum - _release_weight(instance)
    for bound in lower_bounds(instance):
        assert bound.flow_value <= flow + 1e-9 * max(1.0, optimum), (bound, flow)
    best = combinatorial_bound(instance)
    assert best is not None and best.flow_value <= flow + 1e-9 * max(1.0, optimum)


@settings(max_examples=25, deadline=None)
@given(
    st.one_of(
        hand_instances(max_jobs=3),
        weighted_instances(max_jobs=3),
        typed_instances(),
    )
)
def test_flow_bounds_below_the_brute_force_optimum(instance: Instance) -> None:
    """Fractional weights, non-integral releases, typed clusters, multi-GPU jobs: every
    flow bound (the Lagrangian's included) is at most the optimal
    flow time, OPT - sum w r, by enumeration. Catches: a Lagrangian multiplier outside
    ``[0, w_i]`` (planted: clipped at ``2 w`` instead of ``w``; 12 tests failed, this one
    among them)."""
    _flow_bounds_below(instance, brute_force_a(instance))


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]), st.sampled_from([(1, 4), (2, 2)]))
def test_flow_bound_below_every_policy_and_the_optimum(
    seed: int, load: float | None, shape: tuple[int, int]
) -> None:
    """Batch (``load`` None: all released at 0) and spread arrivals: the flow bound a
    policy's result carries is at most that policy's own flow time and at most OPT's
    flow time (brute force), and the flow ratio is at least 1. Catches: the flow bound
    taken from the sum-C bound without subtracting the releases (planted: ``flow_value =
    value``), which on spread arrivals exceeds every flow time."""
    config = TINY_INTEGRAL.replace(
        num_jobs=4, servers=shape[0], gpus_per_server=shape[1], load=load, max_job_gpus=None
    )
    instance = generate(config, seed)
    optimum = brute_force_a(instance)
    optimal_flow = optimum - _release_weight(instance)
    for policy in POLICIES:
        result = simulate(instance, policy)
        bound = result.flow_lower_bound
        assert bound <= result.total_flow_time * (1 + 1e-9), (policy, bound)
        assert bound <= optimal_flow + 1e-9 * optimum, (policy, bound, optimal_flow)
        assert result.flow_ratio >= 1 - 1e-9


def test_lagrangian_is_no_per_job_maximum_by_hand() -> None:
    """Hand-worked: one server of 2 GPUs, a 2-GPU job of 1 s and a 1-GPU job of 4 s, both
    at 0. OPT = 1 + 5 = 6 (wide first; the other way 4 + 5 = 9). Floors: 1 + 4 = 5; mean
    busy time: squashed sizes 1 and 2, WSPT runs the wide one first, M = 0.5 and 2, plus
    half durations 0.5 and 2: 1 + 4 = 5; every convex combination of the two, job by job,
    is 5 as well, so the Lagrangian must report 5: a hand-worked anchor for its value
    (the multipliers' box is guarded by the brute-force test above; planted here, the
    box violation did not show on this instance)."""
    jobs = (unit_job("wide", 2, 1), unit_job("narrow", 1, 4))
    instance = Instance(Cluster((2,), 1.0, 1.0), jobs)
    assert brute_force_a(instance) == pytest.approx(6.0)
    inputs = BoundInputs.of(instance)
    assert float(lagrangian_terms(inputs).sum()) == pytest.approx(5.0)
    _flow_bounds_below(instance, 6.0)


def test_lagrangian_strictly_above_floors_and_mean_busy_time() -> None:
    """Two 1-GPU jobs of 8 s and one 4-GPU job of 8 s on 4 GPUs, all at 0: OPT = 8 + 8 + 16
    = 32 (narrow ones first). Floors and mean busy time both give 24; charging the wide
    job congestion and the narrow ones part of their floors gives about 27. Catches: the
    Lagrangian returning the better of its two ends only (its subgradient steps dropped),
    and, with the brute force, a combination above the optimum."""
    jobs = (unit_job("a", 1, 8), unit_job("b", 1, 8), unit_job("wide", 4, 8))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    optimum = brute_force_a(instance)
    assert optimum == pytest.approx(32.0)
    values = {b.name: b.value for b in lower_bounds(instance)}
    assert values["job"] == pytest.approx(24.0) and values["mean-busy-time"] == pytest.approx(24.0)
    assert values["lagrangian"] > 26.5
    assert values["lagrangian"] <= optimum * (1 + 1e-9)
    _flow_bounds_below(instance, optimum)


def _feasible(objective: float, bound: float, schedule: object = None) -> Result:
    """A ``feasible`` result claiming ``objective``, with a schedule of problem A of the
    four 2-GPU jobs of 4 s on 4 GPUs the tests below use (two at a time): only a schedule
    the verifier accepts may meet a bound."""
    from ddlsched.core.model import Schedule, ScheduledJob

    pairs = Schedule(
        tuple(ScheduledJob(f"j{k}", 4.0 * (k // 2), 4.0 * (k // 2 + 1), (0, 0)) for k in range(4))
    )
    return Result(
        "cpsat",
        Problem.A,
        SolveStatus.FEASIBLE,
        objective,
        objective,  # every release is 0
        bound,
        1.0,
        schedule or pairs,
    )


def test_gap_is_measured_from_the_best_bound_by_hand() -> None:
    """Hand-worked: four 2-GPU jobs of 4 s on 4 GPUs (mean busy time 24, tight). A result
    of 28 with a solver bound of 20 gets best bound 24 (gap 4/28, noted), and one of 24
    becomes ``optimal``, the note saying the bound proved it; a solver bound above the
    combinatorial one (25 > 24 on a result of 28) is kept. Catches: the gap measured from
    the solver's bound alone, or the larger bound ignored when it is the solver's."""
    jobs = tuple(unit_job(f"j{k}", 2, 4) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    raised = _certified(_feasible(28.0, 20.0), instance)
    assert raised.best_bound == pytest.approx(24.0) and raised.gap == pytest.approx(4 / 28)
    assert raised.status is SolveStatus.FEASIBLE
    assert any("from the" in note and "bound" in note for note in raised.notes)
    proven = _certified(_feasible(24.0, 20.0), instance)
    assert proven.status is SolveStatus.OPTIMAL
    assert any("a proof for the instance" in note for note in proven.notes)
    kept = _certified(_feasible(28.0, 25.0), instance)
    assert kept.best_bound == 25.0 and kept.status is SolveStatus.FEASIBLE


def test_an_invalid_bound_never_raises_the_gap_or_proves() -> None:
    """An LP stopped by its limit (``valid`` false) at the objective must not prove it.
    Catches: ``extra`` bounds used without their validity."""
    jobs = tuple(unit_job(f"j{k}", 2, 4) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    stopped = LowerBound(28.0, "lp", False)
    result = _certified(_feasible(28.0, 20.0), instance, extra=(stopped,))
    assert result.status is SolveStatus.FEASIBLE and result.best_bound == pytest.approx(24.0)


def test_other_problems_are_left_alone() -> None:
    """The combinatorial bounds bound OPT(A) only: an A1 or A2 result is unchanged.
    Catches: an A-bound attached to A2's (smaller) optimum, which would 'prove' nothing
    true."""
    jobs = tuple(unit_job(f"j{k}", 2, 4) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    for problem in (Problem.A1, Problem.A2):
        result = Result(**{**_feasible(24.0, 20.0).__dict__, "problem": problem})
        certified = _certified(result, instance)
        assert (certified.status, certified.lower_bound) == (result.status, result.lower_bound)


def test_deterministic_stop_is_optimal_only_when_the_bound_meets_it() -> None:
    """CP-SAT stopped by a tiny deterministic limit on 16-job instances of both families
    (batch and spread arrivals): ``optimal`` only if the best bound meets the objective,
    else ``feasible`` with the bound below it; the best bound is at least the
    combinatorial one; the schedule verifies. Catches: a status upgraded without the gap
    closed (planted: ``gap_closed`` dropped from ``certify``)."""
    limit = ExactParams(time_limit=600, deterministic_limit=0.02)
    for load in (None, 1.0):
        instance = generate(GeneratorConfig.exact_friendly(16, 4, 4, load), 1)
        result = solve_cpsat(instance, Problem.A, limit)
        assert result.schedule is not None and verify(instance, result.schedule).feasible
        fast = combinatorial_bound(instance)
        assert fast is not None and result.best_bound >= fast.value
        assert result.proven_optimal == gap_closed(
            result.objective, result.best_bound, fixed_part(instance)
        ) or ("CP-SAT: OPTIMAL" in result.notes)
        if not result.proven_optimal:
            assert result.best_bound < result.objective


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]))
def test_lp_on_the_instance_slot_below_the_optimum(seed: int, load: float | None) -> None:
    """On integral instances the LP is set on the instance's own slot with releases and
    durations rounded *up*; it stays at most OPT (brute force), batch and spread
    arrivals, multi-GPU jobs. Catches: a release rounded one slot too late (planted:
    ``ceil(r / slot) + 1``). Rounding up on a non-integral instance is caught by
    :func:`test_lp_rounds_up_only_on_integral_instances` (planted: the integrality test
    dropped)."""
    config = TINY_INTEGRAL.replace(num_jobs=4, servers=2, gpus_per_server=2, load=load)
    instance = generate(config, seed)
    optimum = brute_force_a(instance)
    bound = exact_lp_bound(instance, optimum, 1e7)
    assert bound.valid and bound.value <= optimum * (1 + 1e-9)
    assert bound.flow_value <= optimum - _release_weight(instance) + 1e-9 * optimum


def test_lp_rounds_up_only_on_integral_instances() -> None:
    """A 1-GPU job of 1.5 s released at 0.5 (slot 1, not integral): the LP must not round it
    up to [1, 3) (cost 3 > OPT 2). Catches: the instance's slot used without the
    integrality check."""
    job = unit_job("a", 1, 1).replace(compute_time=1.5, release=0.5)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    bound = exact_lp_bound(instance, 2.0, 1e7)
    assert bound.valid and bound.value <= 2.0 * (1 + 1e-9)


def test_portfolio_stops_at_once_when_the_warm_start_meets_the_bound() -> None:
    """Four 2-GPU jobs of 4 s on 4 GPUs, warm-started from an optimal schedule (24, the
    mean-busy-time bound): the portfolio proves it without racing, says so, and the
    schedule verifies. Catches: a proof by bound not returned (the race run anyway)."""
    from ddlsched import solve

    jobs = tuple(unit_job(f"j{k}", 2, 4) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    start = simulate(instance, "sjf", bound=False).schedule
    assert start is not None and objectives(instance, start)[0] == pytest.approx(24.0)
    result = solve(instance, "exact", params=ExactParams(time_limit=600), warm_start=start)
    assert result.status is SolveStatus.OPTIMAL and result.metrics["proof_by_bound"] == 1
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    assert math.isclose(result.objective, 24.0)


def test_a_larger_bound_offered_later_becomes_the_reported_lower_bound() -> None:
    """Catches the comparison that replaces the reported lower bound inverted: FIFO on the
    ring instance, certified, then offered a valid LP bound 1 above the first; both the
    best bound and the lower bound reported must be that LP bound (never a weaker one
    beside a stronger best bound)."""
    from tests.examples import ring_instance

    instance = ring_instance()
    first = _certified(simulate(instance, "fifo"), instance)
    assert first.lower_bound is not None
    stronger = LowerBound(
        first.lower_bound.value + 1.0, "lp", True, flow_value=first.lower_bound.flow_value + 1.0
    )
    second = _certified(first, instance, extra=(stronger,))
    assert second.lower_bound is not None and second.lower_bound.name == "lp"
    assert second.best_bound == pytest.approx(second.lower_bound.value)
    assert second.lower_bound.value == pytest.approx(first.lower_bound.value + 1.0)


def test_an_invalid_bound_never_lends_its_flow_value() -> None:
    """Catches the flow bound taken over every bound instead of the valid ones: an invalid
    (stopped) LP bound carrying a flow value of 1000 must not raise the certified flow
    bound on the ring instance above FIFO's flow time (15)."""
    from tests.examples import ring_instance

    instance = ring_instance()
    bound = combinatorial_bound(
        instance, extra=(LowerBound(math.nan, "stopped-lp", False, flow_value=1000.0),)
    )
    fifo = simulate(instance, "fifo")
    assert bound.flow_value <= fifo.total_flow_time + 1e-9


def test_the_note_names_the_bound_that_proves() -> None:
    """A result of 24 whose solver bound is 24 is proven by that bound (the combinatorial one,
    given up 1e-9 for safety, is below it): the note names the solver's dual bound, as the
    result's ``lower_bound`` does. Catches: the note naming the best combinatorial bound
    (``best.name``) where the solver's proved it."""
    from ddlsched.core.result import SOLVER_BOUND

    jobs = tuple(unit_job(f"j{k}", 2, 4) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    proven = _certified(_feasible(24.0, 24.0), instance)
    assert proven.status is SolveStatus.OPTIMAL
    assert proven.lower_bound is not None and proven.lower_bound.name == SOLVER_BOUND
    assert proven.notes[0].startswith(f"optimal: the {SOLVER_BOUND} lower bound")


def test_a_bound_close_on_sum_wc_but_not_on_the_flow_time_proves_nothing() -> None:
    """Four jobs released at 1e7 s, a schedule of flow time 24.001 beside a bound 24 past the
    releases: 1e-3 is 2.5e-11 of ``sum w C`` but 4e-5 of the flow time, so the result stays
    ``feasible``. Catches: ``certify`` judging the gap without ``fixed_part`` (which
    made it ``optimal``, a 4e-5 gap)."""
    jobs = tuple(unit_job(f"j{k}", 2, 4).replace(release=1e7) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    from ddlsched.core.model import Schedule, ScheduledJob

    pairs = Schedule(
        tuple(
            ScheduledJob(f"j{k}", 1e7 + 4.0 * (k // 2), 1e7 + 4.0 * (k // 2 + 1), (0, 0))
            for k in range(4)
        )
    )
    flow = 24.001
    result = Result(
        "cpsat", Problem.A, SolveStatus.FEASIBLE, 4e7 + flow, flow, math.nan, 1.0, pairs
    )
    bound = LowerBound(4e7 + 24.0, "mean-busy-time", True)
    settled = _certified(result, instance, fast=bound)
    assert settled.best_bound == 4e7 + 24.0
    assert settled.status is SolveStatus.FEASIBLE


def test_bound_facts_say_modes_unproven_when_an_alpha_min_is_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bound set's facts report ``modes_proven`` only when every ``alpha_min`` is exact:
    with one of them only a lower bound (the mapping search cut short) it is false, with
    none it is true. Catches: ``modes_proven`` set true whatever the search found (a
    result proven by a bound claiming exact modes it never had)."""
    import importlib

    module = importlib.import_module("ddlsched.formulations.lower_bounds")
    jobs = tuple(unit_job(f"j{k}", 2, 4) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    assert BoundSet.of(instance).facts().modes_proven
    assert BoundSet.of(instance).facts().modes_complete
    monkeypatch.setattr(module, "fastest_processing", lambda *_: ([4.0] * 4, 1))
    assert not BoundSet.of(instance).facts().modes_proven


@pytest.mark.parametrize("flow", [1e-8, 1.0, 100.0])
@pytest.mark.parametrize("releases", [0.0, 1e7, 1e10])
def test_a_solver_optimum_whose_bound_leaves_the_flow_gap_open_is_feasible(
    flow: float, releases: float
) -> None:
    """A backend's ``optimal`` with its own bound 1e-5 of the flow time below the schedule's
    objective is certified ``feasible`` with a note; 1e-7 of it below stays ``optimal``
    without one, whatever the releases (the gap is judged on the flow time, the answer's
    objective minus its total JCT when no bound set is given). Catches: the demotion judged
    on ``sum w C`` or dropped."""
    total = releases + flow
    loose, tight = total - 1e-5 * flow, total - 1e-7 * flow

    def certified(bound: float) -> Result:
        answer = RawAnswer("milp", Problem.A, SolveStatus.OPTIMAL, None, total, flow, bound)
        return certify(answer)

    if total - loose > 0:  # the bound is representable apart from the objective
        demoted = certified(loose)
        assert demoted.status is SolveStatus.FEASIBLE
        assert demoted.notes and "not proven" in demoted.notes[0]
    kept = certified(tight)
    assert kept.status is SolveStatus.OPTIMAL and kept.notes == ()


@pytest.mark.parametrize(("bound", "closed"), [(24.0, True), (23.0, False)])
def test_the_bracket_is_judged_once_and_kept_when_certified_again(
    bound: float, closed: bool
) -> None:
    """Four 2-GPU jobs of 4 s on 4 GPUs, two at a time (objective 24, the optimum): a
    continuous-time answer whose rounded-down bound is 24 closes its bracket and is
    ``optimal``; one of 23 leaves it open (noted), though the mean-busy-time bound 24 still
    proves the schedule. Certified again with more bounds (as the portfolio does), the
    bracket stays as judged. Catches: the
    bracket re-judged without the rounded-down bound (read as open) or judged on the best
    bound instead of the rounded-down one."""
    from ddlsched.core.result import ExactFacts

    jobs = tuple(unit_job(f"j{k}", 2, 4) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    schedule = _feasible(24.0, math.nan).schedule
    answer = RawAnswer(
        "cpsat-continuous",
        Problem.A,
        SolveStatus.FEASIBLE,
        schedule,
        24.0,
        24.0,
        bound,
        ExactFacts(integral=True, modes_proven=True, modes_complete=True, bracket_closed=False),
    )
    first = certify(answer, BoundSet.of(instance))
    assert first.facts["bracket_closed"] is closed
    assert any(note.startswith("bracket open") for note in first.notes) is not closed
    again = certify(RawAnswer.of(first), BoundSet.of(instance).added(LowerBound(24.0, "lp", True)))
    assert again.facts["bracket_closed"] is closed
    assert again.proven_optimal and first.proven_optimal  # the fast bound 24 meets it anyway
