"""The shipped data (ddlsched.core.data): every file catalogued, counted, licensed, packed in
the wheel, and found by a bare name from any folder, a user's own folder first."""

from __future__ import annotations

import csv
import re
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
from tests.messages import messages

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
    # the benchmark library (bench/) is the project's own output, not copied data
    data = [n for n in names if not n.startswith(("LICENSES/", "bench/"))]
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


def _user_profiles(root: Path, model: str, *, placements: str, scalability: str,
                   efficiency: str | None) -> None:  # fmt: skip
    """A user folder holding one model's profile files with the given contents."""
    for sub in ("profiles", "pollux/scalability", "pollux/efficiency"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "profiles" / f"pollux_{model}_placements.csv").write_text(placements)
    (root / "pollux" / "scalability" / f"{model}.csv").write_text(scalability)
    if efficiency is not None:
        (root / "pollux" / "efficiency" / f"{model}_64.csv").write_text(efficiency)


PLACEMENTS = "placement,local_bsz,step_time,sync_time\n1,8,0.5,0.0\n2,8,0.5,0.01\n"
SCALABILITY = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,4,8,0.5,0.2\n"
EFFICIENCY = "progress,iteration,metric,grad_sqr,grad_var\n10,5,0.1,1.0,2.0\n"


def test_a_models_profiles_come_from_one_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A user folder with a model's placements, scalability and efficiency files supplies
    all of that model's rows; other models keep the package's. Catches profiles mixed from
    two folders, or an override that is never read."""
    shipped = load_profile_rows("bert")
    mine = tmp_path / "mine"
    _user_profiles(
        mine, "bert", placements=PLACEMENTS, scalability=SCALABILITY, efficiency=EFFICIENCY
    )
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    rows = load_profile_rows("bert")
    assert list(rows.replicas) == [1, 2, 4] and list(rows.step_time) == [0.5] * 3
    assert len(load_profile_rows("ncf").local_bsz) > 1000
    assert len(shipped.local_bsz) == csv_rows(
        bundled_data_dir() / "profiles" / "pollux_bert_placements.csv"
    ) + csv_rows(bundled_data_dir() / "pollux" / "scalability" / "bert.csv")


@pytest.mark.parametrize("kept", ["placements", "scalability", "efficiency"])
def test_a_folder_with_part_of_a_models_profiles_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kept: str
) -> None:
    """A user folder holding only one of a model's three kinds of profile file is an error
    naming what it holds and what it lacks, never silently ignored nor mixed with the
    package's other two. Catches a lookup keyed on one file alone."""
    mine = tmp_path / "mine"
    _user_profiles(
        mine, "cifar10", placements=PLACEMENTS, scalability=SCALABILITY, efficiency=EFFICIENCY
    )
    paths = {
        "placements": mine / "profiles" / "pollux_cifar10_placements.csv",
        "scalability": mine / "pollux" / "scalability" / "cifar10.csv",
        "efficiency": mine / "pollux" / "efficiency" / "cifar10_64.csv",
    }
    for name, path in paths.items():
        if name != kept:
            path.unlink()
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    with pytest.raises(InputError, match=rf"mine: holds .*{kept[:5]}.* but not .*one folder"):
        load_profile_rows("cifar10")


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        (
            "placements",
            PLACEMENTS.replace("0.5,0.0", "abc,0.0"),
            r"line 2: column step_time: not a number: 'abc'",
        ),
        (
            "placements",
            PLACEMENTS.replace("2,8,0.5,0.01", "2,8"),
            r"line 3: column step_time: not a number: ''",
        ),
        (
            "placements",
            PLACEMENTS.replace("1,8", "10,8"),
            r"line 2: column placement: expected GPUs per node",
        ),
        (
            "scalability",
            SCALABILITY.replace("2,4,8", "2,0,8"),
            r"line 2: column num_replicas: expected a whole number >= 1",
        ),
        (
            "scalability",
            SCALABILITY.replace("0.2", "nan"),
            r"line 2: column sync_time: expected a finite number >= 0",
        ),
        ("placements", "placement,local_bsz,step_time,sync_time\n", r"placements.csv: no rows"),
        (
            "scalability",
            "num_nodes,local_bsz\n2,8\n",
            r"line 1: missing column\(s\) \['num_replicas'",
        ),
        (
            "efficiency",
            "progress,iteration,metric,grad_sqr,grad_var\n",
            r"cifar10_64.csv: no rows",
        ),
        (
            "efficiency",
            EFFICIENCY.replace("2.0", "-1"),
            r"line 2: column grad_var: expected a finite",
        ),
    ],
)
def test_a_bad_user_profile_is_named_by_file_line_and_column(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, file: str, text: str, expected: str
) -> None:
    """Each kind of damage in a user's profile files (a word for a number, a short row, a
    bad placement, a zero count, a non-finite time, no rows, a missing column) is one
    input error naming the file, line and column, not a numpy warning or an internal
    error from deep inside the fit."""
    from ddlsched.core.elastic.application import load_application

    mine = tmp_path / "mine"
    contents = {"placements": PLACEMENTS, "scalability": SCALABILITY, "efficiency": EFFICIENCY}
    contents[file] = text
    _user_profiles(mine, "cifar10", **contents)
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    with pytest.raises(InputError, match=expected):
        load_application("cifar10", root=mine)


def test_the_package_profiles_fit_as_before_for_every_model() -> None:
    """The shipped profiles load for every model with their full row counts (the readers'
    checks refuse none of the real rows)."""
    from ddlsched.core.elastic.application import MODELS

    root = bundled_data_dir()
    for model in MODELS:
        rows = load_profile_rows(model)
        expected = csv_rows(root / "profiles" / f"pollux_{model}_placements.csv") + csv_rows(
            root / "pollux" / "scalability" / f"{model}.csv"
        )
        assert len(rows.local_bsz) == expected, model


@pytest.mark.parametrize("value", ["missing", "file"])
def test_a_data_setting_that_is_not_a_folder_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str
) -> None:
    """``DDLSCHED_DATA`` naming a missing folder or a file is an error naming the setting,
    for traces and for profiles alike, never a silent fall back to the package's data.
    Catches a typo in the setting that goes unnoticed."""
    target = tmp_path / "data"
    if value == "file":
        target.write_text("x")
    monkeypatch.setenv("DDLSCHED_DATA", str(target))
    expected = "not a folder" if value == "file" else "no such folder"
    with pytest.raises(InputError, match=rf"DDLSCHED_DATA=.*data': {expected}"):
        resolve_trace("tiresias_60_job.csv")
    with pytest.raises(InputError, match=expected):
        data_path("profiles", "gavel_throughputs.csv")


def test_an_empty_data_setting_means_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``DDLSCHED_DATA=`` (empty) is unset: the working folder is not a data folder, so a
    stray ``traces/`` there is not searched. Catches an empty setting read as '.'."""
    monkeypatch.setenv("DDLSCHED_DATA", "")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "tiresias_60_job.csv").write_text("x\n")
    assert resolve_trace("tiresias_60_job.csv").is_relative_to(bundled_data_dir())


@pytest.mark.parametrize("where", ["here", "user"])
@pytest.mark.parametrize("entry", ["broken link", "folder"])
def test_an_entry_that_is_not_a_file_is_named_not_skipped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, where: str, entry: str
) -> None:
    """A broken link or a folder where the trace (or a profile) should be, in the working
    folder or the user's data folder, is an error naming it, never a reason to read the
    package's file instead. Catches lookups that test existence or file-ness alone."""
    mine = tmp_path / "mine"
    (mine / "traces").mkdir(parents=True)
    (mine / "profiles").mkdir()
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    places = [here / "tiresias_60_job.csv"] if where == "here" else [
        mine / "traces" / "tiresias_60_job.csv", mine / "profiles" / "gavel_throughputs.csv"
    ]  # fmt: skip
    for place in places:
        if entry == "folder":
            place.mkdir()
        else:
            place.symlink_to(tmp_path / "nowhere.csv")
    expected = "is a folder, not a file" if entry == "folder" else "a broken link"
    with pytest.raises(InputError, match=expected):
        resolve_trace("tiresias_60_job.csv")
    if where == "user":
        with pytest.raises(InputError, match=expected):
            data_path("profiles", "gavel_throughputs.csv")


def test_a_name_in_two_places_of_one_folder_is_ambiguous(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A bare name matching both ``traces/`` and ``pollux/workloads/`` of one data folder is
    refused naming both, not resolved by a hidden order. Catches a lookup that takes the
    first match silently."""
    mine = tmp_path / "mine"
    for sub in ("traces", "pollux/workloads"):
        (mine / sub).mkdir(parents=True)
        (mine / sub / "mine.csv").write_text("x\n")
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    with pytest.raises(
        InputError, match=r"mine: ambiguous \(.*traces/mine.csv.*workloads/mine.csv"
    ):
        resolve_trace("mine")


def test_a_path_that_climbs_or_is_absolute_is_taken_as_it_is(no_user_data: Path) -> None:
    """``../traces/tiresias_60_job.csv`` or an absolute path that does not exist is 'no such
    file', never looked up in the data folders (a mistyped path would otherwise read the
    package's copy). Catches a lookup of every relative path under the data folders."""
    for name in ("../traces/tiresias_60_job.csv", "../../data/traces/tiresias_60_job",
                 str(no_user_data / "tiresias_60_job.csv")):  # fmt: skip
        with pytest.raises(InputError, match=r"no such file$"):
            resolve_trace(name)


def test_a_top_level_user_file_and_a_local_csv_are_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A trace at the top of ``$DDLSCHED_DATA`` is found by its bare name, and a file of the
    working folder named without ``.csv`` wins over the package's file of that name.
    Catches a lookup that skips the folder itself or the working folder."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "top.csv").write_text("x\n")
    here = tmp_path / "here"
    here.mkdir()
    (here / "philly_jobs.csv").write_text("y\n")
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    monkeypatch.chdir(here)
    assert resolve_trace("top") == mine / "top.csv"
    assert resolve_trace("philly_jobs") == Path("philly_jobs.csv")


def test_a_pollux_workload_loads_by_its_bare_name(no_user_data: Path) -> None:
    """``load_pollux_workload("workload-6.csv")`` reads the shipped workload: 160 jobs, the
    first submitted at its file's first time. Catches a reader that only takes paths."""
    workload = load_pollux_workload("workload-6.csv")
    path = bundled_data_dir() / "pollux" / "workloads" / "workload-6.csv"
    with path.open(newline="") as stream:
        first = next(csv.DictReader(stream))
    assert len(workload.jobs) == 160
    assert workload.jobs[0].name == first["name"]


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


def test_the_data_command_names_the_files_a_user_folder_replaces(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With ``DDLSCHED_DATA`` set, ``ddlsched data`` names each shipped file the folder
    replaces (and only those), in the table and in ``--json``. Catches a listing that
    shows the package's rows as if they were read."""
    import json

    from ddlsched.cli import main

    mine = tmp_path / "mine"
    (mine / "traces").mkdir(parents=True)
    (mine / "traces" / "muri_trace1.csv").write_text("x\n")
    (mine / "traces" / "unrelated.csv").write_text("x\n")
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    assert main(["data", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["overridden"] == ["traces/muri_trace1.csv"]
    assert Path(listed["user_folder"]) == mine
    assert main(["data"]) == 0
    table = capsys.readouterr().out
    assert "replaces 1 of these" in table
    assert f"traces/muri_trace1.csv: read from {mine / 'traces' / 'muri_trace1.csv'}" in table


GAVEL_HEADER = "gpu_type,model,batch_size,scale_factor,steps_per_second"


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("v100,ResNet-18,16,1,abc", "line 2: column steps_per_second: not a number: 'abc'"),
        ("v100,ResNet-18,16,1,inf", "line 2: column steps_per_second: expected a finite"),
        ("v100,ResNet-18,16,1,0", "line 2: column steps_per_second: 0 on a one-GPU row"),
        ("v100,ResNet-18,16,x,2.5", "line 2: column scale_factor: not a number: 'x'"),
    ],
)
def test_a_bad_user_throughput_file_is_named_by_file_line_and_column(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    row: str,
    expected: str,
) -> None:
    """A user's ``profiles/gavel_throughputs.csv`` (``DDLSCHED_DATA``) with a word, an
    infinity or a zero speed where a typed elastic run divides by it, or a bad scale factor,
    is bad input (exit 2) in one line naming the file, line and column; never an internal
    error (a ValueError from float('abc') was exit 3)."""
    from ddlsched.cli import main
    from ddlsched.core.elastic import gpu_types

    shipped = data_path("profiles", "gavel_throughputs.csv").read_text().splitlines()[1:]
    mine = tmp_path / "mine"
    (mine / "profiles").mkdir(parents=True)
    path = mine / "profiles" / "gavel_throughputs.csv"
    path.write_text("\n".join([GAVEL_HEADER, row, *shipped]) + "\n")
    monkeypatch.setenv("DDLSCHED_DATA", str(mine))
    gpu_types.clear_caches()
    try:
        command = ["simulate", "--trace", "workload-6.csv", "--policy", "fifo", "--limit", "2",
                   "--gpu-types", "v100:1,k80:1"]  # fmt: skip
        assert main(command) == 2
    finally:
        gpu_types.clear_caches()
    err = messages(capsys.readouterr().err)
    assert len(err) == 1, err
    assert f"{path}: {expected}" in err[0]
