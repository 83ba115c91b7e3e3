"""Where the gap sits (ddlsched.sandwich): the per-job table, its sums by period and by
GPU count, and the split of a policy's total JCT into bound, order, placement and servers.

Hand-worked truths use :func:`tests.examples.ring_instance` (a 4-GPU ring on 2 x 2 GPUs,
``p = 8``, or 10 with every edge cut; a 1-GPU job of ``p = 3`` released at 1), whose fast
bounds on the flow time are, by hand: job bound ``8 + 3 = 11``; SRPT on the squashed
machine (sizes 8 and 0.75) ``8.75 + 0.75 = 9.5``; mean busy time ``8.65625 + 1.875 =
10.53125``; their Lagrangian combination at most ``8.65625 + 3 - 1.125 * 3 / 32 =
11.55078125`` (the concave maximum, at the multiplier where the short job just preempts).
"""

from __future__ import annotations

import math

import pytest
from ddlsched.formulations.lower_bounds import PREEMPTIVE_BOUNDS, SAFETY, lower_bounds
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.api import simulate
from ddlsched.core.model import Cluster, Instance, Job, Piece, Schedule, ScheduledJob
from ddlsched.sandwich import (
    PER_JOB_BOUNDS,
    by_gpus,
    by_period,
    decompose_jct,
    job_table,
    pooled_instance,
    schedule_times,
)
from tests.examples import ring_instance
from tests.oracles import brute_force_a
from tests.strategies import fragmenting_instances, hand_instances, weighted_instances

RING_LAGRANGIAN_MAX = 8.65625 + 3 - 1.125 * 3 / 32
"""The largest value of the Lagrangian bound on the ring instance (module docstring)."""


def spread_ring() -> Schedule:
    """The ring with every edge cut (``alpha = 5``: 10 s for ``p = 8``), then the 1-GPU job,
    which waits for it: JCTs 10 and 12."""
    return Schedule(
        (ScheduledJob("ring", 0.0, 10.0, (0, 1, 0, 1)), ScheduledJob("solo", 10.0, 13.0, (0,)))
    )


def preempted_ring() -> Schedule:
    """The ring stopped at 1 for the 1-GPU job and resumed at 4 with a restart of 0.5 s:
    held 1 + 7.5 = 8.5 s, completed at 11.5 (waited 3 s between its pieces)."""
    pieces = (Piece(0.0, 1.0, (0, 0, 1, 1)), Piece(4.0, 11.5, (0, 0, 1, 1)))
    return Schedule(
        (ScheduledJob("ring", 0.0, 11.5, pieces=pieces), ScheduledJob("solo", 1.0, 4.0, (0,))),
        restart_cost=0.5,
    )


@pytest.mark.parametrize(
    ("schedule", "preemptive", "expected"),
    [
        # job: (jct, held, wait, slowdown)
        (spread_ring(), False, {"ring": (10.0, 10.0, 0.0, 1.25), "solo": (12.0, 3.0, 9.0, 1.0)}),
        (preempted_ring(), True, {"ring": (11.5, 8.5, 3.0, 1.0625), "solo": (3.0, 3.0, 0.0, 1.0)}),
    ],
    ids=["spread-non-preemptive", "preempted-with-restart"],
)
def test_each_jobs_times_are_the_hand_worked_ones(
    schedule: Schedule, preemptive: bool, expected: dict[str, tuple[float, ...]]
) -> None:
    """Each row's JCT, held time (pieces and restarts included), wait (before the start and
    between pieces) and slowdown over the floor ``p_i`` (8 and 3) match the hand-worked
    values; the JCT column adds up to the verifier's total JCT."""
    instance = ring_instance()
    table = job_table(instance, schedule, preemptive=preemptive).set_index("job")
    assert table["floor"].to_dict() == pytest.approx({"ring": 8.0, "solo": 3.0})
    for job, (jct, held, wait, slowdown) in expected.items():
        row = table.loc[job]
        assert (row["jct"], row["held"], row["wait"], row["slowdown"]) == pytest.approx(
            (jct, held, wait, slowdown)
        )
    report = verify(instance, schedule)
    assert report.feasible, report.violations
    assert table["weighted_jct"].sum() == pytest.approx(report.total_jct)


def test_the_shares_are_the_largest_per_job_bound_spread_over_the_jobs() -> None:
    """On the ring instance the shares add up to the largest per-job bound's flow value,
    which lies between the hand-worked job bound (11) and the Lagrangian's maximum
    (11.55078125), below the optimum of problem A (15: the 1-GPU job first, then the ring);
    the excess column is the schedule's total minus the shares."""
    instance = ring_instance()
    table = job_table(instance, spread_ring(), preemptive=False)
    shares = table["bound_share"].sum()
    flows = {b.name: b.flow_value for b in lower_bounds(instance)}
    assert table.attrs["bound"] == max(PER_JOB_BOUNDS, key=flows.__getitem__)
    assert shares * SAFETY == pytest.approx(flows[table.attrs["bound"]], rel=1e-12)
    assert 11.0 * SAFETY <= shares <= RING_LAGRANGIAN_MAX + 1e-9
    assert shares <= brute_force_a(instance) - 1.0  # sum C minus the releases
    assert table["excess"].sum() == pytest.approx(22.0 - shares)


def test_period_and_gpu_sums_split_the_totals() -> None:
    """By 1-second periods the ring (released at 0) and the 1-GPU job (at 1) fall apart, by
    2-second periods together; by GPU count they fall apart too; every grouping's columns
    add up to the table's, and the shares of the excess add up to one."""
    table = job_table(ring_instance(), spread_ring(), preemptive=False)
    apart, together, gpus = by_period(table, 1.0), by_period(table, 2.0), by_gpus(table)
    assert list(apart.index) == [0, 1] and list(together.index) == [0]
    assert list(gpus.index) == [1, 4]
    assert apart.loc[1, "weighted_jct"] == pytest.approx(12.0)
    assert gpus.loc[4, "weighted_jct"] == pytest.approx(10.0)
    for summary in (apart, together, gpus):
        for column in ("weighted_jct", "bound_share", "excess"):
            assert summary[column].sum() == pytest.approx(table[column].sum())
        assert summary["jobs"].sum() == 2
        assert summary["share_of_excess"].sum() == pytest.approx(1.0)


@settings(max_examples=12, deadline=None)
@given(
    st.one_of(hand_instances(max_jobs=4), weighted_instances(), fragmenting_instances()),
    st.sampled_from(["sjf", "asrpt-greedy", "las", "srpt-area"]),
)
def test_the_rows_add_up_to_the_verified_totals(instance: Instance, policy: str) -> None:
    """On weighted, multi-GPU, batch and spread instances, for schedules of both models,
    the rows add up: ``sum w_i (C_i - r_i)`` is the verifier's total JCT, ``jct = wait +
    held`` on each row, ``held >= floor`` (no job runs faster than its fastest mode),
    and the shares add up to the flow value of a bound valid for the schedule's model."""
    from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES

    preemptive = policy in PREEMPTIVE_POLICIES
    result = simulate(instance, policy, bound=False)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    table = job_table(instance, result.schedule, preemptive=preemptive)
    assert math.isclose(table["weighted_jct"].sum(), report.total_jct, rel_tol=1e-9)
    assert (table["jct"] - table["wait"] - table["held"]).abs().max() <= 1e-9 * table["jct"].max()
    assert (table["held"] >= table["floor"] * (1 - 1e-9)).all()
    flows = {b.name: b.flow_value for b in lower_bounds(instance)}
    if preemptive:
        assert table.attrs["bound"] in PREEMPTIVE_BOUNDS
    assert math.isclose(
        table["bound_share"].sum() * SAFETY,
        flows[table.attrs["bound"]],
        rel_tol=1e-9,
        abs_tol=1e-9,
    )


def test_the_decomposition_of_a_hand_worked_run_adds_up() -> None:
    """``sjf`` on the ring instance: pooled, the ring runs all-intra (``p = 6``) and the
    1-GPU job waits until 6 (total 14); on 2 x 2 the ring takes 8 and the 1-GPU job waits
    until 8 (total 18). So order is ``14 - LB``, placement ``11 - 9 = 2`` (held), servers
    ``7 - 5 = 2`` (waits), and the parts add up to 18."""
    split = decompose_jct(ring_instance(), "sjf", 11.0)
    assert (split.pooled, split.real) == pytest.approx((14.0, 18.0))
    assert split.parts == pytest.approx(
        {"bound": 11.0, "order": 3.0, "placement": 2.0, "servers": 2.0}
    )
    assert split.gpu_time_ratio == pytest.approx(1.0)  # 4 x 8 + 3 held, as at alpha_min


@settings(max_examples=8, deadline=None)
@given(
    st.one_of(hand_instances(max_jobs=4), fragmenting_instances()),
    st.sampled_from(["sjf", "fifo", "las", "srpt-area"]),
)
def test_the_parts_add_up_to_the_real_total(instance: Instance, policy: str) -> None:
    """On any instance and policy the parts add up to the real run's total JCT, the pooled
    total is the same policy's run on the pooled instance, and the GPU-time is at least
    the GPU-time at ``alpha_min``."""
    real = simulate(instance, policy, bound=False)
    split = decompose_jct(instance, policy, 1.0, real=real)
    assert math.isclose(sum(split.parts.values()), real.total_jct, rel_tol=1e-9, abs_tol=1e-9)
    pooled = simulate(pooled_instance(instance), policy, bound=False)
    assert math.isclose(split.pooled, pooled.total_jct, rel_tol=1e-9, abs_tol=1e-9)
    assert split.gpu_time >= split.ideal_gpu_time * (1 - 1e-9)


def test_the_pooled_instance_is_one_server_of_all_gpus() -> None:
    """Same jobs, one server of ``M`` GPUs at the intra-server bandwidth; a cluster of two
    GPU types is refused with an error naming the cluster."""
    pooled = pooled_instance(ring_instance())
    assert pooled.cluster.gpus_per_server == (4,)
    assert pooled.cluster.bandwidth_intra == 2.0
    assert pooled.jobs == ring_instance().jobs
    typed = Cluster((2, 2), 2.0, 1.0, server_types=("a", "b"))
    job = Job(id="j", release=0.0, iterations=1, compute_time=1.0, gpus=1)
    with pytest.raises(ValueError, match=r"^cluster: pooling needs one GPU type"):
        pooled_instance(Instance(typed, (job,)))


def test_bad_inputs_are_one_line_errors() -> None:
    """A schedule missing a job, naming a stranger or without completion times, a
    preempted schedule given as one of problem A, and a period that is not positive, each
    give a ValueError naming the field or job."""
    instance = ring_instance()
    solo = ScheduledJob("solo", 10.0, 13.0, (0,))
    cases = [
        (Schedule((solo,)), "no entry for job 'ring'"),
        (Schedule((*spread_ring().jobs, ScheduledJob("x", 0.0, 1.0, (0,)))), "'x' is not in"),
        (Schedule((ScheduledJob("ring", 0.0, None, (0, 1, 0, 1)), solo)), "'ring': no completion"),
    ]
    for schedule, message in cases:
        with pytest.raises(ValueError, match=message):
            schedule_times(instance, schedule)
    with pytest.raises(ValueError, match="'ring': preempted, so not a schedule of problem A"):
        job_table(instance, preempted_ring(), preemptive=False)
    table = job_table(instance, spread_ring(), preemptive=False)
    for seconds in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^seconds: must be a finite number > 0"):
            by_period(table, seconds)
