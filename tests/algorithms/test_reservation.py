"""Server-reserving list schedules (ddlsched.algorithms.reservation): the reservation
rule on hand-worked instances, the promise that every holder starts by its first
claim, and the schedules' validity against the verifier and the exact optimum."""

from __future__ import annotations

import pytest
from ddlsched.algorithms.offline import best_upper_bound, list_policy, list_variants
from ddlsched.algorithms.reservation import Holder, ReservingPolicy
from ddlsched.algorithms.simulator import simulate
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.api import solve
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job, Schedule
from tests.strategies import (
    FRACTIONAL_WEIGHTS,
    TINY_INTEGRAL,
    fragmenting_instances,
    generated_instances,
    weighted_instances,
)


def _job(job_id: str, release: float, iterations: int, gpus: int = 1) -> Job:
    return Job(id=job_id, release=release, iterations=iterations, compute_time=1.0, gpus=gpus)


def _ranked(instance: Instance, order: str, reservations: int) -> Schedule:
    """The list schedule of ``instance`` in the order of the space-separated ids,
    jobs placed whole, with at most ``reservations`` holders (0: plain backfilling);
    checked by the verifier."""
    rank = {job_id: k for k, job_id in enumerate(order.split())}
    policy = list_policy(
        instance, "ranked", lambda view: rank[view.id], whole=True, reservations=reservations
    )
    schedule = simulate(instance, policy).schedule
    assert schedule is not None
    assert verify(instance, schedule).feasible
    return schedule


STARVED = Instance(
    Cluster((2,), 2.0, 1.0),
    (
        _job("a", 0.0, 10),
        _job("b", 0.0, 3),
        _job("wide", 1.0, 1, gpus=2),
        _job("c", 2.0, 9),
        _job("d", 5.0, 5),
    ),
)
"""One server of 2 GPUs; a 2-GPU job first in the list arrives while two 1-GPU jobs
run (to 10 and to 3), and 1-GPU jobs keep arriving behind it (c, 9 s at 2; d, 5 s at
5): with plain backfilling each free GPU goes to the next of them and the server
empties only at 15."""


def test_plain_backfilling_starves_the_wide_job_of_the_hand_worked_instance() -> None:
    """Without reservations c takes the GPU b frees at 3 (to 12) and d the one a frees at
    10 (to 15): the 2-GPU job, first in the list, starts only at 15."""
    schedule = _ranked(STARVED, "wide b d c a", reservations=0).by_id()
    assert schedule["c"].start == pytest.approx(3.0)
    assert schedule["d"].start == pytest.approx(10.0)
    assert schedule["wide"].start == pytest.approx(15.0)


def test_the_head_reserves_the_server_and_only_jobs_ending_by_then_backfill() -> None:
    """With a reservation the 2-GPU job claims the server at 10 (when a ends): c (ending
    at 12) may not take the GPU b frees at 3, d (5 to 10, ending exactly at the claim)
    may; the wide job runs 10-11 and c 11-20. Sum of completions 54 against 56."""
    reserving = _ranked(STARVED, "wide b d c a", reservations=1)
    schedule = reserving.by_id()
    assert schedule["wide"].start == pytest.approx(10.0)
    assert schedule["d"].start == pytest.approx(5.0)
    assert schedule["c"].start == pytest.approx(11.0)
    assert verify(STARVED, reserving).total_completion_time == pytest.approx(54.0)


def test_a_long_job_may_take_the_slack_a_claim_leaves() -> None:
    """One server of 4 GPUs: three 1-GPU jobs run to 10, a 2-GPU job first in the list
    claims the server at 10, when all 4 GPUs are free: two more than it needs, so a 20 s
    1-GPU job starts at once on the free GPU and runs past the claim, and the 2-GPU job
    still starts at 10."""
    instance = Instance(
        Cluster((4,), 2.0, 1.0),
        (
            _job("x", 0.0, 10),
            _job("y", 0.0, 10),
            _job("z", 0.0, 10),
            _job("two", 1.0, 1, gpus=2),
            _job("long", 2.0, 20),
        ),
    )
    schedule = _ranked(instance, "two x y z long", reservations=1).by_id()
    assert schedule["long"].start == pytest.approx(2.0)
    assert schedule["two"].start == pytest.approx(10.0)


def test_the_slack_of_a_wide_claim_counts_what_frees_before_the_last_server_empties() -> None:
    """Servers of 3 GPUs: one held by a 3-GPU job to 4, the other by 1-GPU jobs to 2, 3
    and 5. A 4-GPU job claims at 2 the first (3 GPUs) and one GPU of the second, at 4;
    by 4 the second has 2 GPUs free, one of them slack: a 10 s 1-GPU job waiting since
    1.5 starts at 2 on the GPU freed there and the 4-GPU job still starts at 4."""
    instance = Instance(
        Cluster((3, 3), 2.0, 1.0),
        (
            _job("big", 0.0, 4, gpus=3),
            _job("a2", 0.0, 2),
            _job("a3", 0.0, 3),
            _job("a5", 0.0, 5),
            _job("four", 1.0, 1, gpus=4),
            _job("long", 1.5, 10),
        ),
    )
    schedule = _ranked(instance, "four big a2 a3 a5 long", reservations=1).by_id()
    assert schedule["long"].start == pytest.approx(2.0)
    assert schedule["four"].start == pytest.approx(4.0)


def test_a_job_wider_than_every_server_claims_the_servers_that_empty_first() -> None:
    """Three servers of 2 GPUs, busy to 4, 9 and 6: a 4-GPU job first in the list claims
    the servers emptying at 4 and 6, so a 1-GPU job ending after 6 may not start on the
    one that frees at 4; the wide job starts at 6 and spans two servers."""
    instance = Instance(
        Cluster((2, 2, 2), 2.0, 1.0),
        (
            _job("s0", 0.0, 4, gpus=2),
            _job("s1", 0.0, 9, gpus=2),
            _job("s2", 0.0, 6, gpus=2),
            _job("four", 1.0, 1, gpus=4),
            _job("late", 2.0, 5),
        ),
    )
    schedule = _ranked(instance, "s0 s1 s2 four late", reservations=1).by_id()
    four = schedule["four"]
    assert four.start == pytest.approx(6.0)
    assert four.mapping is not None and len(set(four.mapping)) == 2
    assert schedule["late"].start >= 6.0


class _Recording(ReservingPolicy):
    """A reserving policy that notes the time of each holder's first claim."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.first_claims: dict[str, float] = {}

    def claims_of(self, holder: Holder, now: float, free):
        claims = super().claims_of(holder, now, free)
        time = next(iter(claims.values())).time
        self.first_claims.setdefault(holder.job.id, time)
        return claims


def _recorded(instance: Instance, reservations: int, by_area: bool) -> tuple[Schedule, dict]:
    variant = list_variants(instance)["list:area" if by_area else "list:time"]
    plain = list_policy(instance, "recorded", variant.key, reservations=reservations)
    policy = _Recording(
        "recorded",
        instance.cluster,
        plain.predictor,
        plain.mapper,
        variant.key,
        reservations=reservations,
    )
    schedule = simulate(instance, policy).schedule
    assert schedule is not None
    return schedule, policy.first_claims


@given(
    instance=st.one_of(
        fragmenting_instances(),
        weighted_instances(max_jobs=4, typed=True),
        generated_instances(mixed=True),
        generated_instances(),
    ),
    reservations=st.integers(1, 3),
    by_area=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_every_holder_starts_by_its_first_claim_and_the_schedule_is_verified(
    instance: Instance, reservations: int, by_area: bool
) -> None:
    """Uneven, typed and weighted instances, multi-GPU jobs, batch and spread arrivals:
    the reserving schedule passes the verifier, never preempts, runs every job that fits
    one server on one server, and starts every job that held a reservation no later
    than the time of its first claim (backfilling never delays a claim)."""
    schedule, first_claims = _recorded(instance, reservations, by_area)
    report = verify(instance, schedule)
    assert report.feasible, report.violations
    largest = instance.cluster.max_gpus_per_server
    entries = schedule.by_id()
    for job in instance.jobs:
        entry = entries[job.id]
        assert entry.pieces is None
        if job.gpus <= largest:
            assert entry.mapping is not None and len(set(entry.mapping)) == 1
    for job_id, claimed in first_claims.items():
        assert entries[job_id].start <= claimed + 1e-9 * max(1.0, claimed)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_reserving_schedule_is_never_below_the_proven_optimum(seed: int) -> None:
    """On tiny integral instances with fractional weights and multi-GPU jobs, each
    reserving list schedule's verified objective is at least problem A's exact optimum."""
    base = generate(TINY_INTEGRAL.replace(num_jobs=5), seed)
    weights = (FRACTIONAL_WEIGHTS * 5)[: base.num_jobs]
    instance = base.replace(
        jobs=tuple(job.replace(weight=w) for job, w in zip(base.jobs, weights, strict=True))
    )
    optimum = solve(instance, method="exact")
    assert optimum.proven_optimal
    for name, variant in list_variants(instance).items():
        if variant.reservations:
            schedule = simulate(instance, variant.policy(instance, name)).schedule
            assert schedule is not None
            report = verify(instance, schedule)
            assert report.feasible
            assert report.total_completion_time >= optimum.objective * (1 - 1e-9)


def test_the_upper_bound_counts_the_reserving_schedules() -> None:
    """best_upper_bound of problem A runs the reserving list schedules among its
    candidates (their totals are in the metrics) and returns the least."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=8, servers=2), 3)
    found = best_upper_bound(instance, preemptive=False, evaluations=0)
    assert "total_jct:list:time:reserve" in found.metrics
    assert "total_jct:list:area:reserve" in found.metrics
    assert found.total_jct == pytest.approx(min(found.metrics.values()))


def test_a_reservation_count_below_one_is_refused() -> None:
    """reservations=0 is refused, naming the parameter."""
    plain = list_policy(STARVED, "plain", lambda view: 0.0)
    with pytest.raises(ValueError, match="reservations"):
        ReservingPolicy("r", STARVED.cluster, plain.predictor, plain.mapper, lambda v: 0.0, 0)


def test_the_local_search_keeps_the_reservations_of_the_schedule_it_improves() -> None:
    """The order search started from a reserving schedule simulates reserving schedules
    (a variant's policy in another order still reserves); on the hand-worked instance,
    from the list order by processing time, what it keeps is verified and at most the
    start."""
    import numpy as np
    from ddlsched.algorithms.offline import _run, _verified, local_search, order_of

    variant = list_variants(STARVED)["list:time:reserve"]
    start = _verified(STARVED, _run(STARVED, variant.policy(STARVED, "start"), 1.0))
    assert start is not None
    order = order_of(STARVED, variant.key)
    found = local_search(STARVED, start, order, variant, 30, np.random.default_rng(0), 1.0)
    assert verify(STARVED, found.schedule).feasible
    assert found.objective <= start.objective
    reordered = variant.policy(STARVED, "search", key=lambda view: view.id)
    assert isinstance(reordered, ReservingPolicy)


class _Counting(ReservingPolicy):
    """A reserving policy that notes the most jobs holding a reservation at once."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.most = 0

    def dispatch(self, now: float, free):
        for started in super().dispatch(now, free):
            self.most = max(self.most, len(self.holders))
            yield started
        self.most = max(self.most, len(self.holders))


TWO_WIDE = Instance(
    Cluster((3, 3), 2.0, 1.0),
    (
        _job("s0", 0.0, 4, gpus=2),
        _job("s1", 0.0, 9, gpus=2),
        _job("w1", 1.0, 1, gpus=3),
        _job("w2", 1.5, 1, gpus=3),
        _job("late", 2.0, 1),
    ),
)
"""Two servers of 3 GPUs, two of them busy to 4 and 9 (one GPU free on each); two 3-GPU
jobs arrive at 1 and 1.5 and a 1-GPU job at 2: each wide job can claim one server while
GPUs are free, so two may hold reservations."""


@pytest.mark.parametrize("reservations", [1, 2, 3])
def test_no_more_jobs_hold_reservations_than_allowed(reservations: int) -> None:
    """On the instance where two wide jobs can each claim a server, the most holders at
    once is exactly min(reservations, 2): the cap is reached and never exceeded."""
    plain = list_policy(TWO_WIDE, "plain", lambda view: 0.0)
    rank = {job_id: k for k, job_id in enumerate(["s0", "s1", "w1", "w2", "late"])}
    policy = _Counting(
        "counting",
        TWO_WIDE.cluster,
        plain.predictor,
        plain.mapper,
        lambda view: rank[view.id],
        reservations=reservations,
    )
    schedule = simulate(TWO_WIDE, policy).schedule
    assert schedule is not None and verify(TWO_WIDE, schedule).feasible
    assert policy.most == min(reservations, 2)


@pytest.mark.parametrize(("servers", "expected"), [(1, 1), (2, 1), (3, 1), (8, 3), (32, 12)])
def test_the_default_holder_count_is_three_eighths_of_the_servers(
    servers: int, expected: int
) -> None:
    """default_reservations: 3/8 of the servers rounded down, at least one (worked by
    hand: 8 servers give 3, 32 give 12)."""
    from ddlsched.algorithms.reservation import default_reservations

    assert default_reservations(Cluster((4,) * servers, 2.0, 1.0)) == expected
    cluster = Cluster((4,) * servers, 2.0, 1.0)
    policy = ReservingPolicy("r", cluster, None, None, lambda view: 0)  # type: ignore[arg-type]
    assert policy.reservations == expected
