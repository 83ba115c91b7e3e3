"""``bench verify``: every certificate re-checked, and each kind of corruption caught."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ddlsched.bench import library as lib
from ddlsched.bench.verify import check_entry, verify_library
from ddlsched.cli import main

JsonDoc = dict[str, object]


def _first(tier: str, pick: Callable[[lib.Entry], bool] = lambda _: True) -> lib.Entry:
    return next(item for item in lib.entries([tier]) if pick(item))


def _cheap_bound(item: lib.Entry) -> bool:
    from ddlsched.formulations.lower_bounds import BOUNDS

    return item.certificate.lower_bound_name in BOUNDS.names()


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A library of one shipped S entry, one M entry and one L entry whose bound is a fast
    one (recomputed without --full), in a temporary folder."""
    chosen = [_first("S"), _first("M"), _first("L", _cheap_bound)]
    lib.write_library(chosen, tmp_path)
    return tmp_path


def _edit(folder: Path, tier: str, change: Callable[[JsonDoc], None]) -> str:
    """Apply ``change`` to the certificate of the copy's entry of ``tier``; its name."""
    ((name, file),) = [(n, f) for n, t, f in lib._index(folder) if t == tier]
    path = folder / file
    doc = json.loads(path.read_text())
    change(doc["certificate"])
    path.write_text(json.dumps(doc))
    return name


def _verify(folder: Path, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str]:
    code = main(["bench", "verify", "--library", str(folder), *more])
    return code, capsys.readouterr().out


def test_the_copied_certificates_hold(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Untouched entries of each kind pass: exit 0, every certificate holds."""
    code, out = _verify(copy, capsys)
    assert code == 0, out
    assert "3 of 3 certificates hold" in out


def _lower_both(certificate: JsonDoc) -> None:
    for key in ("lower_bound", "upper_bound"):
        certificate[key] = float(certificate[key]) - 1  # type: ignore[arg-type]


def _raise_both(certificate: JsonDoc) -> None:
    for key in ("lower_bound", "upper_bound"):
        certificate[key] = float(certificate[key]) + 1  # type: ignore[arg-type]


def _delay_last_job(certificate: JsonDoc) -> None:
    schedule = certificate["schedule"]
    assert isinstance(schedule, dict)
    last = max(schedule["jobs"], key=lambda job: job["start"])
    last["start"] += 1.0
    last.pop("end", None)


def _lower_bound_down(certificate: JsonDoc) -> None:
    certificate["lower_bound"] = float(certificate["lower_bound"]) * 0.99  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tier", "change", "message"),
    [
        ("S", _lower_both, "the schedule's sum w C is"),
        ("M", _lower_both, "the schedule's sum w C is"),
        ("M", _raise_both, "the schedule's sum w C is"),
        ("M", _delay_last_job, "the schedule's sum w C is"),
        ("L", _delay_last_job, "the schedule's sum w C is"),
        ("S", _lower_bound_down, "do not meet"),
        ("L", _lower_bound_down, "recomputes"),
    ],
)
def test_a_planted_error_fails_naming_the_entry(
    copy: Path,
    capsys: pytest.CaptureFixture[str],
    tier: str,
    change: Callable[[JsonDoc], None],
    message: str,
) -> None:
    """A wrong optimum, a changed schedule or a lowered bound makes verify exit 1 and
    name the entry (and what is wrong); the other entries still hold."""
    name = _edit(copy, tier, change)
    code, out = _verify(copy, capsys)
    assert code == 1
    assert f"{name}: " in out and message in out
    assert "2 of 3 certificates hold" in out and f"failing: {name}" in out


def _weakened(certificate: JsonDoc) -> None:
    """A lower bound 5% down, the status an interval: consistent on its face."""
    _lower_bound_down(certificate)
    certificate["lower_bound"] = float(certificate["lower_bound"]) * 0.96  # type: ignore[arg-type]
    certificate["status"] = "interval"


@pytest.mark.parametrize("tier", ["S", "M"])
def test_a_proven_optimum_weakened_to_an_interval_fails(
    copy: Path, capsys: pytest.CaptureFixture[str], tier: str
) -> None:
    """Tiers S and M hold proven optima: an entry there whose bound is lowered and whose
    status says interval (which would score a policy against the weaker bound) fails,
    named, with or without --full."""
    name = _edit(copy, tier, _weakened)
    for more in ((), ("--full",)) if tier == "S" else ((),):
        code, out = _verify(copy, capsys, *more)
        assert code == 1 and f"failing: {name}" in out
        assert f"tier {tier} holds proven optima, but the status is 'interval'" in out


def test_an_index_that_moves_an_entry_to_another_tier_is_refused(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index says an S entry is of tier M: reading it names the file and both tiers
    (exit 2), instead of checking it as an M entry."""
    index = copy / lib.INDEX_FILE
    doc = json.loads(index.read_text())
    row = next(r for r in doc["entries"] if r["tier"] == "S")
    row["tier"] = "M"
    index.write_text(json.dumps(doc))
    assert main(["bench", "verify", "--library", str(copy)]) == 2
    err = capsys.readouterr().err
    assert f"entry {row['name']!r} is of tier S, the index says M" in err


def test_a_worse_schedule_claimed_optimal_is_caught_by_the_brute_force(copy: Path) -> None:
    """An S entry whose schedule is made worse (its last job one second later) with both
    bounds moved to its objective is consistent on its face; the brute force finds the
    better schedule."""
    name = _edit(copy, "S", _delay_last_job)
    item = lib.entry(name, copy)
    from ddlsched.proofs_checks.verifier import verify

    objective = verify(item.instance, item.certificate.schedule).total_completion_time
    assert objective > item.certificate.upper_bound

    def claim(certificate: JsonDoc) -> None:
        certificate["lower_bound"] = certificate["upper_bound"] = objective

    _edit(copy, "S", claim)
    check = check_entry(lib.entry(name, copy))
    assert [p for p in check.problems if "brute force finds" in p], check.problems
    assert not check_entry(lib.entry(name, copy), brute=False).problems


def test_a_missing_file_is_exit_2_naming_it(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A library whose entry file is gone: one line naming the file, exit 2."""
    ((_, file),) = [(n, f) for n, t, f in lib._index(copy) if t == "M"]
    (copy / file).unlink()
    assert main(["bench", "verify", "--library", str(copy)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and file in err[0] and "no such file" in err[0]


def test_verify_library_reports_progress_and_expensive_skips(copy: Path) -> None:
    """Progress is called once per entry in order; an S entry proven by the solver's own
    bound has that bound left to --full."""
    seen: list[tuple[int, int, str]] = []
    checks = verify_library(path=copy, progress=lambda d, t, c: seen.append((d, t, c.name)))
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert [c.name for c in checks] == [name for _, _, name in seen]
    assert all(check.holds for check in checks)
