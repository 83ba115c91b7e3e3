"""The continuous-time CP-SAT backend (ddlsched.formulations.continuous) and the portfolio's use
of it.

Every solve here stops on deterministic limits only (CP-SAT's deterministic time, one
worker, no time limit), so a run does the same work on every machine. Optima are compared
with the enumeration of ``tests/oracles.py``, which places jobs in continuous time and so
handles real durations; every schedule is checked by the independent verifier.
"""

from __future__ import annotations

import math

import pytest
from ddlsched.formulations.continuous import (
    Units,
    choose_scale,
    enumerate_modes,
    serial_place,
    solve_continuous,
)
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings

from ddlsched import ExactParams, Problem, SolveStatus, solve
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job, Schedule, ScheduledJob
from ddlsched.core.result import Result
from tests.oracles import brute_force_a, brute_force_a1
from tests.strategies import typed_instances

DETERMINISTIC = ExactParams(time_limit=None, deterministic_limit=20.0, threads=1)

TINY_REAL = GeneratorConfig(num_jobs=3, servers=2, gpus_per_server=2, max_job_gpus=3)
"""Generated jobs with real durations (log-normal iteration counts times real compute
times), small enough for the enumeration."""


def _checked(instance: Instance, result: Result, problem: Problem = Problem.A) -> None:
    """The schedule is feasible for ``problem``, its objective the verifier's, and the bound
    below it."""
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.schedule.problem == problem
    assert result.objective == pytest.approx(report.total_completion_time, rel=1e-12)
    if math.isfinite(result.best_bound):
        assert result.best_bound <= result.objective * (1 + 1e-9)


def _weighted(instance: Instance, weights: tuple[float, ...]) -> Instance:
    jobs = tuple(j.replace(weight=weights[k % len(weights)]) for k, j in enumerate(instance.jobs))
    return instance.replace(jobs=jobs)


def _real_durations() -> Instance:
    """Hand-made: compute times of 1.37 s and 0.91 s, traffic that makes a split slower,
    releases off any grid, weights 1, 2 and 1.5; one job must wait for another."""
    cluster = Cluster((2, 2), bandwidth_intra=4.0, bandwidth_inter=1.0)
    jobs = (
        Job("a", release=0.0, iterations=3, compute_time=1.37, gpus=2, edges=((0, 1, 0.29),)),
        Job("b", release=0.4, iterations=2, compute_time=0.91, gpus=3, weight=2.0,
            edges=((0, 1, 0.5), (1, 2, 0.33))),
        Job("c", release=1.13, iterations=5, compute_time=0.77, gpus=1, weight=1.5),
    )  # fmt: skip
    return Instance(cluster=cluster, jobs=jobs)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("load", [None, 1.0])
@pytest.mark.parametrize("weights", [(1.0,), (1.0, 2.0, 0.5)])
def test_optimal_equals_the_enumeration_on_real_durations(
    seed: int, load: float | None, weights: tuple[float, ...]
) -> None:
    """Problem A with real durations, batch (``load=None``) and spread releases, weights:
    the backend proves the enumerated optimum. Catches a mode, release or capacity modelled
    wrong, a decoding that loses the plan's modes or order, and a bound in the wrong
    units (the scale or the weights' factor), which would either miss the optimum or
    call a worse schedule optimal."""
    instance = _weighted(generate(TINY_REAL.replace(load=load), seed), weights)
    result = solve_continuous(instance, Problem.A, DETERMINISTIC)
    _checked(instance, result)
    assert result.status is SolveStatus.OPTIMAL and result.facts["bracket_closed"], result.notes
    assert result.objective == pytest.approx(brute_force_a(instance), rel=1e-9)


def test_hand_made_real_durations_and_releases() -> None:
    """Durations such as 3 x (1.37 + 0.29 / 4) s and releases 0.4 and 1.13 s: the proven
    optimum is the enumerated one, and so is the bracket's own bound (no help from the
    combinatorial bounds needed). Catches releases rounded the wrong way and a scale that
    is not exact in floating point."""
    instance = _real_durations()
    result = solve_continuous(instance, Problem.A, DETERMINISTIC)
    _checked(instance, result)
    optimum = brute_force_a(instance)
    assert result.status is SolveStatus.OPTIMAL and result.facts["bracket_closed"]
    assert result.objective == pytest.approx(optimum, rel=1e-9)
    assert result.metrics["rounded_down_bound"] <= optimum


@settings(max_examples=8, deadline=None)
@given(typed_instances(max_jobs=3))
def test_typed_clusters_equal_the_enumeration(instance: Instance) -> None:
    """GPU types (per-type compute times and bandwidths, real values): the modes are the
    prepared problem's, so an optimum here is the enumerated one. Catches a mode timed on
    the wrong type or servers of different types treated as interchangeable by the
    symmetry rules."""
    result = solve_continuous(instance, Problem.A, DETERMINISTIC)
    _checked(instance, result)
    optimum = brute_force_a(instance)
    assert result.best_bound <= optimum * (1 + 1e-9)
    if result.status is SolveStatus.OPTIMAL:
        assert result.objective == pytest.approx(optimum, rel=1e-9)


def test_identical_servers_keep_the_optimum() -> None:
    """Three identical servers, where the symmetry anchors leave out modes: the optimum
    survives. Catches symmetry rules that cut off every optimum."""
    config = TINY_REAL.replace(num_jobs=4, servers=3, max_job_gpus=4, load=1.0)
    for seed in range(2):
        instance = generate(config, seed)
        result = solve_continuous(instance, Problem.A, DETERMINISTIC)
        _checked(instance, result)
        assert result.status is SolveStatus.OPTIMAL
        assert result.objective == pytest.approx(brute_force_a(instance), rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_a1_equals_the_enumeration(seed: int) -> None:
    """Problem A1 (rigid jobs on the pooled GPUs, all-cut durations) in continuous time.
    Catches A1 solved on the servers instead of the pool."""
    instance = generate(TINY_REAL.replace(num_jobs=4, load=1.0), seed)
    result = solve_continuous(instance, Problem.A1, DETERMINISTIC)
    _checked(instance, result, Problem.A1)
    assert result.status is SolveStatus.OPTIMAL
    assert result.objective == pytest.approx(brute_force_a1(instance), rel=1e-9)


@pytest.mark.parametrize("max_units", [4.0, 16.0, 1_000.0])
@pytest.mark.parametrize("seed", [0, 6])
def test_a_wide_bracket_is_never_called_optimal(max_units: float, seed: int) -> None:
    """A coarse scale (a horizon of 4 to 1,000 units) leaves the rounded-down bound well
    below the schedule: the result is ``feasible`` with that bound, which stays below the
    true optimum, and the schedule is still feasible. On these two instances no
    combinatorial bound closes the gap either. Catches ``optimal`` taken from CP-SAT's
    own status on the rounded model, or a bound from rounding up."""
    instance = generate(TINY_REAL.replace(num_jobs=4, load=1.0), seed)
    result = solve_continuous(instance, Problem.A, DETERMINISTIC, max_units=max_units)
    _checked(instance, result)
    optimum = brute_force_a(instance)
    assert result.status is SolveStatus.FEASIBLE
    assert not result.facts["bracket_closed"]
    assert result.metrics["rounded_down_bound"] < optimum * (1 - 1e-6)
    assert result.best_bound <= optimum * (1 + 1e-9) <= result.objective * (1 + 2e-9)


def test_the_rounded_model_is_a_relaxation_at_every_scale() -> None:
    """The optimum's plan, rounded down onto any scale, is a plan of the rounded-down model
    (every cumulative holds in integers), and placed again with the real durations it is no
    later than the optimum. Catches durations or releases rounded up in the bound's model
    and a decoding that reorders jobs."""
    instance = _real_durations()
    optimum = solve_continuous(instance, Problem.A, DETERMINISTIC)
    slotted = enumerate_modes(instance, Problem.A, DETERMINISTIC)
    starts = {entry.id: entry for entry in optimum.schedule.jobs}
    releases = [job.release for job in instance.jobs]
    for most in (3.0, 50.0, 1e6):  # units over a 30 s horizon
        scale = choose_scale(30.0, most)
        plan = []
        for job, sjob in zip(instance.jobs, slotted.jobs, strict=True):
            mapping = starts[job.id].mapping
            counts = tuple(mapping.count(h) for h in range(instance.cluster.num_servers))
            m = next(k for k, mode in enumerate(sjob.modes) if mode.usage == counts)
            plan.append((m, math.floor(starts[job.id].start * scale)))
        units = Units(
            [math.floor(r * scale) for r in releases],
            [[math.floor(mode.duration * scale) for mode in j.modes] for j in slotted.jobs],
            [[mode.usage for mode in j.modes] for j in slotted.jobs],
            slotted.capacities,
            [1] * len(plan),
            slotted.server_classes,
            (),
        )
        assert units.fits(plan)
    placed = serial_place(
        slotted, releases, sorted(range(3), key=lambda i: starts[instance.jobs[i].id].start),
        [m for m, _ in plan],
    )  # fmt: skip
    for job, (_, start) in zip(instance.jobs, placed, strict=True):
        assert start <= starts[job.id].start + 1e-12


def test_unfinished_solves_return_verified_schedules() -> None:
    """Stopped after its first solution or a sliver of deterministic time, the backend
    returns a schedule the verifier accepts and never calls it optimal unless a bound meets
    it. Catches a decoding of a partial plan and a status taken from the limit."""
    instance = generate(GeneratorConfig(num_jobs=8, servers=2, gpus_per_server=4, load=1.0), 0)
    for params in (
        DETERMINISTIC.replace(solution_limit=1),
        DETERMINISTIC.replace(deterministic_limit=0.001),
    ):
        result = solve_continuous(instance, Problem.A, params)
        _checked(instance, result)
        if result.status is SolveStatus.OPTIMAL:
            assert result.objective <= result.best_bound * (1 + 1e-6)


def test_a2_is_refused() -> None:
    """A2 is preemptive: this backend refuses it rather than answer another problem."""
    with pytest.raises(ValueError, match="solves problems A and A1"):
        solve_continuous(_real_durations(), Problem.A2, DETERMINISTIC)


def test_the_portfolio_answers_an_instance_the_slotted_models_refuse() -> None:
    """``exact`` on real durations (a horizon of over 100,000 slots of 1 s) answers in
    continuous time, with a verified schedule and an honest status; the method is
    registered on its own. Catches the portfolio still raising ``ModelTooLarge``."""
    instance = generate(GeneratorConfig(num_jobs=6, servers=2, gpus_per_server=4, load=1.0), 0)
    result = solve(instance, "exact", params=DETERMINISTIC, bound=False)
    _checked(instance, result)
    assert result.method == "exact" and "continuous" in result.notes[0]
    assert result.status is SolveStatus.OPTIMAL, result.notes
    alone = solve(instance, "cpsat-continuous", params=DETERMINISTIC, bound=False)
    assert alone.method == "cpsat-continuous"
    assert alone.objective == pytest.approx(result.objective, rel=1e-6)


def test_the_portfolio_races_integral_instances_as_before() -> None:
    """An integral instance the slotted models accept is raced by the MILP and CP-SAT, never
    sent to the continuous backend. Catches the switch taken on every instance."""
    config = GeneratorConfig(num_jobs=3, servers=2, gpus_per_server=2, integral=True)
    instance = generate(config.replace(max_iterations=2, duration_slots=(1, 3)), 0)
    result = solve(instance, "exact", params=ExactParams(time_limit=600), bound=False)
    assert not any("continuous" in note for note in result.notes)
    assert "first_proof_cpsat" in result.metrics


@pytest.mark.parametrize("shift", [0.0, 0.37, 1.9])
@pytest.mark.parametrize("weights", [(1.0,), (1.0, 2.0, 1.5), (3.0, 1.0, 0.5)])
def test_the_portfolio_proves_small_real_durations_the_slotted_models_accept(
    shift: float, weights: tuple[float, ...]
) -> None:
    """Real durations the slotted models accept (a horizon of a few slots) but cannot prove
    (their slots are not exact), with releases shifted off the grid and several weightings:
    ``exact`` goes on in continuous time from the race's schedule and proves the enumerated
    optimum, saying so. Catches a portfolio that stops at the slotted answer (feasible, no
    proof) or takes a continuous answer worse than it."""
    base = _real_durations()
    jobs = tuple(
        job.replace(release=job.release + shift * k, weight=weights[k % len(weights)])
        for k, job in enumerate(base.jobs)
    )
    instance = base.replace(jobs=jobs)
    result = solve(instance, "exact", params=DETERMINISTIC, bound=False)
    _checked(instance, result)
    assert result.status is SolveStatus.OPTIMAL, result.notes
    assert result.notes[0].startswith("the slotted models are not exact for this instance")
    assert result.objective == pytest.approx(brute_force_a(instance), rel=1e-9)


def _long_and_short() -> tuple[Instance, Schedule, Schedule]:
    """A 4 s and a 1 s job, both of 2 GPUs, released at 0 on one 2-GPU server, with its
    two schedules: the long job first (``sum C`` = 4 + 5 = 9) and the short one first
    (1 + 5 = 6, the optimum by Smith's rule)."""
    jobs = (
        Job(id="long", release=0.0, iterations=4, compute_time=1.0, gpus=2),
        Job(id="short", release=0.0, iterations=1, compute_time=1.0, gpus=2),
    )
    instance = Instance(cluster=Cluster((2,), bandwidth_intra=1.0, bandwidth_inter=1.0), jobs=jobs)
    long_first = Schedule(
        (ScheduledJob("long", 0.0, 4.0, (0, 0)), ScheduledJob("short", 4.0, 5.0, (0, 0)))
    )
    short_first = Schedule(
        (ScheduledJob("long", 1.0, 5.0, (0, 0)), ScheduledJob("short", 0.0, 1.0, (0, 0)))
    )
    return instance, long_first, short_first


@pytest.mark.parametrize("lists_give", ["short-first", "long-first"])
def test_the_incumbent_is_the_better_of_the_list_schedule_and_the_warm_start(
    monkeypatch: pytest.MonkeyPatch, lists_give: str
) -> None:
    """``prepare`` keeps as incumbent (the model's hint and the answer's floor) the better of
    the list schedules and the warm start placed again: a warm start worse than the list
    schedule (9 against 6, by hand) is set aside, and one better than it (6 against 9; the
    list schedule forced to the long job first) is kept. Catches the comparison flipped
    (the worse of the two kept)."""
    from ddlsched.formulations import continuous

    instance, long_first, short_first = _long_and_short()
    for schedule, total in ((long_first, 9.0), (short_first, 6.0)):
        report = verify(instance, schedule)
        assert report.feasible and report.total_jct == pytest.approx(total)
    if lists_give == "long-first":
        monkeypatch.setattr(
            continuous, "list_schedules", lambda *_args, **_kw: ([(0, 0.0), (0, 4.0)], True)
        )
        warm_start = short_first
    else:
        warm_start = long_first
    prepared = continuous.prepare(
        instance, Problem.A, ExactParams(), warm_start, continuous.MAX_UNITS
    )
    assert continuous.weighted_total(prepared.slotted, prepared.incumbent) == pytest.approx(6.0)
    schedule = continuous.to_schedule(instance, Problem.A, prepared.slotted, prepared.incumbent)
    assert verify(instance, schedule).total_jct == pytest.approx(6.0)


def test_a_work_limit_alone_gets_a_wall_clock_safety_net() -> None:
    """Given only a deterministic limit, the continuous backend also stops after
    ``WORK_SAFETY`` seconds per work unit, and says so in the note it would add; a time
    limit given, or no limit at all, is left as it is. Catches: a solve whose CP-SAT
    deterministic time never advances (a bound raised unit by unit) running forever."""
    from ddlsched.formulations.continuous import WORK_SAFETY, _with_safety_net

    from ddlsched.core.params import ExactParams

    netted, note = _with_safety_net(ExactParams(time_limit=None, deterministic_limit=2.0))
    assert netted.time_limit == 2.0 * WORK_SAFETY and netted.deterministic_limit == 2.0
    assert "safety net" in note and f"{2.0 * WORK_SAFETY:g} s" in note
    timed = ExactParams(time_limit=5.0, deterministic_limit=2.0)
    assert _with_safety_net(timed) == (timed, "")
    unlimited = ExactParams(time_limit=None)
    assert _with_safety_net(unlimited) == (unlimited, "")
