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
from ddlsched.core.model import Cluster, Instance, Job
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


@pytest.mark.parametrize("preemptive", [False, True], ids=["problem-a", "preemptive"])
def test_the_ratio_is_flow_time_over_flow_bound_at_trace_scale_releases(preemptive: bool) -> None:
    """Two 2-GPU jobs of 4 s on one 2-GPU server, both released at 1e6 s: by hand the
    optimal total flow time is 4 + 8 = 12 (one waits for the other; preemption cannot help),
    and the job bound alone gives 8, so the best flow bound lies in [8, 12] and UB/LB in
    [1, 1.5]. The ratio (and its JSON form) is the upper schedule's total JCT ``sum w (C -
    r)`` over the flow bound. Catches the ratio computed from ``sum w C`` (releases
    included: about 2e6 / 12, five orders of magnitude off)."""
    jobs = tuple(
        Job(id=f"j{k}", release=1e6, iterations=4, compute_time=1.0, gpus=2) for k in (0, 1)
    )
    instance = Instance(cluster=Cluster((2,), bandwidth_intra=1.0, bandwidth_inter=1.0), jobs=jobs)
    found = flow_sandwich(instance, preemptive=preemptive, evaluations=3, settings=QUICK)
    assert found.upper.total_jct == pytest.approx(12.0)
    assert 8.0 * (1 - 1e-6) <= found.lower.flow_value <= 12.0 * (1 + 1e-9)
    assert found.ratio == pytest.approx(12.0 / found.lower.flow_value, rel=1e-9)
    assert 1.0 - 1e-9 <= found.ratio <= 1.5 + 1e-6
    assert found.to_dict()["ratio"] == pytest.approx(found.ratio, rel=1e-12)
