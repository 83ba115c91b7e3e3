"""The portfolio ``exact`` (ddlsched.formulations.portfolio): the brute force's optimum, honest
status."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import pytest
from ddlsched.formulations.certify import BoundSet
from ddlsched.formulations.portfolio import _combine
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import ExactParams, Problem, SolveStatus, solve
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance
from ddlsched.core.result import Result
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
    proofs = ("first_proof_milp", "first_proof_cpsat", "proof_by_bound")
    assert sum(result.metrics[name] for name in proofs) == 1


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
    """A model too large for both backends is one clear error, not a silent empty result
    (problem A2, which has no continuous-time backend to turn to)."""
    from ddlsched.formulations.prepared import ModelTooLarge

    instance = generate(GeneratorConfig(num_jobs=8), 0)  # realistic: 2.9 million 1 s slots
    with pytest.raises(ModelTooLarge):
        solve(instance, "exact", problem=Problem.A2, params=LIMIT, bound=False)


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


def test_milp_starts_at_once_when_cpsat_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """CP-SAT refuses a weight that is not a ratio of small integers; the MILP, which
    waits for CP-SAT's head start, then runs at once and proves the optimum alone (the
    bounds are not raced, and the fast bound, 20.8, is below the optimum, 25.0)."""
    import math

    monkeypatch.setattr("ddlsched.formulations.portfolio.RACE_BOUNDS", False)
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 5)
    weighted = instance.replace(
        jobs=(instance.jobs[0].replace(weight=math.pi), *instance.jobs[1:])
    )
    result = solve(weighted, "exact", params=LIMIT, bound=False)
    assert result.status is SolveStatus.OPTIMAL and result.metrics["first_proof_milp"] == 1
    assert any("cpsat failed" in note for note in result.notes)
    assert result.objective == pytest.approx(brute_force_a(weighted))


def _with_schedule(result: Result, instance: Instance | None = None) -> Result:
    """``result`` with a schedule: one of ``instance`` (FIFO's) when given, as a race that
    checks its backends' schedules needs, else a placeholder for ``_combine`` alone."""
    from ddlsched import simulate
    from ddlsched.core.model import Schedule, ScheduledJob

    schedule = (
        Schedule((ScheduledJob("j", 0.0, 1.0, (0,)),))
        if instance is None
        else simulate(instance, "fifo", bound=False).schedule
    )
    return Result(**{**result.__dict__, "schedule": schedule})


def test_without_a_proof_the_portfolio_says_feasible() -> None:
    """Neither backend proved and the best bound stays below the best schedule: ``feasible``
    with the larger bound. Catches: the status reported without a proof (``optimal``, or a
    backend's own status carried over)."""
    milp = _with_schedule(_result("milp", SolveStatus.FEASIBLE, 12.0, 9.0))
    cpsat = _with_schedule(_result("cpsat", SolveStatus.FEASIBLE, 11.0, 8.0))
    combined = _combine({"milp": milp, "cpsat": cpsat}, [], 2.0)
    assert combined.status is SolveStatus.FEASIBLE and combined.best_bound == 9.0
    assert combined.objective == 11.0
    assert combined.metrics["first_proof_milp"] == combined.metrics["first_proof_cpsat"] == 0


@pytest.mark.parametrize(
    ("objective", "flow", "bound", "proven"),
    [
        (1e7 + 100.0, 100.0, 1e7 + 100.0 - 5e-5, True),  # 5e-7 of the flow time: closed
        (1e7 + 100.0, 100.0, 1e7 + 95.0, False),  # 5e-7 of sum w C, 0.05 of the flow: open
        (0.5, 0.5, 0.5 - 4e-7, True),  # 8e-7 relative: closed
        (0.5, 0.5, 0.5 - 8e-7, False),  # 1.6e-6 relative, no absolute floor: open
        (1e-8, 1e-8, 1e-8 - 1e-15, True),
        (1e-8, 1e-8, 1e-8 - 1e-13, False),  # 1e-5 relative on jobs of 1e-8 s: open
    ],
)
def test_the_joint_proof_gap_is_relative_to_the_flow_time(
    objective: float, flow: float, bound: float, proven: bool
) -> None:
    """The joint proof needs the gap closed on the part of the objective a schedule
    controls: ``1e-6`` of the total flow time, whatever the releases and the scale.
    Catches: the gap judged on ``sum w C`` (releases of 1e7 s close a gap of 5 on a flow
    time of 100), an absolute floor (every gap of jobs of 1e-8 s closed), or the caller's
    ``mip_gap`` used instead."""
    milp = Result("milp", Problem.A, SolveStatus.FEASIBLE, objective, flow, bound, 1.0)
    cpsat = Result("cpsat", Problem.A, SolveStatus.FEASIBLE, objective, flow, math.nan, 1.0)
    combined = _combine({"milp": _with_schedule(milp), "cpsat": _with_schedule(cpsat)}, [], 2.0)
    assert combined.proven_optimal is proven


def _fake_race(
    monkeypatch: pytest.MonkeyPatch, cpsat: Result, milp: Result, *, cpsat_waits: bool = False
) -> dict[str, ExactParams]:
    """Replace both backends by fakes returning ``cpsat`` and ``milp``; record their params.
    ``cpsat_waits``: CP-SAT returns only once the MILP has started (after the head start).
    The bounds do not race (the pooled bound and its schedules prove small instances before
    the MILP's head start is over, and these tests are about the backends)."""
    import threading

    import ddlsched.formulations.cpsat as cpsat_module
    import ddlsched.formulations.milp as exact_module

    monkeypatch.setattr("ddlsched.formulations.portfolio.RACE_BOUNDS", False)
    seen: dict[str, ExactParams] = {}
    milp_started = threading.Event()

    def fake_cpsat(instance: object, problem: object, params: ExactParams, **_: object) -> Result:
        seen["cpsat"] = params
        if cpsat_waits:
            milp_started.wait(600)
        return cpsat

    def fake_milp(instance: object, problem: object, params: ExactParams, **_: object) -> Result:
        seen["milp"] = params
        milp_started.set()
        return milp

    monkeypatch.setattr(cpsat_module, "solve_cpsat", fake_cpsat)
    monkeypatch.setattr(exact_module, "solve_milp", fake_milp)
    return seen


def test_the_milps_budget_ends_by_the_portfolios_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The MILP starts after CP-SAT's head start (1 s of a 10 s limit) and gets at most what
    remains (9 s), with the caller's deterministic limits, one thread, in a child; CP-SAT gets
    the whole limit. Checked on the budget passed, not by timing a race. Catches: the MILP
    given the whole limit after the head start (the portfolio overruns its limit)."""
    from ddlsched.formulations.portfolio import head_start, milp_params

    assert head_start(10.0) == pytest.approx(1.0) and head_start(None) is None
    assert milp_params(ExactParams(time_limit=10), 4.0).time_limit == pytest.approx(6.0)
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 0)
    feasible = _with_schedule(_result("x", SolveStatus.FEASIBLE, 5.0, 4.0), instance)
    seen = _fake_race(monkeypatch, feasible, feasible, cpsat_waits=True)
    params = ExactParams(time_limit=10, threads=4, node_limit=7, deterministic_limit=3.0)
    from ddlsched.api import online_start  # else its time comes off the limit

    warm_start = online_start(instance)
    solve(instance, "exact", params=params, bound=False, warm_start=warm_start)
    assert seen["cpsat"].time_limit == 10
    milp = seen["milp"]
    assert milp.time_limit is not None and 0 < milp.time_limit <= 10 - head_start(10)
    assert (milp.threads, milp.isolate, milp.node_limit, milp.deterministic_limit) == (
        1,
        True,
        7,
        3.0,
    )


@pytest.mark.parametrize("prover", ["cpsat", "milp"])
def test_the_first_proof_is_recorded_for_the_backend_that_proved(
    monkeypatch: pytest.MonkeyPatch, prover: str
) -> None:
    """The backend whose result is proven optimal is the one named first prover, and its
    result is returned (the other, unproven, differs in objective). Catches: the wrong
    backend recorded as the first proof, or the other's result returned."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 0)
    proof = _with_schedule(_result(prover, SolveStatus.OPTIMAL, 5.0, 5.0), instance)
    other = _with_schedule(_result("other", SolveStatus.FEASIBLE, 6.0, math.nan), instance)
    results = (
        {"cpsat": proof, "milp": other} if prover == "cpsat" else {"cpsat": other, "milp": proof}
    )
    _fake_race(monkeypatch, results["cpsat"], results["milp"])
    combined = solve(instance, "exact", params=LIMIT, bound=False)
    assert combined.metrics[f"first_proof_{prover}"] == 1
    assert sum(combined.metrics[f"first_proof_{name}"] for name in ("milp", "cpsat")) == 1
    assert combined.proven_optimal and combined.objective == 5.0
    assert combined.notes[0].startswith(f"{prover} proved optimality first")


@pytest.mark.parametrize(
    ("continued_objective", "kept"), [(18.0, "continuous"), (22.0, "slotted"), (20.0, "slotted")]
)
def test_the_continuous_continuation_replaces_only_a_worse_slotted_answer(
    monkeypatch: pytest.MonkeyPatch, continued_objective: float, kept: str
) -> None:
    """An unproven slotted answer (objective 20) on an instance whose durations are off the
    slot grid (``integral`` false) is continued in continuous time from its schedule; the
    continuation replaces it only when strictly better (18), never when worse (22) or equal
    (20). Catches the comparison flipped (the worse answer returned, the better dropped)."""
    from ddlsched.formulations import portfolio

    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 0)
    slotted = _with_schedule(_result("exact", SolveStatus.FEASIBLE, 20.0, 10.0), instance)
    slotted = Result(**{**slotted.__dict__, "facts": {"integral": False}})
    continued = _result("continuous", SolveStatus.FEASIBLE, continued_objective, 10.0)
    warm_starts = []

    def fake_continuous(
        instance: object, problem: object, params: object, warm_start: object, *_: object
    ) -> Result:
        warm_starts.append(warm_start)
        return continued

    monkeypatch.setattr(portfolio, "_continuous", fake_continuous)
    answer = portfolio._continued_in_continuous_time(
        slotted, instance, Problem.A, ExactParams(time_limit=None), 0, 0.0
    )  # no time limit: the start time given is never read, so no clock is
    assert warm_starts == [slotted.schedule]
    assert answer is (continued if kept == "continuous" else slotted)


def _recorded(events: list[str], name: str, answer: Result) -> Callable[..., Result]:
    """A backend that appends ``name`` to ``events`` when called and answers ``answer``."""

    def fake(*_: object, **__: object) -> Result:
        events.append(name)
        return answer

    return fake


def _silent_race(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both backends replaced by fakes that answer nothing: each waits for the race's
    ``cancel`` and then reports itself cancelled, as a real backend stopped at the limit
    does. The bounds do not race. Whatever the machine's speed, neither answers."""
    import ddlsched.formulations.cpsat as cpsat_module
    import ddlsched.formulations.milp as exact_module
    from ddlsched.formulations.isolation import Cancelled

    monkeypatch.setattr("ddlsched.formulations.portfolio.RACE_BOUNDS", False)

    def never_answers(*_: object, cancel: threading.Event, **__: object) -> Result:
        cancel.wait(600)
        raise Cancelled("stopped")

    monkeypatch.setattr(cpsat_module, "solve_cpsat", never_answers)
    monkeypatch.setattr(exact_module, "solve_milp", never_answers)


@pytest.mark.parametrize("problem", [Problem.A, Problem.A1])
def test_a_race_stopped_before_either_backend_answered_returns_the_best_schedule_seen(
    monkeypatch: pytest.MonkeyPatch, problem: Problem
) -> None:
    """A race whose backends are stopped at the time limit before either answered returns
    the best schedule it saw, ``feasible``: on A the caller's warm start (FIFO's), on A1
    without a warm start the pooled list schedule; the objective is the verifier's and the
    notes say the race was stopped. Catches the stopped race falling through to combining
    no outcomes (``StopIteration`` from ``next(iter(...))`` on an empty dict) or returning
    no schedule."""
    from ddlsched.formulations.portfolio import solve_exact

    from ddlsched import simulate

    _silent_race(monkeypatch)
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 0)
    warm_start = simulate(instance, "fifo", bound=False).schedule if problem is Problem.A else None
    result = solve_exact(instance, problem, ExactParams(time_limit=0.05), warm_start=warm_start)
    assert result.status is SolveStatus.FEASIBLE and result.schedule is not None
    if warm_start is not None:
        assert result.schedule == warm_start
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.total_jct == pytest.approx(report.total_jct)
    assert any(note.startswith("stopped") for note in result.notes), result.notes


def test_without_a_time_limit_the_milp_starts_only_once_cpsat_has_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a time limit the MILP's thread waits for CP-SAT to stop with no timeout (the
    backends run in turn: CP-SAT's answer, then the MILP's, both combined); with a time limit
    it waits at most the head start. Read from what the MILP's thread asks of the race, never
    from a clock. Catches: the race's clock-driven head start kept without a time limit
    (whether the MILP's incumbents crossed mid-search, and so the answer, then depended on
    the machine's load)."""
    import ddlsched.formulations.cpsat as cpsat_module
    import ddlsched.formulations.milp as exact_module
    from ddlsched.formulations.portfolio import _Race

    monkeypatch.setattr("ddlsched.formulations.portfolio.RACE_BOUNDS", False)
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 0)
    feasible = _with_schedule(_result("x", SolveStatus.FEASIBLE, 5.0, 4.0), instance)
    events: list[str] = []

    monkeypatch.setattr(cpsat_module, "solve_cpsat", _recorded(events, "cpsat", feasible))
    monkeypatch.setattr(exact_module, "solve_milp", _recorded(events, "milp", feasible))
    result = solve(instance, "exact", params=ExactParams(time_limit=None), bound=False)
    assert events == ["cpsat", "milp"] and result.schedule is not None
    waits: list[float | None] = []

    class Recorder:
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout)
            return True

        def set(self) -> None:
            pass

    for limit in (None, 600.0):
        race = _Race(
            BoundSet.empty(instance), Problem.A, ExactParams(time_limit=limit), None, 0, 0.0, False
        )
        race.cpsat_done = Recorder()  # type: ignore[assignment]
        race.run_backend("milp")
    assert waits == [None, pytest.approx(2.0)]


def test_without_a_time_limit_the_bounds_run_once_after_both_backends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a time limit the LP, pooled and decomposition bounds run in turn after the
    backends stopped unproven, each once, and never beside them; with a time limit they race
    beside the backends. Catches: the bounds' thread started without a time limit too (each
    bound then computed twice, and once against the clock)."""
    import ddlsched.formulations.cpsat as cpsat_module
    import ddlsched.formulations.milp as exact_module
    from ddlsched.formulations.portfolio import _Race

    from ddlsched.core.result import LowerBound

    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 0)
    feasible = _with_schedule(_result("x", SolveStatus.FEASIBLE, 1e3, 4.0), instance)
    events: list[str] = []

    def bound_child(self: _Race, step: str, upper: float, remaining: float) -> LowerBound:
        events.append(step)
        return LowerBound(1.0, step, True)

    monkeypatch.setattr(cpsat_module, "solve_cpsat", _recorded(events, "cpsat", feasible))
    monkeypatch.setattr(exact_module, "solve_milp", _recorded(events, "milp", feasible))
    monkeypatch.setattr(_Race, "_bound_child", bound_child)
    solve(instance, "exact", params=ExactParams(time_limit=None), bound=False)
    assert events == ["cpsat", "milp", "lp", "pooled", "decomposition"]
    events.clear()
    solve(instance, "exact", params=ExactParams(time_limit=600), bound=False)
    assert sorted(events) == ["cpsat", "decomposition", "lp", "milp", "pooled"]
