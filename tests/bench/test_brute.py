"""The library's own brute force against hand-worked optima and the tests' oracle."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.bench.brute import TooBigError, brute_force_optimum, earliest_start, modes
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from tests import strategies
from tests.bench.conftest import two_job_entry
from tests.oracles import brute_force_a


def test_the_hand_worked_two_jobs() -> None:
    """Two jobs on one 2-GPU server: the short narrow job of weight 2 first, 5 (worked in
    the fixture's docstring)."""
    assert brute_force_optimum(two_job_entry().instance).optimum == 5.0


def test_a_spread_job_pays_its_traffic_and_waits_otherwise() -> None:
    """Two 2-GPU jobs with one edge of 4 GB on 2 servers of 2 GPUs (B_intra 4, B_inter 1):
    on one server each takes 1 + 4/4 = 2 s, spread 1 + 4/1 = 5 s. Both fit side by side at
    once, one per server: 2 + 2 = 4. Worked by hand."""
    job = Job("a", 0.0, 1, 1.0, 2, edges=((0, 1, 4.0),))
    instance = Instance(Cluster.uniform(2, 2, 4.0, 1.0), (job, job.replace(id="b")))
    assert modes(job, instance.cluster) == [((0, 2), 2.0), ((1, 1), 5.0), ((2, 0), 2.0)]
    assert brute_force_optimum(instance).optimum == 4.0


def test_jobs_alike_but_for_their_release_are_both_tried_first() -> None:
    """One GPU; ``late`` (listed first, released at 1) and ``early`` (released at 0), both
    1 GPU for 2 s. ``early`` first gives 2 + 4 = 6; ``late`` first gives 3 + 5 = 8 (early
    cannot finish before late starts). Worked by hand: the optimum is 6."""
    late = Job("late", 1.0, 1, 2.0, 1)
    instance = Instance(
        Cluster.uniform(1, 1, 2.0, 1.0), (late, late.replace(id="early", release=0.0))
    )
    assert brute_force_optimum(instance).optimum == 6.0


def test_the_earliest_start_jumps_past_the_short_segment() -> None:
    """Free GPUs (one server of 4): 4 until 1, then 1 until 3, then 4 for ever. A 2-GPU job
    of 1.5 s released at 0 does not fit in [0, 1.5) (1 free from 1), so it starts at 3; a
    1-s job fits at 0."""
    profile = ((0.0, (4,)), (1.0, (1,)), (3.0, (4,)))
    assert earliest_start(profile, 0.0, (2,), 1.5) == 3.0
    assert earliest_start(profile, 0.0, (2,), 1.0) == 0.0
    assert earliest_start(profile, 0.5, (1,), 9.0) == 0.5


@st.composite
def small_generated(draw: st.DrawFn) -> Instance:
    """Generated instances the tests' oracle enumerates in well under a second: 2-5 jobs
    on 1 or 2 servers of 2 GPUs, integral or realistic, batch or spread."""
    config = strategies.TINY_INTEGRAL.replace(
        num_jobs=draw(st.integers(2, 5)),
        servers=draw(st.integers(1, 2)),
        integral=draw(st.booleans()),
        load=draw(st.sampled_from([None, 1.0])),
    )
    return generate(config, draw(st.integers(0, 10_000)))


@settings(max_examples=30)
@given(
    st.one_of(
        small_generated(),
        strategies.weighted_instances(max_jobs=3),
        strategies.weighted_instances(max_jobs=3, typed=True),
        strategies.exact_family_instances(integral=False),
    )
)
def test_agrees_with_the_tests_oracle(instance: Instance) -> None:
    """Same optimum as the tests' independent enumeration (every order x every mode, no
    pruning) on weighted, typed, non-integral, multi-GPU, batch and spread instances."""
    found = brute_force_optimum(instance).optimum
    assert math.isclose(found, brute_force_a(instance), rel_tol=1e-9)


@settings(max_examples=15)
@given(strategies.weighted_instances(max_jobs=3), st.floats(1.0, 1.5))
def test_a_known_objective_is_kept_only_when_nothing_beats_it(
    instance: Instance, factor: float
) -> None:
    """Given a known objective above the optimum, the optimum is still found; given the
    optimum itself, the answer is that value."""
    optimum = brute_force_a(instance)
    assert math.isclose(
        brute_force_optimum(instance, known=optimum * factor + 1).optimum, optimum, rel_tol=1e-9
    )
    assert brute_force_optimum(instance, known=optimum).optimum == optimum


def test_a_deterministic_node_limit_gives_up_with_a_clear_error() -> None:
    """Past max_nodes the search stops with TooBigError, whatever the machine's speed."""
    jobs = tuple(Job(f"j{k}", 0.0, 1, 1.0 + k, 1 + k % 2) for k in range(7))
    instance = Instance(Cluster.uniform(2, 2, 2.0, 1.0), jobs)
    with pytest.raises(TooBigError, match="more than 10 search nodes"):
        brute_force_optimum(instance, max_nodes=10)
