"""The preemptive single machine A2 (ddlsched.formulations.problem_a2): hand-worked and brute
force."""

from __future__ import annotations

import pytest
from ddlsched.formulations.milp import solve_milp
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams
from tests.formulations.helpers import solve_verified
from tests.oracles import brute_force_a2
from tests.strategies import TINY_INTEGRAL

TINY = TINY_INTEGRAL.replace(num_jobs=3, duration_slots=(1, 2))


def test_a2_hand_worked_preemption(ring_instance: Instance) -> None:
    """A2 on the ring instance: sizes ring 10 (r=0), solo 0.75 (r=1).

    SRPT preempts the ring at 1 for solo: solo ends 1.75, ring 10.75;
    total 12.5 (without preemption: 10 + 10.75 = 20.75).
    """
    assert solve_verified(ring_instance, "A2") == pytest.approx(12.5)


@settings(max_examples=15)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0]))
def test_a2_matches_brute_force(seed: int, load: float | None) -> None:
    """MILP optimum of A2 equals the slot-by-slot dynamic program on tiny integral instances."""
    instance = generate(TINY.replace(load=load), seed)
    assert solve_verified(instance, "A2") == pytest.approx(brute_force_a2(instance))


def test_a2_starts_from_srpt() -> None:
    """The A2 model is warm-started from slotted SRPT (optimal for unit weights): even a
    solve stopped before its root node (``node_limit=0``, deterministic) returns a schedule
    no worse than SRPT's, found feasible by the verifier, and not called optimal."""
    from ddlsched.formulations.problem_a2 import build_a2_model, single_machine

    from ddlsched.core.alpha import virtual_size
    from ddlsched.core.virtual import srpt

    instance = generate(TINY_INTEGRAL.replace(num_jobs=6, load=1.0), 11)
    assert build_a2_model(single_machine(instance)).has_start
    result = solve_milp(instance, "A2", ExactParams(time_limit=600, threads=1, node_limit=0))
    assert result.status == "feasible"
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    sizes = [virtual_size(j, instance.cluster, j.iterations) for j in instance.jobs]
    completions, _ = srpt(sizes, [j.release for j in instance.jobs])
    assert result.objective <= sum(completions.values()) + 1e-9


def test_the_single_machine_slot_is_the_gcd_of_an_integral_instance() -> None:
    """By hand: one GPU, jobs of 3 and 6 s released at 0 and 9: every size and release is
    a multiple of 3 slots of ``Delta / M`` = 1 s, so the slot is 3 s (3 slots of work in
    all, not 9) and the model stays exact. With a release at 1 the slot stays 1 s."""
    from ddlsched.formulations.problem_a2 import single_machine

    from ddlsched.core.model import Cluster, Job

    def jobs(second_release: float) -> Instance:
        return Instance(
            Cluster((1,), 1.0, 1.0),
            (Job("a", 0.0, 3, 1.0, 1), Job("b", second_release, 6, 1.0, 1)),
        )

    coarse = single_machine(jobs(9.0))
    assert (coarse.delta, coarse.units, coarse.release_slots, coarse.exact) == (
        3.0,
        (1, 2),
        (0, 3),
        True,
    )
    assert single_machine(jobs(1.0)).delta == 1.0


def test_weighted_a2_milp_equals_the_brute_force() -> None:
    """Catches a job's first allowed slot off by one in the A2 MILP (``<=`` for ``<``,
    masked with unit weights by SRPT's warm start): one 1-GPU server, x (1 s, weight 1),
    y (2 s, weight 10), z (3 s, weight 1), all at 0. By hand: y first (10 x 2 = 20), then
    x (3), then z (6): 29, what the brute force finds; the slip gives 37."""
    cluster = Cluster((1,), 1.0, 1.0)
    jobs = tuple(
        Job(id=name, release=0.0, iterations=1, compute_time=c, gpus=1, weight=w)
        for name, c, w in (("x", 1.0, 1.0), ("y", 2.0, 10.0), ("z", 3.0, 1.0))
    )
    instance = Instance(cluster, jobs)
    result = solve_milp(instance, "A2", ExactParams(time_limit=60, isolate=False))
    assert brute_force_a2(instance) == pytest.approx(29.0)
    assert result.status == "optimal" and result.objective == pytest.approx(29.0)
