"""The Gavel-style baseline (algorithms.gavel): rounds, fairness by normalised service, types.

Hand-worked schedules, each checked by the independent verifier too.
"""

from __future__ import annotations

import pytest

from algorithms.gavel import HeterogeneityAwareRounds
from ddlsched import OnlineParams, simulate
from ddlsched.core.model import Cluster, Instance, Job
from proofs_checks.verifier import verify

NO_RESTART = OnlineParams(restart_cost=0.0)


def _entries(instance: Instance, result) -> dict:  # type: ignore[no-untyped-def]
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    return result.schedule.by_id()


def test_two_jobs_share_one_gpu_in_rounds() -> None:
    """Two 720 s jobs on one GPU alternate every 360 s round: a [0, 360), b [360, 720),
    a [720, 1080), b [1080, 1440). Completions 1080 and 1440 (LAS-like fairness; FIFO
    would give 720 and 1440)."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job("a", 0.0, 720, 1.0, 1), Job("b", 0.0, 720, 1.0, 1)),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert [tuple(p[:2]) for p in entries["a"].pieces] == [(0.0, 360.0), (720.0, 1080.0)]
    assert [tuple(p[:2]) for p in entries["b"].pieces] == [(360.0, 720.0), (1080.0, 1440.0)]


def test_fast_type_goes_to_the_sensitive_job() -> None:
    """One V100 and one K80 GPU. ``tolerant`` (K80 only 1.2x slower) arrives first;
    ``sensitive`` (K80 4x slower) second. Gavel gives the V100 to the sensitive job and
    the K80 to the tolerant one; a type-blind first-come order would do the reverse."""
    cluster = Cluster((1, 1), 1.0, 1.0, server_types=("v100", "k80"))
    tolerant = Job("tolerant", 0.0, 100, 1.0, 1, compute_times={"v100": 1.0, "k80": 1.2})
    sensitive = Job("sensitive", 0.0, 100, 1.0, 1, compute_times={"v100": 1.0, "k80": 4.0})
    instance = Instance(cluster, (tolerant, sensitive))
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert entries["sensitive"].mapping == (0,) and entries["sensitive"].end == pytest.approx(100)
    assert entries["tolerant"].mapping == (1,) and entries["tolerant"].end == pytest.approx(120)
    fifo = _entries(instance, simulate(instance, "fifo", params=NO_RESTART))
    assert fifo["tolerant"].mapping == (0,)


def test_no_preemption_between_rounds() -> None:
    """A job arriving mid-round waits for the boundary when the cluster is full."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (Job("a", 0.0, 1000, 1.0, 1), Job("late", 100.0, 10, 1.0, 1)),
    )
    entries = _entries(instance, simulate(instance, "gavel", params=NO_RESTART))
    assert entries["late"].start == pytest.approx(360.0)
    assert entries["late"].end == pytest.approx(370.0)


def test_bad_round_length_is_named() -> None:
    with pytest.raises(ValueError, match="round_length"):
        HeterogeneityAwareRounds(Cluster((1,), 1.0, 1.0), round_length=0)
