"""The time-indexed model (ddlsched.formulations.timeindexed): symmetry, warm start, horizon."""

from __future__ import annotations

import pytest
from ddlsched.formulations.milp import build, solve_milp
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job, Schedule, ScheduledJob
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus
from tests.formulations.helpers import solve_verified, unit_job
from tests.oracles import brute_force_a
from tests.strategies import TINY_INTEGRAL


def test_symmetric_servers_lose_no_optimum() -> None:
    """Symmetry breaking on 3 identical servers keeps the optimum (brute force agrees)."""
    jobs = tuple(
        unit_job(f"j{k}", g, k + 1, edges=((0, 1, 1.0),) if g == 2 else ())
        for k, g in enumerate((2, 1, 2))
    )
    instance = Instance(Cluster((1, 1, 1), 2.0, 1.0), jobs)
    assert solve_verified(instance, "A") == pytest.approx(brute_force_a(instance))


def test_warm_start_accepted_and_optimum_unchanged() -> None:
    """A (poor) warm start is repaired onto the grid; the optimum does not change."""
    config = GeneratorConfig(num_jobs=5, integral=True, bandwidth_intra=2.0, max_job_gpus=4)
    instance = generate(config, 11)
    plain = solve_milp(instance, "A", ExactParams(time_limit=600))
    # Serial schedule: every job alone, nodes filling servers in order.
    entries, time = [], 0.0
    for job in instance.jobs:
        mapping = tuple(min(k // 4, 1) for k in range(job.gpus))
        entries.append(ScheduledJob(job.id, max(time, job.release), None, mapping))
        time = max(time, job.release) + 100.0
    warm = solve_milp(
        instance, "A", ExactParams(time_limit=600), warm_start=Schedule(tuple(entries))
    )
    assert warm.status == plain.status == SolveStatus.OPTIMAL
    assert warm.objective == pytest.approx(plain.objective)


def test_horizon_never_cuts_the_optimum() -> None:
    """Every job's latest completion is at least its completion in the found optimum."""
    instance = generate(
        GeneratorConfig(num_jobs=6, integral=True, bandwidth_intra=2.0, load=1.5, max_job_gpus=4),
        5,
    )
    built = build(instance, "A")
    result = solve_milp(instance, "A")
    assert result.schedule is not None
    ends = {entry.id: entry.end for entry in result.schedule.jobs}
    for job in instance.jobs:
        latest_slot = max(
            t + built.slotted.jobs[i].modes[m].slots  # type: ignore[union-attr]
            for i, m, t in built.model.INDEX
            if i == instance.job_index[job.id]
        )
        assert ends[job.id] <= latest_slot * instance.slot + 1e-9


@settings(max_examples=10)
@given(st.integers(0, 10_000), st.sampled_from([(2, 4), (3, 2), (4, 4)]))
def test_warm_start_is_never_dropped(seed: int, shape: tuple[int, int]) -> None:
    """The incumbent plan always lies inside the model's index.

    The list schedule may put the symmetry anchor on unsorted counts such as
    (0, 4); the plan must be relabelled onto identical servers, not dropped,
    and the relabelled plan must cost exactly what the original did.
    """
    from ddlsched.formulations.modes import problem_a
    from ddlsched.formulations.slotted import greedy_schedule
    from ddlsched.formulations.timeindexed import set_warm_start

    config = TINY_INTEGRAL.replace(
        num_jobs=6, servers=shape[0], gpus_per_server=shape[1], max_job_gpus=None
    )
    instance = generate(config, seed)
    built = build(instance, "A")
    assert built.incumbent_plan is not None
    assert set_warm_start(built.model, built.incumbent_plan)
    slotted = problem_a(instance)
    assert slotted.objective(built.incumbent_plan) <= slotted.objective(greedy_schedule(slotted))


def test_durations_are_rounded_up_to_the_slot() -> None:
    """Two 1-GPU jobs of 1.3 s on one GPU, slot 1 s: each needs 2 slots. Rounding to the
    nearest slot (1) would start the second at 1 s, overlapping the first in continuous
    time; the verifier must accept the schedule the MILP returns."""
    from ddlsched.proofs_checks.verifier import verify

    jobs = tuple(
        Job(id=f"j{k}", release=0.0, iterations=1, compute_time=1.3, gpus=1) for k in range(2)
    )
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs)
    result = solve_milp(instance, "A", ExactParams(time_limit=600))
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(1.3 + 3.3)  # second starts at slot 2


def test_near_integral_is_not_integral() -> None:
    """A duration of 1.05 slots is not on the grid: the slotted optimum is not called optimal
    for the continuous instance (a loose grid test would let it through). Released at 0.5,
    so that no combinatorial bound (1.55) meets the slotted schedule (2.05) either."""
    job = Job(id="j", release=0.5, iterations=1, compute_time=1.05, gpus=1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    result = solve_milp(instance, "A", ExactParams(time_limit=600))
    assert result.facts["integral"] is False
    assert result.status is SolveStatus.FEASIBLE


def _placed_one_start_at_a_time(problem, order, earliest=None, preferred=None):  # type: ignore[no-untyped-def]
    """The list schedule as first written, a start at a time: the oracle of the vectorised
    :func:`ddlsched.formulations.slotted.place_in_order`."""
    import numpy as np

    length = problem.covering_horizon() + max(earliest or [0]) + 1
    free = np.tile(np.asarray(problem.capacities, dtype=np.int64), (length, 1))
    plan = [None] * len(problem.jobs)
    for i in order:
        job = problem.jobs[i]
        first = job.release_slot if earliest is None else max(job.release_slot, earliest[i])
        wanted = None if preferred is None else preferred[i]
        best = None
        for m in range(len(job.modes)) if wanted is None else [wanted]:
            mode = job.modes[m]
            for start in range(first, length - mode.slots + 1):
                if best is not None and start + mode.slots >= best[0]:
                    break
                if np.all(free[start : start + mode.slots] >= np.asarray(mode.usage)):
                    best = (start + mode.slots, m, start)
                    break
        _, m, start = best
        free[start : start + job.modes[m].slots] -= np.asarray(job.modes[m].usage)
        plan[i] = (m, start)
    return plan


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shape=st.sampled_from([(2, 4), (3, 2), (4, 4)]),
    jobs=st.integers(2, 7),
    load=st.sampled_from([None, 1.0, 3.0]),
    data=st.data(),
)
def test_the_vectorised_list_schedule_places_as_one_start_at_a_time(
    seed: int, shape: tuple[int, int], jobs: int, load: float | None, data: st.DataObject
) -> None:
    """Same plan, job for job, for random orders, earliest starts and preferred modes, on
    batch and spread arrivals and several cluster shapes (weighted, multi-GPU jobs)."""
    from ddlsched.formulations.modes import problem_a
    from ddlsched.formulations.slotted import place_in_order

    servers, gpus = shape
    config = GeneratorConfig(
        num_jobs=jobs, servers=servers, gpus_per_server=gpus, integral=True, load=load
    )
    problem = problem_a(generate(config, seed), None)
    order = data.draw(st.permutations(range(jobs)))
    earliest = data.draw(st.none() | st.lists(st.integers(0, 6), min_size=jobs, max_size=jobs))
    preferred = data.draw(
        st.none()
        | st.tuples(*(st.none() | st.integers(0, len(j.modes) - 1) for j in problem.jobs))
    )
    preferred = None if preferred is None else list(preferred)
    assert place_in_order(problem, order, earliest, preferred) == _placed_one_start_at_a_time(
        problem, order, earliest, preferred
    )
