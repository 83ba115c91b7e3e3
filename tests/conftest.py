"""Shared fixtures and the hypothesis profiles.

Profile ``ci`` (the default, and what CI runs): derandomized, bounded in
examples, no deadlines (solver tests vary in time). Profile ``dev`` explores
more: ``pytest --hypothesis-profile=dev``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from ddlsched.core.model import Cluster, Instance, Job, Parallelism

settings.register_profile(
    "ci",
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def two_by_two() -> Cluster:
    """Two servers of two GPUs; intra bandwidth twice inter."""
    return Cluster((2, 2), bandwidth_intra=2.0, bandwidth_inter=1.0)


@pytest.fixture
def ring_instance(two_by_two: Cluster) -> Instance:
    """A 4-worker data-parallel ring that cannot fit one server.

    Interesting because the best mapping must cut the ring: any split into
    two pairs cuts 2 of the 4 edges, and a split of adjacent pairs (0,1 |
    2,3) cuts exactly 2 edges, so ``alpha_min = c + 2q/B_intra + 2q/B_inter``
    = 1 + 1 + 2 = 4; all cut gives ``alpha_max = 1 + 4 = 5``.
    """
    ring = Job(
        id="ring",
        release=0.0,
        iterations=2,
        compute_time=1.0,
        gpus=4,
        parallelism=Parallelism(dp=4),
        edges=((0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (0, 3, 1.0)),
    )
    single = Job(id="solo", release=1.0, iterations=3, compute_time=1.0, gpus=1)
    return Instance(cluster=two_by_two, jobs=(ring, single))
