"""The elastic sandwich: the rank-combined and Lagrangian lower bounds, the offline schedule.

Truths: the goodput model itself (allocations drawn at random, each epoch's time and
GPU-seconds computed from :meth:`Application.goodput`), the exact slotted optimum of
one-epoch toys (:func:`ddlsched.formulations.elastic.solve_malleable`, over a subset of
the simulator's runs, so above the least total of any run), every registered policy's,
the offline schedule's and a random adversary's checked runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ddlsched.algorithms.elastic import ELASTIC_POLICIES, ElasticSimParams, simulate_elastic
from ddlsched.algorithms.elastic.offline import (
    OFFLINE_ELASTIC_SCHEDULES,
    MarginalCeiling,
    MarginalCeilingParams,
    SrptCeiling,
)
from ddlsched.formulations.elastic import malleable_from_elastic, solve_malleable
from ddlsched.formulations.elastic_bounds import elastic_flow_bound, job_needs
from ddlsched.formulations.elastic_lagrangian import (
    area_curve,
    elastic_lagrangian_bound,
    majorant_vertices,
)
from ddlsched.proofs_checks.elastic import check_elastic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.core.elastic import (
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    load_application,
)
from ddlsched.experiments.elastic import elastic_sandwich
from tests.elastic.test_flow_bound import _RandomAllocations
from tests.strategies import small_elastic_workloads


def _flow(result) -> float:
    """Total JCT of a run."""
    return math.fsum(result.jct.values())


@pytest.mark.parametrize("model", ["cifar10", "yolov3", "bert", "imagenet"])
def test_no_allocation_needs_fewer_gpu_seconds_than_the_area_curve(model: str) -> None:
    """For random per-epoch allocations (GPU count, nodes, micro-batch, accumulation, far
    outside the policies' options), the time and GPU-seconds of the job's epochs computed
    from the goodput model: the area curve at that time is at most those GPU-seconds."""
    app = load_application(model, min(load_application(model).epochs, 4))
    curve = area_curve(app, 16)
    works = np.diff(np.concatenate(([0.0], app.epoch_ends[: app.epochs])))
    rng = np.random.default_rng(7)
    for _ in range(150):
        time = area = 0.0
        for epoch, work in enumerate(works):
            gpus = int(rng.integers(1, 17))
            nodes = 1 if gpus <= 4 and rng.random() < 0.5 else max(2, math.ceil(gpus / 4))
            atomic = int(rng.integers(1, 4 * app.max_local_bsz))
            rate = float(app.goodput(nodes, gpus, atomic, int(rng.integers(0, 3)), epoch))
            time += work / rate
            area += gpus * work / rate
        assert curve(np.array([time]))[0] <= area * (1 + 1e-9)


def test_the_area_curve_is_convex_non_increasing_and_starts_at_the_floor() -> None:
    """a(D) is infinite below the job's floor time (its epochs at their job ceilings),
    non-increasing and convex after it, and ends at the per-GPU ceilings' area."""
    app = load_application("cifar10", 20)
    curve = area_curve(app, 64)
    need = job_needs([ElasticJob("c", "cifar10", 0.0, 1, 128, 20)], 64, 60.0, 30.0, [app])[0]
    assert curve.durations[0] == pytest.approx(need.floor - 30.0, rel=1e-9)
    assert curve.areas[-1] == pytest.approx(need.area - 30.0, rel=1e-6)
    assert math.isinf(curve(np.array([curve.durations[0] * 0.99]))[0])
    slopes = np.diff(curve.areas) / np.diff(curve.durations)
    assert np.all(slopes <= 1e-9) and np.all(np.diff(slopes) >= -1e-9)


def test_the_majorant_vertices_by_hand() -> None:
    """Rates 1, 1.5, 2.5, 2.6 on 1-4 GPUs: the hull from the origin keeps (1, 1), drops
    (2, 1.5) (under the chord to (3, 2.5)), keeps (3, 2.5) and the top (4, 2.6)."""
    vertices = majorant_vertices(np.array([1.0, 1.5, 2.5, 2.6]))
    assert vertices == [(1.0, 1.0), (3.0, 2.5), (4.0, 2.6)]


@pytest.mark.parametrize(
    "policy", [*ELASTIC_POLICIES.names(), *OFFLINE_ELASTIC_SCHEDULES.names(), "random-2"]
)
def test_no_checked_run_beats_the_lagrangian_bound(
    policy: str, mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """Every policy, the offline schedules and random allocations on overlapping arrivals
    on 2 x 4 GPUs: each run passes the check and its total JCT is at least the
    Lagrangian bound, which is at least the per-job floors."""
    if policy in OFFLINE_ELASTIC_SCHEDULES:
        chooser = OFFLINE_ELASTIC_SCHEDULES[policy]()
    elif policy.startswith("random"):
        chooser = _RandomAllocations(int(policy[-1]))
    else:
        chooser = ELASTIC_POLICIES[policy]()
    result = simulate_elastic(mixed_workload, chooser, small_cluster)
    assert check_elastic(result) == []
    gpus = small_cluster.total_gpus
    bound = elastic_lagrangian_bound(mixed_workload.jobs, gpus, steps=15, upper=_flow(result))
    floors = elastic_flow_bound(mixed_workload.jobs, small_cluster.total_gpus)
    assert floors.per_job * (1 - 1e-9) <= bound.value <= _flow(result)


def test_pricing_gpu_seconds_lifts_the_bound_on_a_crowded_cluster(
    mixed_workload: ElasticWorkload,
) -> None:
    """On one 4-GPU node the jobs cannot all run wide: the Lagrangian bound exceeds the
    per-job floors; with no steps it is the floors (prices 0)."""
    jobs = mixed_workload.jobs
    floors = elastic_flow_bound(jobs, 4)
    assert elastic_lagrangian_bound(jobs, 4, steps=0).value == pytest.approx(floors.per_job)
    assert elastic_lagrangian_bound(jobs, 4, steps=20).value > 1.05 * floors.per_job


def test_the_rank_combination_is_at_least_each_part(mixed_workload: ElasticWorkload) -> None:
    """Floors and squashed SRPT combined rank by rank: at least both parts, and the bound's
    value."""
    for gpus in (1, 2, 4, 8, 64):
        bound = elastic_flow_bound(mixed_workload.jobs, gpus)
        assert bound.combined >= max(bound.per_job, bound.squashed) * (1 - 1e-12)
        assert bound.value == pytest.approx(bound.combined)


@settings(
    max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(small_elastic_workloads(max_jobs=3, models=("cifar10", "bert", "yolov3")), st.data())
def test_every_bound_is_below_the_slotted_optimum(workload: ElasticWorkload, data) -> None:
    """One-epoch jobs on one 4-GPU node, batch or spread arrivals: the exact slotted optimum
    over the policies' configurations (a set of simulator runs) is at least every bound."""
    cluster = ElasticCluster(1, 4)
    instance = malleable_from_elastic(workload, cluster)
    optimum = solve_malleable(instance)
    assert optimum.optimal
    flow = optimum.objective - math.fsum(job.submit_time for job in workload.jobs)
    steps = data.draw(st.sampled_from((0, 5, 20, 60)))
    # the target steers the steps only: a total far below or above the optimum, or the
    # optimum itself, must leave the bound below the optimum
    upper = data.draw(st.sampled_from((None, 0.0, 0.5 * flow, flow, 10 * flow)))
    lagrangian = elastic_lagrangian_bound(workload.jobs, 4, steps=steps, upper=upper).value
    combined = elastic_flow_bound(workload.jobs, 4).value
    assert max(lagrangian, combined) <= flow * (1 + 1e-7)


def test_the_offline_schedule_goes_beyond_the_policies_options() -> None:
    """srpt-ceiling runs ncf on more than one GPU and batches past the largest measured
    one (no policy of the study may), and its run passes the check."""
    workload = ElasticWorkload(
        (
            ElasticJob("n", "ncf", 0.0, 1, 32768, 1),
            ElasticJob("c", "cifar10", 0.0, 1, 128, 1),
        )
    )
    result = simulate_elastic(workload, SrptCeiling(), ElasticCluster(2, 4))
    assert check_elastic(result) == []
    first = result.records[0].allocations
    assert first["n"].replicas > 1 or first["c"].replicas > 1
    assert any(
        alloc.batch_size > load_application(name_model, 1).max_batch_size
        for record in result.records
        for name, alloc in record.allocations.items()
        for name_model in [{"n": "ncf", "c": "cifar10"}[name]]
    )


def test_the_sandwich_takes_the_best_checked_run(
    mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """elastic_sandwich on a subset of policies: the upper end is the least total among
    them and the offline schedule, each equal to a separate run's; the lower end is the
    rank-combined bound; to_dict carries both, the schedule and the ratio. A typed
    cluster is refused."""
    params = ElasticSimParams()
    sandwich = elastic_sandwich(mixed_workload, small_cluster, params, policies=["fifo", "pollux"])
    assert set(sandwich.totals) == {"fifo", "pollux", *OFFLINE_ELASTIC_SCHEDULES.names()}
    alone = simulate_elastic(mixed_workload, ELASTIC_POLICIES["pollux"](), small_cluster)
    assert sandwich.totals["pollux"] == pytest.approx(_flow(alone))
    assert sandwich.upper == min(sandwich.totals.values())
    assert 0 < sandwich.lower <= sandwich.upper
    record = sandwich.to_dict()
    assert record["flow_upper_bound_method"] == sandwich.upper_method
    assert record["flow_upper_over_lower"] == pytest.approx(sandwich.upper / sandwich.lower)
    assert record["best_online"] in {"fifo", "pollux"}
    typed = ElasticCluster.from_type_counts([("v100", 1), ("k80", 1)], 4)
    with pytest.raises(ValueError, match="cluster: one GPU type only, got v100, k80"):
        elastic_sandwich(mixed_workload, typed, params, policies=["fifo"])


def test_a_run_claims_no_upper_end_of_the_optimum(
    mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """ElasticRun.summary (what ``simulate --json`` prints on a Pollux workload) keeps the
    lower end of the elastic model's interval (the run's total over a proven bound) but
    offers no upper end: the run's own total would be an interval ending at the run, which
    says nothing about it; the note names where a real one comes from."""
    from ddlsched.experiments.elastic import run_elastic

    run = run_elastic(
        mixed_workload, ELASTIC_POLICIES["fifo"](), small_cluster, ElasticSimParams()
    )
    summary = run.summary()
    assert run.verified and summary["flow_model"] == "elastic"
    assert summary["flow_ratio"] == pytest.approx(
        summary["total_flow_time"] / summary["flow_lower_bound"]
    )
    assert summary["flow_ratio"] >= 1
    assert summary["flow_upper_bound"] is None and summary["flow_upper_bound_method"] is None
    assert summary["flow_upper_over_lower"] is None
    assert "no offline schedule computed" in summary["flow_upper_bound_note"]


def test_the_marginal_fill_gives_each_job_a_gpu_then_the_best_savings() -> None:
    """Three jobs' weighted remaining times on 0-4 GPUs, hand-worked: every job first gets
    one GPU (on ties, the earlier job); the fourth GPU goes to the job it saves most for
    (40 s against 10 s and 5 s); with two GPUs the third job gets none. Bad settings are
    refused naming the field."""
    from ddlsched.algorithms.elastic.offline import _fill

    big = 1e12
    costs = [
        np.array([big, 100.0, 90.0, 85.0, 80.0]),
        np.array([big, 100.0, 60.0, 50.0, 45.0]),
        np.array([big, 100.0, 95.0, 93.0, 92.0]),
    ]
    assert _fill(costs, 4) == [1, 2, 1]
    assert _fill(costs, 2) == [1, 1, 0]
    params = MarginalCeilingParams(srpt_power=0.0, restart_factor=6.0)
    with pytest.raises(ValueError, match="srpt_power"):
        MarginalCeilingParams(srpt_power=-1.0)
    assert MarginalCeiling(params).marginal.restart_factor == 6.0
