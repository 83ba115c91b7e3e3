"""Narrowing the library's certificates (:func:`ddlsched.bench.score.improve`): written only
when strictly better and verified, with the old certificate kept as history; nothing
written otherwise, to the byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlsched import ExactParams
from ddlsched.api import lower_bounds
from ddlsched.bench import score
from ddlsched.bench.library import Certificate, Entry, library, write_library
from ddlsched.bench.verify import verify_library
from ddlsched.core.model import Problem, Schedule, ScheduledJob
from ddlsched.core.result import LowerBound, Result, SolveStatus
from tests.bench.conftest import released_entry, two_job_entry

EXACT = ExactParams(time_limit=None, deterministic_limit=5, node_limit=500, threads=1)
WIDE_FIRST = Schedule(
    (ScheduledJob("wide", 0.0, 2.0, (0, 0)), ScheduledJob("narrow", 2.0, 3.0, (0,)))
)
"""The two-job entry's other order: ``sum w C = 2 + 2 * 3 = 8`` (the optimum is 5)."""


def _weakened(lower: float) -> Entry:
    """The two-job entry with its optimum forgotten: the interval ``[lower, 8]``, the
    upper end the worse order's schedule."""
    good = two_job_entry()
    weak = Certificate(
        problem="A",
        status="interval",
        lower_bound=lower,
        lower_bound_name="job",
        lower_bound_settings={"bounds": ["job"]},
        upper_bound=8.0,
        schedule=WIDE_FIRST,
        command="weakened by a test",
        version="0.0.1",
        produced="2026-01-01",
    )
    return Entry(good.name, good.tier, good.family, good.instance, weak)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.json*"))}


def test_a_weakened_certificate_is_tightened_and_keeps_its_history(tmp_path: Path) -> None:
    """The forgotten optimum is found again (upper 8 -> 5, its schedule verified; the
    bound raised to 5 within the closed gap, so ``optimal``), the weak certificate's summary
    is its history, and the interval entry's bound is raised to its optimum 12; ``bench
    verify --full`` (its own brute force and recomputed bounds) refuses both certificates
    before and accepts both after; a second run writes nothing at all."""
    write_library([_weakened(4.0), released_entry()], tmp_path)
    before = _files(tmp_path)
    assert not any(check.holds for check in verify_library(path=tmp_path, full=True))
    first = score.improve(tmp_path, params=EXACT)
    written = {item.name: item for item in first.written}
    assert set(written) == {"S-hand-1x2-j2", "M-hand-1x2-j2-r"}
    improved = {entry.name: entry.certificate for entry in library(tmp_path)}
    tight = improved["S-hand-1x2-j2"]
    assert (tight.status, tight.upper_bound) == ("optimal", 5.0)
    assert tight.lower_bound == pytest.approx(5.0, rel=1e-6) and tight.lower_bound <= 5.0
    assert tight.history == (_weakened(4.0).certificate.summary(),)
    assert "ddlsched bench improve --names S-hand-1x2-j2" in tight.command
    assert written["S-hand-1x2-j2"].status_after == "optimal"
    assert before != _files(tmp_path)
    assert all(check.holds for check in verify_library(path=tmp_path, full=True))
    settled = _files(tmp_path)
    second = score.improve(tmp_path, params=EXACT)
    assert not second.written and _files(tmp_path) == settled
    assert all(item.note for item in second.improvements)


def test_only_the_named_entries_are_tried(tmp_path: Path) -> None:
    """``names`` chooses; the other entry's file is not touched though it could improve."""
    write_library([_weakened(4.0), released_entry()], tmp_path)
    other = (tmp_path / "M" / "M-hand-1x2-j2-r.json").read_bytes()
    done = score.improve(tmp_path, names=["S-hand-1x2-j2"], params=EXACT)
    assert [item.name for item in done.improvements] == ["S-hand-1x2-j2"]
    assert (tmp_path / "M" / "M-hand-1x2-j2-r.json").read_bytes() == other


def _fake_solve(answer: Result) -> object:
    def solve(*args: object, **kwargs: object) -> Result:
        return answer

    return solve


def test_a_schedule_the_verifier_refuses_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A solve that returns both jobs at once on one 2-GPU server (3 GPUs: infeasible) with
    the objective 4, below the true optimum 5: refused by the verifier, so nothing is written
    (the bound is already the optimum, so nothing else could be)."""
    overlapping = Schedule(
        (ScheduledJob("narrow", 0.0, 1.0, (0,)), ScheduledJob("wide", 0.0, 2.0, (0, 0)))
    )
    claim = Result("exact", Problem.A, SolveStatus.FEASIBLE, 4.0, 4.0, schedule=overlapping)
    monkeypatch.setattr("ddlsched.api.solve", _fake_solve(claim))
    write_library([_weakened(5.0)], tmp_path)
    before = _files(tmp_path)
    (item,) = score.improve(tmp_path, params=EXACT).improvements
    assert not item.written and "refused by the verifier" in item.note
    assert _files(tmp_path) == before


def test_a_proof_above_the_stored_schedule_is_a_contradiction_not_a_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A solve claiming the optimum 10 (``wide`` [0, 2), ``narrow`` idle until [3, 4):
    feasible, ``2 + 2 * 4 = 10``) while the stored schedule reaches 8: nothing is written,
    and the note says why."""
    late = Schedule(
        (ScheduledJob("wide", 0.0, 2.0, (0, 0)), ScheduledJob("narrow", 3.0, 4.0, (0,)))
    )
    claim = Result(
        "exact", Problem.A, SolveStatus.OPTIMAL, 10.0, 10.0, schedule=late,
        lower_bound=LowerBound(10.0, "solver-dual", True),
    )  # fmt: skip
    monkeypatch.setattr("ddlsched.api.solve", _fake_solve(claim))
    write_library([_weakened(5.0)], tmp_path)
    before = _files(tmp_path)
    (item,) = score.improve(tmp_path, params=EXACT).improvements
    assert not item.written and "contradiction" in item.note
    assert _files(tmp_path) == before


def test_a_bound_no_setting_recomputes_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The solver's dual bound short of a proof (here 7, above the weakened 5) is valid
    but ``bench verify`` could not recompute it from a certificate's settings: it is left
    out, and said."""
    claim = Result.unsolved("exact", Problem.A, "test")
    claim = Result(
        "exact", Problem.A, SolveStatus.ERROR, claim.objective, claim.total_jct,
        lower_bound=LowerBound(7.0, "solver-dual", True),
    )  # fmt: skip
    monkeypatch.setattr("ddlsched.api.solve", _fake_solve(claim))
    write_library([_weakened(5.0)], tmp_path)
    before = _files(tmp_path)
    (item,) = score.improve(tmp_path, params=EXACT).improvements
    assert not item.written and "solver-dual bound 7 is not kept" in item.note
    assert _files(tmp_path) == before


def test_a_refused_solve_leaves_the_fast_bounds_to_improve_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exact solve refused for the entry (a model too large: bad input for the settings,
    not the end of the run) is noted; the fast bounds still raise the weakened bound 4 to
    their best (rank's, 4.5 on this entry), and the interval stays an interval."""
    from ddlsched.core.model import InputError

    def refused(*args: object, **kwargs: object) -> Result:
        raise InputError("the model needs about 9 GiB, more than the limit")

    monkeypatch.setattr("ddlsched.api.solve", refused)
    write_library([_weakened(4.0)], tmp_path)
    (item,) = score.improve(tmp_path, params=EXACT).improvements
    assert item.written and "refused the entry: the model needs about 9 GiB" in item.note
    (entry,) = library(tmp_path)
    assert entry.certificate.status == "interval" and entry.certificate.upper_bound == 8.0
    best = max(lower_bounds(entry.instance), key=lambda bound: bound.value)
    assert (best.name, round(best.value, 6)) == ("rank", 4.5)
    assert entry.certificate.lower_bound_name == "rank"
    assert entry.certificate.lower_bound == best.value
    assert entry.certificate.lower_bound_settings == {"bounds": ["rank"]}
