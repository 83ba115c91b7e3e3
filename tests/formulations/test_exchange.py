"""Incumbents crossing between the exact backends, and the MILP's hard deadline.

The MILP reports each improving schedule while HiGHS runs and takes schedules offered
from outside (the portfolio offers CP-SAT's); CP-SAT reports its improving schedules.
Checked against the verifier and against what each solver proves on its own.
"""

from __future__ import annotations

import itertools
import math
import queue

import pytest
from ddlsched.formulations.cpsat import solve_cpsat
from ddlsched.formulations.milp import (
    OVERRUN_GRACE,
    _stopped_at_deadline,
    build,
    solve_milp,
)
from ddlsched.formulations.outcome import objectives
from ddlsched.formulations.solver import MipHooks, solve_model
from ddlsched.formulations.timeindexed import set_warm_start
from ddlsched.proofs_checks.verifier import verify

from ddlsched import ExactParams, GeneratorConfig, Schedule, generate

HARD = GeneratorConfig.exact_friendly(16, 4, 4, 1.0)
"""Seed 1 of this: CP-SAT proves the optimum, 232, in about 1.5 s, through several
improving schedules (the time limits below are safety nets, never expected to end a solve)."""


@pytest.fixture(scope="module")
def hard() -> tuple[object, Schedule, float]:
    instance = generate(HARD, 1)
    optimum = solve_cpsat(instance, "A", ExactParams(time_limit=600, threads=1))
    assert optimum.proven_optimal and optimum.schedule is not None
    return instance, optimum.schedule, optimum.objective


OFFERED = GeneratorConfig.exact_friendly(10, 2, 4, 1.0)
"""Seed 8 of this: stopped at its first improving solution (``solution_limit=1``, one thread,
a deterministic point of HiGHS's search) the MILP alone holds 205; the optimum is 204."""


def test_an_offered_schedule_becomes_the_milps_incumbent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offered the optimum, a MILP stopped by a deterministic limit returns the optimum.

    HiGHS asks for a user solution right after its setup, before its own heuristics
    (its ``kUserMipSolutionCallbackOriginAfterSetup``); stopped at its first improving
    solution it then holds the offered one, where alone it holds 205. No clock is
    involved: in this process, with what the child would receive given directly.

    Catches: the offer never made to HiGHS, the schedule put on the wrong columns
    (HiGHS rejects an infeasible start), and the incumbent lost when HiGHS is stopped.
    """
    import ddlsched.formulations.milp as exact

    instance = generate(OFFERED, 8)
    optimum = solve_milp(instance, "A", ExactParams(time_limit=600, threads=1, isolate=False))
    assert optimum.proven_optimal and optimum.schedule is not None
    params = ExactParams(time_limit=600, threads=1, isolate=False, solution_limit=1)
    alone = solve_milp(instance, "A", params)
    assert alone.objective > optimum.objective  # the test means something only if so
    monkeypatch.setattr(exact, "received", lambda: [optimum.schedule])
    helped = solve_milp(instance, "A", params)
    assert helped.objective == pytest.approx(optimum.objective), helped.notes
    assert helped.schedule is not None and verify(instance, helped.schedule).feasible


def test_offers_reach_the_milps_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """``solve_milp(offers=...)`` hands its queue to the child's inbox and listens to its
    reports. Catches: offers never forwarded to the child (the inbox dropped)."""
    import ddlsched.formulations.milp as exact

    seen: dict[str, object] = {}

    def recording(function: object, *args: object, **options: object) -> object:
        seen.update(options)
        return function(*args)  # type: ignore[operator]

    monkeypatch.setattr(exact, "run_isolated", recording)
    offers: queue.Queue[Schedule] = queue.Queue()
    solve_milp(generate(OFFERED, 8), "A", ExactParams(time_limit=600), offers=offers)
    assert seen["inbox"] is offers and seen["on_report"] is not None


def test_the_milp_reports_each_improving_schedule() -> None:
    """Every reported schedule is feasible, each better than the last, none better than the
    optimum the MILP then proves, and every reported bound is at most that optimum."""
    instance = generate(GeneratorConfig.exact_friendly(10, 2, 4, 1.0), 3)
    seen: list[tuple[Schedule, float]] = []
    result = solve_milp(
        instance,
        "A",
        ExactParams(time_limit=600, threads=1),
        on_incumbent=lambda schedule, bound: seen.append((schedule, bound)),
    )
    assert result.proven_optimal and seen
    values = [objectives(instance, schedule)[0] for schedule, _ in seen]
    assert all(verify(instance, schedule).feasible for schedule, _ in seen)
    assert all(b < a for a, b in itertools.pairwise(values))
    assert values[-1] >= result.objective - 1e-9
    assert all(math.isnan(bound) or bound <= result.objective + 1e-6 for _, bound in seen)


def test_cpsat_reports_each_improving_schedule(hard) -> None:  # type: ignore[no-untyped-def]
    instance, _, optimum = hard
    seen: list[Schedule] = []
    result = solve_cpsat(
        instance, "A", ExactParams(time_limit=600, threads=1), on_incumbent=seen.append
    )
    assert result.proven_optimal and seen
    values = [objectives(instance, schedule)[0] for schedule in seen]
    assert all(verify(instance, schedule).feasible for schedule in seen)
    assert all(b < a for a, b in itertools.pairwise(values))
    assert values[-1] == pytest.approx(optimum)


def test_a_stopped_highs_keeps_its_incumbent() -> None:
    """HiGHS interrupted by the hard stop before it proves anything still returns its MIP
    start as a feasible solution (APPSI reports the interrupt as 'unknown', with no values).
    The stop lies in the past, so HiGHS stops at its first check on any machine (on an
    instance it cannot solve before that check: on a small one it may)."""
    instance = generate(HARD, 1)
    built = build(instance, "A")
    assert built.incumbent_plan is not None and set_warm_start(built.model, built.incumbent_plan)
    hooks = MipHooks(variables=(), stop_at=-math.inf)  # always past: stop at the first check
    outcome = solve_model(
        built.model, ExactParams(time_limit=600, threads=1), warm_start=True, hooks=hooks
    )
    assert outcome.status == "feasible" and outcome.message == "maxTimeLimit"
    assert outcome.objective == pytest.approx(built.slotted.objective(built.incumbent_plan))
    chosen = [key for key in built.model.INDEX if (built.model.x[key].value or 0) > 0.5]
    assert sorted(chosen) == sorted((i, m, t) for i, (m, t) in enumerate(built.incumbent_plan))


def test_a_milp_stopped_at_its_deadline_returns_a_feasible_schedule() -> None:
    """Past the deadline the last reported incumbent (or else the list schedule) is returned,
    never called optimal; its bound is the last one reported."""
    instance = generate(GeneratorConfig.exact_friendly(10, 2, 4, 1.0), 3)
    began = 0.0  # only the reported runtime depends on it, and no assertion reads that
    fallback = _stopped_at_deadline(instance, "A", None, [], began)
    assert fallback.status == "feasible" and fallback.schedule is not None
    assert verify(instance, fallback.schedule).feasible
    assert "list schedule" in fallback.notes[0] and f"{OVERRUN_GRACE:g} s" in fallback.notes[0]
    reported = _stopped_at_deadline(instance, "A", None, [(fallback.schedule, 12.5)], began)
    assert reported.best_bound == 12.5 and not reported.proven_optimal
    assert reported.objective == pytest.approx(fallback.objective)
    # The same facts as every exact result (their keys are read by name: a misspelt one
    # reads as absent), none claimed.
    for result in (fallback, reported):
        assert result.facts == dict.fromkeys(
            ("slotted_optimal", "integral", "modes_proven", "modes_complete"), False
        )


def test_a_warm_start_without_ends_is_never_scored_as_zero() -> None:
    """Schedule files may omit ends. A MILP stopped at its deadline with such a warm start
    gives it no score at all and returns the list schedule. Catches a missing end counted
    as 0: the warm start scored 0, the combinatorial bound "meets" it, and the answer is
    ``optimal, total completion time 0`` (as on 32 jobs on 8 x 4 with ``--time-limit 1``)."""
    import dataclasses
    import math

    from ddlsched.formulations.certify import BoundSet, RawAnswer, certify

    from ddlsched.core.model import Schedule

    instance = generate(GeneratorConfig.exact_friendly(10, 2, 4, 1.0), 3)
    listed = _stopped_at_deadline(instance, "A", None, [], 0.0).schedule
    assert listed is not None
    no_ends = Schedule(tuple(dataclasses.replace(e, end=None) for e in listed.jobs))
    assert all(math.isnan(value) for value in objectives(instance, no_ends))
    stopped = _stopped_at_deadline(instance, "A", no_ends, [], 0.0)
    result = certify(RawAnswer.of(stopped), BoundSet.of(instance))
    assert result.schedule is not None and any("list schedule" in n for n in result.notes)
    if result.proven_optimal:  # here the bound meets the list schedule's true objective
        assert result.best_bound == pytest.approx(result.objective)
    checked = verify(instance, result.schedule)
    assert checked.feasible and checked.total_completion_time > 0
    assert result.objective == pytest.approx(checked.total_completion_time)
