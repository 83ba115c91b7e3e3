"""The sanity checks on a trace (:mod:`ddlsched.core.trace_check`) against independent
truths: the offered load and the fluid queue's backlog recomputed by a time-stepped
simulation that shares no code with the checker, on seeded families of traces (spread
and batch arrivals, weighted GPU counts, non-integral durations), and the findings that
name rows checked on hand-made rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ddlsched.core.trace_check import check_rows, offered_load
from ddlsched.core.trace_formats import TraceRow


def _stepped_queue(rows: list[TraceRow], gpus: int, step: float) -> tuple[float, float]:
    """The fluid queue simulated in steps of ``step`` seconds: the work still waiting
    after the last submission's own work, and the last time before the last submission
    the queue stood empty as a job arrived (an oracle for :func:`offered_load`)."""
    arrivals = sorted((row.submit, row.gpus * row.duration) for row in rows)
    first, last = arrivals[0][0], arrivals[-1][0]
    waiting, empty_at, k = 0.0, first, 0
    time = first
    while k < len(arrivals):
        while k < len(arrivals) and arrivals[k][0] <= time + 1e-9:
            if waiting <= 1e-6 * gpus * step:
                empty_at = arrivals[k][0]
            waiting += arrivals[k][1]
            k += 1
        if k < len(arrivals):
            waiting = max(0.0, waiting - gpus * step)
            time += step
    return max(0.0, waiting - arrivals[-1][1]), empty_at - first if last > first else 0.0


def _rows(rng: np.random.Generator, count: int, batch: bool) -> list[TraceRow]:
    """``count`` jobs of 1-8 GPUs (weighted towards few) with non-integral durations,
    submitted on a 10 s grid (spread) or in three batches."""
    times = (
        rng.choice([0.0, 500.0, 1000.0], count) if batch else 10.0 * rng.integers(0, 100, count)
    )
    gpus = rng.choice([1, 2, 4, 8], count, p=[0.5, 0.25, 0.15, 0.1])
    durations = rng.uniform(5.0, 400.0, count).round(3)
    return [
        TraceRow(line=k + 2, submit=float(t), duration=float(d), gpus=int(g))
        for k, (t, d, g) in enumerate(zip(times, durations, gpus, strict=True))
    ]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("batch", [False, True])
def test_the_load_and_backlog_agree_with_a_stepped_queue(seed: int, batch: bool) -> None:
    """On seeded traces (spread and batch arrivals, 8 or 16 GPUs): the load is the GPU-
    seconds asked over those offered between the first and last submission, and the
    backlog at the last submission and the moment the queue last stood empty match a
    queue simulated in 1/8 s steps (submissions on a whole-second grid, so the steps hit
    them exactly)."""
    rng = np.random.default_rng(seed)
    rows = _rows(rng, 60, batch)
    gpus = 8 if seed % 2 else 16
    found = offered_load(rows, gpus)
    assert found is not None
    span = max(r.submit for r in rows) - min(r.submit for r in rows)
    asked = sum(r.gpus * r.duration for r in rows)
    assert found.load == pytest.approx(asked / (gpus * span))
    waiting, empty_at = _stepped_queue(rows, gpus, 0.125)
    assert found.backlog == pytest.approx(waiting, abs=1e-6)
    if waiting > 0:
        assert found.backlog_from == pytest.approx(empty_at)
    else:
        assert found.backlog_from is None


def test_an_overloaded_trace_is_named_with_its_load_and_since_when() -> None:
    """Eleven 1-GPU jobs every 10 s, each asking 640/11 GPU-seconds, on 4 GPUs: load
    640 / 400 = 1.6 by hand; the queue gains 640/11 - 40 GPU-seconds per gap and never
    empties after the first submission, holding 10 gains at the last one."""
    rows = [
        TraceRow(line=k + 2, submit=10.0 * k, duration=640 / 11, gpus=1, id=str(k))
        for k in range(11)
    ]
    check = check_rows(rows, 4, 2)
    assert check.offered is not None
    assert check.offered.load == pytest.approx(1.6)
    assert check.offered.backlog == pytest.approx(10 * (640 / 11 - 40))
    assert check.offered.backlog_from == 0.0
    finding = check.finding("offered load over 1")
    assert finding is not None and finding.message.startswith("offered load 1.6 as recorded")
    assert "never empties after 0 s" in finding.message
    under = check_rows(rows[::2], 4, 2)
    assert under.offered is not None and under.offered.load == pytest.approx(6 * (640 / 11) / 400)
    assert under.finding("offered load over 1") is None


def test_rows_that_contradict_the_cluster_are_named() -> None:
    """A 32-GPU job on 16 GPUs (cannot run), a 16-GPU job, the whole cluster, over
    servers of 8 (spans), a run that held 8 GPUs on one host of a 4-GPU-server cluster,
    an id on two rows and a 0 s duration: each named by its line."""
    rows = [
        TraceRow(line=2, submit=0.0, duration=10.0, gpus=32, id="a"),
        TraceRow(line=3, submit=100.0, duration=10.0, gpus=16, id="b"),
        TraceRow(line=4, submit=200.0, duration=10.0, gpus=8, id="c", host_gpus=8),
        TraceRow(line=5, submit=300.0, duration=0.0, gpus=1, id="a"),
    ]
    on_eight = check_rows(rows, 16, 8)
    named = {f.kind: f.lines for f in on_eight.findings}
    assert named == {
        "wider than the cluster": (2,),
        "wider than a server": (3,),
        "duration not > 0": (5,),
        "duplicate id": (2,),
    }
    assert "line 2 (32 GPUs, job a)" in on_eight.lines()[0]
    on_four = check_rows(rows, 16, 4)
    host = on_four.finding("host over a server")
    assert host is not None and host.lines == (4,)
    assert on_four.finding("wider than a server").lines == (3, 4)  # type: ignore[union-attr]
    assert math.isfinite(on_four.offered.load)  # type: ignore[union-attr]
