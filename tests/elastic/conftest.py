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
def priced_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many block prices each evaluation of the elastic Lagrangian's dual saw, one
    entry per evaluation, in order (the dual itself runs unchanged)."""
    from ddlsched.formulations import elastic_lagrangian

    seen: list[int] = []
    original = elastic_lagrangian._dual_value

    def counting(problems, firsts, prices, gpus, block):  # type: ignore[no-untyped-def]
        seen.append(len(prices))
        return original(problems, firsts, prices, gpus, block)

    monkeypatch.setattr(elastic_lagrangian, "_dual_value", counting)
    return seen


@pytest.fixture
def small_cluster() -> ElasticCluster:
    """Two nodes of four GPUs: small enough that the jobs above compete."""
    return ElasticCluster(num_nodes=2, gpus_per_node=4)
