"""Online policies (ddlsched.algorithms.policies): feasible by the verifier, within Theorem 1, in
order."""

from __future__ import annotations

import pytest
from ddlsched.algorithms.policies import BackfillQueue, GreedyASRPT, GuidedASRPT, StrictQueue
from ddlsched.algorithms.prediction import JobView, OraclePredictor
from ddlsched.algorithms.registry import POLICIES as REGISTERED_POLICIES
from ddlsched.algorithms.simulator import simulate
from ddlsched.formulations.milp import solve_milp
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import OnlineParams
from ddlsched import simulate as simulate_named
from ddlsched.core.alpha import rho
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams
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
    optimum = solve_milp(instance, "A", ExactParams(time_limit=None))
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


class _FixedPredictor:
    """Predicts a fixed count per job id (the truth elsewhere): a stand-in for a
    learning predictor whose output the test chooses."""

    def __init__(self, instance: Instance, fixed: dict[str, float]) -> None:
        self._values = {job.id: float(job.iterations) for job in instance.jobs} | fixed

    def predict(self, job: JobView) -> float:
        """The chosen count for ``job``."""
        return self._values[job.id]

    def observe(self, job: JobView, iterations: int) -> None:
        """Nothing to learn."""


def test_strict_guided_does_not_backfill_past_a_head_its_placement_rule_refused() -> None:
    """Guided A-SRPT, strict: when the placement rule refuses the head, nothing behind it starts.

    Cluster 3 x 2 GPUs with one GPU free on servers 1 and 2 (2 free in all).
    Head 'wide' (2 GPUs, first in virtual-completion order) fits the free
    total, but the ``consolidated`` rule wants it on one server and refuses;
    'narrow' (1 GPU) behind it would fit. Theorem 1's rule starts jobs
    strictly in order: nothing starts, and both stay queued. With 2 free
    GPUs on server 1 'wide' goes there first, then 'narrow'.

    Catches the slip: a refused head is skipped (``continue``) instead of
    blocking the queue (``break``), so 'narrow' backfills past it.
    """
    from ddlsched.algorithms.mapping import FreeGPUs, GraphMapper, PlacementRule

    cluster = Cluster((2, 2, 2), 1.0, 1.0)
    wide = Job(id="wide", release=0.0, iterations=1, compute_time=1.0, gpus=2)
    narrow = Job(id="narrow", release=0.0, iterations=1, compute_time=1.0, gpus=1)
    instance = Instance(cluster, (wide, narrow))
    policy = GuidedASRPT(
        cluster, OraclePredictor(instance), PlacementRule("consolidated", GraphMapper())
    )
    policy.queue.push(JobView.of(wide), 1.0)
    policy.queue.push(JobView.of(narrow), 2.0)
    assert list(policy.dispatch(0.0, FreeGPUs([0, 1, 1]))) == []
    assert len(policy.queue) == 2
    started = list(policy.dispatch(0.0, FreeGPUs([0, 2, 1])))
    assert [(view.id, mapping) for view, mapping in started] == [
        ("wide", (1, 1)),
        ("narrow", (2,)),
    ]


def test_greedy_asrpt_starts_virtually_complete_jobs_before_incomplete_ones() -> None:
    """Greedy A-SRPT's priority classes: a virtually complete job (class 0, by ``C^V``)
    starts before any virtually incomplete one (class 1, by remaining size), even a
    smaller one.

    One GPU, unit compute, no edges (so ``v_i = K_i``), oracle counts. 'blocker'
    (K=10) arrives at 0 alone and runs [0, 10]. 'done' (K=2) arrives at 0.5: the
    virtual machine runs it [0.5, 2.5], so it is virtually complete at 2.5.
    'fresh' (K=2) arrives at 9 and is virtually processed [9, 11]: at 10, when
    the GPU frees, its remaining virtual size is 1 < 2. By hand: 'done' [10, 12],
    then 'fresh' [12, 14].

    Catches the slips: the two classes swapped (incomplete first), or
    virtually complete jobs keyed like incomplete ones (by size).
    """
    cluster = Cluster((1,), 1.0, 1.0)
    jobs = (
        Job(id="blocker", release=0.0, iterations=10, compute_time=1.0, gpus=1),
        Job(id="done", release=0.5, iterations=2, compute_time=1.0, gpus=1),
        Job(id="fresh", release=9.0, iterations=2, compute_time=1.0, gpus=1),
    )
    instance = Instance(cluster, jobs)
    result = simulate(instance, GreedyASRPT(cluster, OraclePredictor(instance)))
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    spans = {e.id: (e.start, e.end) for e in result.schedule.jobs}
    assert spans == {"blocker": (0.0, 10.0), "done": (10.0, 12.0), "fresh": (12.0, 14.0)}


@pytest.mark.parametrize(
    ("policy_class", "expected"),
    [
        # Clamped to 1, 'tiny' ties with 'first' (v = 1 each): arrival order.
        ("greedy", {"first": (0.0, 1.0), "tiny": (1.0, 2.0)}),
        # Guided: SRPT ties go to 'first' (C^V 1), then 'tiny' (C^V 2).
        ("guided", {"first": (1.0, 2.0), "tiny": (2.0, 3.0)}),
    ],
)
def test_predictions_below_one_iteration_are_clamped_to_one(
    policy_class: str, expected: dict[str, tuple[float, float]]
) -> None:
    """A predictor's count below one iteration is read as 1 (a job runs at least one).

    One GPU, two unit jobs at 0; the predictor says 0.001 iterations for
    'tiny' (listed second) and the truth, 1, for 'first'. Clamped, both have
    ``K_hat = 1`` and tie, so arrival order decides: hand-worked schedules in
    the parameters. Unclamped, 'tiny' would look 1000 times shorter and start
    first (greedy at 0; guided at its virtual completion 0.001).

    Catches the slip: the ``max(1, K_hat)`` clamp at arrival dropped.
    """
    cluster = Cluster((1,), 1.0, 1.0)
    jobs = (
        Job(id="first", release=0.0, iterations=1, compute_time=1.0, gpus=1),
        Job(id="tiny", release=0.0, iterations=1, compute_time=1.0, gpus=1),
    )
    instance = Instance(cluster, jobs)
    predictor = _FixedPredictor(instance, {"tiny": 0.001})
    make = GreedyASRPT if policy_class == "greedy" else GuidedASRPT
    policy = make(cluster, predictor)
    result = simulate(instance, policy)
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    assert {e.id: (e.start, e.end) for e in result.schedule.jobs} == expected
    assert policy.predicted["tiny"] == 1.0


def test_greedy_asrpt_rekeys_a_virtually_preempted_job_by_its_remaining_size() -> None:
    """Greedy A-SRPT keys a virtually incomplete job by its **remaining** virtual size,
    updated when the virtual machine preempts it.

    Two 1-GPU servers, unit compute unless said, no edges (``v = g K c / 2``).
    'b' (K=10) and 'l' (K=40) start at 0 on the two GPUs. Virtually: 'b' [0, 5],
    'l' from 5; 'x' (K=16, v=8) arrives at 6 and displaces 'l'; 'w' (2 GPUs,
    K=69, c=0.1, v=6.9) arrives at 7 and displaces 'x', whose remaining is 7;
    'y' (K=15, v=7.5) arrives at 8 and waits. At 10 'b' ends and one GPU frees:
    'w' does not fit, 'x' (remaining 7) goes before 'y' (7.5). By hand: 'x'
    [10, 26], 'y' [26, 41], 'w' [41, 47.9] once both GPUs are free.

    Catches the slip: a virtually preempted job keeps the key of its full size
    (then 'y', 7.5 < 8, starts at 10 instead).
    """
    cluster = Cluster((1, 1), 1.0, 1.0)
    jobs = (
        Job(id="b", release=0.0, iterations=10, compute_time=1.0, gpus=1),
        Job(id="l", release=0.0, iterations=40, compute_time=1.0, gpus=1),
        Job(id="x", release=6.0, iterations=16, compute_time=1.0, gpus=1),
        Job(id="w", release=7.0, iterations=69, compute_time=0.1, gpus=2),
        Job(id="y", release=8.0, iterations=15, compute_time=1.0, gpus=1),
    )
    instance = Instance(cluster, jobs)
    result = simulate(instance, GreedyASRPT(cluster, OraclePredictor(instance)))
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    spans = {e.id: (e.start, e.end) for e in result.schedule.jobs}
    expected = {
        "b": (0.0, 10.0),
        "l": (0.0, 40.0),
        "x": (10.0, 26.0),
        "y": (26.0, 41.0),
        "w": (41.0, 47.9),
    }
    assert spans.keys() == expected.keys()
    for job_id, (start, end) in expected.items():
        assert spans[job_id] == pytest.approx((start, end), rel=1e-12)
