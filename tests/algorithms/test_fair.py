"""The fair lease-round policies (ddlsched.algorithms.fair): ``themis`` and ``maxmin-users``.

Hand-worked schedules (who holds GPUs in each round), max-min shares worked by hand,
and the independent verifier on seeded random families with short leases, so that
rounds, preemptions and restarts happen on tiny instances.
"""

from __future__ import annotations

import pytest
from ddlsched.algorithms.fair import FinishTimeFair, UserMaxMin, max_min_shares
from ddlsched.algorithms.prediction import JobView, OraclePredictor
from ddlsched.algorithms.simulator import simulate as run
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import OnlineParams, simulate
from ddlsched.core.model import Cluster, Instance, Job, Schedule
from ddlsched.core.result import Result, SolveStatus
from tests.strategies import generated_instances, weighted_instances

ONE_GPU = Cluster((1,), 1.0, 1.0)


def _verified(instance: Instance, result: Result) -> Schedule:
    """The run's schedule, accepted by the verifier with the reported objective."""
    assert result.status is SolveStatus.FEASIBLE
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.total_jct == pytest.approx(report.total_jct, rel=1e-9)
    return result.schedule


def _pieces(schedule: Schedule) -> dict[str, list[tuple[float, float]]]:
    """Each job's pieces as (start, end), one piece for a job never preempted."""
    out = {}
    for entry in schedule.jobs:
        pieces = entry.pieces or ((entry.start, entry.end),)
        out[entry.id] = [(pytest.approx(p[0]), pytest.approx(p[1])) for p in pieces]
    return out


def test_max_min_shares_by_hand() -> None:
    """Water-filling: 8 GPUs among demands 1, 4 and 6 give 1, 3.5, 3.5 (the small demand
    in full, the rest split equally); demands under capacity are met in full; 3 equal
    groups on 8 GPUs get 8/3 each."""
    assert max_min_shares(8, {"a": 1, "b": 4, "c": 6}) == pytest.approx(
        {"a": 1.0, "b": 3.5, "c": 3.5}
    )
    assert max_min_shares(10, {"a": 2, "b": 3}) == {"a": 2.0, "b": 3.0}
    assert max_min_shares(8, {"a": 5, "b": 5, "c": 5}) == pytest.approx({g: 8 / 3 for g in "abc"})
    assert max_min_shares(4, {"a": 1, "b": 1, "c": 9}) == {"a": 1.0, "b": 1.0, "c": 2.0}


def _users_instance() -> Instance:
    """Two GPUs; user A submits a1 and a2, user B b1, all 1-GPU jobs of 1,000 s at 0."""
    return Instance(
        Cluster((2,), 1.0, 1.0),
        (
            Job("a1", 0.0, 1000, 1.0, 1, features={"user": "A"}),
            Job("a2", 0.0, 1000, 1.0, 1, features={"user": "A"}),
            Job("b1", 0.0, 1000, 1.0, 1, features={"user": "B", "vc": "A"}),
        ),
    )


def test_maxmin_users_shares_gpus_between_users_round_by_round() -> None:
    """Demands A 2 and B 1 on 2 GPUs: shares 1 and 1. Round [0, 360): a1 (A's least
    served, then arrival) and b1. At 360 A's a2 has the least service: a2 runs, a1
    stops. At 720 a1 and a2 are level (360 each): a1, by arrival. b1 ends at 1000 and
    a2 takes its GPU at once (work-conserving); at 1080 only A is left: both run, a1
    ends at 1360, a2 at 1640. FIFO would keep B waiting until 1000."""
    instance = _users_instance()
    result = simulate(instance, "maxmin-users", params=OnlineParams(restart_cost=0.0))
    assert _pieces(_verified(instance, result)) == {
        "a1": [(0.0, 360.0), (720.0, 1360.0)],
        "a2": [(360.0, 720.0), (1000.0, 1640.0)],
        "b1": [(0.0, 1000.0)],
    }


def test_maxmin_by_virtual_cluster_groups_by_the_vc_feature() -> None:
    """Grouped by ``vc``: b1 names vc A, a1 and a2 name none (one group ""): shares 1
    and 1, b1 runs from 0 to its end. When all three belong to one user, that user's
    share is both GPUs and LAS within it runs a1 and a2 first; b1 (least served) starts
    at 360, keeps its GPU at 720 (tied with a2 at 360 s, both ahead of a1's 720 s) and
    stops at 1080, when a1 leads by arrival among three tied at 720 s."""
    instance = _users_instance()
    policy = UserMaxMin(instance.cluster, by="vc", restart_cost=0.0)
    schedule = _verified(instance, run(instance, policy, restart_cost=0.0))
    assert _pieces(schedule)["b1"] == [(0.0, 1000.0)]
    same_user = instance.replace(
        jobs=tuple(job.replace(features={"user": "A"}) for job in instance.jobs)
    )
    schedule = _verified(same_user, simulate(same_user, "maxmin-users",
                                             params=OnlineParams(restart_cost=0.0)))  # fmt: skip
    assert _pieces(schedule)["b1"][0] == (360.0, 1080.0)


def test_maxmin_counts_jobs_under_lease_against_their_users_share() -> None:
    """Three GPUs. B's 3-GPU b0 runs [0, 100) (B has received 300 GPU-s); A's a1 and a2
    start at 100 with leases to 460. At 110 a3 (A) and b1 (B) want the one free GPU:
    demands A 3, B 1 give shares 2 and 1, and A's two leased GPUs fill its share, so b1
    (within B's) starts at once although A has received less (20 GPU-s); a3 waits for
    b1's end at 160. Counting only the contenders against the shares would start a3."""
    user = [{"user": "A"}, {"user": "B"}]
    instance = Instance(
        Cluster((3,), 1.0, 1.0),
        (
            Job("b0", 0.0, 100, 1.0, 3, features=user[1]),
            Job("a1", 100.0, 10_000, 1.0, 1, features=user[0]),
            Job("a2", 100.0, 10_000, 1.0, 1, features=user[0]),
            Job("a3", 110.0, 100, 1.0, 1, features=user[0]),
            Job("b1", 110.0, 50, 1.0, 1, features=user[1]),
        ),
    )
    schedule = _verified(
        instance, simulate(instance, "maxmin-users", params=OnlineParams(restart_cost=0.0))
    )
    assert _pieces(schedule)["b1"] == [(110.0, 160.0)]
    assert schedule.by_id()["a3"].start == pytest.approx(160.0)


def _long_and_short() -> Instance:
    """One GPU: ``long`` (3,600 s) at 0, ``short`` (100 s) at 10."""
    return Instance(ONE_GPU, (Job("long", 0.0, 3600, 1.0, 1), Job("short", 10.0, 100, 1.0, 1)))


def test_themis_gives_the_lease_to_the_worst_estimated_rho() -> None:
    """At the first lease end (360 s) the time-average number of active jobs is
    (10 x 1 + 350 x 2) / 360 for ``long`` and 2 for ``short``: rho_hat(long) = (360 +
    3,240) / (3,600 x 1.972) = 0.507, rho_hat(short) = (350 + 100) / (100 x 2) = 2.25.
    ``short`` takes the GPU for [360, 460); ``long`` resumes at 460, restores for the
    restart cost (30 s) and ends at 490 + 3,240 = 3,730. Without leases ending (FIFO)
    ``short`` would wait until 3,600."""
    instance = _long_and_short()
    result = simulate(instance, "themis", params=OnlineParams(restart_cost=30.0))
    assert _pieces(_verified(instance, result)) == {
        "long": [(0.0, 360.0), (460.0, 3730.0)],
        "short": [(360.0, 460.0)],
    }


def _wide_behind_a_lease() -> Instance:
    """Two GPUs. At 0, ``s1`` (1 GPU, 1,000 s) starts, with a lease to 360; ``wide`` (2
    GPUs, 100 s) cannot start. At 100, ``s2`` (1 GPU, 50 s) arrives: one GPU is free
    but kept for ``wide``, which leads (rho_hat (100 + 100) / 200 = 1 against s2's 50 /
    75). ``wide`` is sure of both GPUs at 360 (the shadow time), when s1's lease ends."""
    return Instance(
        Cluster((2,), 1.0, 1.0),
        (
            Job("s1", 0.0, 1000, 1.0, 1),
            Job("wide", 0.0, 100, 1.0, 2),
            Job("s2", 100.0, 50, 1.0, 1),
        ),
    )


def test_a_short_job_backfills_the_gpus_kept_for_the_first_ranked_job() -> None:
    """Predicted to end at 150, before the shadow time 360, ``s2`` runs [100, 150) on the
    GPU kept for ``wide``. At 360 the contest ranks ``wide`` first (rho_hat 460 / 213.9
    = 2.15, the time-average number active being (200 + 150 + 420) / 360 = 2.14)
    over ``s1`` (1,000 / 1,069 = 0.94): ``wide`` takes both GPUs for [360, 460) and
    ``s1`` stops. Holding the GPU (no backfilling) starts ``s2`` only at 360."""
    instance = _wide_behind_a_lease()
    schedule = _verified(instance, simulate(instance, "themis"))
    assert _pieces(schedule)["s2"] == [(100.0, 150.0)]
    assert _pieces(schedule)["wide"] == [(360.0, 460.0)]
    assert _pieces(schedule)["s1"][0] == (0.0, 360.0)


def test_a_job_predicted_to_end_after_the_shadow_time_waits() -> None:
    """Told that ``s2`` needs 1,000 s, its predicted end 1,100 comes after the shadow time
    360: the free GPU stays idle for ``wide``. At 360 ``wide`` leads (rho_hat 460 / 272
    = 1.69; the time-average number active is (200 + 780) / 360 = 2.72) over ``s2``
    ((260 + 1,000) / 1,500 = 0.84) and ``s1`` (1,000 / 1,361 = 0.73) and takes both GPUs
    for [360, 460); then ``s2`` and ``s1`` share them, ``s2`` running [460, 510)."""
    instance = _wide_behind_a_lease()
    told = _Told({"s1": 1000.0, "wide": 100.0, "s2": 1000.0})
    schedule = _verified(instance, simulate(instance, "themis", predictor=told))
    assert _pieces(schedule)["s2"] == [(460.0, 510.0)]
    assert _pieces(schedule)["wide"] == [(360.0, 460.0)]


def test_a_backfilled_job_that_outruns_its_prediction_yields_at_the_shadow_time() -> None:
    """Told that ``s2`` needs 50 s when it needs 1,000, ``s2`` backfills at 100 under a
    lease that ends at the shadow time 360, not 460: there the contest gives ``wide``
    both GPUs, so ``s2`` stops at 360 and ``wide`` runs [360, 460) as if nothing had
    backfilled. A backfilled job on a full lease would keep the GPU until 460."""
    instance = _wide_behind_a_lease()
    instance = instance.replace(
        jobs=tuple(j.replace(iterations=1000) if j.id == "s2" else j for j in instance.jobs)
    )
    told = _Told({"s1": 1000.0, "wide": 100.0, "s2": 50.0})
    schedule = _verified(instance, simulate(instance, "themis", predictor=told))
    assert _pieces(schedule)["s2"][0] == (100.0, 360.0)
    assert _pieces(schedule)["wide"] == [(360.0, 460.0)]


def test_without_predictions_the_free_gpus_wait_for_the_first_ranked_job() -> None:
    """The instance of :func:`_wide_behind_a_lease` with ``s1``, ``wide`` and ``s2`` of
    users A, B and C: at 100 the shares of 2 GPUs among demands 1, 2 and 1 are 2/3 each,
    no group has a whole GPU, and the groups least served (B, then C, by arrival; A has
    held 100 s) lead: ``wide``, which cannot start. ``maxmin-users`` given no predictor
    keeps the free GPU for it; ``wide`` takes both at 360 (s1 stops) and ``s2`` runs
    [460, 510). Given predictions, ``s2`` backfills [100, 150); at 360, with ``s2``
    gone, A and B have a share of one GPU each, ``s1`` keeps its GPU within A's and
    ``wide`` (two GPUs, over B's share, A not short of its own) waits for ``s1``'s end
    at 1,000: the ranking at the shadow time is not the one it was computed from."""
    instance = _wide_behind_a_lease()
    instance = instance.replace(
        jobs=tuple(
            job.replace(features={"user": user})
            for job, user in zip(instance.jobs, "ABC", strict=True)
        )
    )
    expected = {
        None: ((460.0, 510.0), (360.0, 460.0)),
        "oracle": ((100.0, 150.0), (1000.0, 1100.0)),
    }
    for told, (s2, wide) in expected.items():
        predictor = None if told is None else OraclePredictor(instance)
        policy = UserMaxMin(instance.cluster, restart_cost=0.0, predictor=predictor)
        schedule = _verified(instance, run(instance, policy, restart_cost=0.0))
        assert _pieces(schedule)["s2"] == [s2]
        assert _pieces(schedule)["wide"] == [wide]


def test_maxmin_vcs_is_registered_and_groups_by_virtual_cluster() -> None:
    """``maxmin-vcs`` is reachable by name and shares by the ``vc`` feature: on the
    instance where user A has a1, a2 and user B b1, but b1 alone names vc A, it runs b1
    from 0 to its end as ``UserMaxMin(by="vc")`` does, while ``maxmin-users`` with the
    jobs all of one user (one group) delays b1 to 360."""
    instance = _users_instance()
    result = simulate(instance, "maxmin-vcs", params=OnlineParams(restart_cost=0.0))
    assert result.method == "maxmin-vcs"
    assert _pieces(_verified(instance, result))["b1"] == [(0.0, 1000.0)]
    same_user = instance.replace(
        jobs=tuple(job.replace(features={"user": "A"}) for job in instance.jobs)
    )
    result = simulate(same_user, "maxmin-users", params=OnlineParams(restart_cost=0.0))
    assert _pieces(_verified(same_user, result))["b1"][0] == (360.0, 1080.0)


class _Told:
    """A predictor answering fixed counts per job id."""

    def __init__(self, counts: dict[str, float]) -> None:
        self.counts = counts

    def predict(self, job: JobView) -> float:
        return self.counts[job.id]

    def observe(self, job: JobView, iterations: int) -> None:
        """Nothing to learn."""


def test_themis_ranks_by_predicted_work_never_the_true_count() -> None:
    """Told that ``short`` needs 1e9 iterations, themis estimates its rho at a lease end
    ``t`` as (t - 10 + 1e9) / (1e9 x 2), about 0.5, below ``long``'s 3,600 / (3,600 (2 -
    10 / t)) > 0.5007 up to 3,600: ``long`` keeps every lease and ``short`` waits until
    3,600. A policy reading the true count would run ``short`` at 360 as above."""
    instance = _long_and_short()
    told = _Told({"long": 3600.0, "short": 1e9})
    result = simulate(instance, "themis", params=OnlineParams(restart_cost=30.0), predictor=told)
    assert _pieces(_verified(instance, result)) == {
        "long": [(0.0, 3600.0)],
        "short": [(3600.0, 3700.0)],
    }


def test_themis_weights_multiply_the_estimated_rho() -> None:
    """Two identical jobs at 0 on one GPU: equal estimates, so the weight decides; the
    heavier (listed second) runs first, for the whole of its 300 s (shorter than a
    lease)."""
    instance = Instance(
        ONE_GPU,
        (Job("light", 0.0, 300, 1.0, 1), Job("heavy", 0.0, 300, 1.0, 1, weight=2.0)),
    )
    schedule = _verified(instance, simulate(instance, "themis"))
    assert _pieces(schedule) == {"heavy": [(0.0, 300.0)], "light": [(300.0, 600.0)]}


def test_a_lease_longer_than_the_jobs_preempts_nothing() -> None:
    """With a lease of 4,000 s no lease ends before ``long`` completes: ``short`` waits
    for it, as under FIFO."""
    instance = _long_and_short()
    policy = FinishTimeFair(
        instance.cluster, OraclePredictor(instance), lease=4000.0, restart_cost=30.0
    )
    schedule = _verified(instance, run(instance, policy, restart_cost=30.0))
    assert _pieces(schedule)["short"] == [(3600.0, 3700.0)]


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: UserMaxMin(ONE_GPU, lease=0.0), "lease"),
        (lambda: UserMaxMin(ONE_GPU, by="team"), "by"),
        (lambda: FinishTimeFair(ONE_GPU, _Told({}), lease=float("inf")), "lease"),
        (lambda: FinishTimeFair(ONE_GPU, _Told({}), outrun_factor=1.0), "outrun_factor"),
    ],
)
def test_bad_settings_are_named(make, field: str) -> None:  # type: ignore[no-untyped-def]
    """A lease that is not a positive finite number, an unknown grouping or an outrun
    factor <= 1 is refused naming the setting."""
    with pytest.raises(ValueError, match=field):
        make()


USERS = ("u0", "u1", "u2")


def _with_users(instance: Instance, users: list[int], batch: bool) -> Instance:
    """``instance`` with each job given a user (and a virtual cluster), released at 0 if
    ``batch``."""
    jobs = tuple(
        job.replace(
            features={**job.features, "user": USERS[u], "vc": USERS[(u + 1) % 3]},
            release=0.0 if batch else job.release,
        )
        for job, u in zip(instance.jobs, users, strict=False)
    )
    return instance.replace(jobs=jobs)


def _fair_policy(name: str, instance: Instance, lease: float, restart: float):  # type: ignore[no-untyped-def]
    if name == "themis":
        return FinishTimeFair(
            instance.cluster, OraclePredictor(instance), lease=lease, restart_cost=restart
        )
    return UserMaxMin(instance.cluster, lease=lease, by=name, restart_cost=restart)


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        generated_instances(),
        generated_instances(mixed=True),
        weighted_instances(max_jobs=4),
        weighted_instances(max_jobs=3, typed=True),
    ),
    st.sampled_from(["themis", "user", "vc"]),
    st.lists(st.integers(0, 2), min_size=12, max_size=12),
    st.booleans(),
    st.sampled_from([0.5, 3.0, 40.0]),
    st.sampled_from([0.0, 0.2]),
)
def test_every_fair_schedule_passes_the_verifier(
    instance: Instance,
    policy: str,
    users: list[int],
    batch: bool,
    lease: float,
    restart: float,
) -> None:
    """Short leases on seeded random families (multi-GPU, typed, weighted, fractional
    releases, batch or spread arrivals, 3 users): every run completes every job,
    the verifier accepts the schedule, and the same run twice gives the same schedule."""
    instance = _with_users(instance, users, batch)
    first = run(instance, _fair_policy(policy, instance, lease, restart), restart_cost=restart)
    schedule = _verified(instance, first)
    assert len(schedule.jobs) == instance.num_jobs
    again = run(instance, _fair_policy(policy, instance, lease, restart), restart_cost=restart)
    assert again.schedule == schedule
