"""The Gavel-style baseline (ddlsched.algorithms.gavel): rounds, fairness by normalised service,
types.

Hand-worked schedules, each checked by the independent verifier too.
"""

from __future__ import annotations

import pytest
from ddlsched.algorithms.gavel import HeterogeneityAwareRounds
from ddlsched.proofs_checks.verifier import verify

from ddlsched import OnlineParams, simulate
from ddlsched.core.model import Cluster, Instance, Job

NO_RESTART = OnlineParams(restart_cost=0.0)


def _entries(instance: Instance, result) -> dict:  # type: ignore[no-untyped-def]
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    return result.schedule.by_id()


def test_two_jobs_share_one_gpu_in_rounds() -> None:
    """Two 720 s jobs on one GPU alternate every 360 s round: a [0, 360), b [360, 720),
    a [720, 1080), b [1080, 1440). Completions 1080 and 1440 (LAS-like fairness; FIFO
    would give 720 and 1440)."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job("a", 0.0, 720, 1.0, 1), Job("b", 0.0, 720, 1.0, 1)),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert [tuple(p[:2]) for p in entries["a"].pieces] == [(0.0, 360.0), (720.0, 1080.0)]
    assert [tuple(p[:2]) for p in entries["b"].pieces] == [(360.0, 720.0), (1080.0, 1440.0)]


def test_fast_type_goes_to_the_sensitive_job() -> None:
    """One V100 and one K80 GPU. ``tolerant`` (K80 only 1.2x slower) arrives first;
    ``sensitive`` (K80 4x slower) second. Gavel gives the V100 to the sensitive job and
    the K80 to the tolerant one; a type-blind first-come order would do the reverse."""
    cluster = Cluster((1, 1), 1.0, 1.0, server_types=("v100", "k80"))
    tolerant = Job("tolerant", 0.0, 100, 1.0, 1, compute_times={"v100": 1.0, "k80": 1.2})
    sensitive = Job("sensitive", 0.0, 100, 1.0, 1, compute_times={"v100": 1.0, "k80": 4.0})
    instance = Instance(cluster, (tolerant, sensitive))
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert entries["sensitive"].mapping == (0,) and entries["sensitive"].end == pytest.approx(100)
    assert entries["tolerant"].mapping == (1,) and entries["tolerant"].end == pytest.approx(120)
    fifo = _entries(instance, simulate(instance, "fifo", params=NO_RESTART))
    assert fifo["tolerant"].mapping == (0,)


def test_no_preemption_between_rounds() -> None:
    """A job arriving mid-round waits for the boundary when the cluster is full."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job("a", 0.0, 1000, 1.0, 1), Job("late", 100.0, 10, 1.0, 1)),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert entries["late"].start == pytest.approx(360.0)
    assert entries["late"].end == pytest.approx(370.0)


def test_bad_round_length_is_named() -> None:
    with pytest.raises(ValueError, match="round_length"):
        HeterogeneityAwareRounds(Cluster((1,), 1.0, 1.0), round_length=0)


def test_gavel_weights_divide_service_so_heavier_jobs_run_more() -> None:
    """Fairness is by attained service **divided** by the weight: a job of weight 2
    may receive twice the service of a job of weight 1 before it yields.

    One GPU, rounds of 360 s, both jobs 720 s. At 0 both have 0: arrival order,
    'light' (weight 1) runs [0, 360). At 360: 'light' 360, 'heavy' 0: 'heavy'
    runs [360, 720). At 720: 'light' 360/1 = 360, 'heavy' 360/2 = 180: 'heavy'
    keeps the GPU and ends at 1080; 'light' resumes and ends at 1440.

    Catches the slip: service multiplied by the weight (then 'light' runs
    [720, 1080) and 'heavy' ends last).
    """
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job("light", 0.0, 720, 1.0, 1), Job("heavy", 0.0, 720, 1.0, 1, weight=2.0)),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert [tuple(p[:2]) for p in entries["light"].pieces] == [(0.0, 360.0), (1080.0, 1440.0)]
    assert entries["heavy"].start == 360.0 and entries["heavy"].end == 1080.0
    assert entries["heavy"].pieces is None


def test_gavel_counts_service_on_a_slow_type_at_its_normalised_rate() -> None:
    """Service is normalised: a second on a GPU where the job runs at ``alpha`` counts
    ``alpha_min / alpha`` seconds (progress at the job's best speed).

    One V100 and one K80 GPU; three 1-GPU jobs, each 1 s per iteration on the
    V100 and 2 s on the K80 (``alpha_min`` = 1), with counts far beyond the
    rounds. At 0 'p' and 'q' run ('p' on the V100, 'q' on the K80), 'r' waits.
    At 360: 'p' has 360 s of normalised service, 'q' only 360 / 2 = 180, 'r' 0:
    so 'r' and 'q' are chosen, 'p' is preempted, 'q' keeps the K80 and 'r'
    takes the V100 until the next boundary, 720, where all three tie at 360
    and arrival order puts 'r' out. 'q' is never the most served, so it runs
    [0, 2000) on the K80 in one piece.

    Catches the slips: the rate inverted (``alpha / alpha_min``: 'q' would
    have 720 and be preempted instead of 'p') or not normalised (raw seconds:
    'p' and 'q' tie and 'q', the later, is preempted).
    """
    cluster = Cluster((1, 1), 1.0, 1.0, server_types=("v100", "k80"))
    times = {"v100": 1.0, "k80": 2.0}
    jobs = tuple(Job(name, 0.0, 1000, 1.0, 1, compute_times=times) for name in "pqr")
    instance = Instance(cluster, jobs)
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert entries["p"].pieces[0][:3] == (0.0, 360.0, (0,))
    # 'q' is never the most served: it runs [0, 2000) on the K80 in one piece.
    assert (entries["q"].start, entries["q"].end, entries["q"].mapping) == (0.0, 2000.0, (1,))
    assert entries["r"].pieces[0][:3] == (360.0, 720.0, (0,))


def test_gavel_banks_the_raw_service_of_a_preempted_weighted_job() -> None:
    """A preempted job banks the service it received (seconds at its best speed), and
    only the fairness key divides it by the weight, once.

    One GPU, rounds of 360 s, two long jobs, 'light' (weight 1) and 'heavy'
    (weight 2). By hand: 'light' [0, 360); 'heavy' [360, 1080) (at 720 its key
    is 180 < 360); at 1080 the keys tie at 360 and arrival order preempts
    'heavy', which banks 720 s; 'light' [1080, 1440); 'heavy' [1440, 2160); at
    2160 the keys tie again (720 = 1440 / 2) and 'heavy' is preempted again.

    Catches the slip: the weighted key (service / weight) banked as the
    service, so the weight divides twice and 'heavy' keeps the GPU at 2160.
    """
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job("light", 0.0, 2000, 1.0, 1), Job("heavy", 0.0, 2000, 1.0, 1, weight=2.0)),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    light = [tuple(p[:2]) for p in entries["light"].pieces]
    heavy = [tuple(p[:2]) for p in entries["heavy"].pieces]
    assert light[:2] == [(0.0, 360.0), (1080.0, 1440.0)] and light[2][0] == 2160.0
    assert heavy[:2] == [(360.0, 1080.0), (1440.0, 2160.0)]


def _pieces(entries: dict, job_id: str) -> list[tuple[float, float]]:  # type: ignore[type-arg]
    return [(round(p[0], 6), round(p[1], 6)) for p in entries[job_id].pieces]


def test_a_tie_between_a_running_and_a_waiting_job_goes_to_the_earlier_arrival() -> None:
    """Two GPUs; ``a`` (weight 2, 746 s on one GPU) and ``b`` (600 s on both) arrive at 0,
    ``a`` first. At 1080 both have normalised service 360 (a: 720 s / 2, b: 360 s): the tie
    goes to ``a``, which arrived first and is running, so it keeps its GPU: a [0, 360),
    [720, 1106); b [360, 720), [1106, 1346). Catches: the running/waiting merge comparing
    service alone (the arrival tie-break lost), which stops ``a`` at 1080."""
    instance = Instance(
        Cluster((2,), 10.0, 1.0),
        (Job("a", 0.0, 746, 1.0, 1, weight=2.0), Job("b", 0.0, 600, 1.0, 2)),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert _pieces(entries, "a") == [(0.0, 360.0), (720.0, 1106.0)]
    assert _pieces(entries, "b") == [(360.0, 720.0), (1106.0, 1346.0)]


def test_an_arrival_as_a_job_completes_keeps_the_round_grid() -> None:
    """One GPU; ``a`` (100 s) and ``b`` (1000 s) at 0, ``c`` at 100 as ``a`` completes. The
    cluster is not idle then (``b`` waits), so no round starts at 100: ``b`` runs from 100
    to the boundary at 360, then ``c``. Catches: the idle-cluster rule counting GPU
    requests instead of waiting jobs (the grid moved to 100, ``c`` started at 460)."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (
            Job("a", 0.0, 100, 1.0, 1),
            Job("b", 0.0, 1000, 1.0, 1),
            Job("c", 100.0, 1000, 1.0, 1),
        ),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert _pieces(entries, "b")[0] == (100.0, 360.0)
    assert _pieces(entries, "c")[0][0] == 360.0
