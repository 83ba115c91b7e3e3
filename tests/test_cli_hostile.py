"""Hostile command-line inputs answered with one line naming the option and the value."""

from __future__ import annotations

import pytest

from ddlsched.cli import main


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The stderr of a command that must exit 2 (argparse's own exit included)."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    return capsys.readouterr().err


def test_a_malformed_size_weight_names_the_gpus_weight_form(tmp_path, capsys) -> None:
    """``--size-weights ,`` is answered with the option's own form and example
    (``gpus:weight``), not the GPU types' ``type:value (v100:2,k80:4)``."""
    err = _error(["generate", "--size-weights", ",", "--out", str(tmp_path / "i.json")], capsys)
    assert "gpus:weight pairs" in err and "v100" not in err


def test_a_job_size_given_twice_is_refused(tmp_path, capsys) -> None:
    """``--size-weights 1:1,01:2`` names one size twice (spelt two ways): refused, naming
    it, rather than two weights for one size."""
    out = str(tmp_path / "i.json")
    err = _error(["generate", "--size-weights", "1:1,01:2", "--out", out], capsys)
    assert "1 named more than once" in err
