"""The virtual single machine (ddlsched.core.virtual): preemptive SRPT against a brute force."""

from __future__ import annotations

import pytest
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha_max
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job, Piece, Problem, Schedule, ScheduledJob
from ddlsched.core.virtual import VirtualMachine, rank_combined, srpt
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


# Each test below names the one-line slip it catches; every one was
# planted by hand in ddlsched/core/virtual.py and seen to fail the test.


def test_job_finishing_exactly_at_the_target_time_completes() -> None:
    """Catches ``finish < now`` for ``<=`` (with tolerance): a job of size 1 advanced to
    exactly 1 completes there, and one of size 0.1 + 0.2 (0.30000000000000004) advanced
    to 0.3 too, within the tolerance. Without it SRPT's own loop would never end."""
    machine = VirtualMachine()
    machine.add("a", 1.0, 0.0)
    machine.advance(1.0)
    assert machine.completion == {"a": 1.0} and len(machine) == 0
    other = VirtualMachine()
    other.add("b", 0.1 + 0.2, 0.0)
    other.advance(0.3)
    assert other.completion == {"b": pytest.approx(0.3)} and len(other) == 0


def test_shrinking_below_the_work_done_completes_now() -> None:
    """Catches a resize that lets the remaining size go negative: a job of size 3 that has
    done 2 is resized to 1; it completes at once (time 2), never in the past."""
    done: list[tuple[str, float]] = []
    machine = VirtualMachine(on_complete=lambda job, time: done.append((job, time)))
    machine.add("a", 3.0, 0.0)
    machine.advance(2.0)
    machine.resize("a", 1.0, 2.0)
    assert done == [("a", 2.0)]
    assert machine.time == 2.0


def test_resizing_twice_counts_work_from_the_latest_size() -> None:
    """Catches a resize that forgets the new size: size 4 at 0; at 1 (done 1) resized to 6,
    5 remain; at 2 (done 2) resized to 3, 1 remains (the slip computes the work done from
    the old size 4 and leaves 3)."""
    machine = VirtualMachine()
    machine.add("a", 4.0, 0.0)
    machine.resize("a", 6.0, 1.0)
    assert machine.remaining("a") == pytest.approx(5.0)
    machine.resize("a", 3.0, 2.0)
    assert machine.remaining("a") == pytest.approx(1.0)
    assert machine.next_completion() == pytest.approx(3.0)


def test_preempt_hook_only_when_a_shorter_job_arrives() -> None:
    """Catches the arrival hook fired on every arrival: a (size 5) runs; b (size 9) arrives
    at 1: no preemption; c (size 2) arrives at 2: a is preempted with 3 remaining."""
    preempted: list[tuple[str, float]] = []
    machine = VirtualMachine(on_preempt=lambda job, remaining: preempted.append((job, remaining)))
    machine.add("a", 5.0, 0.0)
    machine.add("b", 9.0, 1.0)
    assert preempted == []
    machine.add("c", 2.0, 2.0)
    assert preempted == [("a", pytest.approx(3.0))]


def test_preempt_hook_on_resizes() -> None:
    """Catches resize hooks left out: a (size 2) runs, b (size 3) waits. At 1 a grows to 6
    (5 remaining > 3): a is displaced by b, hook (a, 5). At 2 a waiting job c (size 4)
    shrinks to 0.5 below b's remaining 2: b is displaced, hook (b, 2)."""
    preempted: list[tuple[str, float]] = []
    machine = VirtualMachine(on_preempt=lambda job, remaining: preempted.append((job, remaining)))
    machine.add("a", 2.0, 0.0)
    machine.add("b", 3.0, 0.0)
    machine.resize("a", 6.0, 1.0)
    assert preempted == [("a", pytest.approx(5.0))]
    machine.add("c", 4.0, 1.5)
    machine.resize("c", 0.5, 2.0)
    assert preempted[-1] == ("b", pytest.approx(2.0))
    assert len(preempted) == 2


def test_srpt_with_releases_out_of_order() -> None:
    """Catches offline SRPT adding jobs in input order rather than by release: job 0 is
    released at 5 (size 1), job 1 at 0 (size 2): completions 6 and 2."""
    completions, pieces = srpt([1.0, 2.0], [5.0, 0.0])
    assert completions == pytest.approx({"0": 6.0, "1": 2.0})
    assert pieces == {"0": [(5.0, 6.0)], "1": [(0.0, 2.0)]}


def test_a_completed_job_cannot_be_added_again() -> None:
    """Catches re-adding a completed job (its completion would be overwritten)."""
    machine = VirtualMachine()
    machine.add("a", 1.0, 0.0)
    machine.advance(2.0)
    with pytest.raises(ValueError, match="already on the virtual machine"):
        machine.add("a", 1.0, 3.0)


def test_time_never_goes_back() -> None:
    """Catches a backwards advance allowed with slack: after 2, advancing to 1.5 is an error."""
    machine = VirtualMachine()
    machine.advance(2.0)
    with pytest.raises(ValueError, match="cannot go back in time"):
        machine.advance(1.5)


@settings(max_examples=30)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.3, 0.5, 1.0, 1.7, 2.5]), st.sampled_from([0.0, 0.2, 1.0, 1.3])
        ),
        min_size=1,
        max_size=5,
    )
)
def test_srpt_schedule_passes_the_verifier(jobs: list[tuple[float, float]]) -> None:
    """Catches pieces recorded wrongly (merged across a gap, overlapping, before a release,
    not adding up to the size): SRPT's pieces, as an A2 schedule of 1-GPU jobs on one GPU
    (size = K * compute), pass the independent verifier, whose total is SRPT's."""
    sizes = [size for size, _ in jobs]
    releases = [release for _, release in jobs]
    completions, pieces = srpt(sizes, releases)
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        tuple(
            Job(id=str(k), release=r, iterations=1, compute_time=v, gpus=1)
            for k, (v, r) in enumerate(jobs)
        ),
    )
    schedule = Schedule(
        tuple(
            ScheduledJob(
                str(k),
                pieces[str(k)][0][0],
                completions[str(k)],
                pieces=tuple(Piece(*p) for p in pieces[str(k)]),
            )
            for k in range(len(jobs))
        ),
        problem=Problem.A2,
    )
    report = verify(instance, schedule)
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(sum(completions.values()))


def _least_kth_completion(sizes: list[float], releases: list[float], k: int) -> float:
    """The earliest instant by which any single-machine schedule completes ``k`` jobs: the
    least makespan over the ``k``-subsets, each run alone in release order."""
    import itertools as it

    best = float("inf")
    for subset in it.combinations(range(len(sizes)), k):
        now = 0.0
        for j in sorted(subset, key=lambda j: releases[j]):
            now = max(now, releases[j]) + sizes[j]
        best = min(best, now)
    return best


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0.05, 5.0), st.floats(0.0, 6.0)), min_size=1, max_size=6))
def test_srpt_completes_as_many_jobs_as_any_schedule_by_every_rank(jobs) -> None:
    """SRPT's k-th completion is the earliest any schedule reaches k completions, for
    every k at once (the dominance rank_combined relies on): checked against the least
    makespan over all k-subsets, non-integral sizes and spread or equal releases."""
    sizes = [p for p, _ in jobs]
    releases = [r for _, r in jobs]
    completions, _ = srpt(sizes, releases)
    ranked = sorted(completions.values())
    for k in range(1, len(jobs) + 1):
        assert ranked[k - 1] == pytest.approx(_least_kth_completion(sizes, releases, k))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 10.0), st.floats(0.0, 10.0)), min_size=1, max_size=6))
def test_rank_combined_is_the_least_sum_over_assignments(pairs) -> None:
    """rank_combined's total is the least sum of max(floor_j, s_(rank of j)) over every
    assignment of jobs to ranks (brute force over permutations), never below either sum."""
    import itertools as it

    floors = [a for a, _ in pairs]
    ranks = [b for _, b in pairs]
    least = min(
        sum(max(floors[j], ranks[p]) for j, p in enumerate(perm))
        for perm in it.permutations(range(len(pairs)))
    )
    total = sum(rank_combined(floors, ranks))
    assert total == pytest.approx(least)
    assert total >= max(sum(floors), sum(ranks)) - 1e-9


def test_rank_combined_refuses_mismatched_lengths() -> None:
    """Floors and completions of different lengths are refused, naming both counts."""
    with pytest.raises(ValueError, match="2 floors against 1 completions"):
        rank_combined([1.0, 2.0], [1.0])
