"""``ddlsched data check`` and the published formats through ``simulate --trace``: the
findings a check prints (an overloaded trace with its load, a job wider than the cluster
named), exit 0 when checks ran and 2 on unreadable input, the listing still the default of
``ddlsched data``; each format written in its published shape replays with every row left
out counted by reason, and a planted bad field exits 2 naming file, line and column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlsched.cli import main
from tests.core.test_trace_formats import ACME, HELIOS, PAI_TASKS, pai, philly_raw, write

OVERLOADED = (
    "job_id,submit_time,duration,num_gpus\n"
    + "".join(f"{k},{10 * k},{1280 / 11:.10f},2\n" for k in range(11))
    + "99,50,10,64\n"
)
"""Eleven 2-GPU jobs every 10 s, each of 1280/11 s: 2560 GPU-seconds asked over 100 s of
submissions, on 16 GPUs a load of 2560 / 1600 = 1.6; and a 64-GPU job."""


def test_an_overloaded_trace_is_reported_with_its_load_and_a_too_wide_job_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On 2 x 8 GPUs: the offered load 1.6 (2560 GPU-seconds asked, 1600 offered over
    100 s) and the 64-GPU job on line 13 named as unable to run; exit 0 (findings are
    not errors); ``--json`` gives the same load and the line; ``simulate`` prints the
    load among its summary's lines and names the wide job once, as a row left out."""
    trace = write(tmp_path, "over.csv", OVERLOADED)
    cluster = ["--servers", "2", "--gpus-per-server", "8"]
    assert main(["data", "check", str(trace), *cluster]) == 0
    out = capsys.readouterr().out
    assert "offered load 1.6 as recorded" in out
    assert "more GPUs than the cluster's 16 (cannot run): 1 job, line 13 (64 GPUs" in out
    assert main(["data", "check", str(trace), *cluster, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["check"]["offered_load"]["load"] == pytest.approx(1.6)
    kinds = {f["kind"]: f["lines"] for f in doc["check"]["findings"]}
    assert kinds["wider than the cluster"] == [13] and "offered load over 1" in kinds
    assert (doc["rows_read"], doc["rows_kept"]) == (12, 12)
    assert main(["simulate", "--trace", str(trace), *cluster, "--policy", "fifo"]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert any(line.startswith("check: offered load 1.6 as recorded") for line in lines)
    assert not any("cannot run" in line for line in lines)  # named once, as a row left out
    assert f"{trace}:13: num_gpus: 64 GPUs, the cluster has 16 (job dropped)" in lines


def test_unreadable_input_exits_2_and_the_listing_stays_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing file and a bad field exit 2 with one line; ``data``, ``data --json`` and
    ``data list`` still list the shipped files."""
    cluster = ["--servers", "2", "--gpus-per-server", "8"]
    assert main(["data", "check", str(tmp_path / "none.csv"), *cluster]) == 2
    bad = write(tmp_path, "bad.csv", "submit,duration,gpus\n0,5,1\n1,x,1\n")
    assert main(["data", "check", str(bad), *cluster]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: duration: not a number" in err and "Traceback" not in err
    assert main(["data"]) == 0 and "philly_jobs.csv" in capsys.readouterr().out
    assert main(["data", "list"]) == 0 and "philly_jobs.csv" in capsys.readouterr().out
    assert main(["data", "--json"]) == 0
    assert any("philly_jobs" in f["name"] for f in json.loads(capsys.readouterr().out)["files"])


def _trace(tmp_path: Path, name: str) -> tuple[Path, list[str]]:
    """Each published shape written, with the options its replay takes."""
    if name == "helios":
        return write(tmp_path, "cluster_log.csv", HELIOS), []
    if name == "acme":
        return write(tmp_path, "trace_seren.csv", ACME), []
    if name == "philly-raw":
        return philly_raw(tmp_path), []
    return pai(tmp_path), ["--fractional", "drop"]


@pytest.mark.parametrize(
    ("name", "counted"),
    [
        ("helios", "(0 too wide, 1 invalid, 1 cpu-only)"),
        ("acme", "(0 too wide, 0 invalid, 1 cpu-only)"),
        ("philly-raw", "(0 too wide, 0 invalid, 2 no run)"),
        ("pai2020", "(0 too wide, 0 invalid, 1 cpu-only, 1 fractional, 1 no run)"),
    ],
)
def test_each_published_format_replays_with_its_rows_left_out_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, counted: str
) -> None:
    """``simulate --trace FILE --format NAME`` on each shape: exit 0, the rows left out
    counted by reason, the states kept said."""
    trace, options = _trace(tmp_path, name)
    command = ["simulate", "--trace", str(trace), "--format", name, "--policy", "fifo"]
    assert main([*command, "--servers", "2", "--gpus-per-server", "8", *options]) == 0
    out = capsys.readouterr().out
    assert f"rows left out {counted}" in out, out
    assert "states kept: all (" in out


@pytest.mark.parametrize(
    ("name", "planted", "named"),
    [
        ("helios", (",4,16,1,FAILED", ",4,16,1,FAILED,extra"), "13 fields"),
        ("acme", ("01:09:04+08:00,2693", "01:09:04+08:00,long"), "duration"),
        ("philly-raw", ('"user": "bb"', '"user": 7'), "user"),
        ("pai2020", ("j4,worker,1,", "j4,worker,-1,"), "inst_num"),
    ],
)
def test_a_planted_bad_field_exits_2_naming_file_line_and_column(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    planted: tuple[str, str],
    named: str,
) -> None:
    """The same files with one bad field: ``simulate`` and ``data check`` exit 2 with one
    line naming the file, the line the bad field is written on, and the column."""
    trace, options = _trace(tmp_path, name)
    if name == "pai2020":
        trace = pai(tmp_path, PAI_TASKS.replace(*planted))
        bad = tmp_path / "pai_task_table.csv"
    else:
        trace.write_text(trace.read_text().replace(*planted, 1))
        bad = trace
    line = next(k for k, text in enumerate(bad.read_text().splitlines(), 1) if planted[1] in text)
    named = f"{bad.name}:{line}: {named}"
    cluster = ["--servers", "2", "--gpus-per-server", "8", "--format", name, *options]
    for command in (["simulate", "--trace", str(trace)], ["data", "check", str(trace)]):
        assert main([*command, *cluster]) == 2
        err = capsys.readouterr().err
        assert named in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "command",
    [
        ["compare", "--jobs", "2", "--instances", "1", "--states", "COMPLETED"],
        ["compare", "--jobs", "2", "--instances", "1", "--fractional", "ceil"],
        ["bound", "INSTANCE", "--format", "helios"],
    ],
)
def test_the_reading_options_are_refused_without_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """``--format``, ``--states`` and ``--fractional`` describe how a trace is read: given to
    ``compare`` on random instances or to ``bound`` on an instance file, they are refused
    by name (exit 2) rather than ignored."""
    instance = tmp_path / "i.json"
    assert main(["generate", "--jobs", "2", "--servers", "1", "--out", str(instance)]) == 0
    capsys.readouterr()
    command = [str(instance) if word == "INSTANCE" else word for word in command]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert command[-2] in err and len(err.strip().splitlines()) == 1, err
