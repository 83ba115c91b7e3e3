"""Conformance of the baselines with the simulators they follow.

Each reference is re-implemented here, small and independently of
:mod:`algorithms`, from its published rules, over GPU *counts* (the
references place by count; our jobs have no edges, so placement cannot
change a run time):

- ``fifo``: Tiresias's FIFO (github.com/SymbioticLab/Tiresias,
  ``run_sim.py``): jobs in arrival order, the head starts when it fits,
  nothing overtakes it;
- ``sjf``: the Alibaba PAI simulator's shortest job first
  (github.com/alibaba/clusterdata, ``pai_sim``): waiting jobs by duration,
  then arrival; every one that fits starts (backfilling); no preemption;
- ``las``/``las-tiresias``: Tiresias's ``dlas_sim_jobs``: queue limits in
  GPU-seconds, new jobs at the end of queue 0, a running job reaching its
  limit moved to the end of the next queue, one pass per event keeping
  each job that fits (in queue order, then list order), and after the
  pass every pending job moved behind the running ones of its queue.

A drift of our policies from these rules (an order, a tie, a threshold
test) changes some job's end and fails here, with the trace.
"""

from __future__ import annotations

import pytest
from ddlsched.algorithms.las import TIRESIAS_THRESHOLDS, LeastAttainedService
from ddlsched.algorithms.simulator import simulate
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.api import simulate as simulate_named
from ddlsched.core.model import Cluster, Instance, Job

CLUSTER = Cluster.uniform(2, 4, 10.0, 10.0)
M = CLUSTER.num_gpus
EPS = 1e-9

Trace = list[tuple[float, int, float]]  # (release, gpus, duration)


def instance_of(trace: Trace) -> Instance:
    jobs = tuple(
        Job(id=f"j{k}", release=r, iterations=round(d), compute_time=1.0, gpus=g)
        for k, (r, g, d) in enumerate(trace)
    )
    return Instance(CLUSTER, jobs)


def reference_fifo(trace: Trace) -> list[float]:
    order = sorted(range(len(trace)), key=lambda k: (trace[k][0], k))
    ends: dict[int, float] = {}
    running: list[tuple[float, int]] = []  # (end, gpus)
    free, t, head = M, 0.0, 0
    while head < len(order):
        k = order[head]
        release, gpus, duration = trace[k]
        t = max(t, release)
        for end, g in [x for x in running if x[0] <= t + EPS]:
            running.remove((end, g))
            free += g
        if gpus <= free:
            ends[k] = t + duration
            running.append((t + duration, gpus))
            free -= gpus
            head += 1
        else:
            t = min(end for end, _ in running)
    return [ends[k] for k in range(len(trace))]


def reference_sjf(trace: Trace) -> list[float]:
    ends: dict[int, float] = {}
    running: dict[int, float] = {}
    waiting: list[int] = []
    arrivals = sorted(range(len(trace)), key=lambda k: (trace[k][0], k))
    t, free, nxt = 0.0, M, 0
    while len(ends) < len(trace) or running:
        times = [trace[arrivals[nxt]][0]] if nxt < len(arrivals) else []
        times += list(running.values())
        t = min(times)
        for k in [k for k, end in running.items() if end <= t + EPS]:
            del running[k]
            free += trace[k][1]
        while nxt < len(arrivals) and trace[arrivals[nxt]][0] <= t + EPS:
            waiting.append(arrivals[nxt])
            nxt += 1
        for k in sorted(waiting, key=lambda k: (trace[k][2], trace[k][0], k)):
            if trace[k][1] <= free:
                waiting.remove(k)
                free -= trace[k][1]
                running[k] = ends[k] = t + trace[k][2]
    return [ends[k] for k in range(len(trace))]


def reference_dlas(trace: Trace, limits: tuple[float, ...]) -> list[float]:
    n = len(trace)
    queues: list[list[int]] = [[] for _ in range(len(limits) + 1)]
    status = ["new"] * n
    executed = [0.0] * n  # seconds run; service is executed * gpus
    queue_of = [0] * n
    ends: dict[int, float] = {}
    arrivals = sorted(range(n), key=lambda k: (trace[k][0], k))
    t, nxt = 0.0, 0
    while len(ends) < n:
        running = [k for k in range(n) if status[k] == "running"]
        times = [trace[arrivals[nxt]][0]] if nxt < n else []
        for k in running:
            gpus, duration = trace[k][1], trace[k][2]
            times.append(t + duration - executed[k])
            if queue_of[k] < len(limits):
                times.append(t + (limits[queue_of[k]] - executed[k] * gpus) / gpus)
        new_t = max(t, min(times))
        for k in running:
            executed[k] += new_t - t
        t = new_t
        for k in running:  # completions
            if executed[k] >= trace[k][2] - EPS:
                status[k] = "done"
                ends[k] = t
                queues[queue_of[k]].remove(k)
        for k in sorted(running):  # demotions, in arrival (runnable) order
            q = queue_of[k]
            crossed = q < len(limits) and executed[k] * trace[k][1] >= limits[q] - EPS
            if status[k] == "running" and crossed:
                queues[q].remove(k)
                queue_of[k] = q + 1
                queues[q + 1].append(k)
        while nxt < n and trace[arrivals[nxt]][0] <= t + EPS:
            k = arrivals[nxt]
            status[k] = "pending"
            queues[0].append(k)
            nxt += 1
        free = M
        for queue in queues:  # the pass
            for k in queue:
                if trace[k][1] <= free:
                    free -= trace[k][1]
                    status[k] = "running"
                elif status[k] == "running":
                    status[k] = "pending"
        for q, queue in enumerate(queues):  # pending jobs behind the running ones
            queues[q] = [k for k in queue if status[k] == "running"] + [
                k for k in queue if status[k] == "pending"
            ]
    return [ends[k] for k in range(n)]


def ends_of(result_schedule: object, trace: Trace) -> list[float]:
    by_id = result_schedule.by_id()  # type: ignore[attr-defined]
    return [float(by_id[f"j{k}"].end) for k in range(len(trace))]


# A hand trace where the rules matter: wide jobs block FIFO, short ones
# overtake under SJF, and under LAS job j1 (arrived earlier, waiting) must
# not preempt j3 (same queue, running, arrived later).
HAND: Trace = [
    (0, 4, 60),
    (0, 8, 30),
    (0, 4, 90),
    (5, 2, 20),
    (10, 1, 5),
    (12, 8, 10),
    (30, 2, 40),
    (31, 4, 15),
    (50, 1, 100),
    (60, 6, 25),
]

traces = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=60).map(float),
        st.sampled_from([1, 2, 4, 6, 8]),
        st.integers(min_value=1, max_value=80).map(float),
    ),
    min_size=1,
    max_size=12,
)


@pytest.mark.parametrize(
    ("policy", "reference"),
    [("fifo", reference_fifo), ("sjf", reference_sjf)],
)
def test_non_preemptive_baselines_match_their_references(policy, reference) -> None:  # type: ignore[no-untyped-def]
    result = simulate_named(instance_of(HAND), policy, bound=False)
    assert ends_of(result.schedule, HAND) == pytest.approx(reference(HAND))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(traces)
def test_fifo_and_sjf_conform_on_random_traces(trace: Trace) -> None:
    for policy, reference in (("fifo", reference_fifo), ("sjf", reference_sjf)):
        result = simulate_named(instance_of(trace), policy, bound=False)
        assert ends_of(result.schedule, trace) == pytest.approx(reference(trace)), (policy, trace)


def _las(trace: Trace, limits: tuple[float, ...]) -> list[float]:
    policy = LeastAttainedService(CLUSTER, thresholds=limits, restart_cost=0.0)
    return ends_of(simulate(instance_of(trace), policy).schedule, trace)


def test_las_follows_tiresias_list_order_on_the_hand_trace() -> None:
    limits = (40.0, 160.0)
    assert _las(HAND, limits) == pytest.approx(reference_dlas(HAND, limits))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(traces, st.sampled_from([(20.0, 100.0), (40.0,), (10.0, 30.0, 200.0)]))
def test_las_conforms_on_random_traces(trace: Trace, limits: tuple[float, ...]) -> None:
    assert _las(trace, limits) == pytest.approx(reference_dlas(trace, limits)), trace


def test_las_tiresias_preset_is_tiresias_parameters() -> None:
    """The preset: Tiresias's limits, no restart cost; equal to las built with them."""
    trace = [(0.0, 8, 500.0), (10.0, 8, 300.0), (20.0, 4, 2000.0), (25.0, 4, 900.0)]
    result = simulate_named(instance_of(trace), "las-tiresias", bound=False)
    assert result.metrics["preempted_jobs"] >= 1  # preemptions happened, at no restart cost
    assert ends_of(result.schedule, trace) == pytest.approx(
        reference_dlas(trace, TIRESIAS_THRESHOLDS)
    )


def test_sjf_ties_go_to_arrival_order() -> None:
    """Durations equal but for floating-point noise tie; the earlier arrival starts first."""
    cluster = Cluster.uniform(1, 1, 10.0, 10.0)
    # The three 17-second jobs of the issue, keyed by K * alpha_min with rounding noise.
    noisy = [17.000000000000004, 16.999999999999996, 17.0]
    jobs = tuple(
        Job(id=f"j{k}", release=float(k) * 0.001, iterations=1, compute_time=c, gpus=1)
        for k, c in enumerate(noisy)
    )
    blocker = Job(id="b", release=0.0, iterations=1, compute_time=1.0, gpus=1)
    result = simulate_named(Instance(cluster, (blocker, *jobs)), "sjf", bound=False)
    starts = {e.id: e.start for e in result.schedule.jobs}  # type: ignore[union-attr]
    assert starts["j0"] < starts["j1"] < starts["j2"]
