"""The options every elastic policy chooses from (ddlsched.algorithms.elastic.policies)."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from ddlsched.algorithms.elastic.policies import OptionLimits, job_options
from ddlsched.algorithms.elastic.simulator import JobState, RoundState, application_of

from ddlsched.core.elastic import ElasticCluster, ElasticJob


@pytest.mark.parametrize("fixed", [None, 512], ids=["searched-batch", "fixed-batch"])
def test_the_options_span_every_node_count_up_to_the_whole_cluster(fixed: int | None) -> None:
    """Catches the whole-node options stopping one node short of the cluster
    (``range(2, num_nodes)``), which never offers a job the whole cluster. On clusters of
    1..5 nodes of 1..4 GPUs, with the job's GPU cap at every value from 1 to the
    cluster's GPUs (by ``max_gpus`` and by the per-model cap), with the batch searched
    or fixed: the node counts offered are exactly 1 (on one node) and every ``k`` from 2
    to the cluster's node count whose ``k`` whole nodes fit the cap, each as one option
    of ``k x G`` GPUs; none exceeds the cap. Expected counts computed here, not by the
    policy's helpers."""
    job = ElasticJob("c", "cifar10", 0.0, 1, 128, 1)
    app = application_of(job)
    fixed_batch = MappingProxyType({} if fixed is None else {"cifar10": fixed})
    for num_nodes in range(1, 6):
        for per_node in range(1, 5):
            cluster = ElasticCluster(num_nodes, per_node)
            states = (JobState(job, app, 0.0, None, 0, 0.0, 0.0),)
            state = RoundState(0.0, cluster, states, 60.0, 30.0)
            total = num_nodes * per_node
            for cap in range(1, total + 1):
                for limits in (
                    OptionLimits(max_gpus=cap, fixed_batch=fixed_batch, max_replicas={}),
                    OptionLimits(fixed_batch=fixed_batch, max_replicas={"cifar10": cap}),
                ):
                    options = job_options(states[0], state, limits)
                    where = (num_nodes, per_node, cap, options)
                    wholes = {k for k in range(2, num_nodes + 1) if k * per_node <= cap}
                    assert set(options.nodes[1:]) == {1} | wholes, where
                    for k in wholes:
                        assert options.nodes.count(k) == 1, where
                        assert options.gpus[options.nodes.index(k)] == k * per_node, where
                    assert all(0 < g <= cap for g in options.gpus[1:]), where
                    pairs = set(zip(options.gpus, options.nodes, strict=True))
                    if cap == total and num_nodes > 1:
                        assert (total, num_nodes) in pairs, where
