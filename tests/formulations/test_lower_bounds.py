"""Lower bounds on OPT(A) (formulations.lower_bounds): below every proven optimum."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams
from formulations.exact import solve_milp
from formulations.lower_bounds import (
    SAFETY,
    BoundInputs,
    LpSettings,
    best_lower_bound,
    lower_bounds,
    preemptive_wspt_mean_busy_times,
)
from tests.oracles import brute_force_a
from tests.strategies import TINY_INTEGRAL, hand_instances, typed_instances

LP = LpSettings(max_variables=5_000, time_limit=60)


def _all_bounds_valid(instance: Instance, optimum: float) -> None:
    """Every bound, and the LP with the tightest windows (UB = OPT itself), is <= OPT."""
    found = lower_bounds(instance, lp=LP)
    found += lower_bounds(instance, names=[], lp=LP, upper_bound=optimum)
    for bound in found:
        assert bound.valid, bound
        assert bound.value <= optimum * (1 + 1e-9), (bound, optimum, instance)


@settings(max_examples=30)
@given(hand_instances(max_jobs=3))
def test_bounds_below_the_brute_force_optimum(instance: Instance) -> None:
    """Uneven servers, arbitrary graphs, weights 1 and 2, non-integral releases: every
    bound (the LP included) is at most the continuous optimum found by enumeration."""
    _all_bounds_valid(instance, brute_force_a(instance))


@settings(max_examples=20)
@given(typed_instances())
def test_bounds_below_the_optimum_on_mixed_clusters(instance: Instance) -> None:
    """GPU types: every bound uses the typed alpha_min and alpha_max and stays at most
    the optimum the oracle enumerates (every map timed by its own typed formula)."""
    _all_bounds_valid(instance, brute_force_a(instance))


@settings(max_examples=12)
@given(
    st.integers(0, 10_000),
    st.sampled_from([(1, 4), (2, 2), (2, 4), (3, 2)]),
    st.sampled_from([None, 1.0, 3.0]),
)
def test_bounds_below_the_proven_milp_optimum(
    seed: int, shape: tuple[int, int], load: float | None
) -> None:
    """On integral generated instances of several shapes and loads, below OPT(A) from the MILP."""
    config = TINY_INTEGRAL.replace(
        num_jobs=5, servers=shape[0], gpus_per_server=shape[1], load=load, max_job_gpus=None
    )
    instance = generate(config, seed)
    optimum = solve_milp(instance, "A", ExactParams(time_limit=60))
    assert optimum.proven_optimal
    _all_bounds_valid(instance, optimum.objective)


def _unit(name: str, release: float, iterations: int, gpus: int = 1, weight: float = 1.0) -> Job:
    return Job(
        id=name,
        release=release,
        iterations=iterations,
        compute_time=1.0,
        gpus=gpus,
        weight=weight,
    )


def test_hand_worked_values() -> None:
    """Two 1 s jobs on one GPU: OPT = 1 + 2 = 3. Job bound 2; SRPT on the squashed machine
    (M = 1: no squashing) 3; mean busy times 0.5 and 1.5, plus 0.5 each: 3."""
    instance = Instance(Cluster((1,), 1.0, 1.0), (_unit("a", 0, 1), _unit("b", 0, 1)))
    values = {b.name: b.value for b in lower_bounds(instance, lp=LP)}
    assert values["job"] == pytest.approx(2 * SAFETY)
    assert values["squashed-area"] == pytest.approx(3 * SAFETY)
    assert values["mean-busy-time"] == pytest.approx(3 * SAFETY)
    assert values["lp"] == pytest.approx(3.0, rel=1e-3)  # durations rounded down to the grid


def test_weighted_wspt_mean_busy_times_by_hand() -> None:
    """Sizes 2 and 1, released at 0 and 1, weights 1 and 4: job 1 (density 4) preempts job 0
    at 1. Job 0 runs [0, 1] and [2, 3]: M = (0.5 + 2.5) / 2 = 1.5; job 1 runs [1, 2]: M = 1.5."""
    busy = preemptive_wspt_mean_busy_times([2.0, 1.0], [0.0, 1.0], [1.0, 4.0])
    assert busy.tolist() == pytest.approx([1.5, 1.5])


def test_squashing_and_congestion() -> None:
    """Four 2-GPU jobs of 4 s on 4 GPUs, all at 0: two run at a time, OPT = 4+4+8+8 = 24.
    The job bound sees no congestion (16); the squashed machine (sizes 2) gives SRPT
    2+4+6+8 = 20; mean busy time gives (1+3+5+7) + 4 * 2 = 24, tight."""
    jobs = tuple(_unit(f"j{k}", 0, 4, gpus=2) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    values = {b.name: b.value / SAFETY for b in lower_bounds(instance)}
    assert values == pytest.approx({"job": 16.0, "squashed-area": 20.0, "mean-busy-time": 24.0})
    best = best_lower_bound(lower_bounds(instance))
    assert best is not None and best.name == "mean-busy-time"


def test_negative_control_invalid_bound_is_caught(ring_instance: Instance) -> None:
    """A plausible bug, K * alpha_max in place of K * alpha_min, is caught by the same check:
    on a lone 4-ring (alpha_min 4, alpha_max 5, K = 2) OPT is 8, the wrong 'bound' 10."""
    ring = Instance(ring_instance.cluster, ring_instance.jobs[:1])
    optimum = brute_force_a(ring)
    wrong = sum(j.release + j.iterations * 5.0 for j in ring.jobs)
    with pytest.raises(AssertionError):
        assert wrong <= optimum * (1 + 1e-9)
    _all_bounds_valid(ring, optimum)
    assert optimum == pytest.approx(8.0)


def test_inexact_alpha_min_is_said() -> None:
    """A job whose alpha_min is only bounded makes every bound say so (still valid)."""
    edges = tuple((u, v, 1.0) for u in range(12) for v in range(u + 1, 12))
    job = Job(id="big", release=0, iterations=1, compute_time=1.0, gpus=12, edges=edges)
    instance = Instance(Cluster((4, 4, 4), 2.0, 1.0), (job,))
    inputs = BoundInputs.of(instance, search_budget=10)
    assert inputs.inexact == 1
    bound = lower_bounds(instance, inputs=inputs)[0]
    assert bound.valid and "lower bound of alpha_min" in bound.notes[0]
