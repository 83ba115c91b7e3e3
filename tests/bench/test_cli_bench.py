"""``ddlsched bench list`` and ``export`` on a hand-worked library."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ddlsched.cli import main
from ddlsched.core.io import read_instance, read_schedule
from tests.bench.conftest import released_entry, two_job_entry


def test_list_json_gives_one_row_per_entry_with_its_certificate(
    tiny_library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json``: tier, name, jobs, the optimum where proven (null otherwise) and the
    flow interval, in tier order (values worked by hand in the fixtures)."""
    assert main(["bench", "list", "--json", "--library", str(tiny_library)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["tier"], r["name"], r["jobs"]) for r in rows] == [
        ("S", "S-hand-1x2-j2", 2),
        ("M", "M-hand-1x2-j2-r", 2),
    ]
    assert rows[0]["optimum"] == 5.0 and rows[0]["flow_optimum"] == 5.0
    assert rows[1]["optimum"] is None
    assert (rows[1]["flow_lower_bound"], rows[1]["flow_upper_bound"]) == (2.0, 4.0)


def test_list_text_and_tier_choice(tiny_library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text table shows an optimum or an interval; ``--tier M`` keeps only tier M."""
    assert main(["bench", "list", "--tier", "M", "--library", str(tiny_library)]) == 0
    out = capsys.readouterr().out
    assert "M-hand-1x2-j2-r" in out and "[10, 12]" in out and "S-hand" not in out
    assert "1 entries" in out


@pytest.mark.parametrize(
    ("args", "named"),
    [(["list", "--tier", "S,X"], "'X'"), (["export", "nope", "--out", "x.json"], "'nope'")],
)
def test_an_unknown_tier_or_name_is_one_line_exit_2(
    tiny_library: Path, capsys: pytest.CaptureFixture[str], args: list[str], named: str
) -> None:
    """An unknown tier or entry: exit 2 and one line naming it."""
    assert main(["bench", *args, "--library", str(tiny_library)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and named in err[0]


def test_export_writes_the_instance_and_schedule_in_the_project_formats(
    tiny_library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The exported files read back as the entry's instance and schedule, and ``ddlsched
    verify`` accepts them with the certificate's objective."""
    out, schedule = tmp_path / "i.json", tmp_path / "s.json"
    code = main(
        [
            "bench",
            "export",
            "M-hand-1x2-j2-r",
            "--out",
            str(out),
            "--schedule",
            str(schedule),
            "--library",
            str(tiny_library),
        ]
    )
    assert code == 0
    assert read_instance(out) == released_entry().instance
    assert read_schedule(schedule) == released_entry().certificate.schedule
    capsys.readouterr()
    assert main(["verify", str(out), str(schedule), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_completion_time"] == 12.0


def test_export_csv_is_a_job_table_at_the_stored_mapping(
    tiny_library: Path, tmp_path: Path
) -> None:
    """``--format csv``: id, submit, duration, gpus, weight per job in the instance's order;
    durations worked by hand (wide 2 s on its 2 GPUs, narrow 1 s)."""
    out = tmp_path / "jobs.csv"
    code = main(
        [
            "bench",
            "export",
            "S-hand-1x2-j2",
            "--out",
            str(out),
            "--format",
            "csv",
            "--library",
            str(tiny_library),
        ]
    )
    assert code == 0
    rows = list(csv.DictReader(out.open()))
    assert [
        (r["id"], float(r["submit"]), float(r["duration"]), int(r["gpus"]), float(r["weight"]))
        for r in rows
    ] == [
        ("wide", 0.0, 2.0, 2, 1.0),
        ("narrow", 0.0, 1.0, 1, 2.0),
    ]
    assert two_job_entry().instance.num_jobs == len(rows)
