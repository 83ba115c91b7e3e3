"""``ddlsched bench run``, ``leaderboard``, ``improve`` and ``copy`` as a user runs them:
exit codes, one-line refusals, JSON and CSV rows, Ctrl-C keeping the rows done."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from ddlsched.bench import score
from ddlsched.bench.library import write_library
from ddlsched.cli import main
from tests.bench.test_score import USER_POLICY, wrong_optimum_entry


def _run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = main(["bench", *words])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_prints_one_json_row_per_entry_with_ratios_of_at_least_one(
    tiny_library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--tier S,M --json``: a row per entry of the two tiers, each ratio at least 1 (1.0
    on the optimum asrpt-greedy reaches; 2.0 over the interval's flow bound, hand-worked in
    ``test_score``), and the tiers' summaries."""
    code, out, _ = _run(
        capsys, "run", "--policy", "asrpt-greedy", "--tier", "S,M", "--json",
        "--library", str(tiny_library),
    )  # fmt: skip
    document = json.loads(out)
    assert code == 0 and not document["interrupted"]
    assert [(row["name"], row["ratio"]) for row in document["rows"]] == [
        ("S-hand-1x2-j2", 1.0),
        ("M-hand-1x2-j2-r", 2.0),
    ]
    assert [tier["tier"] for tier in document["tiers"]] == ["S", "M"]


def test_run_writes_rows_a_table_reader_reads_back(
    tiny_library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--out rows.csv``: one line per entry, the same ratios as printed."""
    rows = tmp_path / "rows.csv"
    code, out, _ = _run(
        capsys, "run", "--policy", "fifo", "--out", str(rows), "--library", str(tiny_library)
    )
    table = pd.read_csv(rows)
    assert code == 0 and f"rows written to {rows}" in out
    assert list(table["name"]) == ["S-hand-1x2-j2", "M-hand-1x2-j2-r"]
    assert list(table["ratio"]) == pytest.approx([1.6, 2.0])


def test_run_scores_a_users_policy_from_a_file(
    tiny_library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--policy path/to/file.py:Class`` from a folder outside the package."""
    path = tmp_path / "narrow_first.py"
    path.write_text(textwrap.dedent(USER_POLICY))
    code, out, _ = _run(
        capsys, "run", "--policy", f"{path}:NarrowFirst", "--json",
        "--library", str(tiny_library),
    )  # fmt: skip
    assert code == 0
    assert [row["ratio"] for row in json.loads(out)["rows"]] == [1.0, 2.0]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (("run", "--policy", "las"), "policy 'las' preempts"),
        (("run", "--policy", "fifo", "--tier", "S,X"), "tier: expected some of S, M, L, T"),
        (("run", "--policy", "fifo", "--names", "nope"), "no entry 'nope'"),
        (("run", "--policy", "fifo", "--tier", "S,,M"), "--tier: an empty item"),
        (("run", "--policy", "fifo", "--out", "rows.txt"), "expected a .csv file"),
        (("leaderboard", "--policies", "fifo,fifo"), "fifo named more than once"),
        (("improve",), "--library: improve writes certificates"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tiny_library: Path, capsys: pytest.CaptureFixture[str], words: tuple[str, ...], message: str
) -> None:
    """Refusals before any run: a preemptive policy, an unknown tier or name, an empty list
    item, a CSV path without .csv, a repeated policy, and improve without a library to
    write."""
    library = () if words[0] == "improve" else ("--library", str(tiny_library))
    code, out, err = _run(capsys, *words, *library)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_a_row_below_its_optimum_fails_the_run_naming_the_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A certificate with a wrong optimum: exit 1, the entry named on stderr."""
    write_library([wrong_optimum_entry()], tmp_path)
    code, out, err = _run(capsys, "run", "--policy", "asrpt-greedy", "--library", str(tmp_path))
    assert code == 1 and "S-hand-1x2-j2: ratio below 1" in err
    assert "| S | S-hand-1x2-j2 | 2 | 5 | optimum | 8 | error |" in out


def test_ctrl_c_prints_the_rows_done_and_exits_130(
    tiny_library: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the second entry: the first row is printed, marked interrupted."""
    real = score.score_entry
    calls = []

    def interrupted_second(*args: object, **kwargs: object) -> score.ScoreRow:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(score, "score_entry", interrupted_second)
    code, out, err = _run(
        capsys, "run", "--policy", "fifo", "--json", "--library", str(tiny_library)
    )
    document = json.loads(out)
    assert code == 130 and "interrupted" in err
    assert document["interrupted"] and len(document["rows"]) == 1


def test_the_leaderboard_prints_every_policy_per_tier(
    tiny_library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON rows are :func:`score.leaderboard`'s, one per default policy per tier."""
    code, out, _ = _run(capsys, "leaderboard", "--json", "--library", str(tiny_library))
    rows = json.loads(out)
    assert code == 0 and len(rows) == 2 * len(score.leaderboard_policies())
    assert rows == [row.to_dict() for row in score.leaderboard(path=tiny_library)]


def test_improve_works_on_a_copy_and_says_what_changed(
    tiny_library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bench copy`` makes a copy (refusing an existing folder), ``improve --library COPY``
    narrows the copy's interval to the optimum and leaves the original as it was."""
    copy = tmp_path / "copy"
    original = (tiny_library / "M" / "M-hand-1x2-j2-r.json").read_bytes()
    code, out, _ = _run(capsys, "copy", str(copy), "--library", str(tiny_library))
    assert code == 0 and "2 entries copied" in out
    code, _, err = _run(capsys, "copy", str(copy), "--library", str(tiny_library))
    assert code == 2 and "exists" in err
    code, out, _ = _run(
        capsys, "improve", "--library", str(copy), "--time-limit", "600",
        "--work-limit", "5", "--node-limit", "500",
    )  # fmt: skip
    assert code == 0, out
    assert "M-hand-1x2-j2-r: lower bound 10 -> " in out and "interval -> optimal" in out
    assert "S-hand-1x2-j2: unchanged" in out and "1 of 2 certificates improved" in out
    assert (tiny_library / "M" / "M-hand-1x2-j2-r.json").read_bytes() == original
    assert (copy / "M" / "M-hand-1x2-j2-r.json").read_bytes() != original
