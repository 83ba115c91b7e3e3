"""Figures of the sandwich at trace scale (deselected by default: ``pytest -m benchmark
tests/test_sandwich_benchmark.py -s``): both models of the first 5,000 Philly jobs on
32 x 8 GPUs, as ``ddlsched bound --trace ... --limit 5000 --sandwich`` reads them, cold
(an empty cache) and warm, at each effort. Prints wall and CPU seconds and both ends;
asserts only what holds whatever the machine (each interval is proven and ordered, the
warm figures are the cold ones)."""

from __future__ import annotations

import time

import pytest
from ddlsched.proofs_checks.verifier import verify

from ddlsched import Cluster, data_path, load_trace
from ddlsched.sandwich import study_sandwiches


@pytest.mark.benchmark
@pytest.mark.parametrize("effort", ["fast", "full"])
def test_philly_5000_sandwiches(effort: str) -> None:
    """Both models' sandwiches of 5,000 Philly jobs, cold then warm."""
    cluster = Cluster.uniform(32, 8, 20.0, 1.0)
    instance = load_trace(data_path("traces", "philly_jobs.csv"), cluster, limit=5000).instance
    figures = {}
    for state in ("cold", "warm"):
        wall, cpu = time.perf_counter(), time.process_time()
        found = study_sandwiches(instance, effort=effort)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        figures[state] = [(s.lower.flow_value, s.upper.total_jct) for s in found]
        print(f"\n{effort} {state}: {wall:.1f} s wall, {cpu:.1f} s CPU")
        for s in found:
            model = "preemptive" if s.preemptive else "problem A"
            print(
                f"  {model}: [{s.lower.flow_value!r} ({s.lower.name}), "
                f"{s.upper.total_jct!r} ({s.upper_name})], UB/LB {s.ratio:.4f}"
            )
            assert s.lower.flow_value <= s.upper.total_jct
            assert verify(instance, s.upper.schedule).feasible
    assert figures["warm"] == figures["cold"]
