"""The virtual single machine (ddlsched.core.virtual): preemptive SRPT against a brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha_max
from ddlsched.core.generators import generate
from ddlsched.core.virtual import VirtualMachine, srpt
from tests.oracles import brute_force_a2
from tests.strategies import TINY_INTEGRAL


def test_srpt_hand_worked() -> None:
    """SRPT on sizes 3 (r=0), 1 (r=1), 2 (r=1.5), worked by hand.

    t=0: only A (3). t=1: B (1) < A's remaining 2 -> B runs, done at 2.
    t=1.5: C (2) arrives; B has 0.5 left, keeps running. t=2: A has 2, C has
    2: tie goes to the earlier arrival, A, done at 4; C done at 6.
    """
    completions, pieces = srpt([3.0, 1.0, 2.0], [0.0, 1.0, 1.5], ["A", "B", "C"])
    assert completions == pytest.approx({"A": 4.0, "B": 2.0, "C": 6.0})
    assert pieces["A"] == [(0.0, 1.0), (2.0, 4.0)]
    assert pieces["B"] == [(1.0, 2.0)]


def test_virtual_machine_resize_keeps_work_done() -> None:
    """Growing a job's size keeps the work done; completion moves accordingly."""
    machine = VirtualMachine()
    machine.add("a", 2.0, 0.0)
    machine.advance(1.0)
    machine.resize("a", 5.0, 1.0)
    assert machine.remaining("a") == pytest.approx(4.0)
    assert machine.next_completion() == pytest.approx(5.0)


@settings(max_examples=20)
@given(st.integers(0, 10_000), st.sampled_from([None, 1.0, 3.0]))
def test_srpt_is_optimal_on_a2(seed: int, load: float | None) -> None:
    """SRPT's total completion time equals the brute-force A2 optimum (claim 1)."""
    instance = generate(TINY_INTEGRAL.replace(duration_slots=(1, 2), load=load), seed)
    m = instance.cluster.num_gpus
    sizes = [
        j.gpus * j.iterations * alpha_max(j, instance.cluster).value / m for j in instance.jobs
    ]
    completions, _ = srpt(sizes, [j.release for j in instance.jobs])
    assert sum(completions.values()) == pytest.approx(brute_force_a2(instance))
