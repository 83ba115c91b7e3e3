"""The shipped data (ddlsched.core.data): every file catalogued, counted, licensed, packed in
the wheel, and found by a bare name from any folder, a user's own folder first."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ddlsched.core.data import (
    DATASETS,
    bundled_data_dir,
    data_path,
    dataset_of,
    resolve_trace,
    shipped_files,
)
from ddlsched.core.elastic.application import load_profile_rows
from ddlsched.core.elastic.workload import load_pollux_workload
from ddlsched.core.model import InputError

ROOT = Path(__file__).resolve().parents[2]

BARE_NAMES = {
    "philly_jobs.csv": 82_247,
    "tiresias_60_job.csv": 60,
    "muri_trace1.csv": 1_494,
    "muri_trace2.csv": 5_755,
    **{f"workload-{n}.csv": 160 for n in range(1, 9)},
}
"""The names a user types, with the row counts their sources publish."""

LICENCE_FILES = {
    "Apache-2.0": "Apache-2.0.txt",
    "MIT": "MIT-gavel.txt",
    "CC-BY-4.0": "CC-BY-4.0-philly.txt",
}


def csv_rows(path: Path) -> int:
    """Data rows by the csv module (no code shared with the package's counter)."""
    with path.open(newline="", encoding="utf-8-sig") as stream:
        return sum(1 for record in csv.reader(stream) if record) - 1


@pytest.fixture
def no_user_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No ``$DDLSCHED_DATA``, and an empty working folder."""
    monkeypatch.delenv("DDLSCHED_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_shipped_file_is_catalogued_and_every_dataset_ships() -> None:
    """Each CSV under ``ddlsched/data`` belongs to exactly one dataset and each dataset has a
    file. Catches a file added without its source and licence, or an entry left behind."""
    root = bundled_data_dir()
    names = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    data = [n for n in names if not n.startswith("LICENSES/")]
    assert data and all(n.endswith(".csv") for n in data)
    for name in data:
        owners = [d for d in DATASETS if re.fullmatch(_glob_regex(d.pattern), name)]
        assert len(owners) == 1, name
    listed = [f.name for f in shipped_files()]
    assert sorted(listed) == sorted(data)
    assert {dataset_of(n) for n in listed} == set(DATASETS)


def _glob_regex(pattern: str) -> str:
    """A shell glob as a regular expression, written apart from ``fnmatch``."""
    return "".join("[^/]*" if c == "*" else re.escape(c) for c in pattern)


def test_row_counts_are_the_files_rows() -> None:
    """``shipped_files`` counts each file's data rows as the csv module does, and the traces
    and workloads have the rows their sources publish. Catches a counter that includes the
    header, or a truncated copy."""
    root = bundled_data_dir()
    for file in shipped_files():
        assert file.rows == csv_rows(root / file.name), file.name
    for name, rows in BARE_NAMES.items():
        assert csv_rows(resolve_trace(name)) == rows


def test_the_data_page_states_the_rows_of_every_file() -> None:
    """docs/guide/data.md gives every dataset its total rows (and each trace its own). Catches
    a page that drifts from the files."""
    page = (ROOT / "docs" / "guide" / "data.md").read_text(encoding="utf-8")
    totals: dict[str, int] = {}
    for file in shipped_files():
        totals[file.dataset.pattern] = totals.get(file.dataset.pattern, 0) + file.rows
    for pattern, rows in totals.items():
        stem = pattern.split("*")[0].rstrip("_-")
        line = next(li for li in page.splitlines() if li.startswith(f"| `{stem}"))
        figures = [int(x.replace(",", "")) for x in re.findall(r"\| ([\d,]+)\b", line)[:1]]
        if pattern == "traces/muri_trace*.csv":
            assert "1,494 and 5,755" in line
        else:
            assert figures == [rows], (pattern, line)


def test_each_licence_ships_its_text() -> None:
    """Every dataset's licence has its text beside the data, and the notice names each
    source. Catches data shipped without the notice its licence requires."""
    licences = bundled_data_dir() / "LICENSES"
    notice = (licences / "NOTICE.md").read_text(encoding="utf-8")
    for dataset in DATASETS:
        text = (licences / LICENCE_FILES[dataset.licence]).read_text(encoding="utf-8")
        assert len(text) > 500
        assert dataset.pattern in notice, dataset.pattern
    assert "Apache License" in (licences / "Apache-2.0.txt").read_text()
    assert "Stanford Future Data Systems" in (licences / "MIT-gavel.txt").read_text()


@pytest.mark.parametrize("name", sorted(BARE_NAMES))
def test_bare_names_resolve_to_the_package_from_any_folder(no_user_data: Path, name: str) -> None:
    """Each published name, with or without ``.csv``, is the package's file from a folder
    that has nothing. Catches a lookup tied to the checkout or to the working folder."""
    found = resolve_trace(name)
    assert found.is_file() and found.is_relative_to(bundled_data_dir())
    assert resolve_trace(name.removesuffix(".csv")) == found


def test_a_file_in_the_working_folder_wins(no_user_data: Path) -> None:
    """A user's own file of the same name, where they stand, is read instead of the shipped
    one. Catches a lookup that prefers the package over what the user names."""
    (no_user_data / "tiresias_60_job.csv").write_text("x\n")
    assert resolve_trace("tiresias_60_job.csv") == Path("tiresias_60_job.csv")


def test_a_user_folder_overrides_file_by_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``$DDLSCHED_DATA`` holding one trace replaces that trace only; the rest still come
    from the package, and a miss names both folders and how to list the shipped data.
    Catches an override that hides the package's files, or one that is ignored."""
    mine = tmp_path / "mine"
    (mine / "traces").mkdir(parents=True)
    (mine / "traces" / "philly_jobs.csv").write_text("timestamp,duration,num_gpus\n")
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    monkeypatch.chdir(tmp_path)
    assert resolve_trace("philly_jobs.csv") == mine / "traces" / "philly_jobs.csv"
    assert data_path("traces", "philly_jobs.csv") == mine / "traces" / "philly_jobs.csv"
    assert resolve_trace("workload-6").is_relative_to(bundled_data_dir())
    assert data_path("traces", "muri_trace1.csv").is_relative_to(bundled_data_dir())
    with pytest.raises(
        InputError, match=r"nowhere\.csv: no such file \(looked in .*mine.*ddlsched data"
    ):
        resolve_trace("nowhere.csv")
    with pytest.raises(InputError, match=r"traces/nowhere\.csv: no such data file .*mine"):
        data_path("traces", "nowhere.csv")


def test_a_models_profiles_come_from_one_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A user folder with a model's placements file supplies all of that model's rows (its
    scalability file too); other models keep the package's. Catches profiles mixed from two
    folders, or an override that is never read."""
    shipped = load_profile_rows("bert")
    mine = tmp_path / "mine"
    for sub in ("profiles", "pollux/scalability"):
        (mine / sub).mkdir(parents=True)
    (mine / "profiles" / "pollux_bert_placements.csv").write_text(
        "placement,local_bsz,step_time,sync_time\n1,8,0.5,0.0\n2,8,0.5,0.01\n"
    )
    (mine / "pollux" / "scalability" / "bert.csv").write_text(
        "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,4,8,0.5,0.2\n"
    )
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    rows = load_profile_rows("bert")
    assert list(rows.replicas) == [1, 2, 4] and list(rows.step_time) == [0.5] * 3
    assert len(load_profile_rows("ncf").local_bsz) > 1000
    assert len(shipped.local_bsz) == csv_rows(
        bundled_data_dir() / "profiles" / "pollux_bert_placements.csv"
    ) + csv_rows(bundled_data_dir() / "pollux" / "scalability" / "bert.csv")


def test_a_pollux_workload_loads_by_its_bare_name(no_user_data: Path) -> None:
    """``load_pollux_workload("workload-6.csv")`` reads the shipped workload: 160 jobs, the
    first submitted at its file's first time. Catches a reader that only takes paths."""
    workload = load_pollux_workload("workload-6.csv")
    path = bundled_data_dir() / "pollux" / "workloads" / "workload-6.csv"
    with path.open(newline="") as stream:
        first = next(csv.DictReader(stream))
    assert len(workload.jobs) == 160
    assert workload.jobs[0].name == first["name"]


@pytest.mark.slow
def test_the_wheel_carries_every_data_file_and_licence(tmp_path: Path) -> None:
    """A built wheel (what ``pip install .`` installs) holds each shipped file and licence
    text. Catches package-data globs that miss a folder, so that only editable installs
    would work."""
    source = tmp_path / "source"  # a copy, so that the build leaves nothing in the checkout
    for name in ("pyproject.toml", "README.md"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    for package in ("ddlsched", "formulations", "algorithms", "proofs_checks"):
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("ddlsched-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    root = bundled_data_dir()
    for path in root.rglob("*"):
        if path.is_file():
            assert f"ddlsched/data/{path.relative_to(root).as_posix()}" in packed


def test_the_data_command_lists_every_file_with_rows_source_and_licence(
    no_user_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ddlsched data --json`` has one entry per shipped file with the csv module's row count
    and its dataset's licence; the table names each bare trace and workload with its rows,
    and the user's folder when one is set. Catches a listing that drops files or prints
    another file's figures."""
    import json

    from ddlsched.cli import main

    assert main(["data", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    root = bundled_data_dir()
    assert Path(listed["folder"]) == root
    assert {e["name"]: e["rows"] for e in listed["files"]} == {
        p.relative_to(root).as_posix(): csv_rows(p) for p in root.rglob("*.csv")
    }
    assert all(e["licence"] == dataset_of(e["name"]).licence for e in listed["files"])
    assert main(["data"]) == 0
    table = capsys.readouterr().out
    for name, rows in BARE_NAMES.items():
        line = next(li for li in table.splitlines() if li.split(" ")[0].endswith("/" + name))
        assert f" {rows:,} " in line
    assert "DDLSCHED_DATA" not in table
