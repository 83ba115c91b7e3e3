"""``Result``: its one-line repr, its gap and the contradictions it refuses."""

from __future__ import annotations

import math

import pytest

from ddlsched.core.model import Problem
from ddlsched.core.result import ContradictionError, Result, SolveStatus


def _result(objective: float, bound: float, status: SolveStatus) -> Result:
    return Result("cpsat", Problem.A, status, objective, objective - 1.0, bound, 1.2345, None)


def test_repr_is_one_short_line_with_what_a_reader_checks_first() -> None:
    """A notebook shows a result as one line: method, problem, status, objective, bound,
    gap and time; never the schedule (a 1.7k-character dump before)."""
    shown = repr(_result(200.0, 150.0, SolveStatus.FEASIBLE))
    assert shown == (
        "Result('cpsat', problem A, feasible, objective=200, bound=150, gap=25.13%, 1.23 s)"
    )
    assert "\n" not in shown and len(shown) < 120


def test_repr_leaves_out_an_unknown_bound_and_gap() -> None:
    """Without a bound the repr says nothing of one (not 'bound=nan, gap=nan%')."""
    shown = repr(_result(200.0, math.nan, SolveStatus.FEASIBLE))
    assert "bound" not in shown and "gap" not in shown and "objective=200" in shown


def test_gap_is_relative_to_the_flow_time_and_never_negative() -> None:
    """(objective - bound) / total flow time; a bound above the objective (rounding) gives
    0. With releases of 1e7 s the gap of a schedule 50 s above its bound on a flow time
    of 100 s is 0.5, not 5e-6."""
    assert _result(200.0, 150.0, SolveStatus.FEASIBLE).gap == 50.0 / 199.0
    assert _released(100.0, 1e7, 1e7 + 50.0, SolveStatus.FEASIBLE).gap == 0.5
    assert _result(200.0, 200.0000001, SolveStatus.OPTIMAL).gap == 0.0
    assert math.isnan(_result(math.nan, 150.0, SolveStatus.ERROR).gap)


def test_flow_keys_translate_the_best_bound_by_the_releases() -> None:
    """Hand-worked: objective 200 with total JCT 150 (so sum w r = 50), best bound 180:
    the flow bound is 130 (less the 1e-9 safety), its ratio 150 / 130 and flow gap
    20 / 150. A lower bound whose own flow value (140) is larger wins over the
    translation. Catches: the flow ratio taken as sum C / LB (200 / 180 = 1.11, the
    releases hiding the gap), or the releases subtracted twice."""
    from ddlsched.core.result import LowerBound

    result = Result("exact", Problem.A, SolveStatus.FEASIBLE, 200.0, 150.0, 180.0, 1.0, None)
    assert result.total_flow_time == 150.0
    assert math.isclose(result.flow_lower_bound, 130.0, rel_tol=1e-8)
    assert result.flow_lower_bound <= 130.0
    assert math.isclose(result.flow_ratio, 150.0 / 130.0, rel_tol=1e-8)
    assert math.isclose(result.flow_gap, 20.0 / 150.0, rel_tol=1e-8)
    summary = result.summary()
    # Which method, on which problem, with which status: the keys a reader of --json
    # files looks up first (a misspelt key loses them).
    assert (summary["method"], summary["problem"], summary["status"]) == (
        "exact",
        Problem.A.value,
        SolveStatus.FEASIBLE.value,
    )
    assert summary["total_flow_time"] == summary["total_jct"] == 150.0
    assert summary["flow_ratio"] == result.flow_ratio
    stronger = LowerBound(185.0, "lp", True, flow_value=140.0)
    with_bound = Result(**{**result.__dict__, "lower_bound": stronger})
    assert with_bound.flow_lower_bound == 140.0
    assert with_bound.summary()["lower_bound"]["flow_value"] == 140.0
    invalid = LowerBound(199.0, "lp", False, flow_value=149.0)
    beside = Result(**{**result.__dict__, "lower_bound": invalid, "best_bound": 180.0})
    assert beside.flow_lower_bound < 131.0


def test_flow_keys_are_null_without_a_bound() -> None:
    """No bound at all: flow bound, ratio and gap are unknown (JSON null), never 0 or inf."""
    result = _result(200.0, math.nan, SolveStatus.FEASIBLE)
    summary = result.summary()
    assert summary["flow_lower_bound"] is None and summary["flow_ratio"] is None
    assert summary["flow_gap"] is None


MAGNITUDES = (1.0, 1e3, 1e9)


def _bounded(objective: float, bound: float, lower: bool) -> Result:
    """A result of objective ``objective`` bounded by ``bound``: as its ``best_bound``, or
    (``lower``) as its valid ``lower_bound`` with no ``best_bound``."""
    from ddlsched.core.result import LowerBound

    return Result(
        "exact",
        Problem.A,
        SolveStatus.FEASIBLE,
        objective,
        objective,
        math.nan if lower else bound,
        1.0,
        None,
        lower_bound=LowerBound(bound, "lp", True) if lower else None,
    )


@pytest.mark.parametrize("lower", [False, True], ids=["best_bound", "lower_bound"])
@pytest.mark.parametrize("magnitude", MAGNITUDES)
@pytest.mark.parametrize("excess", [1e-4, 1e-5, 2e-6, 1.2e-6])
def test_an_objective_below_its_bound_by_more_than_a_millionth_is_a_contradiction(
    magnitude: float, excess: float, lower: bool
) -> None:
    """A bound above the objective by a relative 1e-4 down to just past 1e-6 (1.2e-6), on
    objectives of 1, 1e3 and 1e9, is refused with ``ContradictionError``. Prevents: a
    looser tolerance (1e-3) letting a bound 1e-4 above its schedule pass as rounding (a
    ratio to the bound under 1, or a schedule of another problem under a bound on A)."""
    with pytest.raises(ContradictionError, match="a contradiction"):
        _bounded(magnitude, magnitude * (1 + excess), lower)


@pytest.mark.parametrize("lower", [False, True], ids=["best_bound", "lower_bound"])
@pytest.mark.parametrize("magnitude", MAGNITUDES)
@pytest.mark.parametrize("excess", [1e-7, 5e-7, 0.8e-6])
def test_an_objective_below_its_bound_by_less_than_a_millionth_is_rounding(
    magnitude: float, excess: float, lower: bool
) -> None:
    """A bound above the objective by a relative 1e-7 up to just short of 1e-6 (0.8e-6),
    on objectives of 1, 1e3 and 1e9, is rounding: the result is built. Prevents: a
    tighter or absolute tolerance (a bound 100 above an objective of 1e9, 1e-7 of it,
    refused)."""
    result = _bounded(magnitude, magnitude * (1 + excess), lower)
    assert result.contradiction() is None


def _released(flow: float, releases: float, bound: float, status: SolveStatus) -> Result:
    """A result whose schedule has total flow time ``flow`` and ``sum w r = releases``."""
    return Result("exact", Problem.A, status, releases + flow, flow, bound, 1.0, None)


@pytest.mark.parametrize("flow", [1e-8, 1e-3, 0.5, 100.0, 1e6])
@pytest.mark.parametrize("releases", [0.0, 1e3, 1e7, 1e10])
def test_the_tolerance_is_relative_to_the_flow_time_at_every_scale(
    flow: float, releases: float
) -> None:
    """A bound above the objective by 2e-6 of the total flow time (plus twice the rounding
    of times near the releases, 1e-9 of them) contradicts it, one 0.5e-6 of it above does
    not: for flow times from 1e-8 s to 1e6 s and releases up to 1e10 s. Prevents: the
    tolerance measured on ``sum w C`` (releases of 1e7 s hid a bound 10 s above the
    objective of a schedule whose flow time was 100 s) or absolute below 1 (hid any bound
    above an objective of jobs of 1e-8 s)."""
    rounding = 1e-9 * (releases + flow)
    with pytest.raises(ContradictionError, match="a contradiction"):
        _released(
            flow, releases, releases + flow + 2e-6 * flow + 2 * rounding, SolveStatus.FEASIBLE
        )
    close = _released(flow, releases, releases + flow + 0.5e-6 * flow, SolveStatus.FEASIBLE)
    assert close.contradiction() is None


@pytest.mark.parametrize("flow", [1e-8, 1.0, 100.0])
@pytest.mark.parametrize("releases", [0.0, 1e7, 1e10])
def test_optimal_needs_a_gap_closed_on_the_flow_time(flow: float, releases: float) -> None:
    """``optimal`` beside a bound 1e-5 of the flow time below the objective is a
    contradiction, beside one 1e-7 of it below is not. The gap is that share of the flow
    time whatever the releases. Prevents: ``optimal`` judged on ``sum w C`` (16% above the
    optimum passed as optimal with releases of 1e7 s) or with an absolute floor (any
    schedule of 1e-8 s jobs)."""
    total = releases + flow
    loose, tight = total - 1e-5 * flow, total - 1e-7 * flow
    if total - loose > 0:  # the bound is representable apart from the objective
        with pytest.raises(ContradictionError, match="optimal, yet"):
            _released(flow, releases, loose, SolveStatus.OPTIMAL)
        assert _released(flow, releases, loose, SolveStatus.FEASIBLE).gap >= 0.9e-5
    assert _released(flow, releases, tight, SolveStatus.OPTIMAL).contradiction() is None


def test_exact_facts_name_every_fact_once_and_default_to_nothing_proven() -> None:
    """``ExactFacts().as_dict()`` is every fact false (nothing proven), and each field lands
    under its own key, ``bracket_closed`` only when set. Catches a fact written under
    another key, or a default that claims a proof input."""
    from ddlsched.core.result import ExactFacts

    assert ExactFacts().as_dict() == {
        "slotted_optimal": False,
        "integral": False,
        "modes_proven": False,
        "modes_complete": False,
    }
    for name in ("integral", "modes_proven", "modes_complete", "slotted_optimal"):
        facts = ExactFacts(**{name: True}).as_dict()
        assert [key for key, value in facts.items() if value] == [name]
    assert ExactFacts(bracket_closed=False).as_dict()["bracket_closed"] is False


def test_a_result_has_one_bound_field_and_best_bound_is_its_value() -> None:
    """``lower_bound`` is the only bound a result stores; ``best_bound`` (still the sixth
    argument, as every backend builds results) is folded into it when larger, named
    ``solver-dual``, and read back as its value. On a tie the given lower bound stays (its
    name), and when the solver's value wins the given bound's flow value is kept (a valid
    bound on the flow time in its own right)."""
    import dataclasses

    from ddlsched.core.result import SOLVER_BOUND, LowerBound

    names = [f.name for f in dataclasses.fields(Result)]
    assert "lower_bound" in names and "best_bound" not in names
    solver_only = _result(200.0, 150.0, SolveStatus.FEASIBLE)
    assert solver_only.lower_bound == LowerBound(150.0, SOLVER_BOUND, True)
    assert solver_only.best_bound == 150.0
    lp = LowerBound(150.0, "lp", True, flow_value=120.0)
    tie = Result("x", Problem.A, "feasible", 200.0, 180.0, 150.0, 1.0, None, lower_bound=lp)
    assert tie.lower_bound is lp
    above = Result("x", Problem.A, "feasible", 200.0, 180.0, 160.0, 1.0, None, lower_bound=lp)
    assert above.lower_bound == LowerBound(160.0, SOLVER_BOUND, True, flow_value=120.0)
    below = Result("x", Problem.A, "feasible", 200.0, 180.0, 140.0, 1.0, None, lower_bound=lp)
    assert below.lower_bound is lp and below.best_bound == 150.0


def test_a_solver_bound_given_again_replaces_the_earlier_one() -> None:
    """``dataclasses.replace(result, best_bound=...)`` replaces the solver's earlier bound
    (``nan`` withdraws it) and leaves a combinatorial bound in place; a replace that does
    not name ``best_bound`` keeps the bound as it is."""
    import dataclasses

    from ddlsched.core.result import LowerBound

    solver = _result(200.0, 150.0, SolveStatus.FEASIBLE)
    assert math.isnan(dataclasses.replace(solver, best_bound=math.nan).best_bound)
    assert dataclasses.replace(solver, best_bound=120.0).best_bound == 120.0
    assert dataclasses.replace(solver, notes=("n",)).best_bound == 150.0
    job = LowerBound(130.0, "job", True)
    both = dataclasses.replace(solver, lower_bound=job, best_bound=math.nan)
    assert both.lower_bound is job


def test_an_online_result_s_gap_is_certified_by_its_lower_bound() -> None:
    """An online result with a valid lower bound reports it as its bound, and its gap and
    ratio from it (hand-worked: objective 33, bound 24 give a gap of 9/33 and a ratio
    33/24); an invalid bound gives neither."""
    from ddlsched.core.result import LowerBound

    online = Result("fifo", Problem.A, "feasible", 33.0, 33.0, runtime_s=0.1, schedule=None,
                    lower_bound=LowerBound(24.0, "job", True))  # fmt: skip
    assert online.best_bound == 24.0 and math.isclose(online.gap, 9.0 / 33.0)
    assert online.summary()["ratio_to_lower_bound"] == 33.0 / 24.0
    invalid = Result("fifo", Problem.A, "feasible", 33.0, 33.0, runtime_s=0.1, schedule=None,
                     lower_bound=LowerBound(34.0, "lp", False))  # fmt: skip
    assert math.isnan(invalid.best_bound) and math.isnan(invalid.gap)


def test_fixed_part_weighs_each_release() -> None:
    """``fixed_part`` is ``sum_i w_i r_i`` (weights 2 and 0.5, releases 3 and 10: 11; all
    released at 0: 0). Catches: the weights dropped (13), which makes the gap of a weighted
    instance judged against the wrong flow time."""
    from ddlsched.core.model import Cluster, Instance, Job
    from ddlsched.core.result import fixed_part

    jobs = (
        Job("a", release=3.0, iterations=1, compute_time=1.0, gpus=1, weight=2.0),
        Job("b", release=10.0, iterations=1, compute_time=1.0, gpus=1, weight=0.5),
    )
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs)
    assert fixed_part(instance) == 11.0
    at_zero = instance.replace(jobs=tuple(job.replace(release=0.0) for job in jobs))
    assert fixed_part(at_zero) == 0.0


@pytest.mark.parametrize("releases", [1e7, 1e10])
def test_rounding_of_times_near_the_releases_is_no_contradiction(releases: float) -> None:
    """A bound above the objective by half the rounding of times near the releases (0.5e-9 of
    them) is no contradiction, though it exceeds a millionth of a flow time of 1e-8 s many
    times over: values near 1e7 s carry that much rounding. Catches: the ``ROUNDING`` term
    dropped from ``_below`` (every such result refused as a contradiction)."""
    flow = 1e-8
    bound = releases + flow + 0.5e-9 * releases
    assert _released(flow, releases, bound, SolveStatus.FEASIBLE).contradiction() is None


def test_one_function_picks_the_best_bound() -> None:
    """``best_lower_bound`` by value merges the best valid flow value into the bound of
    largest value; by flow it returns the bound of largest flow as it is; invalid and
    unknown bounds never win; the first of equals wins; ``with_solver_bound`` is the same
    choice (a tie keeps the given bound's name). No other module of the packages picks a
    bound by its value or flow value itself. Catches: a second picker drifting from this
    one (the sandwich's flow pick, the race's watch)."""
    import re
    from pathlib import Path

    from ddlsched.core.result import SOLVER_BOUND, LowerBound, best_lower_bound, with_solver_bound

    job = LowerBound(10.0, "job", True, flow_value=4.0)
    rank = LowerBound(12.0, "rank", True, flow_value=3.0)
    lp = LowerBound(12.0, "lp", True, flow_value=5.0)
    wrong = LowerBound(99.0, "lp", False, flow_value=99.0)
    best = best_lower_bound([job, rank, lp, wrong])
    assert best is not None and (best.name, best.value, best.flow_value) == ("rank", 12.0, 5.0)
    assert best_lower_bound([job, rank, lp, wrong], by="flow") is lp
    assert best_lower_bound([wrong]) is None and best_lower_bound([], by="flow") is None
    with pytest.raises(ValueError, match="by"):
        best_lower_bound([job], by="ratio")
    assert with_solver_bound(job, 10.0) is job
    solver = with_solver_bound(job, 11.0)
    assert solver is not None and (solver.name, solver.flow_value) == (SOLVER_BOUND, 4.0)
    root = Path(__file__).resolve().parents[2]
    picker = re.compile(r"key=lambda \w+: \w+\.(value|flow_value)\b")
    for package in ("ddlsched", "formulations", "algorithms", "proofs_checks"):
        for path in (root / package).rglob("*.py"):
            if path.name == "result.py" and path.parent.name == "core":
                continue
            assert not picker.search(path.read_text()), path
