"""The event-driven simulator (ddlsched.algorithms.simulator): events, metrics, the policy
protocol."""

from __future__ import annotations

import pytest
from ddlsched.algorithms.mapping import FirstFitMapper
from ddlsched.algorithms.protocol import Policy
from ddlsched.algorithms.simulator import simulate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha_min
from ddlsched.core.model import Cluster, Instance, Job
from tests.mappers import RefusesEvery
from tests.strategies import generated_instances, weighted_instances


def test_scaled_graphs_share_alpha_min() -> None:
    """The metrics' shared alpha_min equals a fresh search for scaled copies of a graph."""
    from ddlsched.core.alpha import AlphaMinCache

    cluster = Cluster((3, 3, 3), 10.0, 1.0)
    ring = tuple((u, (u + 1) % 7, 1.0 + u % 3) for u in range(7))
    edges = tuple((min(u, v), max(u, v), q) for u, v, q in ring)
    jobs = tuple(
        Job(
            id=f"s{k}",
            release=0,
            iterations=1,
            compute_time=0.5 * k + 1,
            gpus=7,
            edges=tuple((u, v, q * scale) for u, v, q in edges),
        )
        for k, scale in enumerate((1.0, 0.37, 12.5))
    )
    shared = AlphaMinCache(cluster, budget=200_000)
    for job in jobs:
        value, exact = shared(job)
        assert exact and value == pytest.approx(alpha_min(job, cluster).value, rel=1e-9)


def test_utilisation_counts_every_piece_of_a_preempted_job() -> None:
    """``gpu_utilisation`` is the GPU-seconds held by every piece of every job
    (restoring time included) over ``M * makespan``.

    The hand-worked LAS schedule of ``tests/algorithms/test_las.py`` (one
    4-GPU server, restart cost 0.5 s): 'a' holds 2 GPUs over [0, 7) and
    [9.5, 13), 'b' 2 GPUs over [2, 7) and [9.5, 25), 'wide' 4 GPUs over
    [7, 9.5) and [25, 26): 2 * 10.5 + 2 * 20.5 + 4 * 3.5 = 76 GPU-seconds over
    4 * 26. The same figure is recomputed here from the schedule's pieces.

    Catches the slips: a completed job's busy time taken from its last piece
    only, or from its first start (counting the gaps between its pieces), or
    a preempted piece not banked.
    """
    from ddlsched.algorithms.las import LeastAttainedService
    from ddlsched.algorithms.simulator import simulate

    cluster = Cluster((4,), 1.0, 1.0)
    jobs = (
        Job(id="a", release=0.0, iterations=10, compute_time=1.0, gpus=2),
        Job(id="wide", release=1.0, iterations=3, compute_time=1.0, gpus=4),
        Job(id="b", release=2.0, iterations=20, compute_time=1.0, gpus=2),
    )
    instance = Instance(cluster, jobs)
    result = simulate(
        instance, LeastAttainedService(cluster, thresholds=(10.0,)), restart_cost=0.5
    )
    assert result.schedule is not None
    gpus = {job.id: job.gpus for job in jobs}
    held = sum(
        gpus[e.id] * (p.end - p.start) for e in result.schedule.jobs for p in e.pieces or ()
    )
    assert held == pytest.approx(76.0)
    assert result.metrics["makespan"] == pytest.approx(26.0)
    assert result.metrics["gpu_utilisation"] == pytest.approx(76.0 / (4 * 26.0))
    assert result.metrics["preempted_jobs"] == 3


def test_utilisation_of_unpreempted_multi_gpu_jobs() -> None:
    """Without preemption, ``gpu_utilisation`` is ``sum g_i (C_i - S_i) / (M * makespan)``.

    Two servers of 2 GPUs, FIFO-like one-server jobs at non-integral
    releases: 'x' (2 GPUs, 1.5 s) at 0.25 and 'y' (3 GPUs spanning, 2 s) at 0.5
    waiting for 'x'. By hand 'x' [0.25, 1.75), 'y' [1.75, 3.75): (2 * 1.5 +
    3 * 2) / (4 * 3.75) = 9 / 15.

    Catches the slip: busy time taken as ``g * (end - release)`` or over the
    whole makespan.
    """
    from ddlsched import simulate as simulate_named

    cluster = Cluster((2, 2), 1.0, 1.0)
    jobs = (
        Job(id="x", release=0.25, iterations=3, compute_time=0.5, gpus=2),
        Job(id="y", release=0.5, iterations=4, compute_time=0.5, gpus=3),
    )
    instance = Instance(cluster, jobs)
    result = simulate_named(instance, "fifo")
    assert result.schedule is not None
    spans = {e.id: (e.start, e.end) for e in result.schedule.jobs}
    assert spans == {"x": (0.25, 1.75), "y": (1.75, 3.75)}
    assert result.metrics["gpu_utilisation"] == pytest.approx(9.0 / 15.0)


def test_utilisation_counts_restoring_time_of_resumed_then_preempted_pieces() -> None:
    """A resumed piece holds its GPUs while restoring; if it is preempted again, that
    time still counts as busy.

    One GPU, Gavel's 360 s rounds, restart cost 10 s, two 720 s jobs at 0: they
    alternate; each resumed piece restores for 10 s. By hand: 'a' works 360
    iterations in [0, 360), then [720, 1080) restores and works 350 and is
    preempted again, then [1440, 1460) restores and works the last 10; 'b'
    the same shifted. The GPU is held without a gap from 0 to 1480, so the
    utilisation is exactly 1.

    Catches the slip: a preempted piece banks only its working time
    (``now - piece_start - restart``), not the GPU-seconds it held.
    """
    from ddlsched import OnlineParams
    from ddlsched import simulate as simulate_named

    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job("a", 0.0, 720, 1.0, 1), Job("b", 0.0, 720, 1.0, 1)),
    )
    result = simulate_named(instance, "gavel", params=OnlineParams(restart_cost=10.0))
    assert result.schedule is not None
    pieces = {e.id: [(p.start, p.end) for p in e.pieces or ()] for e in result.schedule.jobs}
    assert pieces == {
        "a": [(0.0, 360.0), (720.0, 1080.0), (1440.0, 1460.0)],
        "b": [(360.0, 720.0), (1080.0, 1440.0), (1460.0, 1480.0)],
    }
    assert result.metrics["gpu_utilisation"] == pytest.approx(1.0)


def test_many_wakeups_without_a_start_while_a_job_runs_are_not_a_livelock() -> None:
    """Guided A-SRPT with one under-predicted long job: 1,001 small jobs complete on the
    virtual machine one second apart while the long job holds the only GPU, so 1,001 wake-ups
    in a row start nothing. That is progress (a completion is due), not a livelock; the run
    ends with the hand-worked total. Catches such a run refused as 'keeps waking without
    acting'.
    """
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched.experiments.prediction_error import guided_schedule, under_prediction_family

    instance, predictions, _ = under_prediction_family(1, 10_000, 1_001)
    schedule = guided_schedule(instance, predictions)
    report = verify(instance, schedule)
    # The long job runs [10000, 20000) (it joins the queue when its prediction ends on the
    # virtual machine); the small ones queue behind it in order, one second each.
    assert report.feasible
    assert report.total_completion_time == 20_000 + 1_001 * 20_000 + 1_001 * 1_002 // 2


class _NeverStarts(Policy):
    """A broken policy: takes every job, never starts one, asks to be woken every second."""

    name = "never-starts"

    def __init__(self) -> None:
        self.now = 0.0
        self.passes = 0

    def on_arrival(self, job: object, now: float) -> None:
        self.now = now

    def dispatch(self, now: float, free: object) -> list[object]:
        self.now = now
        self.passes += 1
        return []

    def next_wakeup(self) -> float:
        return self.now + 1.0


def test_a_policy_that_wakes_forever_without_starting_anything_is_stopped() -> None:
    """With nothing running and no arrival due, only the policy's own wake-ups are left: a
    long run of them without a start is a livelock, stopped with an error naming the policy
    (never an endless loop). Catches the guard removed or made to count time as progress."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job(id="a", release=0.0, iterations=1, compute_time=1.0, gpus=1),),
    )
    policy = _NeverStarts()
    with pytest.raises(RuntimeError, match=r"never-starts.*without acting"):
        simulate(instance, policy)
    assert policy.passes <= 1_010  # stopped after about a thousand, not a million


class _MapsTo(Policy):
    """A broken policy: starts every job on the servers it was given, whatever they are."""

    name = "maps-to"

    def __init__(self, servers: tuple[object, ...]) -> None:
        self.servers = servers
        self.jobs: list[object] = []

    def on_arrival(self, job: object, now: float) -> None:
        self.jobs.append(job)

    def dispatch(self, now: float, free: object) -> list[object]:
        started = [(job, self.servers) for job in self.jobs]
        self.jobs = []
        return started


@pytest.mark.parametrize("servers", [(-1,), (2,), (True,), (0.0,), ("0",)])
def test_a_mapping_outside_the_cluster_is_refused_before_any_gpu_is_taken(
    servers: tuple[object, ...],
) -> None:
    """A policy mapping onto server -1, 2 of a 2-server cluster, or a non-integer: an error
    naming the policy, the job and the server. Catches: the mapping checked only after the
    free GPUs were taken (-1 silently took the last server's GPU, 2 raised a bare
    IndexError), and the one-server alpha cache accepting what alpha refuses."""
    instance = Instance(
        Cluster((1, 1), 1.0, 1.0),
        (Job(id="a", release=0.0, iterations=1, compute_time=1.0, gpus=1),),
    )
    with pytest.raises(RuntimeError, match=r"maps-to.*job 'a'.*servers 0 to 1"):
        simulate(instance, _MapsTo(servers))


_RIGID = ["asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive", "las", "las-tiresias", "gavel"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    instance=st.one_of(
        weighted_instances(max_jobs=5),
        weighted_instances(max_jobs=5, typed=True),
        generated_instances(),
        generated_instances(mixed=True),
    ),
    k=st.integers(2, 5),
    name=st.sampled_from(_RIGID),
)
def test_a_placement_refused_on_an_idle_cluster_is_asked_again(
    instance: Instance, k: int, name: str
) -> None:
    """Every policy, with a mapper that refuses every k-th request on weighted, typed,
    multi-GPU, batch and spread instances: the run completes every job and the verifier
    accepts the schedule. Catches: no retry when the refusal left the cluster idle (every
    policy but gavel stopped with 'left N jobs waiting on an idle cluster'), and a retry
    that starts a job on GPUs already taken."""
    from ddlsched.algorithms.registry import build_policy
    from ddlsched.proofs_checks.verifier import verify

    result = simulate(instance, build_policy(name, instance, mapper=RefusesEvery(k)))
    assert result.metrics["jobs_completed"] == len(instance.jobs)
    assert verify(instance, result.schedule).feasible


class _NeverPlaces:
    def __call__(self, job, cluster, free):  # type: ignore[no-untyped-def]
        return None


@pytest.mark.parametrize("name", _RIGID)
def test_a_mapper_that_never_places_is_a_deadlock_named_in_one_error(name: str) -> None:
    """A mapper that refuses everything: an error naming the policy, the waiting jobs and
    the mapper, after a bounded number of retries (never an endless loop at one instant)."""
    from ddlsched.algorithms.registry import build_policy

    instance = Instance(
        Cluster((2, 2), 4.0, 1.0),
        tuple(
            Job(id=f"j{k}", release=0.5 * k, iterations=2, compute_time=1.0, gpus=1 + k % 2)
            for k in range(3)
        ),
    )
    # gavel asks again at every round (a wake-up): its deadlock is a run of idle rounds.
    expected = "keeps waking.*3 jobs wait" if name == "gavel" else "left 3 jobs waiting"
    with pytest.raises(RuntimeError, match=rf"{name}' {expected}.*mapper refuse"):
        simulate(instance, build_policy(name, instance, mapper=_NeverPlaces()))


class _StaleWakeup(Policy):
    """A broken policy: starts each job at once but leaves its wake-up at time 0."""

    name = "stale-wakeup"

    def __init__(self, cluster: Cluster) -> None:
        self.cluster, self.waiting = cluster, []

    def on_arrival(self, job, now):  # type: ignore[no-untyped-def]
        self.waiting.append(job)

    def dispatch(self, now, free):  # type: ignore[no-untyped-def]
        for job in list(self.waiting):
            mapping = FirstFitMapper()(job, self.cluster, free)
            if mapping is not None:
                self.waiting.remove(job)
                yield job, mapping

    def next_wakeup(self) -> float:
        return 0.0


def test_a_wakeup_left_in_the_past_while_a_job_runs_is_stopped() -> None:
    """A wake-up at or before now is taken at now, so while a job runs a policy that keeps
    asking for one would hold the simulator at one instant forever (the running job counts
    as progress): it is an error naming the policy and the cause."""
    instance = Instance(Cluster((1,), 1.0, 1.0), (Job("a", 0.0, 5, 1.0, 1),))
    with pytest.raises(RuntimeError, match=r"stale-wakeup.*already passed"):
        simulate(instance, _StaleWakeup(instance.cluster))


class _ForgetsStarted(Policy):
    """A broken policy: never removes a job it started from its queue, so it dispatches it
    again while it runs (or, once it has ended, after it completed)."""

    name = "forgets-started"

    def __init__(self, cluster: Cluster) -> None:
        self.cluster, self.waiting = cluster, []

    def on_arrival(self, job, now):  # type: ignore[no-untyped-def]
        self.waiting.append(job)

    def dispatch(self, now, free):  # type: ignore[no-untyped-def]
        for job in list(self.waiting):
            mapping = FirstFitMapper()(job, self.cluster, free)
            if mapping is not None:
                yield job, mapping


@pytest.mark.parametrize(
    ("releases", "state"),
    [
        ((0.0, 1.0), "running"),  # j1's arrival while j0 runs: j0 dispatched beside itself
        ((0.0, 100.0), "completed"),  # j0 ended before j1 arrived
    ],
)
def test_a_job_dispatched_again_is_an_error_naming_the_policy_and_job(
    releases: tuple[float, ...], state: str
) -> None:
    """A policy that dispatches a job already running or completed is an error naming the
    policy, the job and its state: before, a second copy of a running job replaced the first
    and the simulator waited forever for a completion that no longer counted."""
    instance = Instance(
        Cluster((4,), 1.0, 1.0),
        tuple(Job(f"j{k}", r, 5, 1.0, 1) for k, r in enumerate(releases)),
    )
    with pytest.raises(
        RuntimeError, match=rf"forgets-started' dispatched job 'j0'.*already {state}"
    ):
        simulate(instance, _ForgetsStarted(instance.cluster))


class _BusyAfterRefusal:
    """Refuses its first call, then maps every job onto server 0's first GPUs, busy or not."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, job, cluster, free):  # type: ignore[no-untyped-def]
        self.calls += 1
        return None if self.calls == 1 else (0,) * job.gpus


@pytest.mark.parametrize("name", _RIGID)
def test_a_mapping_onto_busy_gpus_is_an_error_naming_the_policy_and_job(name: str) -> None:
    """A mapper placing a job on GPUs already taken is an error naming the policy and the
    job, not a bare ValueError from the free-GPU bookkeeping."""
    from ddlsched.algorithms.registry import build_policy

    instance = Instance(
        Cluster((2, 2), 4.0, 1.0),
        tuple(Job(f"j{k}", 0.0, 3, 1.0, 2) for k in range(3)),
    )
    with pytest.raises(RuntimeError, match=rf"{name}' mapped job 'j\d' onto busy GPUs"):
        simulate(instance, build_policy(name, instance, mapper=_BusyAfterRefusal()))


class _RefusesFirst:
    """First fit that refuses its first ``n`` calls, whatever is free."""

    def __init__(self, n: int) -> None:
        self.n, self.calls, self.inner = n, 0, FirstFitMapper()

    def __call__(self, job, cluster, free):  # type: ignore[no-untyped-def]
        self.calls += 1
        return None if self.calls <= self.n else self.inner(job, cluster, free)


@pytest.mark.parametrize("name", ["fifo", "sjf", "srpt-naive", "las", "las-tiresias"])
def test_three_refusals_in_a_row_on_an_idle_cluster_are_retried(name: str) -> None:
    """One job on an idle cluster, a mapper refusing three times in a row: the retries at
    that instant (IDLE_RETRIES = 3) place it at time 0. Catches fewer retries than
    documented, and a retry that moves the clock. (The A-SRPT policies have a wake-up at
    the job's virtual completion and gavel at its next round: they ask again then.)"""
    from ddlsched.algorithms.registry import build_policy

    instance = Instance(Cluster((2,), 4.0, 1.0), (Job("a", 0.0, 2, 1.5, 2),))
    result = simulate(instance, build_policy(name, instance, mapper=_RefusesFirst(3)))
    assert result.schedule is not None
    (entry,) = result.schedule.jobs
    assert entry.start == 0.0 and entry.end == pytest.approx(3.0)


def test_a_mapper_refusing_everything_stops_with_the_count_of_waiting_jobs() -> None:
    """A mapper that never places anything leaves three jobs waiting on an idle cluster:
    the run stops (no endless loop at one instant) with an error naming the policy, the
    three waiting jobs and the instant; one finished job is not counted among them."""
    from ddlsched.algorithms.mapping import FirstFitMapper
    from ddlsched.algorithms.registry import build_policy

    class Never:
        def __call__(self, job, cluster, free):  # type: ignore[no-untyped-def]
            return None if job.id != "done" else FirstFitMapper()(job, cluster, free)

    jobs = (Job("done", 0.0, 1, 1.0, 1), *(Job(f"w{k}", 2.0, 1, 1.0, 1) for k in range(3)))
    instance = Instance(Cluster((2,), 4.0, 1.0), jobs)
    with pytest.raises(RuntimeError, match=r"policy 'fifo' left 3 jobs waiting .* at t=2 "):
        simulate(instance, build_policy("fifo", instance, mapper=Never()))


def test_progress_is_reported_as_completed_out_of_total() -> None:
    """Catches the progress callback called without the total: ``progress(done, total)``
    is called with the job count as total and non-decreasing counts up to it."""
    from ddlsched.algorithms.registry import build_policy

    from ddlsched.core.generators import GeneratorConfig, generate

    instance = generate(GeneratorConfig(num_jobs=6), 3)
    calls: list[tuple[int, int]] = []
    policy = build_policy("fifo", instance)
    simulate(instance, policy, progress=lambda done, total: calls.append((done, total)))
    assert calls and all(total == 6 for _, total in calls)
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] <= 6


def _long_resumed_past_float_resolution() -> Instance:
    """One GPU: 'long' (999 iterations of 0.337 s) is preempted at t=1 by 'short'; with a
    restart cost of 1e12 s it resumes and ends near 1e12 s, where consecutive floats lie
    1.2e-4 s apart, so no end time gives its pieces exactly 999 iterations of work (the
    nearest float gives 999.000109, outside the verifier's tolerance)."""
    cluster = Cluster((1,), 10.0, 1.0)
    return Instance(
        cluster, (Job("long", 0.0, 999, 0.3373493975903615, 1), Job("short", 1.0, 1, 1.0, 1))
    )


@pytest.mark.parametrize("name", ["srpt-area", "asrpt-preemptive"])
def test_a_schedule_the_verifier_rejects_is_not_called_feasible(name: str) -> None:
    """The simulator's status is ``feasible`` only when the independent verifier accepts
    the schedule; a rejected one comes back as ``error``, with its schedule (to inspect)
    and a note naming the verifier's first violation."""
    from ddlsched.algorithms.registry import build_policy
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched.core.params import OnlineParams
    from ddlsched.core.result import SolveStatus

    instance = _long_resumed_past_float_resolution()
    policy = build_policy(name, instance, OnlineParams(restart_cost=1e12))
    result = simulate(instance, policy, restart_cost=1e12)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert not report.feasible, "the instance no longer exercises a rejected schedule"
    assert result.status is SolveStatus.ERROR
    assert any("the verifier rejects" in note and "'long'" in note for note in result.notes)


def test_a_schedule_the_verifier_accepts_is_feasible() -> None:
    """The same instance at an ordinary restart cost: the verifier accepts, the status is
    ``feasible`` and no note is added."""
    from ddlsched.algorithms.registry import build_policy
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched.core.result import SolveStatus

    instance = _long_resumed_past_float_resolution()
    result = simulate(instance, build_policy("srpt-area", instance), restart_cost=1.0)
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    assert result.status is SolveStatus.FEASIBLE and result.notes == ()


def _two_long_jobs_on_one_gpu(duration_iterations: int = 100_000) -> Instance:
    """Two one-GPU jobs of 100,000 one-second iterations on one GPU, both released at 0:
    a round-based policy takes turns between them every round."""
    cluster = Cluster((1,), 10.0, 1.0)
    return Instance(
        cluster,
        tuple(Job(name, 0.0, duration_iterations, 1.0, 1) for name in ("a", "b")),
    )


def test_a_restart_cost_longer_than_gavels_round_stops_naming_cost_policy_and_round() -> None:
    """Gavel hands the GPU over every 360 s round; with a restart cost of 1000 s every
    resumed job is preempted before its restart is over, so no job ever progresses. The
    run stops (a ``ValueError``) with one line naming the restart cost, the policy and
    its round, instead of preempting forever."""
    from ddlsched.algorithms.gavel import HeterogeneityAwareRounds
    from ddlsched.algorithms.simulator import RunawaySimulation

    instance = _two_long_jobs_on_one_gpu()
    policy = HeterogeneityAwareRounds(instance.cluster)
    with pytest.raises(RunawaySimulation) as caught:
        simulate(instance, policy, restart_cost=1000.0)
    message = str(caught.value)
    assert message.startswith("restart_cost: 1000 s")
    assert "'gavel' (rounds of 360 s)" in message and "\n" not in message


def test_a_restart_cost_shorter_than_the_round_lets_every_job_finish() -> None:
    """The same two jobs with a restart cost of 100 s (under the 360 s round): each resumed
    piece makes progress and both jobs complete, verified."""
    from ddlsched.algorithms.gavel import HeterogeneityAwareRounds

    from ddlsched.core.result import SolveStatus

    instance = _two_long_jobs_on_one_gpu(2_000)
    result = simulate(instance, HeterogeneityAwareRounds(instance.cluster), restart_cost=100.0)
    assert result.status is SolveStatus.FEASIBLE
    assert result.metrics["jobs_completed"] == 2


def _long_job_interrupted_by_short_ones() -> Instance:
    """One GPU: 'long' (40,000 one-second iterations) from t=0, and 60 jobs of 100 s
    released every 400 s from t=4,000: LAS and SRPT preempt 'long' (past LAS's first
    threshold) at each arrival, Gavel at the next round."""
    cluster = Cluster((1,), 10.0, 1.0)
    short = tuple(Job(f"s{k}", 4_000.0 + 400.0 * k, 100, 1.0, 1) for k in range(60))
    return Instance(cluster, (Job("long", 0.0, 40_000, 1.0, 1), *short))


@pytest.mark.parametrize("name", ["gavel", "las", "las-tiresias", "srpt-area"])
def test_a_run_past_its_preemption_cap_stops_in_one_line(name: str) -> None:
    """A long job preempted by each of 60 short ones (near the horizon cap, such runs
    preempt billions of times, each preemption keeping a piece in memory). With the cap
    lowered to 20 through ``OnlineParams.max_preemptions`` the run stops with a
    ``ValueError`` naming the setting, the cap and the policy; with the cap above what
    the run needs it completes, verified."""
    from ddlsched.api import simulate as run
    from ddlsched.core.params import OnlineParams
    from ddlsched.core.result import SolveStatus

    instance = _long_job_interrupted_by_short_ones()
    with pytest.raises(ValueError) as caught:
        run(instance, name, params=OnlineParams(max_preemptions=20), bound=False)
    message = str(caught.value)
    assert message.startswith(f"max_preemptions: policy {name!r} preempted more than 20 ")
    assert "\n" not in message
    result = run(instance, name, params=OnlineParams(max_preemptions=10_000), bound=False)
    assert result.status is SolveStatus.FEASIBLE
    assert result.metrics["preempted_jobs"] > 0


def test_stale_completion_entries_do_not_pile_up_with_preemptions() -> None:
    """Each preemption leaves its piece's completion entry stale in the event heap; the heap
    is compacted, so after thousands of preemptions of two jobs it holds a few entries, not
    one per preemption."""
    from ddlsched.algorithms.gavel import HeterogeneityAwareRounds
    from ddlsched.algorithms.simulator import _Simulation

    instance = _two_long_jobs_on_one_gpu(2_000_000)
    run = _Simulation(instance, HeterogeneityAwareRounds(instance.cluster), 1.0, None, 5_000)
    with pytest.raises(ValueError, match="max_preemptions"):
        run.run()
    assert run.preemptions == 5_001
    assert len(run.completions) <= 1025
