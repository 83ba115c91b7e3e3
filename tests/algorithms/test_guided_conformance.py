"""Conformance of guided A-SRPT (ddlsched.algorithms.policies.GuidedASRPT) to Theorem 1's
assumptions.

Checked on the schedule alone, against virtual completions computed here by an
independent SRPT (no code shared with ``ddlsched.core.virtual``), on instances with
uneven servers and odd-sized jobs that must span servers:

1. jobs start in virtual-completion order (strict: no backfilling);
2. no job starts before its virtual completion ``C^V_i``;
3. no idling: the head of the queue starts at the first instant, after it became
   the head, at which the whole cluster has ``g_i`` free GPUs;
4. the per-job bounds of the proof: ``S_i <= C^V_i (1 + M / (M - g_max + 1))`` and
   ``C_i <= S_i + K_i alpha_i^max``.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job
from tests.strategies import fragmenting_instances, hand_instances

EPS = 1e-7


def independent_srpt(sizes: list[float], releases: list[float]) -> list[float]:
    """Completion times of preemptive SRPT, by a plain event loop (ties: lower index)."""
    n = len(sizes)
    remaining = list(sizes)
    done = [False] * n
    completion = [0.0] * n
    now = 0.0
    while not all(done):
        ready = [k for k in range(n) if not done[k] and releases[k] <= now + 1e-12]
        if not ready:
            now = min(releases[k] for k in range(n) if not done[k])
            continue
        k = min(ready, key=lambda j: (remaining[j], j))
        later = [releases[j] for j in range(n) if not done[j] and releases[j] > now + 1e-12]
        step = min([remaining[k], *(r - now for r in later)])
        remaining[k] -= step
        now += step
        if remaining[k] <= 1e-12 * max(1.0, sizes[k]):
            done[k], completion[k] = True, now
    return completion


def all_cut(job: Job, cluster: Cluster) -> float:
    """``alpha^max``: compute plus every edge over the inter-server link (recomputed here)."""
    return job.compute_time + sum(q for _, _, q in job.edges) / cluster.bandwidth_inter


def check_guided(instance: Instance, policy: str = "asrpt") -> None:
    """Assert rules 1-4 of the module docstring on ``policy``'s schedule of ``instance``."""
    cluster, jobs = instance.cluster, instance.jobs
    m = cluster.num_gpus
    sizes = [j.gpus * j.iterations * all_cut(j, cluster) / m for j in jobs]
    virtual = independent_srpt(sizes, [j.release for j in jobs])
    result = simulate(instance, policy, bound=False)
    assert result.schedule is not None
    entries = result.schedule.by_id()
    start = [float(entries[j.id].start) for j in jobs]
    end = [float(entries[j.id].end) for j in jobs]
    order = sorted(range(len(jobs)), key=lambda k: (virtual[k], start[k]))
    g_max = max(j.gpus for j in jobs)
    factor = 1 + m / (m - g_max + 1)

    def free_at(t: float, before: set[int]) -> int:
        """Free GPUs at ``t`` for the next job: held by jobs running then, counting a job
        that starts exactly at ``t`` only if it comes earlier in the order."""
        held = 0
        for j, other in enumerate(jobs):
            if start[j] <= t + EPS < end[j] and (start[j] < t - EPS or j in before):
                held += other.gpus
        return m - held

    previous_start = 0.0
    for rank, k in enumerate(order):
        before = set(order[:rank])
        job = jobs[k]
        scale = max(1.0, virtual[k], start[k])
        assert start[k] >= virtual[k] - EPS * scale, f"{job.id} starts before its C^V"
        assert start[k] >= previous_start - EPS * scale, f"{job.id} overtakes the strict order"
        became_head = max(virtual[k], previous_start)
        # The first instant >= became_head with enough free GPUs: became_head itself,
        # or a completion after it (free GPUs only grow at completions).
        candidates = [became_head, *(e for e in end if e > became_head + EPS)]
        expected = min(t for t in candidates if free_at(t, before) >= job.gpus)
        assert abs(start[k] - expected) <= EPS * scale, (
            f"{job.id} (rank {rank}) starts at {start[k]}, but the cluster had {job.gpus} "
            f"free GPUs at {expected}"
        )
        assert start[k] <= virtual[k] * factor + EPS * scale, f"{job.id} breaks S <= C^V bound"
        assert end[k] <= start[k] + job.iterations * all_cut(job, cluster) + EPS * scale
        previous_start = start[k]


@settings(max_examples=60)
@given(hand_instances(max_jobs=6))
def test_guided_asrpt_conforms_on_arbitrary_instances(instance: Instance) -> None:
    """Uneven servers, arbitrary graphs, odd sizes, releases: rules 1-4 hold."""
    check_guided(instance)


@settings(max_examples=30)
@given(
    st.integers(0, 100_000),
    st.sampled_from([(3, 3), (2, 5), (4, 2)]),
    st.sampled_from([0.8, 2.0, None]),
)
def test_guided_asrpt_conforms_on_generated_instances(
    seed: int, shape: tuple[int, int], load: float | None
) -> None:
    """Generated jobs of every size up to the cluster, spanning servers, under load."""
    config = GeneratorConfig(
        num_jobs=10,
        servers=shape[0],
        gpus_per_server=shape[1],
        load=load,
        size_weights=tuple((g, 1.0) for g in range(1, shape[0] * shape[1] + 1)),
        max_job_gpus=shape[0] * shape[1],
    )
    check_guided(generate(config, seed))


def test_negative_control_backfilling_is_caught() -> None:
    """The same check rejects greedy A-SRPT, which backfills.

    Three GPUs on one server: a (2 GPUs, 4 s) starts at 0; b (3 GPUs, 2 s) completes
    first on the virtual machine, so strict order makes c (1 GPU, released at 0.5)
    wait for b. Greedy A-SRPT starts c on the free GPU at once: a rule-1 violation.
    """
    import pytest

    cluster = Cluster((3,), 1.0, 1.0)
    jobs = (
        Job(id="a", release=0.0, iterations=4, compute_time=1.0, gpus=2),
        Job(id="b", release=0.0, iterations=2, compute_time=1.0, gpus=3),
        Job(id="c", release=0.5, iterations=9, compute_time=1.0, gpus=1),
    )
    instance = Instance(cluster, jobs)
    check_guided(instance)
    with pytest.raises(AssertionError):
        check_guided(instance, "asrpt-greedy")


@settings(max_examples=150)
@given(fragmenting_instances())
def test_strict_guided_order_holds_when_the_placement_rule_refuses_heads(
    instance: Instance,
) -> None:
    """Under the ``consolidated`` rule, which refuses to split a head that would fit
    on several servers, guided A-SRPT still starts jobs in virtual-completion order
    (rule 1) and never before their virtual completions (rule 2), checked against
    the independent SRPT. Rule 3 (no idling) does not hold under the rule, by design.

    Catches the slip: a job behind a refused head backfills past it.
    """
    from ddlsched import OnlineParams

    # Jobs in arrival order, so that the independent SRPT's ties (lower index) go
    # to the earlier arrival, as the virtual machine's do.
    arrival = sorted(range(len(instance.jobs)), key=lambda k: (instance.jobs[k].release, k))
    instance = instance.replace(jobs=tuple(instance.jobs[k] for k in arrival))
    cluster, jobs = instance.cluster, instance.jobs
    m = cluster.num_gpus
    sizes = [j.gpus * j.iterations * all_cut(j, cluster) / m for j in jobs]
    virtual = independent_srpt(sizes, [j.release for j in jobs])
    params = OnlineParams(placement="consolidated")
    result = simulate(instance, "asrpt", params=params, bound=False)
    assert result.schedule is not None
    entries = result.schedule.by_id()
    start = [float(entries[j.id].start) for j in jobs]
    order = sorted(range(len(jobs)), key=lambda k: (virtual[k], start[k]))
    previous = 0.0
    for k in order:
        scale = max(1.0, virtual[k], start[k])
        assert start[k] >= virtual[k] - EPS * scale, f"{jobs[k].id} starts before its C^V"
        assert start[k] >= previous - EPS * scale, f"{jobs[k].id} overtakes the strict order"
        previous = start[k]
