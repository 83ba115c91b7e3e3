"""The small mixed elastic workload the elastic tests share (simulator, policies, front door)."""

from __future__ import annotations

from ddlsched.core.elastic import ElasticJob, ElasticWorkload

MIXED_ROWS = (
    ("cifar10-a", "cifar10", 0.0, 4, 512, 3),
    ("ncf-a", "ncf", 5.0, 1, 32768, 2),
    ("bert-a", "bert", 20.0, 2, 48, 1),
    ("cifar10-b", "cifar10", 61.0, 8, 2048, 2),
    ("yolov3-a", "yolov3", 70.0, 4, 64, 1),
    ("ncf-b", "ncf", 130.0, 1, 32768, 1),
    ("cifar10-c", "cifar10", 140.0, 2, 256, 2),
    ("bert-b", "bert", 200.0, 4, 96, 1),
)
"""Name, model, submit time, GPUs asked, batch size asked, epochs (cut budgets keep runs
fast)."""


def mixed_workload(count: int = len(MIXED_ROWS)) -> ElasticWorkload:
    """The first ``count`` jobs of :data:`MIXED_ROWS`: short jobs of four models on top of
    each other.

    Interesting because arrivals overlap within and across rounds, asks range from 1 to 8
    GPUs (so rigid jobs span nodes) and two 4-GPU nodes are oversubscribed at first, so
    policies must queue, preempt and resize.
    """
    return ElasticWorkload(tuple(ElasticJob(*row) for row in MIXED_ROWS[:count]))
