"""``compare --time-limit T``: one budget per instance that every phase shares.

No test here reads the machine's clock. Each phase of :func:`compare_instance` is wrapped
so that it runs for real and then moves a fake clock on by a chosen cost; which phases
must have run, and the time limit the exact solve must have been given, follow from
those costs by hand (phases run in turn while time is left). The rows are then checked
against truths computed apart from the budget: the online schedules by the independent
verifier, the optimum by an unbudgeted solve, the bounds against that optimum.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from typing import Any

import pytest
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance
from ddlsched.core.params import ExactParams, OnlineParams
from ddlsched.core.result import SolveStatus
from ddlsched.experiments import CompareConfig, compare
from ddlsched.experiments.compare import (
    BOUNDS_PHASE,
    InstanceBudget,
    compare_instance,
)

module = importlib.import_module("ddlsched.experiments.compare")

PHASES = ("rho", BOUNDS_PHASE, "exact")
"""The phases after the online methods, in the order they run."""


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 100.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


def _costed(monkeypatch: pytest.MonkeyPatch, clock: FakeClock, costs: dict[str, float]) -> list:
    """Wrap every phase so that it runs for real, then moves ``clock`` on by its cost (an
    online method: ``costs["online"]`` each). Returns the exact solves' params, in order."""
    solve, rho, bounds = module.solve, module.rho_of_instance, module._fast_bounds
    exact_params: list[ExactParams] = []

    def timed_solve(instance: Any, method: str, **kwargs: Any) -> Any:
        result = solve(instance, method, **kwargs)
        if isinstance(kwargs["params"], OnlineParams):
            clock.now += costs["online"]
        else:
            exact_params.append(kwargs["params"])
            clock.now += costs["exact"]
        return result

    def timed_rho(instance: Any, **kwargs: Any) -> Any:
        report = rho(instance, **kwargs)
        clock.now += costs["rho"]
        return report

    def timed_bounds(instance: Any, budget: InstanceBudget) -> Any:
        found = bounds(instance, budget)
        if found != (None, None):
            clock.now += costs["bounds"]
        return found

    monkeypatch.setattr(module, "solve", timed_solve)
    monkeypatch.setattr(module, "rho_of_instance", timed_rho)
    monkeypatch.setattr(module, "_fast_bounds", timed_bounds)
    return exact_params


def _weighted(seed: int) -> Instance:
    """Five spread multi-GPU jobs on 2 x 4 GPUs, weighted 1, 2 and 3 in turn."""
    base = generate(GeneratorConfig.exact_friendly(5, 2, 4, 1.0), seed)
    jobs = tuple(job.replace(weight=1 + k % 3) for k, job in enumerate(base.jobs))
    return base.replace(jobs=jobs)


FAMILIES: dict[str, Callable[[int], Instance]] = {
    "batch": lambda seed: generate(GeneratorConfig.exact_friendly(5, 2, 2, None), seed),
    "spread": lambda seed: generate(GeneratorConfig.exact_friendly(5, 2, 2, 1.0), seed),
    "typed": lambda seed: generate(
        GeneratorConfig.exact_friendly(5, 2, 2, 1.0).replace(gpu_types=(("v100", 1), ("k80", 1))),
        seed,
    ),
    "weighted multi-GPU": _weighted,
}
"""Small instances the exact method proves at once, so that an unbudgeted solve gives
``OPT(A)`` to check the rows against."""


def _unbudgeted_optimum(instance: Any) -> float:
    """``OPT(A)`` of a small instance, solved with no time limit at all."""
    from ddlsched.api import solve

    optimum = solve(instance, "exact", params=ExactParams(time_limit=None))
    assert optimum.proven_optimal
    return optimum.objective


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seconds", [0.5, 2.5, 3.5, 4.5, 20.0])
def test_each_phase_runs_only_while_the_shared_budget_lasts(
    monkeypatch: pytest.MonkeyPatch, family: str, seconds: float
) -> None:
    """Two online methods of 1 s each, rho 1 s, the bounds 1 s, on a budget of ``seconds``:
    a phase runs exactly when the ones before it left time (worked out here by adding the
    costs), the exact solve gets the time left as its limit, the skipped phases are named,
    and every ratio stands on what was proven (the optimum of an unbudgeted solve, the
    bounds below it, the online schedules accepted by the verifier)."""
    clock = FakeClock()
    exact_params = _costed(
        monkeypatch, clock, {"online": 1.0, "rho": 1.0, "bounds": 1.0, "exact": 1.0}
    )
    config = CompareConfig(methods=("asrpt", "fifo"), time_limit=seconds)
    instance = FAMILIES[family](7)
    row = compare_instance(config, 7, instance, InstanceBudget(seconds, clock))

    elapsed, expected_skipped = 2.0, []
    for phase in PHASES:
        if elapsed < seconds:
            elapsed += 1.0
        else:
            expected_skipped.append(phase)
    assert list(row.skipped) == expected_skipped
    ran = [p for p in PHASES if p not in expected_skipped]
    assert math.isnan(row.rho) == ("rho" not in ran)
    assert math.isnan(row.fast_bound) == (BOUNDS_PHASE not in ran)
    for method, result in row.results.items():
        assert row.verified[method] and verify(instance, result.schedule).feasible
    opt = _unbudgeted_optimum(instance)
    if "exact" in ran:
        (params,) = exact_params
        assert params.time_limit == pytest.approx(seconds - 4.0)
        assert params.deterministic_limit == config.work_limit
        assert params.node_limit == config.node_limit
        assert row.optimum.lower_bound.value <= opt * (1 + 1e-9)
    else:
        assert exact_params == []
        assert row.optimum.status is SolveStatus.TIME_LIMIT and row.optimum.schedule is None
        assert not row.optimum.proven_optimal and not row.verified["exact"]
    if BOUNDS_PHASE in ran:
        assert row.fast_bound <= opt * (1 + 1e-9)
    _check_rows_honest(config, row, opt)


def _check_rows_honest(config: CompareConfig, row: Any, opt: float) -> None:
    """No ratio to an optimum that was not proven; ``C/LB`` exactly where a proven bound
    (the exact result's, else the fast bounds') exists, and then at most ``C/OPT``."""
    from ddlsched.experiments.compare import CompareReport

    report = CompareReport(config, [row])
    proven = row.optimum.proven_optimal
    for record in report.records():
        if record["method"] == config.exact:
            continue
        assert math.isnan(record["C/OPT"]) != proven
        if proven:
            assert record["OPT"] == pytest.approx(opt, rel=1e-9)
        bound_known = math.isfinite(row.fast_bound) or row.optimum.lower_bound is not None
        assert math.isfinite(record["C/LB"]) == bound_known
        if bound_known:
            assert record["C/LB"] >= record["sum C"] / opt * (1 - 1e-9)
    summary = report.summary()
    if row.skipped:
        assert summary["budget_cuts"] == [{"seed": row.seed, "phases": list(row.skipped)}]
    if "exact" in row.skipped:
        (entry,) = summary["unproven"]
        assert "not run" in entry["why"] and "time budget" in entry["why"]


def test_without_a_time_limit_the_clock_is_never_read() -> None:
    """The deterministic limits alone decide: with no ``time_limit`` every phase runs,
    nothing is skipped and the budget never asks its clock."""
    clock = FakeClock()
    report = compare(
        CompareConfig(jobs=4, servers=2, gpus_per_server=2, instances=2, methods=("fifo",)),
        clock=clock,
    )
    assert clock.reads == 0
    for row in report.rows:
        assert row.skipped == () and row.optimum.proven_optimal
        assert math.isfinite(row.rho) and math.isfinite(row.fast_bound)
    assert report.summary()["budget_cuts"] == []


def test_a_budget_spent_by_the_online_methods_leaves_an_honest_row() -> None:
    """A clock that leaps past the budget between any two readings (the online methods took
    it all): rho, the bounds and the exact solve are skipped and named; the exact row is
    ``time_limit`` with no schedule and no bound, no method has ``C/OPT`` or ``C/LB``, and
    the online schedules are still verified."""
    clock = FakeClock()

    def leaping_clock() -> float:
        clock.now += 1e6
        return clock()

    config = CompareConfig(jobs=5, instances=2, methods=("asrpt", "fifo"), time_limit=5.0)
    report = compare(config, clock=leaping_clock)
    for row in report.rows:
        assert list(row.skipped) == list(PHASES)
    records = report.records()
    assert {r["status"] for r in records if r["method"] == "exact"} == {"time_limit"}
    for record in records:
        assert math.isnan(record["C/OPT"]) and math.isnan(record["C/LB"])
        assert record["verified"] == (record["method"] != "exact")
    summary = report.summary()
    assert summary["optima_proven"] == 0
    assert all("not run" in entry["why"] for entry in summary["unproven"])


def test_the_exact_solve_is_given_at_least_a_moment_once_allowed() -> None:
    """A budget with time left when the exact solve is allowed but none a moment later
    still hands it a valid (positive) time limit."""
    readings = iter([0.0, 4.0])
    budget = InstanceBudget(4.0 + 1e-9, lambda: next(readings, 4.0 + 1e-9))
    assert budget.allows("exact")
    assert budget.exact_params(ExactParams()).time_limit > 0


def test_the_command_names_the_phases_the_time_limit_cut(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    """``compare --time-limit`` whose budget the online methods spent (the leaping clock)
    exits 0, says which phases were cut on which seeds and that OPT was not run, prints no
    ratio to OPT, and writes no figure rather than draw a schedule it does not have."""
    import functools

    import ddlsched.experiments as experiments
    from ddlsched.cli import main

    clock = FakeClock()

    def leaping_clock() -> float:
        clock.now += 1e6
        return clock()

    monkeypatch.setattr(
        experiments, "compare", functools.partial(experiments.compare, clock=leaping_clock)
    )
    figure = tmp_path / "f.png"
    argv = ["compare", "--jobs", "4", "--instances", "2", "--methods", "fifo"]
    assert main([*argv, "--time-limit", "5", "--plot", str(figure)]) == 0
    out = capsys.readouterr().out
    cut = "time limit: phases cut on 2/2 instance(s) (seeds 0, 1): exact; lower bounds; rho"
    assert cut in out
    assert "exact not run: the instance's time budget was spent first" in out
    assert "no figure" in out and not figure.exists()
    table = out[out.index("| fifo") :]
    assert "not proven" in table
