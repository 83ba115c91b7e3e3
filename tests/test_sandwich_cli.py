"""``ddlsched bound --sandwich``: progress on stderr, the cache and its switch, and Ctrl-C
keeping what finished."""

from __future__ import annotations

from pathlib import Path

import pytest
from ddlsched.algorithms import offline

from ddlsched import GeneratorConfig, generate
from ddlsched.cache import cache_dir
from ddlsched.cli import main
from ddlsched.core.io import write_instance


@pytest.fixture
def instance_file(tmp_path: Path) -> Path:
    """Ten jobs arriving at load 0.8 on 2 x 4 GPUs."""
    path = tmp_path / "instance.json"
    write_instance(generate(GeneratorConfig.exact_friendly(10, 2, 4, load=0.8), 0), path)
    return path


def _entries() -> list[Path]:
    folder = cache_dir()
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_progress_goes_to_stderr_and_the_cache_fills_unless_told_not(
    instance_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Progress lines (each phase of both models) on stderr, the intervals on stdout; the
    run stores one entry per model; --no-cache stores none and prints the same intervals."""
    command = ["bound", str(instance_file), "--sandwich", "--effort", "fast"]
    assert main([*command, "--no-cache"]) == 0
    uncached = capsys.readouterr()
    assert _entries() == []
    assert main(command) == 0
    cached = capsys.readouterr()
    assert len(_entries()) == 2
    for line in ("sandwich: problem A lower: job:", "sandwich: preemptive upper: srpt-area:"):
        assert line in cached.err
    assert "optimal total JCT in" not in cached.err
    assert cached.out.count("optimal total JCT in") == 2
    assert cached.out == uncached.out or all(
        a.split("(")[0] == b.split("(")[0]  # the seconds may differ
        for a, b in zip(cached.out.splitlines(), uncached.out.splitlines(), strict=True)
    )


def test_effort_and_no_cache_need_the_sandwich(
    instance_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--effort and --no-cache without --sandwich are refused in one line (exit 2)."""
    assert main(["bound", str(instance_file), "--no-cache"]) == 2
    assert "--no-cache: only with --sandwich" in capsys.readouterr().err


def test_ctrl_c_keeps_the_finished_model_and_the_lower_side(
    instance_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C on the preemptive model's upper side: problem A's interval is printed, the
    preemptive model's lower side only, said as such; one line on stderr, exit 130; only
    problem A's sandwich is cached."""
    original = offline.best_upper_bound

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs["preemptive"]:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(offline, "best_upper_bound", interrupted)
    code = main(["bound", str(instance_file), "--sandwich", "--effort", "fast"])
    out, err = capsys.readouterr()
    assert code == 130
    assert "non-preemptive (problem A): optimal total JCT in" in out
    assert "preemptive: the upper side cut short by Ctrl-C" in out
    assert "lower side only: optimal total JCT >=" in out
    assert err.strip().splitlines()[-1] == "ddlsched: interrupted"
    assert len(_entries()) == 1
