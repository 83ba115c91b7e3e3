"""compare and sweep certify a preemptive policy with a bound of the preemptive model.

A preemptive schedule may beat ``OPT(A)`` (problem A is non-preemptive), so only the
bounds proved for the preemptive model (``PREEMPTIVE_BOUNDS``) certify its ratios.
The instance below is worked by hand: one GPU, a long job (20 s) released at 0 and a
short one (1 s) released at 3. Problem A either runs the long job first (sum C = 20 +
21 = 41) or leaves the GPU idle until 3 (sum C = 4 + 24 = 28), so OPT(A) = 28.
Preempting the long job at 3 and resuming it after the short one with the default
restart cost of 1 s gives 4 + 22 = 26 < OPT(A).
"""

from __future__ import annotations

import math
from typing import cast

import pandas as pd
import pytest
from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES
from ddlsched.formulations.lower_bounds import PREEMPTIVE_BOUNDS, lower_bounds

from ddlsched.api import simulate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.experiments import CompareConfig, compare
from ddlsched.experiments.compare import RECORD_HEADERS, CompareReport
from ddlsched.sweeps import with_ratios

METHODS = ("srpt-area", "asrpt-preemptive", "las", "sjf", "fifo", "asrpt")


def _beaten(weight: float = 1.0, gpus: int = 1) -> Instance:
    """The hand-worked instance of the module docstring, on ``gpus`` GPUs (every job
    takes them all), the short job weighted ``weight``."""
    return Instance(
        cluster=Cluster((gpus,), bandwidth_intra=2.0, bandwidth_inter=1.0),
        jobs=(
            Job(id="long", release=0.0, iterations=20, compute_time=1.0, gpus=gpus, edges=()),
            Job(
                id="short",
                release=3.0,
                iterations=1,
                compute_time=1.0,
                gpus=gpus,
                edges=(),
                weight=weight,
            ),
        ),
    )


def _report(instance: Instance, monkeypatch: pytest.MonkeyPatch) -> CompareReport:
    """``compare`` on ``instance`` alone (one seed)."""
    monkeypatch.setattr(CompareConfig, "instance", lambda self, seed: instance)
    config = CompareConfig(jobs=2, servers=1, gpus_per_server=1, instances=1, methods=METHODS)
    return compare(config)


def _preemptive_best(instance: Instance) -> float:
    """The largest of the preemptive model's bounds, computed directly."""
    return max(b.value for b in lower_bounds(instance, PREEMPTIVE_BOUNDS) if b.valid)


@pytest.mark.parametrize("weight", [1.0, 2.5])
def test_preemptive_rows_certified_by_preemptive_bounds(
    weight: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where srpt-area beats OPT(A), every method's C/LB and JCT/LB stay >= 1, a
    preemptive row's LB is the best of PREEMPTIVE_BOUNDS, a non-preemptive row's is the
    exact result's bound, and a preemptive C/OPT below 1 is reported as it is."""
    instance = _beaten(weight)
    report = _report(instance, monkeypatch)
    row = report.rows[0]
    assert row.optimum.proven_optimal
    assert row.optimum.objective == pytest.approx(4 * weight + 24)
    assert row.results["srpt-area"].objective < row.optimum.objective
    best = _preemptive_best(instance)
    exact = row.optimum.lower_bound
    assert exact is not None
    for record in report.records():
        assert cast(float, record["C/LB"]) >= 1 - 1e-9, record
        assert cast(float, record["JCT/LB"]) >= 1 - 1e-9, record
        if record["method"] in PREEMPTIVE_POLICIES:
            assert record["model"] == "preemptive"
            assert record["LB"] == pytest.approx(best)
        else:
            assert record["model"] == "A"
            assert record["LB"] == pytest.approx(exact.value)
    assert cast(float, report.records()[1]["C/OPT"]) < 1  # srpt-area against OPT(A)
    summary = report.summary()
    methods = cast(dict[str, dict[str, float]], summary["methods"])
    for method, entry in methods.items():
        assert entry["mean C/LB"] >= 1 - 1e-9 and entry["mean JCT/LB"] >= 1 - 1e-9, method
    assert "srpt-area, asrpt-preemptive, las" in str(summary["preemptive_note"])


def test_non_preemptive_rows_keep_the_exact_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-preemptive method's certified ratios divide by the exact result's bounds
    (sum C and flow), as without any preemptive method in the comparison."""
    report = _report(_beaten(), monkeypatch)
    row = report.rows[0]
    exact = row.optimum.lower_bound
    assert exact is not None
    for method in ("sjf", "fifo", "asrpt"):
        result = row.results[method]
        assert row.certified_ratio(method) == result.objective / exact.value
        assert row.certified_flow_ratio(method) == (
            result.total_flow_time / row.optimum.flow_lower_bound
        )
    assert list(report.records()[0]) == list(RECORD_HEADERS)


def test_table_footnote_names_preemptive_methods(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The printed table ends with a line naming the preemptive methods and saying their
    C/OPT is against OPT(A) and may be below 1; without one, no such line."""
    from ddlsched.cli.compare_text import print_summary

    report = _report(_beaten(), monkeypatch)
    print_summary(report.config, report.summary())
    out = capsys.readouterr().out
    assert "preemptive: srpt-area, asrpt-preemptive, las; their C/OPT" in out
    assert "below 1 are legitimate" in out
    plain = CompareReport(CompareConfig(methods=("sjf",), instances=1), report.rows)
    assert plain.summary()["preemptive_note"] == ""


def test_simulate_bound_of_a_preemptive_policy_is_a_preemptive_bound() -> None:
    """simulate's lower bound on a preemptive policy (the best_bound sweep records) is
    the best of PREEMPTIVE_BOUNDS, and at most the policy's objective."""
    instance = _beaten(2.5, gpus=2)
    for policy in PREEMPTIVE_POLICIES:
        result = simulate(instance, policy)
        assert result.lower_bound is not None
        assert result.lower_bound.name in PREEMPTIVE_BOUNDS
        assert result.best_bound == pytest.approx(_preemptive_best(instance))
        assert result.best_bound <= result.objective + 1e-9


def test_sweep_ratios_use_preemptive_bound_for_preemptive_rows() -> None:
    """with_ratios: a preemptive row's C/LB divides by the bound its preemptive rows
    recorded, never the exact row's; the others' by the instance's best bound."""
    frame = pd.DataFrame(
        {
            "command": ["c"] * 4 + ["d"],
            "method": ["exact", "srpt-area", "las", "sjf", "srpt-area"],
            "status": ["optimal", "feasible", "feasible", "feasible", "feasible"],
            "objective": [28.0, 26.0, 41.0, 41.0, 10.0],
            "best_bound": [28.0, 25.0, 25.0, 25.0, math.nan],
        }
    )
    out = with_ratios(frame)
    assert list(out["bound"][:4]) == [28.0, 25.0, 25.0, 28.0]
    assert list(out["C/LB"][:4]) == pytest.approx([1.0, 26 / 25, 41 / 25, 41 / 28])
    assert out["C/OPT"][1] == pytest.approx(26 / 28)
    assert math.isnan(out["C/LB"][4])


@pytest.mark.parametrize(("policy", "model"), [("srpt-area", "preemptive"), ("sjf", "A")])
def test_simulate_json_names_the_policy_model(
    policy: str, model: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """simulate --json's ``problem`` is the model the policy's schedule belongs to:
    ``preemptive`` for a preemptive policy, ``A`` otherwise (as ``flow_model``)."""
    import json

    from ddlsched.cli import main

    assert main(["simulate", "--trace", "tiresias_60_job.csv", "--policy", policy, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["problem"] == doc["flow_model"] == model
