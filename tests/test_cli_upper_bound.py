"""``ddlsched simulate --upper-bound``: one lower bound behind every figure printed, and
the sandwich of the policy's own model."""

from __future__ import annotations

import json

import pytest

from ddlsched import sandwich
from ddlsched.cli import main

TRACE = "submit,duration,gpus\n0,100,1\n10,5,2\n20,1000,4\n20,1,1\n"
"""Four jobs on one 4-GPU server: a 4-GPU job arrives while two others run, so the
start-time bound of problem A beats the fast bounds."""


def _simulate(tmp_path, capsys, policy: str) -> dict:
    trace = tmp_path / "t.csv"
    trace.write_text(TRACE)
    arguments = ["simulate", "--trace", str(trace), "--servers", "1", "--gpus-per-server", "4"]
    assert main([*arguments, "--policy", policy, "--upper-bound", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_ratio_uses_the_sandwichs_bound(tmp_path, capsys) -> None:
    """flow_lower_bound, flow_ratio, flow_gap, flow_upper_over_lower and the lower_bound
    record all use the one bound, the largest known (the sandwich's here)."""
    document = _simulate(tmp_path, capsys, "sjf")
    bound, total = document["flow_lower_bound"], document["total_jct"]
    assert document["lower_bound"]["flow_value"] == pytest.approx(bound)
    assert document["flow_ratio"] == pytest.approx(total / bound)
    assert document["flow_gap"] == pytest.approx((total - bound) / total)
    assert document["flow_upper_over_lower"] == pytest.approx(document["flow_upper_bound"] / bound)
    assert document["lower_bound"]["name"] == "start-lagrangian"


@pytest.mark.parametrize(("policy", "preemptive"), [("sjf", False), ("las", True)])
def test_the_sandwich_is_of_the_policys_model(
    tmp_path, capsys, monkeypatch, policy: str, preemptive: bool
) -> None:
    """A non-preemptive policy's interval comes from problem A's sandwich (whose bounds
    are stronger), a preemptive one's from the preemptive model's (each the model's full
    sandwich, :func:`ddlsched.sandwich.study_sandwich`)."""
    asked = []
    original = sandwich.study_sandwich

    def recording(*args, **kwargs):
        asked.append((kwargs["preemptive"], kwargs["effort"]))
        return original(*args, **kwargs)

    monkeypatch.setattr(sandwich, "study_sandwich", recording)
    document = _simulate(tmp_path, capsys, policy)
    assert asked == [(preemptive, "full")]
    assert document["flow_model"] == ("preemptive" if preemptive else "A")
