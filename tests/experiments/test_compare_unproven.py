"""compare where the exact method proves nothing: no incumbent is reported as OPT, the
certified ratio to the bound stands in, and one shared reason is printed once.

The exact method's answer is made ``feasible`` with a chosen runtime, as a solve stopped
by its time limit returns it: deterministic, whatever the machine's speed."""

from __future__ import annotations

import dataclasses
import importlib
import math
from typing import Any

import pytest

from ddlsched.cli import main
from ddlsched.core.result import SolveStatus
from ddlsched.experiments import CompareConfig, compare


@pytest.fixture
def exact_unproven(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every exact solve of ``compare`` returns its schedule as ``feasible`` (not proven),
    with runtimes 58 s, 61 s, ... (each instance ran into the limit at its own pace)."""
    module = importlib.import_module("ddlsched.experiments.compare")
    solve = module.solve
    runtimes = iter([58.0, 61.0, 59.0, 62.0])

    def unproven(instance: Any, method: str, **kwargs: Any) -> Any:
        result = solve(instance, method, **kwargs)
        if method != "exact":
            return result
        return dataclasses.replace(result, status=SolveStatus.FEASIBLE, runtime_s=next(runtimes))

    monkeypatch.setattr(module, "solve", unproven)


@pytest.mark.usefixtures("exact_unproven")
def test_an_unproven_incumbent_is_never_reported_as_opt() -> None:
    """Each row of an instance without a proven optimum has ``OPT`` and ``C/OPT`` ``nan``
    (the incumbent is only an upper bound on OPT), while ``LB`` is the exact result's
    valid bound and ``C/LB`` = sum C / LB >= sum C / incumbent."""
    report = compare(CompareConfig(jobs=4, instances=2, methods=("fifo",)))
    rows: list[dict[str, Any]] = report.records()
    assert len(rows) == 4
    for row in rows:
        assert math.isnan(row["OPT"]) and math.isnan(row["C/OPT"])
        assert row["LB"] > 0 and row["C/LB"] == row["sum C"] / row["LB"]
    for instance in report.rows:
        incumbent = instance.optimum.objective
        fifo = next(r for r in rows if r["seed"] == instance.seed and r["method"] == "fifo")
        assert fifo["C/LB"] >= fifo["sum C"] / incumbent - 1e-12


@pytest.mark.usefixtures("exact_unproven")
def test_one_shared_reason_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Two instances both stopped by the exact method's limits share one reason: the line
    names it (the deterministic limits used) without "(and other reasons)", and the
    heading names the preset the instances come from."""
    assert main(["compare", "--jobs", "4", "--instances", "2", "--methods", "fifo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("2 exact-friendly instances (4 jobs")
    why = [line for line in lines if line.startswith("OPT not proven on 2/2 instance(s)")]
    assert len(why) == 1 and "other reason" not in why[0]
    assert "exact ended unproven" in why[0]
    assert "deterministic limits: 60 CP-SAT work units, 20,000 MILP nodes" in why[0]
