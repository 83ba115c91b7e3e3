"""Small elastic workloads shared by the tests."""

from __future__ import annotations

import pytest

from ddlsched.core.elastic import ElasticCluster, ElasticJob, ElasticWorkload


@pytest.fixture
def mixed_workload() -> ElasticWorkload:
    """Eight short jobs of four models on top of each other (cut budgets keep runs fast).

    Interesting because arrivals overlap within and across rounds, asks range
    from 1 to 8 GPUs (so rigid jobs span nodes) and the cluster below is
    oversubscribed at first, so policies must queue, preempt and resize.
    """
    rows = [
        ("cifar10-a", "cifar10", 0.0, 4, 512, 3),
        ("ncf-a", "ncf", 5.0, 1, 32768, 2),
        ("bert-a", "bert", 20.0, 2, 48, 1),
        ("cifar10-b", "cifar10", 61.0, 8, 2048, 2),
        ("yolov3-a", "yolov3", 70.0, 4, 64, 1),
        ("ncf-b", "ncf", 130.0, 1, 32768, 1),
        ("cifar10-c", "cifar10", 140.0, 2, 256, 2),
        ("bert-b", "bert", 200.0, 4, 96, 1),
    ]
    return ElasticWorkload(
        tuple(
            ElasticJob(name, model, time, replicas, batch, epochs)
            for name, model, time, replicas, batch, epochs in rows
        )
    )


@pytest.fixture
def small_cluster() -> ElasticCluster:
    """Two nodes of four GPUs: small enough that the jobs above compete."""
    return ElasticCluster(num_nodes=2, gpus_per_node=4)
