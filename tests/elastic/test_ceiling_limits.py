"""The goodput ceilings at their limits: clusters of millions of GPUs, and gradient
statistics with no signal (``grad_sqr = 0``, so the gain grows without bound). The
synthetic application (M0 = 2, g(a) = 1 + 0.5 a) is the flow-bound tests'."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from ddlsched.formulations import elastic_bounds
from ddlsched.formulations.elastic_bounds import elastic_flow_bound, goodput_ceilings, rate_curve
from ddlsched.formulations.elastic_lagrangian import elastic_lagrangian_bound

from ddlsched.core.elastic import Application, ElasticJob, PerfParams, load_application
from tests.elastic.test_flow_bound import _synthetic


def test_a_cluster_of_millions_costs_a_bounded_count_of_ceilings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On 8 million GPUs the rate curve evaluates at most a few thousand GPU counts (not
    one per GPU), and the counts it leaves out are no faster than its maximum: the
    ceilings computed directly at ``K + 1``, ``10 K`` and 8 million GPUs stay below it,
    and the curve is the prefix a cluster of ``K`` GPUs gets."""
    app = load_application("bert")
    computed: list[int] = []
    original = elastic_bounds._rate_ceilings

    def counting(app: Application, row: int, replicas: np.ndarray, sync: np.ndarray):
        computed.append(len(replicas))
        return original(app, row, replicas, sync)

    monkeypatch.setattr(elastic_bounds, "_rate_ceilings", counting)
    curve = rate_curve(app, 0, 8_000_000)
    assert len(curve) <= 4096
    assert sum(computed) <= 2 * len(curve) + 1
    monkeypatch.setattr(elastic_bounds, "_rate_ceilings", original)
    wide = np.array([len(curve) + 1, 10 * len(curve), 8_000_000])
    direct = original(app, 0, wide, elastic_bounds._sync_floor(app, wide))
    assert np.all(direct <= curve.max())
    assert np.array_equal(rate_curve(app, 0, len(curve)), curve)
    assert goodput_ceilings(app, 0, 8_000_000)[0] == curve.max()


def test_a_ceiling_that_keeps_rising_is_refused_naming_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With synchronisation that does not grow with the GPUs, the ceiling rises with
    every GPU added, so no cut exists: past the limit the curve is refused in one line
    naming it, not computed for every GPU."""
    app = dataclasses.replace(_synthetic(), perf=PerfParams(1.0, 0.5, 0.1, 0.0, 0.2, 0.0, 1.0))
    monkeypatch.setattr(elastic_bounds, "MOST_CURVE_GPUS", 256)
    with pytest.raises(ValueError, match=r"synthetic.*256 GPUs"):
        rate_curve(app, 0, 1_000_000)
    assert len(rate_curve(app, 0, 200)) == 200


def test_ceilings_without_gradient_signal_cover_huge_batches() -> None:
    """With ``grad_sqr = 0`` the gain is ``M / M0`` (unbounded), so one GPU's goodput
    ``(a / 2) / (1 + a / 2)`` tends to 1 as its batch ``a`` grows; the per-GPU and job
    ceilings must hold for a batch of 10^8, beyond every cell's smallest batch."""
    app = _synthetic(sqr=0.0)
    job, per_gpu = goodput_ceilings(app, 0, 4)
    huge = float(app.goodput(1, 1, 10**8, 0, 0))
    assert huge == pytest.approx(1.0, abs=1e-7)
    assert per_gpu >= huge
    assert job >= huge


def test_both_bounds_on_millions_of_gpus_equal_those_past_every_cut() -> None:
    """The flow bound and the Lagrangian on 8 million GPUs, for jobs 10^9 s apart, are
    those on 2048 GPUs (past where either model's curve stops on these epochs), so the
    huge cluster is answered, not refused or run out of memory."""
    jobs = [ElasticJob("a", "cifar10", 0.0, 1, 128, 2), ElasticJob("b", "bert", 1e9, 1, 12, 1)]
    assert elastic_flow_bound(jobs, 8_000_000).value == elastic_flow_bound(jobs, 2048).value
    huge = elastic_lagrangian_bound(jobs, 8_000_000, steps=3).value
    assert huge == elastic_lagrangian_bound(jobs, 2048, steps=3).value
