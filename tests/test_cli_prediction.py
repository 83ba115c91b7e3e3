"""``ddlsched check --prediction-error E``: the prediction claims at the front door."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlsched.cli import main


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six integral jobs on 2 x 4 GPUs (the optimum is proven in moments)."""
    path = tmp_path_factory.mktemp("prediction") / "inst.json"
    command = ["generate", "--jobs", "6", "--servers", "2", "--gpus-per-server", "4"]
    command += ["--preset", "exact-friendly", "--seed", "3", "--out", str(path)]
    assert main(command) == 0
    return path


def _claims(capsys: pytest.CaptureFixture[str], path: Path, error: str) -> dict[str, dict]:
    assert main(["check", str(path), "--prediction-error", error, "--json"]) == 0
    return {claim["name"]: claim for claim in json.loads(capsys.readouterr().out)["claims"]}


@pytest.mark.parametrize("error", ["0", "0.5", "2"])
def test_prediction_claims_hold_and_reduce_to_theorem1_without_error(
    capsys: pytest.CaptureFixture[str], instance: Path, error: str
) -> None:
    """Every claim named ``prediction...`` is listed with its bound, sides and status and
    holds, for over-, under- and random predictions; at E = 0 the theorem's bound and right
    side equal Theorem 1's on the same instance, and above it they grow.

    Catches the option not reaching the check (no prediction claim), an error level
    ignored (the bound unchanged at E > 0), and a factor off at E = 0."""
    claims = _claims(capsys, instance, error)
    theorem = claims["theorem1"]
    predicted = {name: claim for name, claim in claims.items() if name.startswith("prediction")}
    assert len(predicted) == 6
    assert all(claim["status"] == "holds" for claim in predicted.values()), predicted
    over = predicted[f"prediction_theorem1[over E={error}]"]
    if error == "0":
        assert over["bound"] == pytest.approx(theorem["bound"])
        assert over["rhs"] == pytest.approx(theorem["rhs"])
        assert over["lhs"] == pytest.approx(theorem["lhs"])
    else:
        assert over["bound"] > theorem["bound"] and over["rhs"] > theorem["rhs"]


def test_a_negative_prediction_error_is_refused(
    capsys: pytest.CaptureFixture[str], instance: Path
) -> None:
    """E must be a number >= 0: one line, exit 2."""
    with pytest.raises(SystemExit) as stopped:
        main(["check", str(instance), "--prediction-error", "-0.5"])
    assert stopped.value.code == 2
    assert "--prediction-error" in capsys.readouterr().err
