"""Small elastic workloads shared by the tests."""

from __future__ import annotations

import pytest

from ddlsched.core.elastic import ElasticCluster, ElasticWorkload
from tests.elastic import workloads


@pytest.fixture
def mixed_workload() -> ElasticWorkload:
    """The eight jobs of :func:`tests.elastic.workloads.mixed_workload`."""
    return workloads.mixed_workload()


@pytest.fixture
def small_cluster() -> ElasticCluster:
    """Two nodes of four GPUs: small enough that the jobs above compete."""
    return ElasticCluster(num_nodes=2, gpus_per_node=4)
