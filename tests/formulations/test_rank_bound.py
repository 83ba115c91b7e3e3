"""The rank bound (``"rank"``, bound 8 of ddlsched.formulations.lower_bounds): per-job
floors and SRPT's completions on the squashed machine combined rank by rank, layered by
weight; below the optimum of problem A and of the preemptive model (brute force sharing
no code with it), with its flow terms non-negative."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ddlsched.formulations import lower_bounds as bounds_module
from ddlsched.formulations.lower_bounds import (
    PREEMPTIVE_BOUNDS,
    SAFETY,
    BoundInputs,
    flow_allowance,
    lower_bounds,
    rank_terms,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.model import Cluster, Instance, Job
from tests.examples import two_blockers
from tests.oracles import brute_force_a, preemptive_optimum_by_seconds
from tests.strategies import edgeless_instances, hand_instances, weighted_instances


def _unit(instance: Instance) -> Instance:
    """The same jobs with every weight 1."""
    return instance.replace(jobs=tuple(job.replace(weight=1.0) for job in instance.jobs))


def _batch(instance: Instance) -> Instance:
    """The same jobs, every one released at 0."""
    return instance.replace(jobs=tuple(job.replace(release=0.0) for job in instance.jobs))


def _rank(instance: Instance) -> tuple[float, float]:
    """The rank bound's value and flow value, through the public entry point."""
    (found,) = lower_bounds(instance, ["rank"])
    assert found.valid
    return found.value, found.flow_value


def _assert_below(instance: Instance, optimum: float) -> None:
    """The rank bound is at most ``optimum`` on ``sum w C`` and on the flow time."""
    value, flow = _rank(instance)
    releases = sum(job.weight * job.release for job in instance.jobs)
    assert value <= optimum * (1 + 1e-9), (value, optimum, instance)
    assert flow <= (optimum - releases) + 1e-9 * optimum, (flow, optimum, instance)


def _two_crossed() -> Instance:
    """A long narrow job at 0 (one GPU, 6 s) and a wide one at 2 (two GPUs, 4 s) on one
    2-GPU server. Squashed sizes 3 and 4: SRPT completes them at 3 and 7; floors 6 and 6.
    Rank bound ``max(6, 3) + max(6, 7) = 13``; the job bound 12; preemptive WSPT's mean
    busy times 1.5 and 5, so bound 3 gives ``1.5 + 3 + 5 + 2 = 11.5``; SRPT alone 10.
    Both models' optimum 16 (the narrow job first, 6 + 10; the wide one cannot overlap
    it, and stopping the narrow job at 2 still ends it at 10)."""
    cluster = Cluster((2,), bandwidth_intra=1.0, bandwidth_inter=1.0)
    jobs = (
        Job(id="narrow", release=0.0, iterations=6, compute_time=1.0, gpus=1),
        Job(id="wide", release=2.0, iterations=4, compute_time=1.0, gpus=2),
    )
    return Instance(cluster=cluster, jobs=jobs)


def test_rank_bound_by_hand_beats_every_other_fast_bound() -> None:
    """On the two crossed jobs the rank bound is 13, above every other fast bound (at most
    12) and at most the optimum 16 found by enumeration; its flow value is 13 - 2."""
    instance = _two_crossed()
    values = {bound.name: bound.value for bound in lower_bounds(instance)}
    assert values["rank"] == pytest.approx(13.0)
    assert max(v for name, v in values.items() if name != "rank") <= 12.0 + 1e-9
    assert brute_force_a(instance) == pytest.approx(16.0)
    assert preemptive_optimum_by_seconds(instance) == pytest.approx(16.0)
    assert _rank(instance)[1] == pytest.approx(11.0)


def _side_by_side() -> Instance:
    """A long narrow job (one GPU, 6 s) and a short wide one (two GPUs, 4 s) at 0 on one
    3-GPU server: they run side by side, so the optimum is ``6 + 4 = 10``. SRPT on the
    squashed machine (sizes 2 and 8/3) completes the narrow job at 2 and the wide one at
    14/3: matched job by job with the floors 6 and 4 that would give ``6 + 14/3 > 10``;
    matched rank by rank, ``max(4, 2) + max(6, 14/3) = 10``, the optimum."""
    cluster = Cluster((3,), bandwidth_intra=1.0, bandwidth_inter=1.0)
    jobs = (
        Job(id="narrow", release=0.0, iterations=6, compute_time=1.0, gpus=1),
        Job(id="wide", release=0.0, iterations=4, compute_time=1.0, gpus=2),
    )
    return Instance(cluster=cluster, jobs=jobs)


def test_ranks_are_matched_in_sorted_order_not_job_by_job() -> None:
    """On the jobs side by side the rank bound is exactly the optimum 10 (both models),
    which a job-by-job maximum of floor and SRPT completion would overshoot."""
    instance = _side_by_side()
    assert brute_force_a(instance) == pytest.approx(10.0)
    assert preemptive_optimum_by_seconds(instance) == pytest.approx(10.0)
    assert _rank(instance)[0] == pytest.approx(10.0)
    _assert_below(instance, 10.0)


def test_weights_between_levels_are_rounded_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two levels for three distinct weights (0.5, 1, 2): the two blockers (weight 1, both
    at 0, 4 s on the whole 2-GPU server, rank bound 12, their optimum) count at level 0.5
    and their other 0.5 as floors (4 + 4); with a light job at 100 and a heavy one at 200
    (1 s each) the bound is ``0.5 * 8 + 0.5 * (4 + 8 + 101 + 201) + 1.5 * 201 = 462.5``,
    below the optimum 464.5. Rounded up to 2, the blockers would count 2 * 12 - 8 = 16
    where they cost 12 (468.5)."""
    monkeypatch.setattr(bounds_module, "RANK_WEIGHT_LEVELS", 2)
    far = (
        Job(id="light", release=100.0, iterations=1, compute_time=1.0, gpus=1, weight=0.5),
        Job(id="heavy", release=200.0, iterations=1, compute_time=1.0, gpus=1, weight=2.0),
    )
    blockers = two_blockers()
    layered = blockers.replace(jobs=(*blockers.jobs, *far))
    optimum = brute_force_a(layered)
    assert optimum == pytest.approx(12.0 + 0.5 * 101.0 + 2.0 * 201.0)
    _assert_below(layered, optimum)
    assert _rank(layered)[0] == pytest.approx(462.5)


def test_rank_bound_holds_in_the_preemptive_model() -> None:
    """The rank bound is one of the bounds offered for the preemptive model."""
    assert "rank" in PREEMPTIVE_BOUNDS


@settings(max_examples=30, deadline=None)
@given(hand_instances(max_jobs=3))
def test_rank_bound_below_the_optimum_of_a(instance: Instance) -> None:
    """Unit weights, uneven servers, arbitrary graphs, multi-GPU jobs, spread non-integral
    releases: at most problem A's optimum by enumeration."""
    unit = _unit(instance)
    _assert_below(unit, brute_force_a(unit))


@settings(max_examples=25, deadline=None)
@given(hand_instances(max_jobs=4))
def test_rank_bound_below_the_optimum_of_a_on_batch_arrivals(instance: Instance) -> None:
    """Unit weights, every job released at 0 (congestion greatest): at most problem A's
    optimum."""
    batch = _unit(_batch(instance))
    _assert_below(batch, brute_force_a(batch))


@settings(max_examples=25, deadline=None)
@given(weighted_instances(max_jobs=3, typed=True))
def test_rank_bound_below_the_optimum_on_typed_weighted_instances(instance: Instance) -> None:
    """Typed GPUs with per-type compute times, fractional weights (layers of weight),
    multi-GPU jobs: at most problem A's optimum, with weights and with unit weights."""
    _assert_below(instance, brute_force_a(instance))
    unit = _unit(instance)
    _assert_below(unit, brute_force_a(unit))


@settings(max_examples=40, deadline=None)
@given(edgeless_instances(), st.booleans())
def test_rank_bound_below_thepreemptive_optimum_by_seconds(instance: Instance, unit: bool) -> None:
    """At most the best preemptive schedule found by dynamic programming over seconds
    (multi-GPU jobs on one or two servers, batch and spread releases; unit weights and
    fractional ones)."""
    chosen = _unit(instance) if unit else instance
    _assert_below(chosen, preemptive_optimum_by_seconds(chosen))


@settings(max_examples=40, deadline=None)
@given(weighted_instances(max_jobs=4))
def test_rank_terms_are_non_negative_flow_shares(instance: Instance) -> None:
    """Every job's flow share ``t_i - w_i r_i`` is non-negative (each rank's term is set
    against a release of the same rank), the bound is at least the job bound and, with
    unit weights, at least SRPT's bound on the squashed machine; the flow value is the
    value less ``sum w r`` up to rounding."""
    for chosen in (instance, _unit(instance)):
        inputs = BoundInputs.of(chosen)
        terms = rank_terms(inputs)
        assert np.all(terms - inputs.weights * inputs.releases >= 0.0)
        values = {b.name: b for b in lower_bounds(chosen, inputs=inputs)}
        rank = values["rank"]
        assert rank.value >= values["job"].value * (1 - 1e-12)
        if inputs.unit_weights:
            assert rank.value >= values["squashed-area"].value * (1 - 1e-12)
        release_weight = math.fsum(inputs.weights * inputs.releases)
        assert rank.flow_value == pytest.approx(rank.value - release_weight, abs=1e-6)


def test_equal_weights_scale_the_unit_rank_bound() -> None:
    """Every weight 2.5: one layer, the unit-weight bound times 2.5 (on the two crossed
    jobs, 32.5)."""
    instance = _two_crossed()
    heavy = instance.replace(jobs=tuple(job.replace(weight=2.5) for job in instance.jobs))
    assert _rank(heavy)[0] == pytest.approx(2.5 * 13.0)


def test_weights_layer_by_hand() -> None:
    """The two crossed jobs, the narrow one of weight 1 and the wide one of weight 3:
    layer 1 (both jobs, weight 1) gives the unit bound 13; layer 2 (the wide job alone,
    weight 3 - 1) its own SRPT, ``2 + 4 = 6``, against its floor 6: ``2 * 6``. In all 25,
    below problem A's weighted optimum 30 (the wide job first, ``3 * 6 + 12``; the narrow
    one first gives ``6 + 3 * 10 = 36``)."""
    instance = _two_crossed()
    narrow, wide = instance.jobs
    weighted = instance.replace(jobs=(narrow, wide.replace(weight=3.0)))
    assert _rank(weighted)[0] == pytest.approx(13.0 + 2.0 * 6.0)
    assert brute_force_a(weighted) == pytest.approx(30.0)


@settings(max_examples=15, deadline=None)
@given(weighted_instances(max_jobs=3))
def test_many_distinct_weights_are_rounded_down_to_levels(instance: Instance) -> None:
    """With more distinct weights than levels, the weights are rounded down to a few of
    them: the bound stays at most problem A's optimum (two levels, the least and the
    largest weight; a weight between them counts at the least, the rest as floors)."""
    import unittest.mock

    with unittest.mock.patch.object(bounds_module, "RANK_WEIGHT_LEVELS", 2):
        _assert_below(instance, brute_force_a(instance))


def test_rank_bound_is_exact_and_safe_at_trace_times() -> None:
    """Releases near 10^9 s: the flow value is the small per-rank shares summed (here
    ``max(6, 3) + max(6, 7) - 2 = 11`` as for the same jobs at 0), less the rounding
    allowance of a few ulps of 10^9 per job, times the safety factor, not a difference of
    two sums near 10^9."""
    instance = _two_crossed()
    late = instance.replace(
        jobs=tuple(job.replace(release=job.release + 1e9) for job in instance.jobs)
    )
    flow = _rank(late)[1]
    assert flow <= 11.0
    allowance = flow_allowance(BoundInputs.of(late))
    assert 0.0 < allowance < 1e-5
    assert flow == pytest.approx((11.0 - allowance) * SAFETY, rel=1e-12)


def test_rank_shares_go_to_the_jobs_by_order_of_release() -> None:
    """A long narrow job at 0 (one GPU, 10 s, floor 10) and a short wide one at 1 (two GPUs,
    2 s, floor 3) on one 2-GPU server: squashed sizes 5 and 2, SRPT completes them at 7 and
    3. Ranks: ``max(3, 3) = 3`` and ``max(10, 7) = 10``; the first by release (the narrow
    job) takes 3, the second 10, so the flow shares are 3 and 9 (by floor they would be 10
    and 2). With weights 1 and 2 the wide job's layer alone adds ``max(3, 3) = 3``."""
    narrow = Job("narrow", 0.0, 1, 10.0, 1)
    wide = Job("wide", 1.0, 1, 2.0, 2)
    instance = Instance(Cluster((2,), 1.0, 1.0), (narrow, wide))
    assert rank_terms(BoundInputs.of(instance)).tolist() == pytest.approx([3.0, 10.0])
    weighted = instance.replace(jobs=(narrow, wide.replace(weight=2.0)))
    assert rank_terms(BoundInputs.of(weighted)).tolist() == pytest.approx([3.0, 13.0])
