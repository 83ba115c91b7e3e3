"""Online policies (algorithms.policies): feasible by the verifier, within Theorem 1, in order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms.policies import BackfillQueue, GuidedASRPT, StrictQueue
from algorithms.prediction import JobView, OraclePredictor
from algorithms.registry import POLICIES as REGISTERED_POLICIES
from algorithms.simulator import simulate
from ddlsched import OnlineParams
from ddlsched import simulate as simulate_named
from ddlsched.core.alpha import rho
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams
from formulations.exact import solve_milp
from proofs_checks.verifier import verify
from tests.strategies import TINY_INTEGRAL, generated_instances, hand_instances, typed_instances

POLICIES = REGISTERED_POLICIES.names()


THEOREM_CONFIG = TINY_INTEGRAL.replace(num_jobs=5)


@settings(max_examples=25)
@given(generated_instances(), st.sampled_from(POLICIES), st.sampled_from(["oracle", "noisy"]))
def test_every_policy_passes_the_verifier(instance: Instance, method: str, predictor: str) -> None:
    """Every policy's schedule is feasible and its objective is the recomputed one."""
    result = simulate_named(instance, method, params=OnlineParams(predictor=predictor), seed=1)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.objective == pytest.approx(report.total_completion_time, rel=1e-9)
    assert result.total_jct == pytest.approx(report.total_jct, rel=1e-9)


@settings(max_examples=25)
@given(
    st.one_of(typed_instances(), generated_instances(mixed=True)),
    st.sampled_from(POLICIES),
    st.sampled_from(["oracle", "noisy"]),
)
def test_every_policy_passes_the_verifier_on_mixed_clusters(
    instance: Instance, method: str, predictor: str
) -> None:
    """GPU types: every schedule is feasible and its objective the verifier's, which
    times each piece with its own type-aware per-iteration time."""
    result = simulate_named(instance, method, params=OnlineParams(predictor=predictor), seed=2)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert result.objective == pytest.approx(report.total_completion_time, rel=1e-9)


@settings(max_examples=15)
@given(hand_instances(), st.sampled_from(POLICIES))
def test_policies_on_arbitrary_graphs(instance: Instance, method: str) -> None:
    """Arbitrary job graphs and uneven servers: still feasible."""
    result = simulate_named(instance, method, seed=3)
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible


@settings(max_examples=20)
@given(st.integers(0, 100_000), st.sampled_from([None, 0.8, 2.0]))
def test_guided_asrpt_within_theorem_1(seed: int, load: float | None) -> None:
    """Guided A-SRPT with exact counts: sum C <= (2 + M/(M - g_max + 1)) rho OPT(A)."""
    instance = generate(THEOREM_CONFIG.replace(load=load), seed)
    optimum = solve_milp(instance, "A", ExactParams(time_limit=60))
    assert optimum.proven_optimal
    online = simulate_named(instance, "asrpt")
    m, g_max = instance.cluster.num_gpus, instance.max_job_gpus
    bound = (2 + m / (m - g_max + 1)) * rho(instance).rho.value * optimum.objective
    assert online.objective <= bound + 1e-9
    assert online.objective >= optimum.objective - 1e-9  # no online schedule beats OPT


def test_guided_order_is_virtual_completion_order() -> None:
    """Guided A-SRPT starts jobs in the order of their virtual completions, never backfilling.

    One 2-GPU server. Job 'big' (size 4 slots on 2 GPUs: v = 4) and 'small'
    (1 GPU, 1 slot: v = 0.5) arrive at 0: SRPT finishes small at 0.5, big at
    4.5; so small starts at 0.5, big must wait for 4.5 even though GPUs
    are free: the guided rule waits for the virtual completion.
    """
    cluster = Cluster((2,), 1.0, 1.0)
    big = Job(
        id="big", release=0.0, iterations=4, compute_time=1.0, gpus=2, edges=((0, 1, 0.0001),)
    )
    small = Job(id="small", release=0.0, iterations=1, compute_time=1.0, gpus=1)
    instance = Instance(cluster, (big, small))
    result = simulate(instance, GuidedASRPT(cluster, OraclePredictor(instance)))
    assert result.schedule is not None
    starts = {e.id: e.start for e in result.schedule.jobs}
    assert starts["small"] == pytest.approx(0.5)
    assert starts["big"] == pytest.approx(2 * 4 * 1.0001 / 2 + 0.5)


def test_queues() -> None:
    """StrictQueue blocks behind its head; BackfillQueue starts the best that fits."""

    def view(name: str, gpus: int) -> JobView:
        return JobView.of(Job(id=name, release=0.0, iterations=1, compute_time=1.0, gpus=gpus))

    strict = StrictQueue()
    strict.push(view("wide", 4), 1)
    strict.push(view("narrow", 1), 2)
    assert strict.pop_entry(2) is None
    fill = BackfillQueue()
    fill.push(view("wide", 4), 1)
    fill.push(view("narrow", 1), 2)
    fill.push(view("mid", 2), 3)
    popped = fill.pop_entry(2)
    assert popped is not None and popped[2].id == "narrow"
    fill.push(view("mid", 2), 0)  # re-key: now first
    popped = fill.pop_entry(4)
    assert popped is not None and popped[2].id == "mid"
    assert len(fill) == 1
    fill.restore(popped)  # a job its mapper could not place keeps its key and place
    assert len(fill) == 2 and (fill.pop_entry(4) or ())[2:] == (popped[2],)
