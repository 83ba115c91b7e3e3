"""Guided A-SRPT under prediction error: the bound holds, and its checks can fail.

Property tests run the theorem of :mod:`ddlsched.proofs_checks.prediction` on tiny
instances whose ``OPT(A)`` the brute-force oracle proves, at errors ``E`` of
0, 0.5 and 2, perturbing the counts adversarially (all over, all under, the
worst of every extreme assignment) and at random. The other tests catch the
slips a derivation or an implementation could make: ``a`` and ``b`` swapped,
a factor at ``E = 0`` that is not Theorem 1's, perturbations outside their
bounds, unseeded randomness, a check that cannot say "violated".
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from ddlsched.proofs_checks import claims
from ddlsched.proofs_checks.bounds import RhoCheck, rho_of
from ddlsched.proofs_checks.claims import ClaimStatus, Value
from ddlsched.proofs_checks.prediction import (
    PredictionError,
    prediction_factor,
    prediction_instance_bound,
    prediction_theorem1,
    srpt_total,
)
from hypothesis import assume, given, settings, target
from hypothesis import strategies as st

from ddlsched.api import simulate
from ddlsched.core.generators import generate
from ddlsched.core.model import Instance, Schedule
from ddlsched.core.params import OnlineParams
from ddlsched.core.virtual import srpt
from ddlsched.experiments.check import claim_family
from ddlsched.experiments.prediction_error import (
    ErrorStudy,
    error_study,
    guided_schedule,
    perturbed_predictions,
    prediction_records,
    under_prediction_family,
    worst_predictions,
)
from tests.oracles import brute_force_a
from tests.strategies import TINY_INTEGRAL, hand_instances

ERRORS = (0.0, 0.5, 2.0)


@st.composite
def unit_instances(draw: st.DrawFn, max_jobs: int = 4) -> Instance:
    """Tiny instances with arbitrary graphs (:func:`hand_instances`), unit weights
    (the theorem's), counts scaled by 3 so that an error of 0.5 moves every count
    off the one-iteration floor."""
    instance = draw(hand_instances(max_jobs=max_jobs))
    return instance.replace(
        jobs=tuple(j.replace(weight=1.0, iterations=3 * j.iterations) for j in instance.jobs)
    )


def _exact_inputs(instance: Instance) -> tuple[Value, RhoCheck]:
    rho = rho_of(instance)
    assume(rho.exact)
    return Value(brute_force_a(instance), True), rho


@pytest.mark.parametrize("error", ERRORS)
@settings(max_examples=60)
@given(instance=unit_instances(), seed=st.integers(0, 1000))
def test_theorem_holds_on_tiny_instances(error: float, instance: Instance, seed: int) -> None:
    """At E in {0, 0.5, 2}, all over, all under and a seeded random perturbation: the
    theorem and the instance bound are conclusive and hold (steered to a high lhs/rhs)."""
    opt_a, rho = _exact_inputs(instance)
    records = prediction_records(instance, error, opt_a, rho, seed=seed)
    assert len(records) == 6
    for record in records:
        assert record.status is ClaimStatus.HOLDS, (record.name, record.lhs, record.rhs)
        assert record.lhs <= record.instance_bound * (1 + 1e-9) + 1e-9
    theorem = [r for r in records if claim_family(r.name) == "prediction_theorem1"]
    for record in theorem:  # (*) sits between the schedule and the theorem's right side
        assert record.instance_bound <= record.rhs * (1 + 1e-9)
    target(max(r.ratio for r in theorem), label=f"lhs/rhs at E={error}")


@settings(max_examples=25)
@given(instance=unit_instances(max_jobs=3), error=st.sampled_from(ERRORS[1:]))
def test_worst_extreme_assignment_holds(instance: Instance, error: float) -> None:
    """The worst of the 3^n assignments K/(1+E), K, (1+E)K satisfies the theorem."""
    opt_a, rho = _exact_inputs(instance)
    record, predictions = worst_predictions(instance, error, opt_a, rho)
    assert record.status is ClaimStatus.HOLDS
    assert set(predictions) == {job.id for job in instance.jobs}
    assert record.over <= 1 + error + 1e-12 and record.under <= 1 + error + 1e-12


@settings(max_examples=10)
@given(st.integers(0, 100_000))
def test_zero_error_gives_theorem1(seed: int) -> None:
    """E = 0: predictions are the counts, a = b = 1, and the record has Theorem 1's
    factor, right side and left side on the same instance (catches a factor that
    does not reduce to 2 + M/(M - g_max + 1))."""
    instance = generate(TINY_INTEGRAL.replace(load=1.0), seed)
    opt_a, rho = Value(brute_force_a(instance), True), rho_of(instance)
    guided = simulate(instance, "asrpt", bound=False).schedule
    assert guided is not None
    reference = claims.theorem1(instance, guided, opt_a, rho)
    for record in prediction_records(instance, 0.0, opt_a, rho)[::2]:
        assert (record.over, record.under) == (1.0, 1.0)
        assert record.bound == pytest.approx(reference.bound, rel=1e-12)
        assert record.rhs == pytest.approx(reference.rhs, rel=1e-12)
        assert record.lhs == pytest.approx(reference.lhs, rel=1e-12)
        assert record.status is reference.status


def test_hand_worked_under_prediction() -> None:
    """The family's member b = 4, head 2, two small jobs, worked by hand.

    One GPU. The long job (8 iterations of 1 s, predicted 2) completes on the
    virtual machine at 2, where the small jobs arrive; they complete virtually
    at 3 and 4: SRPT(v_hat) = 9, sum v_hat = 4. Real: long [2, 10], smalls end
    at 11 and 12: sum C = 33. OPT(A) = 19 (smalls at 2-3, 3-4, long 4-12).
    a = 1, b = 4, kappa = 1: factor 1 + 1 (1 + 4) = 6, instance bound
    5 * 9 - 4 * 4 + 10 = 39. With a and b swapped the factor would be
    1 + 4 (1 + 1) = 9, and the instance bound (1 + 1) 9 - 4 + 10 = 24 < 33:
    a swap in step (1) is a violation here.
    """
    instance, predictions, opt = under_prediction_family(4, 2, 2)
    assert opt == brute_force_a(instance) == 19
    schedule = guided_schedule(instance, predictions)
    record = prediction_theorem1(
        instance, schedule, predictions, Value(opt, True), rho_of(instance)
    )
    assert (record.over, record.under) == (1.0, 4.0)
    assert record.lhs == pytest.approx(33)
    assert record.bound == pytest.approx(6)
    assert record.rhs == pytest.approx(114)
    assert record.instance_bound == pytest.approx(39)
    assert prediction_factor(1, 1, over=4.0, under=1.0) == pytest.approx(9)
    sizes = [predictions[job.id] for job in instance.jobs]  # M = g = alpha = 1
    virtual = srpt_total(sizes, [job.release for job in instance.jobs])
    assert virtual == pytest.approx(9)
    swapped = (1 + 1.0) * virtual - 1.0 * sum(sizes) + 10
    assert swapped == pytest.approx(24) and swapped < record.lhs


def test_hand_worked_instance_bound_with_kappa_two() -> None:
    """Catches kappa misplaced in the instance bound (multiplied in one term, divided in the
    other), which kappa = 1 above cannot show. One server of 2 GPUs (kappa = 2 / (2 - 2 + 1)
    = 2), 1 s per iteration, both released at 0: L (2 GPUs, 8 iterations, predicted 2: b = 4)
    and S (1 GPU, 1 iteration, predicted exactly). Virtual sizes g K_hat / M: 2 and 0.5;
    SRPT(v_hat) = 0.5 + 2.5 = 3; sum v_hat = 2.5; sum K alpha_max = 9. Bound:
    (1 + 4 * 2) 3 - 4 * 2 * 2.5 + 9 = 16 (with kappa divided in the second term: 31)."""
    from ddlsched.proofs_checks.prediction import PredictionError, instance_bound

    from ddlsched.core.model import Cluster, Job

    instance = Instance(
        Cluster((2,), 1.0, 1.0), (Job("L", 0.0, 8, 1.0, 2), Job("S", 0.0, 1, 1.0, 1))
    )
    predictions = {"L": 2.0, "S": 1.0}
    assert PredictionError.of(instance, predictions) == PredictionError(1.0, 4.0)
    assert instance_bound(instance, predictions) == pytest.approx(16.0)


def test_family_approaches_one_plus_b() -> None:
    """Tightness in b: on the family the ratio sum C / OPT(A) exceeds b - 2 at b = 10
    (the theorem allows 2 + b; the family tends to 1 + b), so b's coefficient cannot fall."""
    instance, predictions, opt = under_prediction_family(10, 1000, 30)
    schedule = guided_schedule(instance, predictions)
    record = prediction_theorem1(
        instance, schedule, predictions, Value(opt, True), rho_of(instance)
    )
    assert record.status is ClaimStatus.HOLDS
    assert record.lhs / opt > 8
    assert record.bound == pytest.approx(12)


@settings(max_examples=30)
@given(
    instance=unit_instances(),
    error=st.floats(0, 3),
    how=st.sampled_from(["over", "under", "random"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_perturbations_stay_within_the_error(
    instance: Instance, error: float, how: str, seed: int
) -> None:
    """Every bounded perturbation has a, b <= 1 + E and K_hat >= 1; all over gives
    a = 1 + E exactly and b = 1, all under the reverse (up to the one-iteration floor)."""
    predictions = perturbed_predictions(instance, error, how, seed)
    found = PredictionError.of(instance, predictions)
    assert min(predictions.values()) >= 1
    assert found.over <= (1 + error) * (1 + 1e-12)
    assert found.under <= (1 + error) * (1 + 1e-12)
    if how == "over":
        assert found.over == pytest.approx(1 + error) and found.under == 1
    if how == "under":
        assert found.over == 1
        widest = max(min(j.iterations, 1 + error) for j in instance.jobs)
        assert found.under == pytest.approx(widest)


@pytest.mark.parametrize("how", ["random", "lognormal"])
def test_perturbations_are_seeded(how: str) -> None:
    """The same seed gives the same predictions; another seed other ones."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=6, max_iterations=50), 3)
    first = perturbed_predictions(instance, 0.5, how, seed=11)
    assert first == perturbed_predictions(instance, 0.5, how, seed=11)
    assert first != perturbed_predictions(instance, 0.5, how, seed=12)
    assert perturbed_predictions(instance, 0.0, how, seed=11) == {
        job.id: float(job.iterations) for job in instance.jobs
    }


def test_checks_can_fail_and_say_when_they_cannot_conclude() -> None:
    """Negative controls: an OPT(A) far too small is a violation; an inexact OPT(A),
    an inexact rho, other weights or an infeasible schedule is inconclusive."""
    instance, predictions, opt = under_prediction_family(4, 2, 2)
    schedule = guided_schedule(instance, predictions)
    rho = rho_of(instance)

    def check(opt_a: Value, used_rho: RhoCheck = rho) -> ClaimStatus:
        return prediction_theorem1(instance, schedule, predictions, opt_a, used_rho).status

    assert check(Value(opt / 10, True)) is ClaimStatus.VIOLATED
    assert check(Value(opt, False)) is ClaimStatus.INCONCLUSIVE
    assert (
        check(Value(opt, True), dataclasses.replace(rho, exact=False)) is ClaimStatus.INCONCLUSIVE
    )
    heavy = instance.replace(jobs=tuple(j.replace(weight=2.0) for j in instance.jobs))
    assert (
        prediction_theorem1(heavy, schedule, predictions, Value(2 * opt, True), rho).status
        is ClaimStatus.INCONCLUSIVE
    )
    early = Schedule(tuple(dataclasses.replace(e, start=0.0, end=None) for e in schedule.jobs))
    bad = prediction_instance_bound(instance, early, predictions)
    assert bad.status is ClaimStatus.INCONCLUSIVE and "infeasible" in bad.detail
    late = Schedule(
        tuple(dataclasses.replace(e, start=e.start + 100, end=None) for e in schedule.jobs)
    )  # feasible, but no guided schedule: 333 > 39
    record = prediction_instance_bound(instance, late, predictions)
    assert record.status is ClaimStatus.VIOLATED
    # The report says which inequality failed, with the instance's b (a lost statement
    # leaves a row nobody can read).
    under = PredictionError.of(instance, predictions).under
    assert record.statement == (
        f"sum C(guided A-SRPT, b={under:.6g}) <= (1 + b kappa) SRPT(v_hat) "
        "- b kappa sum v_hat + sum K alpha_max"
    )


def test_predictions_are_validated() -> None:
    """A missing, zero or non-finite K_hat, and a or b below 1, are refused by name."""
    instance, predictions, _ = under_prediction_family(2, 1, 1)
    with pytest.raises(ValueError, match="'small0'"):
        PredictionError.of(instance, {"long": 1.0})
    with pytest.raises(ValueError, match="'long'"):
        PredictionError.of(instance, dict(predictions, long=0.0))
    with pytest.raises(ValueError, match="'long'"):
        PredictionError.of(instance, dict(predictions, long=math.inf))
    with pytest.raises(ValueError, match="a, b >= 1"):
        prediction_factor(4, 2, over=0.5, under=1.0)
    with pytest.raises(ValueError, match="error"):
        perturbed_predictions(instance, -0.1)


def test_record_names_and_json() -> None:
    """Records are named prediction_*[how E=...] (tallied as two claims) and their JSON
    carries a, b and the instance bound."""
    instance = generate(TINY_INTEGRAL, 5)
    records = prediction_records(
        instance, 0.5, Value(brute_force_a(instance), True), rho_of(instance)
    )
    assert {claim_family(r.name) for r in records} == {
        "prediction_theorem1",
        "prediction_instance_bound",
    }
    assert [r.name for r in records[::2]] == [
        f"prediction_theorem1[{how} E=0.5]" for how in ("over", "under", "random")
    ]
    document = records[0].to_dict()
    assert document["over"] == pytest.approx(1.5) and document["under"] == 1.0
    assert document["instance_bound"] == pytest.approx(records[0].instance_bound)


@settings(max_examples=15)
@given(st.integers(0, 100_000))
def test_adaptive_rule_leaves_guided_schedules_unchanged(seed: int) -> None:
    """The premise "fixed predictions": in the guided mode only running jobs are revised,
    and they have already completed on the virtual machine, so the outrun factor
    changes no start (up to rounding). Guards against a revision that reorders."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=6, load=1.0, max_iterations=8), seed)
    starts = []
    for factor in (1.01, 1e6):
        params = OnlineParams(predictor="noisy", noise=1.0, outrun_factor=factor)
        result = simulate(instance, "asrpt", params=params, seed=seed, bound=False)
        assert result.schedule is not None
        starts.append({e.id: e.start for e in result.schedule.jobs})
    for job_id, start in starts[0].items():
        assert starts[1][job_id] == pytest.approx(start, rel=1e-9, abs=1e-9)


@settings(max_examples=30)
@given(
    st.lists(
        st.tuples(st.floats(0.01, 10), st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.25])),
        min_size=1,
        max_size=8,
    )
)
def test_srpt_total_agrees_with_the_virtual_machine(jobs: list[tuple[float, float]]) -> None:
    """The checks' own SRPT gives the total of the policies' virtual machine."""
    sizes, releases = [s for s, _ in jobs], [r for _, r in jobs]
    completions, _ = srpt(sizes, releases)
    assert srpt_total(sizes, releases) == pytest.approx(sum(completions.values()), rel=1e-9)


def test_error_study_and_crossover() -> None:
    """The study pools one JCT per job and seed per policy and level; LAS and FIFO
    repeat across levels; the crossover is the first level where LAS's mean is lower."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=6, load=1.0, max_iterations=8), 1)
    study = error_study(instance, (0.0, 2.0), seeds=(0, 1))
    assert set(study.jct) == {"asrpt", "asrpt-greedy", "sjf", "las", "fifo"}
    for levels in study.jct.values():
        assert all(len(values) == 12 for values in levels.values())
    assert np.array_equal(study.jct["las"][0.0], study.jct["las"][2.0])
    made = ErrorStudy(
        (0.0, 1.0, 2.0),
        {
            "asrpt": {0.0: np.array([1.0]), 1.0: np.array([3.0]), 2.0: np.array([5.0])},
            "las": {e: np.array([2.0]) for e in (0.0, 1.0, 2.0)},
        },
    )
    assert made.crossover() == 1.0
    assert made.crossover(statistic="p50_jct") == 1.0
    assert (
        ErrorStudy(
            (0.0,), {"asrpt": {0.0: np.array([1.0])}, "las": {0.0: np.array([2.0])}}
        ).crossover()
        is None
    )
    assert made.summary(within=(2.5,)).loc[("asrpt", 1.0), "% within 2.5 s"] == 0.0
