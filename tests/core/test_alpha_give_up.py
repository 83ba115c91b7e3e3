"""A caller's ``give_up`` cuts the alpha searches short, and what is returned then is still
a valid bound, honestly flagged.

The callable answers without any clock (always, never, or after so many questions), so the
searches stop at the same node on every machine.
"""

from __future__ import annotations

import random

import pytest

from ddlsched.core.alpha import alpha_min, extreme_cut, rho
from ddlsched.core.model import Cluster, Instance, Job


def _dense_job(gpus: int, seed: int) -> Job:
    """A job whose GPUs talk in a random dense pattern (traffic 1-4 on 40% of the pairs):
    splitting it over servers of 6 GPUs takes the search past a thousand branch nodes."""
    draw = random.Random(seed)
    edges = tuple(
        (u, v, float(draw.randint(1, 4)))
        for u in range(gpus)
        for v in range(u + 1, gpus)
        if draw.random() < 0.4
    )
    return Job(
        id=f"dense{seed}", release=0, iterations=3, compute_time=1.0, gpus=gpus, edges=edges
    )


CLUSTERS = {
    "one type": (Cluster((6, 6, 6), 4.0, 1.0), 16),
    "two types": (
        Cluster(
            (6, 6, 6),
            4.0,
            1.0,
            server_types=("slow", "slow", "fast"),
            type_bandwidth={"fast": 8.0},
        ),
        14,
    ),
}
"""Clusters of three 6-GPU servers, each with the job size whose search the full budget
still finishes."""


def _questions_after(count: int) -> tuple[list[int], object]:
    """A ``give_up`` that says yes from its ``count``-th question on, and its tally."""
    asked: list[int] = []

    def give_up() -> bool:
        asked.append(1)
        return len(asked) >= count

    return asked, give_up


@pytest.mark.parametrize("cluster_name", sorted(CLUSTERS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_search_given_up_yields_a_flagged_lower_bound_on_alpha_min(
    cluster_name: str, seed: int
) -> None:
    """``alpha_min`` cut short by ``give_up`` (at its first question) is flagged inexact and
    lies at or below the value of the full search; a ``give_up`` that never says yes
    changes nothing."""
    cluster, gpus = CLUSTERS[cluster_name]
    job = _dense_job(gpus, seed)
    full = alpha_min(job, cluster)
    assert full.exact
    asked, give_up = _questions_after(1)
    cut = alpha_min(job, cluster, give_up=give_up)
    assert asked and not cut.exact
    assert cut.value <= full.value * (1 + 1e-12)
    assert alpha_min(job, cluster, give_up=lambda: False) == full


def test_extreme_cut_stops_at_the_question_that_says_yes() -> None:
    """The search asks every thousand branch nodes and stops at the first yes: given up at
    the third question it has asked exactly three times and returns nothing."""
    job = _dense_job(16, 0)
    asked, give_up = _questions_after(3)
    assert extreme_cut(job, (6, 6, 6), maximize=False, give_up=give_up) is None
    assert len(asked) == 3


def test_rho_given_up_is_an_upper_bound_flagged_as_such() -> None:
    """``rho`` whose ``alpha_min`` searches were given up is flagged inexact and is at
    least the exact ``rho``; a job whose search ends before the first question keeps its
    exact ``alpha_min``."""
    cluster, gpus = CLUSTERS["one type"]
    small = Job(id="s", release=0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    instance = Instance(cluster, (small, _dense_job(gpus, 1)))
    exact = rho(instance)
    cut = rho(instance, give_up=lambda: True)
    assert exact.rho.exact and not cut.rho.exact
    assert cut.rho.value >= exact.rho.value * (1 - 1e-12)
    assert cut.alpha_min[0] == exact.alpha_min[0]
