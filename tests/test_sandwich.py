"""The sandwich of each model (ddlsched.sandwich) and ``ddlsched bound --sandwich``: the
optimum lies between a bound of its model and a verified schedule of it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from ddlsched.formulations.lower_bounds import PREEMPTIVE_BOUNDS
from ddlsched.formulations.start_lagrangian import StartLagrangianSettings
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings

from ddlsched.cli import main
from ddlsched.core.io import write_instance
from ddlsched.core.model import Instance
from ddlsched.sandwich import flow_sandwich
from tests.oracles import brute_force_a
from tests.strategies import hand_instances

QUICK = StartLagrangianSettings(slots=500, rounds=20)
"""A few rounds on a coarse grid: enough for tiny instances, fast."""


@settings(max_examples=10, deadline=None)
@given(hand_instances(max_jobs=3))
def test_the_optimum_lies_inside_each_models_sandwich(instance: Instance) -> None:
    """Problem A's optimal total JCT (enumeration) lies between the non-preemptive
    sandwich's bounds; the preemptive lower bound is at most the same optimum (a schedule
    of A is one of the preemptive model) and at most its own verified upper bound; both
    upper schedules pass the verifier with the reported total JCT."""
    releases = sum(job.weight * job.release for job in instance.jobs)
    optimum = brute_force_a(instance) - releases
    for preemptive in (False, True):
        found = flow_sandwich(instance, preemptive=preemptive, evaluations=3, settings=QUICK)
        assert found.lower.flow_value <= optimum + 1e-9 * max(1.0, optimum)
        assert found.lower.flow_value <= found.upper.total_jct * (1 + 1e-9)
        if not preemptive:
            assert optimum <= found.upper.total_jct * (1 + 1e-9)
        else:
            assert found.lower.name in PREEMPTIVE_BOUNDS
        assert found.upper.schedule is not None
        report = verify(instance, found.upper.schedule)
        assert report.feasible, report.violations
        assert math.isclose(report.total_jct, found.upper.total_jct, rel_tol=1e-9)
        assert found.ratio >= 1.0 - 1e-9 or found.lower.flow_value <= 0


def test_bound_sandwich_prints_both_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bound INSTANCE --sandwich --json`` carries, per model, the flow bounds, the
    schedule giving the upper one and UB/LB; the text form names both models."""
    from ddlsched.algorithms import offline

    from ddlsched import GeneratorConfig, generate

    monkeypatch.setattr(offline, "search_evaluations", lambda instance: 3)  # a short search

    path = tmp_path / "instance.json"
    write_instance(generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0), path)
    assert main(["bound", str(path), "--sandwich", "--json"]) == 0
    models = json.loads(capsys.readouterr().out)["models"]
    assert [m["model"] for m in models] == ["non-preemptive", "preemptive"]
    for model in models:
        assert model["flow_lower_bound"] <= model["flow_upper_bound"]
        assert model["ratio"] == pytest.approx(
            model["flow_upper_bound"] / model["flow_lower_bound"]
        )
        assert model["upper_bound_schedule"]
    assert main(["bound", str(path), "--sandwich"]) == 0
    out = capsys.readouterr().out
    assert "non-preemptive (problem A): optimal total JCT in [" in out
    assert "preemptive: optimal total JCT in [" in out


def test_a_csv_given_as_the_instance_points_to_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bound mytrace.csv`` is an input error saying to give it as ``--trace``, not a JSON
    parse error."""
    trace = tmp_path / "mytrace.csv"
    trace.write_text("job_id,submit_time,duration,num_gpus\n1,0,10,1\n")
    assert main(["bound", str(trace)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an instance" in err
    assert f"ddlsched bound --trace {trace}" in err
