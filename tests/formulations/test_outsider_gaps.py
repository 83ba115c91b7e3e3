"""Hand-worked cases from an outsider's planted slips that passed the suite (2026-11-27).

Each test names the slip it catches; each was planted again and seen to fail it.
"""

from __future__ import annotations

import math

import pytest

from ddlsched.core.graphs import ring_edges
from ddlsched.core.model import Cluster, Instance, Job, Piece, Schedule, ScheduledJob
from ddlsched.core.params import ExactParams
from formulations.exact import solve_milp
from proofs_checks.bounds import fastest_time
from proofs_checks.verifier import verify
from tests.oracles import brute_force_a2

IN_PROCESS = ExactParams(time_limit=60, isolate=False)


def test_weighted_a2_milp_equals_the_brute_force() -> None:
    """Catches a job's first allowed slot off by one in the A2 MILP (``<=`` for ``<``,
    masked with unit weights by SRPT's warm start): one 1-GPU server, x (1 s, weight 1),
    y (2 s, weight 10), z (3 s, weight 1), all at 0. By hand: y first (10 x 2 = 20), then
    x (3), then z (6): 29, what the brute force finds; the slip gives 37."""
    cluster = Cluster((1,), 1.0, 1.0)
    jobs = tuple(
        Job(id=name, release=0.0, iterations=1, compute_time=c, gpus=1, weight=w)
        for name, c, w in (("x", 1.0, 1.0), ("y", 2.0, 10.0), ("z", 3.0, 1.0))
    )
    instance = Instance(cluster, jobs)
    result = solve_milp(instance, "A2", IN_PROCESS)
    assert brute_force_a2(instance) == pytest.approx(29.0)
    assert result.status == "optimal" and result.objective == pytest.approx(29.0)


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


def test_cpsat_weights_with_denominators_up_to_a_thousand() -> None:
    """Catches the weights' rational approximation limited to denominators of 100: 1 and
    0.123 are 1000 : 123 exactly, which CP-SAT must accept."""
    from formulations.cpsat import _integer_weights

    assert list(_integer_weights(["a", "b"], [1.0, 0.123])) == [1000, 123]


def _restarted(
    pieces: tuple[tuple[float, float], ...], restart_cost: float = 0.0
) -> tuple[Instance, Schedule]:
    job = Job(id="j", release=0.0, iterations=2, compute_time=1.0, gpus=1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    schedule = Schedule(
        (
            ScheduledJob(
                "j",
                pieces[0][0],
                pieces[-1][1],
                pieces=tuple(Piece(s, e, (0,)) for s, e in pieces),
            ),
        ),
        restart_cost=restart_cost,
    )
    return instance, schedule


def test_a_piece_shorter_than_its_restart_does_no_negative_work() -> None:
    """Catches the work of a resumed piece not clamped at 0 (``max(0, length - restart)``):
    2 iterations of 1 s, restart cost 1 s; pieces [0, 1), [2, 2.5) (shorter than the
    restart: no work, never minus half an iteration) and [3, 5) (1 s of work): feasible."""
    instance, schedule = _restarted(((0.0, 1.0), (2.0, 2.5), (3.0, 5.0)), restart_cost=1.0)
    report = verify(instance, schedule)
    assert report.feasible, report.violations


def test_a_zero_length_piece_is_not_an_error() -> None:
    """Catches a piece of length 0 taken as ending before it starts (``<=`` for ``<``):
    pieces [0, 2) and [2, 2) of a 2-iteration job are feasible, total 2."""
    instance, schedule = _restarted(((0.0, 2.0), (2.0, 2.0)))
    report = verify(instance, schedule)
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(2.0)


def test_min_cut_fallback_counts_a_partly_filled_server() -> None:
    """Catches the parts of the min-cut bound rounded down (``//`` for ``ceil``): an
    11-node ring (1 GB per edge, 1 s compute) on 4 x 4 GPUs (B_intra 4, B_inter 1) is past
    the enumeration limit (4^11 maps); it needs ceil(11/4) = 3 servers, and the bound is
    1 + 11/4 + (1 - 1/4) x 3 x 2 / 2 = 6.0 (the slip's 2 parts give 5.25)."""
    ring = Job(
        id="r",
        release=0.0,
        iterations=1,
        compute_time=1.0,
        gpus=11,
        edges=ring_edges(11, 1.0),
    )
    found = fastest_time(ring, Cluster((4, 4, 4, 4), 4.0, 1.0))
    assert not found.exact
    assert found.value == pytest.approx(6.0)
    assert math.isfinite(found.value)


def test_a_larger_bound_offered_later_becomes_the_reported_lower_bound() -> None:
    """Catches the comparison that replaces the reported lower bound inverted: FIFO on the
    ring instance, certified, then offered a valid LP bound 1 above the first; both the
    best bound and the lower bound reported must be that LP bound (never a weaker one
    beside a stronger best bound)."""
    from ddlsched import simulate
    from ddlsched.core.result import LowerBound
    from formulations.certify import with_best_bound
    from tests.examples import ring_instance

    instance = ring_instance()
    first = with_best_bound(simulate(instance, "fifo"), instance)
    assert first.lower_bound is not None
    stronger = LowerBound(
        first.lower_bound.value + 1.0, "lp", True, flow_value=first.lower_bound.flow_value + 1.0
    )
    second = with_best_bound(first, instance, extra=(stronger,))
    assert second.lower_bound is not None and second.lower_bound.name == "lp"
    assert second.best_bound == pytest.approx(second.lower_bound.value)
    assert second.lower_bound.value == pytest.approx(first.lower_bound.value + 1.0)


def test_an_invalid_bound_never_lends_its_flow_value() -> None:
    """Catches the flow bound taken over every bound instead of the valid ones: an invalid
    (stopped) LP bound carrying a flow value of 1000 must not raise the certified flow
    bound on the ring instance above FIFO's flow time (15)."""
    from ddlsched import api, simulate
    from ddlsched.core.result import LowerBound
    from tests.examples import ring_instance

    instance = ring_instance()
    bound = api.certify(
        instance, extra=(LowerBound(math.nan, "stopped-lp", False, flow_value=1000.0),)
    )
    fifo = simulate(instance, "fifo")
    assert bound.flow_value <= fifo.total_flow_time + 1e-9


def test_a_milp_stopped_before_its_first_incumbent_returns_the_warm_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Catches the time-limit branch of the MILP keyed on the wrong status (``is not`` for
    ``is``): HiGHS stopped at its limit with no incumbent (a stub: a real HiGHS loads the
    MIP start even at 1 ms) must give the warm start's schedule, verified, status
    feasible, with a bound no higher than it, not a bare time-limit result."""
    import formulations.exact as exact
    from ddlsched.core.result import SolveStatus
    from formulations.solver import SolveOutcome
    from tests.examples import ring_instance

    def stopped(*args, **kwargs):  # type: ignore[no-untyped-def]
        return SolveOutcome(SolveStatus.TIME_LIMIT, math.nan, math.nan, 0.01, "maxTimeLimit")

    monkeypatch.setattr(exact, "solve_model", stopped)
    instance = ring_instance()
    result = solve_milp(instance, "A", ExactParams(time_limit=5, isolate=False))
    assert result.status is SolveStatus.FEASIBLE
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    assert not result.best_bound > result.objective


def test_the_slotted_milp_is_optimal_even_when_the_instance_is_not_integral() -> None:
    """Catches ``slotted_optimal`` read from the honest status (never optimal off the grid)
    instead of HiGHS's own: job b released at 0.5 s makes the instance non-integral, so
    the result is not called optimal, yet HiGHS proved the slotted model's optimum, and
    that fact is what lemma 1's check needs (``OPT(A1)`` on the grid)."""
    from ddlsched.core.result import SolveStatus

    jobs = (
        Job(id="a", release=0.0, iterations=2, compute_time=1.0, gpus=1),
        Job(id="b", release=0.5, iterations=3, compute_time=1.0, gpus=2),
    )
    instance = Instance(Cluster((2, 2), 2.0, 1.0), jobs)
    result = solve_milp(instance, "A", IN_PROCESS)
    assert result.status is not SolveStatus.OPTIMAL
    assert result.facts["integral"] is False
    assert result.facts["slotted_optimal"] is True
