"""The pooled integral bound (bound 7 of ddlsched.formulations.lower_bounds) and the schedules its
order gives (ddlsched.formulations.slotted.improve_order), alone and inside the portfolio.

Truths used: hand-worked optima, the brute-force oracle, the independent verifier, and the
LP relaxation of the same model (an integral optimum is never below it). No test reads a
clock: HiGHS is stopped by a node count where a test needs an unfinished solve, and the
local search by its number of steps.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from ddlsched.formulations.certify import pooled_bound_and_schedules
from ddlsched.formulations.lower_bounds import (
    BoundInputs,
    LpSettings,
    lp_bound,
    proven_grid,
    time_indexed_bound,
)
from ddlsched.formulations.modes import problem_a
from ddlsched.formulations.outcome import schedule_from_plan
from ddlsched.formulations.pack import PackSettings
from ddlsched.formulations.slotted import improve_order, place_in_order
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings

from ddlsched.cli import main
from ddlsched.core.io import read_instance
from ddlsched.core.model import Cluster, Instance, Job, Problem
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus
from tests.oracles import brute_force_a
from tests.strategies import exact_family_instances

POOLED = LpSettings(max_variables=5_000, time_limit=1e7, integer=True)
"""Integral, with a limit no run reaches: no test depends on the machine's speed."""


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Instance:
    """The batch instance (seed 0): 24 jobs released together on 4 x 4 GPUs. The LP
    gives 208, the pooled bound 212, and 212 is the optimum (a schedule meets it)."""
    path = tmp_path_factory.mktemp("pooled") / "batch.json"
    command = ["generate", "--jobs", "24", "--servers", "4", "--gpus-per-server", "4"]
    command += ["--preset", "exact-friendly", "--seed", "0", "--out", str(path)]
    assert main(command) == 0
    return read_instance(path)


def _one_gpu(weights: tuple[float, ...]) -> Instance:
    """Jobs of one iteration (1 s) on a single GPU, all released at 0."""
    jobs = tuple(
        Job(id=f"j{k}", release=0.0, iterations=1, compute_time=1.0, gpus=1, weight=w)
        for k, w in enumerate(weights)
    )
    return Instance(Cluster((1,), 1.0, 1.0), jobs)


@pytest.mark.parametrize(
    ("weights", "optimum"),
    [((1.0, 1.0), 3.0), ((0.5, 0.5), 1.5), ((2 / 3, 0.5), 2 / 3 + 1.0)],
    ids=["unit", "halves", "two-thirds-and-a-half"],
)
def test_rounding_up_only_where_every_objective_is_a_multiple_of_the_slot(
    weights: tuple[float, ...], optimum: float
) -> None:
    """Hand-worked: two 1 s jobs on one GPU, OPT = w_first * 1 + w_second * 2 (heavier
    first). With integral weights the bound is rounded up to a whole slot; with fractional
    ones it must not be (1.5 would become 2, above OPT). Catches: rounding up whatever the
    weights, or rounding off the instance's grid."""
    instance = _one_gpu(weights)
    assert brute_force_a(instance) == pytest.approx(optimum)
    slot = proven_grid(instance)
    assert slot == 1.0
    inputs = BoundInputs.of(instance)
    bound = lp_bound(instance, inputs, POOLED, slot=slot)
    assert bound.valid and bound.value == pytest.approx(optimum, rel=1e-8)
    off_grid = lp_bound(instance, inputs, POOLED)  # a fine slot, rounded down: never above
    assert off_grid.valid and off_grid.value <= optimum * (1 + 1e-9)


@settings(max_examples=25, deadline=None)
@given(exact_family_instances())
def test_pooled_bound_between_its_lp_and_the_optimum(instance: Instance) -> None:
    """Fractional weights (1/2 and 2/3 together), multi-GPU jobs, plain and typed clusters,
    on the instance's grid: LP <= pooled <= OPT (brute force). Catches: a wrong constant or
    sign in the objective, the incumbent's value reported instead of the dual bound,
    durations rounded down on the grid (a bound below the LP), rounding up past OPT."""
    optimum = brute_force_a(instance)
    slot = proven_grid(instance)
    inputs = BoundInputs.of(instance)
    lp = lp_bound(instance, inputs, LpSettings(max_variables=5_000, time_limit=1e7), slot=slot)
    pooled, starts = time_indexed_bound(instance, inputs, POOLED, slot=slot)
    assert lp.valid and pooled.valid and starts is not None
    assert lp.value <= pooled.value * (1 + 1e-7) + 1e-9, (lp, pooled)
    assert pooled.value <= optimum * (1 + 1e-9), (pooled, optimum, instance)
    release_weight = sum(job.weight * job.release for job in instance.jobs)
    assert pooled.flow_value <= optimum - release_weight + 1e-9 * optimum


def test_on_batch_arrivals_the_pooled_bound_closes_the_lps_gap(batch: Instance) -> None:
    """The batch instance: LP 208 < pooled 212 = a schedule's objective, so the pooled bound
    proves what the LP cannot. Catches: the pooled model solved as its LP (no integrality)."""
    inputs = BoundInputs.of(batch)
    slot = proven_grid(batch)
    assert slot == 1.0
    lp = lp_bound(batch, inputs, LpSettings(max_variables=5_000, time_limit=1e7), 228.0, slot)
    pooled = lp_bound(batch, inputs, POOLED, 228.0, slot)
    assert lp.value == pytest.approx(208.0, abs=1e-6)
    assert pooled.value == pytest.approx(212.0, rel=1e-8)


def test_a_node_limited_solve_reports_its_dual_bound(tmp_path: Path) -> None:
    """40 jobs released together on 4 x 4 GPUs (seed 1), stopped after one node: HiGHS has
    not finished, and what is reported is its dual bound (valid, with a note), between the
    LP and the finished solve's value. Stopped at 0 nodes (before the root LP) there is no
    dual bound, and no valid value. Catches: a stopped integral model called invalid, or
    its incumbent's objective (above the relaxation's optimum) reported as a bound."""
    path = tmp_path / "forty.json"
    command = ["generate", "--jobs", "40", "--servers", "4", "--gpus-per-server", "4"]
    command += ["--preset", "exact-friendly", "--seed", "1", "--out", str(path)]
    assert main(command) == 0
    instance = read_instance(path)
    inputs, slot = BoundInputs.of(instance), proven_grid(instance)
    lp = lp_bound(instance, inputs, LpSettings(20_000, 1e7), slot=slot)
    finished = lp_bound(instance, inputs, LpSettings(20_000, 1e7, integer=True), slot=slot)
    stopped = lp_bound(instance, inputs, LpSettings(20_000, 1e7, None, True, 1), slot=slot)
    assert stopped.valid and any("HiGHS stopped" in note for note in stopped.notes)
    assert lp.value <= stopped.value * (1 + 1e-7) <= finished.value * (1 + 1e-7)
    before_root = lp_bound(instance, inputs, LpSettings(20_000, 1e7, None, True, 0), slot=slot)
    assert not before_root.valid


def test_the_search_from_the_pooled_order_is_deterministic_feasible_and_improving(
    batch: Instance,
) -> None:
    """Same seed and steps, same plan; every reported plan strictly better than the one
    before, the first that of the order itself; the best is a schedule the verifier
    accepts with the objective the search computed. Catches: a plan kept that is worse,
    a search drawing from global random state, placing that breaks capacity."""
    slotted = problem_a(batch)
    _, starts = time_indexed_bound(batch, BoundInputs.of(batch), POOLED, 228.0, 1.0)
    assert starts is not None
    order = sorted(range(batch.num_jobs), key=lambda i: (starts[i], i))
    seen: list[float] = []
    plan = improve_order(
        slotted, order, 300, seed=4, on_better=lambda p: seen.append(slotted.objective(p))
    )
    again = improve_order(slotted, order, 300, seed=4)
    assert plan == again
    assert seen[0] == slotted.objective(place_in_order(slotted, order))
    assert all(later < earlier for earlier, later in itertools.pairwise(seen))
    assert seen[-1] == slotted.objective(plan)
    report = verify(batch, schedule_from_plan(batch, Problem.A, slotted, plan))
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(seen[-1])
    assert seen[-1] >= 212.0  # never below the optimum


def test_pooled_schedules_prove_the_batch_instance_in_the_child_function(batch: Instance) -> None:
    """What the portfolio runs in its child: the bound first, then schedules, one of which
    meets the bound (212, the optimum), within a bounded number of steps."""
    from ddlsched.formulations import isolation

    reports: list[tuple[str, object]] = []
    original = isolation.report
    isolation.report = reports.append  # type: ignore[assignment]
    try:
        bound = pooled_bound_and_schedules(batch, 228.0, 1e7, seed=0, iterations=2_000)
    finally:
        isolation.report = original  # type: ignore[assignment]
    assert reports[0][0] == "bound" and reports[0][1] == bound
    schedules = [item for kind, item in reports if kind == "schedule"]
    totals = [verify(batch, s).total_completion_time for s in schedules]  # type: ignore[arg-type]
    assert totals == sorted(totals, reverse=True) and totals[-1] == pytest.approx(212.0)


def test_the_portfolio_proves_batch_arrivals_through_the_pooled_bound(batch: Instance) -> None:
    """Both backends crippled by deterministic limits (the MILP explores no node, CP-SAT
    gets almost no deterministic time): the race is won by a schedule from the pooled order
    meeting the pooled bound, reported as such; the verifier agrees on 212. Catches: the
    pooled child not started, its schedules or bound not reaching the watch, a better
    watched schedule dropped in favour of the backends' result."""
    from ddlsched.api import solve

    params = ExactParams(time_limit=None, node_limit=0, deterministic_limit=0.05)
    result = solve(batch, "exact", params=params)
    assert result.status is SolveStatus.OPTIMAL, result.notes
    assert result.objective == pytest.approx(212.0)
    assert any("pooled" in note for note in result.notes), result.notes
    assert verify(batch, result.schedule).total_completion_time == pytest.approx(212.0)


def test_the_pooled_search_is_not_stopped_by_an_invalid_bound(
    batch: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Catches the search's stop rule taking an invalid bound as a proof: with the real
    bound the packing of the pooled starts meets it (212) and the searches after it never
    start; with the bound's value replaced by one every schedule meets (1e9) but marked
    invalid (as an LP stopped by its time limit is), the order's search must still run."""
    import ddlsched.formulations.lower_bounds as lower_bounds
    import ddlsched.formulations.slotted as slotted
    from ddlsched.formulations import isolation

    from ddlsched.core.result import LowerBound

    real_bound, real_search = lower_bounds.time_indexed_bound, slotted.improve_order
    searched: list[int] = []

    def counted(*args: object, **kwargs: object) -> object:
        searched.append(1)
        return real_search(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(slotted, "improve_order", counted)

    def run() -> list[object]:
        reports: list[tuple[str, object]] = []
        monkeypatch.setattr(isolation, "report", reports.append)
        search = PackSettings(rounds=2, round_work=0.1)
        pooled_bound_and_schedules(batch, 228.0, 1e7, seed=0, iterations=30, search=search)
        return [item for kind, item in reports if kind == "schedule"]

    control = run()
    assert len(control) == 1 and not searched  # proven by the packing: nothing left to do
    assert verify(batch, control[0]).total_completion_time == pytest.approx(212.0)  # type: ignore[arg-type]

    def invalid(*args: object, **kwargs: object) -> tuple[LowerBound, object]:
        bound, starts = real_bound(*args, **kwargs)  # type: ignore[arg-type]
        return LowerBound(1e9, bound.name, False), starts

    monkeypatch.setattr(lower_bounds, "time_indexed_bound", invalid)
    assert len(run()) == 1 and searched
