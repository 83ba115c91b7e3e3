"""Job graphs (ddlsched.core.graphs): hand-worked traffic of each kind of parallelism."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddlsched.core.graphs import build_job_graph, partition_layers
from ddlsched.core.model import Parallelism
from ddlsched.core.zoo import ModelProfile, get_profile

TOY = ModelProfile(
    name="toy",
    parameters=1_000_000_000,
    bytes_per_parameter=1,
    layers=4,
    activation_bytes_per_sample=1e8,
    batch_size=10,
    step_compute_time=8.0,
    max_tp=2,
    max_pp=2,
    typical_iterations=100,
)


def test_graph_hand_worked_dp2_pp2_tp2() -> None:
    """(dp, pp, tp) = (2, 2, 2) of a toy profile, traffic worked out by hand.

    Activations A = 10 * 1e8 B = 1 GB; 2 layers per stage.
    tensor: 4 * 2 * 2A / 2 = 8 GB; pipeline: A / 2 = 0.5 GB; data-parallel
    ring of 2: 2 * 1/2 * (1 GB / 4) = 0.25 GB. Compute 8 / 4 * (8+1)/8.
    """
    p = Parallelism(dp=2, pp=2, tp=2)
    compute, edges = build_job_graph(TOY, p)
    assert compute == pytest.approx(8.0 / 4 * 9 / 8)
    q = {(u, v): w for u, v, w in edges}
    assert len(edges) == 4 + 4 + 4
    assert q[(p.node(0, 0, 0), p.node(0, 0, 1))] == pytest.approx(8.0)
    assert q[(p.node(1, 1, 0), p.node(1, 1, 1))] == pytest.approx(8.0)
    assert q[(p.node(0, 0, 1), p.node(0, 1, 1))] == pytest.approx(0.5)
    assert q[(p.node(0, 1, 0), p.node(1, 1, 0))] == pytest.approx(0.25)


def test_graph_ring_dp4() -> None:
    """dp=4 is a 4-cycle with 2*(3/4)*gradient on each edge."""
    _, edges = build_job_graph(TOY, Parallelism(dp=4))
    assert sorted((u, v) for u, v, _ in edges) == [(0, 1), (0, 3), (1, 2), (2, 3)]
    assert all(w == pytest.approx(1.5) for _, _, w in edges)


def _brute_force_partition(times: list[float], stages: int) -> float:
    """The least slowest stage over every choice of ``stages - 1`` cut points."""
    best = math.inf
    for cuts in itertools.combinations(range(1, len(times)), stages - 1):
        bounds = (0, *cuts, len(times))
        slowest = max(sum(times[a:b]) for a, b in itertools.pairwise(bounds))
        best = min(best, slowest)
    return best


@given(
    st.lists(st.integers(0, 20).map(float), min_size=1, max_size=9),
    st.integers(1, 9),
)
def test_partition_equals_brute_force(times: list[float], stages: int) -> None:
    """PipeDream's dynamic program finds the least slowest stage of every contiguous split."""
    stages = min(stages, len(times))
    sizes = partition_layers(times, stages)
    assert len(sizes) == stages and all(size >= 1 for size in sizes) and sum(sizes) == len(times)
    starts = list(itertools.accumulate(sizes, initial=0))
    slowest = max(sum(times[a:b]) for a, b in itertools.pairwise(starts))
    assert slowest == _brute_force_partition(times, stages)


def test_partition_rejects_bad_stage_counts() -> None:
    with pytest.raises(ValueError, match=r"stages must be in 1\.\.3"):
        partition_layers([1.0, 2.0, 3.0], 4)


def test_vgg16_layers_reproduce_the_paper() -> None:
    """VGG-16's per-layer costs, counted from its shapes, give the paper's totals."""
    vgg = get_profile("vgg16")
    assert len(vgg.layer_costs) == vgg.layers == 16
    assert sum(layer.parameters for layer in vgg.layer_costs) == vgg.parameters == 138_357_544
    assert sum(layer.macs for layer in vgg.layer_costs) == pytest.approx(15.47e9, rel=1e-3)


def test_balanced_stages_set_the_iteration_time() -> None:
    """VGG-16 in two stages: the split after conv6 (layers 1-6 and 7-16) is the least
    slowest one, its slower stage sets c_i (not the mean), and the pipeline edge carries
    conv6's output (56 x 56 x 256 fp32 per sample) for the batch."""
    vgg = get_profile("vgg16")
    times = [layer.macs for layer in vgg.layer_costs]
    assert partition_layers(times, 2) == (6, 10)
    compute, edges = build_job_graph(vgg, Parallelism(dp=1, pp=2), microbatches=8)
    total = sum(times)
    slower = max(sum(times[:6]), sum(times[6:])) / total * vgg.step_compute_time
    assert compute == pytest.approx(slower * (8 + 1) / 8)
    assert compute > vgg.step_compute_time / 2 * (8 + 1) / 8  # the mean would say less
    assert edges == ((0, 1, pytest.approx(vgg.batch_size * 56 * 56 * 256 * 4 / 1e9)),)
    # Data parallelism only: no stage, the whole model (unchanged by the layer costs).
    compute, _ = build_job_graph(vgg, Parallelism(dp=2))
    assert compute == vgg.step_compute_time
