"""Each claim's status logic: holds, violated or inconclusive.

A claim may say ``holds`` only when every quantity it rests on is exact and
every assumption of its proof is met; an inexact input (a time-limited
optimum, a bounded ``alpha_min`` or ``rho``, an infeasible schedule,
predicted iteration counts, weights where the proof needs unit ones) makes
it ``inconclusive`` whatever the numbers say. Each test names the slip it
catches (typically one conjunct of an exactness test dropped); every one was
planted by hand in ``proofs_checks/claims.py`` and seen to fail the test.
Nothing here depends on a solver: optima are hand-worked or from the
brute-force oracles.
"""

from __future__ import annotations

import dataclasses

import pytest
from ddlsched.proofs_checks import bounds, claims
from ddlsched.proofs_checks.bounds import RhoCheck, rho_of
from ddlsched.proofs_checks.claims import ClaimStatus, Value

from ddlsched import simulate
from ddlsched.core.graphs import ring_edges
from ddlsched.core.model import Cluster, Instance, Job, Piece, Problem, Schedule, ScheduledJob
from tests.oracles import brute_force_a, brute_force_a2

EXACT = True
INEXACT = False


def _long_and_short(weights: tuple[float, float] = (1.0, 1.0)) -> Instance:
    """One server of 2 GPUs; ``long`` (2 GPUs, 4 s, r = 0) and ``short`` (2 GPUs, 1 s,
    r = 1); compute 1 s per iteration, no edges, so A2 sizes equal durations (4 and 1).
    Unit weights: OPT(A2) = SRPT = 2 + 5 = 7 (long [0, 1), short [1, 2), long [2, 5));
    OPT(A) = 8 (short [1, 2), then long [2, 6))."""
    cluster = Cluster((2,), 1.0, 1.0)
    long = Job(id="long", release=0.0, iterations=4, compute_time=1.0, gpus=2, weight=weights[0])
    short = Job(id="short", release=1.0, iterations=1, compute_time=1.0, gpus=2, weight=weights[1])
    return Instance(cluster, (long, short))


def _a2(long: tuple[tuple[float, float], ...], short: tuple[tuple[float, float], ...]) -> Schedule:
    return Schedule(
        (
            ScheduledJob("long", long[0][0], long[-1][1], pieces=tuple(Piece(*p) for p in long)),
            ScheduledJob(
                "short", short[0][0], short[-1][1], pieces=tuple(Piece(*p) for p in short)
            ),
        ),
        problem=Problem.A2,
    )


SRPT = _a2(((0.0, 1.0), (2.0, 5.0)), ((1.0, 2.0),))
"""SRPT on :func:`_long_and_short`: total 7, feasible."""


def test_claim1_holds_on_the_hand_worked_instance() -> None:
    """The base case the slips below depart from: feasible SRPT, exact OPT 7, unit weights."""
    instance = _long_and_short()
    assert brute_force_a2(instance) == pytest.approx(7.0)
    record = claims.srpt_optimal_a2(instance, SRPT, Value(7.0, EXACT))
    assert record.status is ClaimStatus.HOLDS


def test_claim1_inconclusive_on_an_infeasible_srpt_schedule() -> None:
    """Catches claim 1 concluding from a schedule the verifier rejects (``exact`` without
    ``report.feasible``): long's second piece starts 0.3 s early and overlaps short, yet
    the completions, hence the total 7, equal OPT(A2). It must be inconclusive, not holds."""
    broken = _a2(((0.0, 1.3), (2.3, 5.0)), ((1.0, 2.0),))
    instance = _long_and_short()
    record = claims.srpt_optimal_a2(instance, broken, Value(7.0, EXACT))
    assert record.lhs == pytest.approx(7.0)
    assert record.status is ClaimStatus.INCONCLUSIVE and record.holds is None
    assert "infeasible" in record.detail


def test_claim1_inconclusive_when_opt_a2_is_not_exact() -> None:
    """Catches claim 1 ignoring the exactness of OPT(A2) (a time-limited MILP): a wrong,
    inexact optimum of 7.5 gives inconclusive, not violated; the same value exact is a
    violation."""
    instance = _long_and_short()
    inexact = claims.srpt_optimal_a2(instance, SRPT, Value(7.5, INEXACT))
    assert inexact.status is ClaimStatus.INCONCLUSIVE
    assert inexact.detail == "OPT(A2) not proven"  # the reason, and the only one
    assert claims.srpt_optimal_a2(instance, SRPT, Value(7.5, EXACT)).status is ClaimStatus.VIOLATED


def test_claim1_inconclusive_with_weights() -> None:
    """Catches claim 1 asserting SRPT's optimality for weighted totals (a real bug, fixed):
    with weights 1 (long) and 10 (short), SRPT's weighted total is 5 + 10 * 2 = 25, and
    the weighted OPT(A2) (oracle) is the same schedule; with weights 10 and 1, SRPT gives
    10 * 5 + 2 = 52 but running long first gives 10 * 4 + 5 = 45 = OPT. SRPT is optimal
    for unit weights only: inconclusive, never violated (nor holds)."""
    heavy_long = _long_and_short((10.0, 1.0))
    optimum = brute_force_a2(heavy_long)
    assert optimum == pytest.approx(45.0)
    record = claims.srpt_optimal_a2(heavy_long, SRPT, Value(optimum, EXACT))
    assert record.lhs == pytest.approx(52.0)
    assert record.status is ClaimStatus.INCONCLUSIVE and "weights" in record.detail
    heavy_short = _long_and_short((1.0, 10.0))
    record = claims.srpt_optimal_a2(heavy_short, SRPT, Value(brute_force_a2(heavy_short), EXACT))
    assert record.status is ClaimStatus.INCONCLUSIVE


@pytest.mark.parametrize(("a2_exact", "a1_exact"), [(INEXACT, EXACT), (EXACT, INEXACT)])
def test_relaxation_needs_both_optima_exact(a2_exact: bool, a1_exact: bool) -> None:
    """Catches ``or`` for ``and`` in claim 2's exactness: either optimum inexact makes it
    inconclusive, both for a true (7 <= 9) and a false (9 <= 7) inequality."""
    true = claims.relaxation(Value(7.0, a2_exact), Value(9.0, a1_exact))
    false = claims.relaxation(Value(9.0, a2_exact), Value(7.0, a1_exact))
    assert true.status is ClaimStatus.INCONCLUSIVE
    assert false.status is ClaimStatus.INCONCLUSIVE
    assert claims.relaxation(Value(9.0, EXACT), Value(7.0, EXACT)).status is ClaimStatus.VIOLATED


def _rho(value: float, exact: bool) -> RhoCheck:
    """A rho of ``value`` with the given exactness (its per-job parts do not matter here)."""
    return RhoCheck(value, exact, (), ())


@pytest.mark.parametrize(
    ("a1_exact", "a_exact", "rho_exact"),
    [(INEXACT, EXACT, EXACT), (EXACT, INEXACT, EXACT), (EXACT, EXACT, INEXACT)],
)
def test_lemma1_needs_every_input_exact(a1_exact: bool, a_exact: bool, rho_exact: bool) -> None:
    """Catches a dropped conjunct in Lemma 1's exactness (OPT(A1), OPT(A) or rho): with
    any one inexact, 15 <= 1.25 * 10 (false) is inconclusive, not violated."""
    record = claims.lemma1(
        Value(15.0, a1_exact), Value(10.0, a_exact), _rho(1.25, rho_exact), integral=True
    )
    assert record.status is ClaimStatus.INCONCLUSIVE


def test_lemma1_factor_by_hand() -> None:
    """Catches the factor rounded the wrong way or the rounding applied on integral
    instances: rho = 1.25, OPT(A) = 10, OPT(A1) = 15. Integral: 15 > 12.5, violated.
    Slotted (non-integral): ceil(1.25) = 2, 15 <= 20 holds (floor would say 10: violated);
    rho = 2 exactly stays 2 (not 3)."""
    rho = _rho(1.25, EXACT)
    integral = claims.lemma1(Value(15.0, EXACT), Value(10.0, EXACT), rho, integral=True)
    assert integral.status is ClaimStatus.VIOLATED and integral.bound == pytest.approx(1.25)
    slotted = claims.lemma1(Value(15.0, EXACT), Value(10.0, EXACT), rho, integral=False)
    assert slotted.status is ClaimStatus.HOLDS and slotted.bound == 2
    two = claims.lemma1(Value(25.0, EXACT), Value(10.0, EXACT), _rho(2.0, EXACT), False)
    assert two.status is ClaimStatus.VIOLATED and two.bound == 2


def _ring_on_two_servers() -> tuple[Instance, Schedule]:
    """A 4-ring (unit traffic) on 2 + 2 GPUs, B_intra 2, B_inter 1, mapped 2 + 2 (two edges
    cut, alpha_min = 1 + 1 + 2 = 4, the best): every mapping rule is met."""
    job = Job(
        id="ring", release=0.0, iterations=1, compute_time=1.0, gpus=4, edges=ring_edges(4, 1.0)
    )
    instance = Instance(Cluster((2, 2), 2.0, 1.0), (job,))
    return instance, Schedule((ScheduledJob("ring", 0.0, 4.0, (0, 0, 1, 1)),))


def test_mapping_bounds_inconclusive_when_alpha_min_is_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Catches claim 4 saying 'holds' against an alpha_min that is only a lower bound
    (``else: HOLDS``): with enumeration disabled (deterministically, by its limit) the
    4-ring's alpha_min is the min-cut bound, and a mapping meeting every rule gives
    inconclusive; with enumeration, holds."""
    instance, schedule = _ring_on_two_servers()
    assert claims.mapping_bounds(instance, schedule).status is ClaimStatus.HOLDS
    monkeypatch.setattr(bounds, "ENUMERATION_LIMIT", 0)
    assert not bounds.fastest_time(instance.jobs[0], instance.cluster).exact
    record = claims.mapping_bounds(instance, schedule)
    assert record.status is ClaimStatus.INCONCLUSIVE and not record.exact


def test_mapping_bounds_breach_is_definite_even_with_a_bounded_alpha_min(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Catches a found breach downgraded to inconclusive when some alpha_min is a bound:
    the 4-ring (its alpha_min bounded, enumeration disabled) runs [0, 4), then a 2-node
    job is split over the two empty servers, each of which holds it: a violation."""
    instance, schedule = _ring_on_two_servers()
    pair = Job(
        id="pair", release=0.0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),)
    )
    instance = instance.replace(jobs=(*instance.jobs, pair))
    split = Schedule((*schedule.jobs, ScheduledJob("pair", 4.0, 6.0, (0, 1))))
    monkeypatch.setattr(bounds, "ENUMERATION_LIMIT", 0)
    record = claims.mapping_bounds(instance, split)
    assert not record.exact
    assert record.status is ClaimStatus.VIOLATED and "spans servers" in record.detail


def _theorem1_setup() -> tuple[Instance, Schedule, Value, RhoCheck]:
    """:func:`_long_and_short` with OPT(A) = 8 (hand and oracle), guided A-SRPT's
    schedule and the independent rho (1: no edges, one GPU type)."""
    instance = _long_and_short()
    optimum = brute_force_a(instance)
    assert optimum == pytest.approx(8.0)
    guided = simulate(instance, "asrpt").schedule
    assert guided is not None
    return instance, guided, Value(optimum, EXACT), rho_of(instance)


def test_theorem1_holds_on_the_hand_worked_instance() -> None:
    """The base case: exact OPT(A), exact rho, exact counts, feasible schedule: holds."""
    instance, guided, opt, rho = _theorem1_setup()
    assert rho.exact and rho.rho == pytest.approx(1.0)
    assert claims.theorem1(instance, guided, opt, rho).status is ClaimStatus.HOLDS


def test_theorem1_inconclusive_with_predicted_counts() -> None:
    """Catches ``exact_counts`` left out of Theorem 1's exactness: the theorem assumes true
    iteration counts; with predicted ones the record is inconclusive and says why."""
    instance, guided, opt, rho = _theorem1_setup()
    record = claims.theorem1(instance, guided, opt, rho, exact_counts=False)
    assert record.status is ClaimStatus.INCONCLUSIVE and "predicted" in record.detail


def test_theorem1_inconclusive_on_an_infeasible_schedule() -> None:
    """Catches an infeasible schedule's (small) total let through as 'holds': both jobs run
    at once on the 2-GPU server (long [0, 4), short [1, 2)), total 6 <= bound, but the
    schedule breaks capacity, so nothing follows."""
    instance, _, opt, rho = _theorem1_setup()
    clash = Schedule(
        (ScheduledJob("long", 0.0, 4.0, (0, 0)), ScheduledJob("short", 1.0, 2.0, (0, 0)))
    )
    record = claims.theorem1(instance, clash, opt, rho)
    assert record.status is ClaimStatus.INCONCLUSIVE and "infeasible" in record.detail


def test_theorem1_inconclusive_when_opt_a_is_not_exact() -> None:
    """Catches OPT(A)'s exactness left out: a time-limited OPT(A) far too small (a
    violation were it exact) gives inconclusive."""
    instance, guided, _, rho = _theorem1_setup()
    tiny = claims.theorem1(instance, guided, Value(0.1, INEXACT), rho)
    assert tiny.status is ClaimStatus.INCONCLUSIVE
    assert claims.theorem1(instance, guided, Value(0.1, EXACT), rho).status is ClaimStatus.VIOLATED


def test_theorem1_inconclusive_when_rho_is_a_bound() -> None:
    """Catches rho's exactness left out of Theorem 1 (a bounded rho only widens the
    bound): the same far-too-small OPT with an inexact rho is inconclusive."""
    instance, guided, _, rho = _theorem1_setup()
    bounded = dataclasses.replace(rho, exact=False)
    record = claims.theorem1(instance, guided, Value(0.1, EXACT), bounded)
    assert record.status is ClaimStatus.INCONCLUSIVE and "rho" in record.detail
