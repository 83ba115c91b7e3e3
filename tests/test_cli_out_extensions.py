"""Output names a command does not write are refused: ``generate --out`` and ``simulate
--out`` (rigid trace and Pollux workload alike) write JSON, so only a ``.json`` name is taken;
``results --csv`` writes CSV, so only a ``.csv`` name. Any other name exits 2 with one line
naming the option, the path and the extension, before any work and with nothing written;
an accepted name in any case is written and reads back as what the command reported."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ddlsched.proofs_checks.verifier import verify

from ddlsched.cli import main
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.io import read_instance, read_schedule
from ddlsched.core.model import Cluster, expand_types
from ddlsched.core.traces import load_trace

TRACE = (
    "job_id,num_gpu,submit_time,iterations,model_name,duration\n"
    "0,1,0,10,vgg16,50\n1,2,5,20,bert,80\n2,4,7,5,dqn,30\n3,2,40,8,resnet50,60\n"
)
"""Four jobs of known models, one to four GPUs, submitted at spread times (one after the
first three ran a while)."""

RIGID = ["--servers", "2", "--gpus-per-server", "4", "--gpu-types", "v100:1,k80:1"]
"""A V100 and a K80 server: typed compute times a schedule read back can get wrong."""

GENERATE = ["generate", "--jobs", "5", "--gpu-types", "v100:1,k80:2", "--load", "1.5"]
"""A mixed cluster (sets three servers) with Poisson arrivals: arrivals after 0 and typed
compute times, so the instance written has something to get wrong."""

ELASTIC = ["simulate", "--trace", "workload-6.csv", "--limit", "4", "--servers", "2",
           "--gpus-per-server", "4", "--policy", "fifo"]  # fmt: skip
"""The first 4 jobs of the Pollux study's workload 6 (its header makes them elastic) on two
4-GPU nodes."""

_INSTANCE = ".json file (the instance is written as JSON)"
_SCHEDULE = ".json file (the schedule is written as JSON)"
_RUN = ".json file (the run is written as JSON)"
_ROWS = ".csv file (rows are written as CSV)"

REFUSALS: dict[str, tuple[list[str], str, str, tuple[str, ...]]] = {
    "generate": ([*GENERATE, "--out"], "--out", _INSTANCE, ("ddlsched.api.generate_checked",)),
    "generate-from-trace": (
        ["generate", "--from-trace", "philly_jobs.csv", "--jobs", "3", "--out"],
        "--out",
        _INSTANCE,
        ("ddlsched.core.traces.trace_sample",),
    ),
    "simulate": (
        ["simulate", "--trace", "{trace}", *RIGID, "--policy", "fifo", "--out"],
        "--out",
        _SCHEDULE,
        ("ddlsched.core.traces.load_trace", "ddlsched.api.simulate"),
    ),
    "simulate-elastic": ([*ELASTIC, "--out"], "--out", _RUN, ("ddlsched.elastic.simulate",)),
    "results": (["results", "{db}", "--csv"], "--csv", _ROWS, ("ddlsched.sweeps.load_results",)),
}
"""Per command: the words before the output name, the option, the extension and what is
written, and the functions doing its work (none may be called before the refusal)."""

REFUSED_NAMES = {
    ".json": ["x.png", "x.csv", "x", "x.json.png", "x.jsonl", "run.sqlite"],
    ".csv": ["rows.json", "rows.sqlite", "rows", "rows.csv.png", "r.tsv"],
}
"""Names of a figure, of another format, of nothing, and near misses of the extension."""


def _no_work(monkeypatch: pytest.MonkeyPatch, targets: tuple[str, ...]) -> None:
    """Make each ``module.name`` fail if called: a refusal must come before any work (a call
    would surface as an internal error, exit 3, not 2)."""

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("work started before the output name was checked")

    for target in targets:
        monkeypatch.setattr(target, fail)


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (command, name)
        for command, (_, _, expected, _) in REFUSALS.items()
        for name in REFUSED_NAMES[expected.split()[0]]
    ],
)
def test_an_output_name_the_command_does_not_write_is_refused(
    tmp_path: Path,
    command: str,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An output name not ending in the extension the command writes exits 2 with one line
    naming the option, the path and the extension, before any instance is drawn, trace read,
    run simulated or results file read; nothing is printed on stdout or written."""
    words, option, expected, work = REFUSALS[command]
    trace, db = tmp_path / "t.csv", _results_file(tmp_path / "r.sqlite")
    trace.write_text(TRACE)
    _no_work(monkeypatch, work)
    out = tmp_path / name
    argv = [word.format(trace=trace, db=db) for word in words] + [str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"ddlsched: error: {option} {out}: expected a {expected}\n"
    assert not out.exists()


@pytest.mark.parametrize("command", sorted(REFUSALS))
def test_a_refused_output_leaves_an_existing_file_alone(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refused output naming a file that exists (a figure) leaves its bytes as they were."""
    words, *_ = REFUSALS[command]
    trace, db = tmp_path / "t.csv", _results_file(tmp_path / "r.sqlite")
    trace.write_text(TRACE)
    figure = tmp_path / "figure.png"
    figure.write_bytes(b"\x89PNG\r\n\x1a\n")
    argv = [word.format(trace=trace, db=db) for word in words] + [str(figure)]
    assert main(argv) == 2
    assert "expected a" in capsys.readouterr().err
    assert figure.read_bytes() == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["i.json", "I.JSON", "inst.v2.Json"])
def test_generate_out_json_is_written_and_reads_back(tmp_path: Path, name: str) -> None:
    """A ``.json`` name in any case is written, and reads back as the instance the API draws
    from the same settings and seed."""
    out = tmp_path / name
    assert main([*GENERATE, "--seed", "7", "--out", str(out)]) == 0
    config = GeneratorConfig(num_jobs=5, servers=3, gpu_types=(("v100", 1), ("k80", 2)), load=1.5)
    assert read_instance(out) == generate(config, 7)


@pytest.mark.parametrize("name", ["s.json", "S.JSON"])
@pytest.mark.parametrize("policy", ["fifo", "asrpt"])
def test_simulate_out_json_is_written_and_reads_back(
    tmp_path: Path,
    name: str,
    policy: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A ``.json`` name in any case is written; the schedule read back is feasible by the
    verifier on the trace's jobs and its recomputed total completion time is the one
    ``--json`` reported."""
    trace, out = tmp_path / "t.csv", tmp_path / name
    trace.write_text(TRACE)
    argv = ["simulate", "--trace", str(trace), *RIGID, "--policy", policy, "--out", str(out)]
    assert main([*argv, "--json"]) == 0
    reported = json.loads(capsys.readouterr().out)
    cluster = Cluster.uniform(2, 4, 20.0, 1.0).replace(
        server_types=expand_types((("v100", 1), ("k80", 1)))
    )
    instance = load_trace(trace, cluster).instance
    report = verify(instance, read_schedule(out))
    assert report.feasible, report
    assert report.total_completion_time == pytest.approx(reported["total_completion_time"])


@pytest.mark.parametrize("name", ["run.json", "RUN.Json"])
def test_elastic_simulate_out_json_is_written_and_reads_back(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``.json`` name in any case is written as an elastic run of the 4 jobs,
    whose mean JCT recomputed from each job's arrival and completion is the reported one."""
    out = tmp_path / name
    assert main([*ELASTIC, "--out", str(out), "--json"]) == 0
    reported = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    assert saved["format"] == "ddlsched.elastic-run/1" and len(saved["jobs"]) == 4
    jcts = [job["completion"] - job["arrival"] for job in saved["jobs"]]
    assert math.fsum(jcts) / len(jcts) == pytest.approx(reported["mean_jct"])


def _results_file(path: Path) -> Path:
    """A results file of two tasks (fifo at 12, the exact method at 10 on one instance),
    written directly in SQLite."""
    settings = json.dumps(dataclasses.asdict(GeneratorConfig.exact_friendly(3, 2, 2)))
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE results (key TEXT PRIMARY KEY, method TEXT, params TEXT, seed "
            "INTEGER, status TEXT, objective REAL, total_jct REAL, best_bound REAL, gap REAL, "
            "runtime_s REAL, verified INTEGER, finished_at REAL, message TEXT)"
        )
        for key, method, status, objective in (("a", "fifo", "feasible", 12.0),
                                               ("b", "exact", "optimal", 10.0)):  # fmt: skip
            connection.execute(
                "INSERT INTO results VALUES (?, ?, ?, 1, ?, ?, 1.0, 10.0, 0.0, 0.1, 1, 0.0, NULL)",
                (key, method, settings, status, objective),
            )
    connection.close()
    return path


@pytest.mark.parametrize("name", ["rows.csv", "ROWS.CSV"])
def test_results_csv_is_written_and_reads_back(tmp_path: Path, name: str) -> None:
    """A ``.csv`` name in any case is written with one row per task, each holding the
    method and objective inserted and fifo's C/OPT of 12 / 10."""
    db = _results_file(tmp_path / "r.sqlite")
    out = tmp_path / name
    assert main(["results", str(db), "--csv", str(out)]) == 0
    with out.open(newline="") as handle:
        rows = {row["method"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"fifo", "exact"}
    assert float(rows["fifo"]["objective"]) == 12.0
    assert float(rows["fifo"]["C/OPT"]) == pytest.approx(1.2)
