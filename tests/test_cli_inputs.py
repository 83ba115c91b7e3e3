"""Inputs the command line and the Python API refuse or report clearly: results files of
other programs, trace rows left out, contradicting settings, empty option values, values of
the wrong type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlsched.cli import main

_TRACE = "submit,duration,gpus\n0,100,1\n50,200,2\n60,-1,1\n70,100,9999\n80,0,1\n90,10,1\n"
_CLUSTER = ["--servers", "2", "--gpus-per-server", "2"]


def _left_out_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if "rows left out" in line)
    return [line.strip() for line in lines[start : start + 4]]


@pytest.mark.parametrize("json_flag", [False, True])
def test_bound_names_the_trace_rows_left_out_as_simulate_does(
    json_flag: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bound --trace`` names each row it left out (invalid duration, too wide) by file,
    line and column, in the same words and ``--json`` fields as ``simulate``."""
    trace = tmp_path / "t.csv"
    trace.write_text(_TRACE)
    flags = ["--json"] if json_flag else []
    outputs = []
    for command in ("simulate", "bound"):
        assert main([command, "--trace", str(trace), *_CLUSTER, *flags]) == 0
        outputs.append(capsys.readouterr().out)
    if json_flag:
        keys = ("rows_read", "rows_skipped", "jobs_dropped_too_wide", "rows_left_out_first")
        simulated, bounded = (json.loads(out) for out in outputs)
        assert {k: bounded[k] for k in keys} == {k: simulated[k] for k in keys}
        assert [row["line"] for row in bounded["rows_left_out_first"]] == [4, 5, 6]
    else:
        simulated, bounded = (_left_out_lines(out) for out in outputs)
        assert bounded == simulated
        assert bounded[0] == "3 of 6 rows left out (1 too wide, 2 invalid); each:"
        assert bounded[1] == f"{trace}:4: duration: -1 s is not > 0 (row skipped)"
        assert bounded[2] == f"{trace}:5: gpus: 9999 GPUs, the cluster has 4 (job dropped)"


_FOREIGN_SCHEMAS = {
    "a results table of its own": [
        "CREATE TABLE results (id INTEGER PRIMARY KEY, value TEXT)",
        "INSERT INTO results VALUES (1, 'x')",
    ],
    "other tables": ["CREATE TABLE people (name TEXT)", "INSERT INTO people VALUES ('a')"],
    "a results table missing a column": [
        "CREATE TABLE results (key TEXT PRIMARY KEY, method TEXT, params TEXT, seed INTEGER)",
    ],
}


@pytest.mark.parametrize("schema", list(_FOREIGN_SCHEMAS))
@pytest.mark.parametrize("command", ["sweep", "results"])
def test_a_sqlite_file_of_another_program_is_refused_and_left_unchanged(
    schema: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SQLite database of another program given as the results file (``sweep --results``,
    ``results``) is an input error (exit 2) naming the file and saying it is not a ddlsched
    results database, and the file is not modified (no column added, no journal mode set)."""
    import sqlite3

    database = tmp_path / "other.db"
    with sqlite3.connect(database) as connection:
        for statement in _FOREIGN_SCHEMAS[schema]:
            connection.execute(statement)
    connection.close()
    before = database.read_bytes()
    config = tmp_path / "sweep.toml"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n[sweep.grid]\nnum_jobs = [4]\n')
    args = ["sweep", str(config), "--results", str(database)]
    assert main(args if command == "sweep" else ["results", str(database)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ddlsched: error: {database}: not a ddlsched results database (")
    assert database.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db", "sweep.toml"]


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (["0,100,9999"], ["5: gpus: 9999 GPUs, the cluster has 4 (job dropped)"]),
        (["0,-1,1"], ["5: duration: -1 s is not > 0 (row skipped)"]),
        (["0,100,5", "1,0,1", "2,1,8"], ["5: gpus: 5 GPUs", "6: duration: 0 s", "7: gpus: 8"]),
    ],
)
def test_load_trace_warns_of_the_rows_it_leaves_out(
    rows: list[str], expected: list[str], tmp_path: Path
) -> None:
    """The Python API's ``load_trace`` names the rows it leaves out (jobs wider than the
    cluster, invalid durations) in a :class:`RowsLeftOut` warning, in the words the command
    line prints, and lists every one in ``left_out``; a trace with none warns nothing."""
    import warnings

    from ddlsched.core import Cluster, load_trace
    from ddlsched.core.traces import RowsLeftOut

    trace = tmp_path / "t.csv"
    trace.write_text("submit,duration,gpus\n0,100,1\n50,200,2\n9,9,1\n" + "\n".join(rows) + "\n")
    cluster = Cluster.uniform(2, 2, 2.0, 1.0)
    with pytest.warns(RowsLeftOut) as caught:
        loaded = load_trace(trace, cluster)
    (warning,) = caught
    text = str(warning.message)
    assert text.startswith(f"{len(rows)} of {3 + len(rows)} rows left out")
    assert all(f"{trace}:{line}" in text for line in expected)
    assert len(loaded.left_out) == len(rows)
    trace.write_text("submit,duration,gpus\n0,100,1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_trace(trace, cluster)


def test_the_command_line_names_left_out_rows_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate`` names the rows left out in its report and raises no Python warning
    about them (which would repeat them on stderr)."""
    import warnings

    trace = tmp_path / "t.csv"
    trace.write_text(_TRACE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["simulate", "--trace", str(trace), *_CLUSTER]) == 0
    assert "rows left out" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("key", "grid", "fixed"),
    [("num_jobs", "[4, 6]", "5"), ("num_jobs", "[4, 5]", "5"), ("servers", "[2]", "3")],
)
def test_a_sweep_setting_fixed_and_varied_differently_is_refused_naming_both(
    key: str, grid: str, fixed: str, tmp_path: Path
) -> None:
    """A generator setting given in ``[generator]`` and in ``[sweep.grid]`` with values
    that differ is refused, naming both places and both values; the same single value in
    both agrees and is read."""
    from ddlsched.core.model import InputError
    from ddlsched.sweeps import read_sweep

    path = tmp_path / "s.toml"
    body = '[sweep]\nmethods = ["fifo"]\nseeds = 1\n[sweep.grid]\n{key} = {grid}\n[generator]\n'
    path.write_text(body.format(key=key, grid=grid) + f"{key} = {fixed}\n")
    with pytest.raises(InputError) as caught:
        read_sweep(path)
    message = str(caught.value)
    assert f"generator.{key} = {fixed} contradicts sweep.grid.{key} = {grid}" in message
    path.write_text(body.format(key=key, grid=f"[{fixed}]") + f"{key} = {fixed}\n")
    assert read_sweep(path).grid == {key: [int(fixed)]}


@pytest.mark.parametrize("value", ["", " ", ",", " , "])
@pytest.mark.parametrize(
    "command",
    [
        ["simulate", "--trace", "TRACE", *_CLUSTER, "--columns"],
        ["bound", "--trace", "TRACE", *_CLUSTER, "--columns"],
        ["compare", "--jobs", "2", "--instances", "1", "--methods"],
    ],
)
def test_an_empty_columns_or_methods_value_is_refused(
    command: list[str], value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--columns`` (simulate, bound) and ``compare --methods`` given an empty or blank
    value are refused (exit 2) naming the option and what it expects, instead of being
    read as no mapping or as every method."""
    trace = tmp_path / "t.csv"
    trace.write_text(_TRACE)
    args = [str(trace) if part == "TRACE" else part for part in command]
    assert main([*args, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ddlsched: error: {command[-1]}: expected ") and repr(value) in err


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, "schedule: expected a Schedule, got NoneType (None: the run gave no schedule"),
        ("s.json", "schedule: expected a Schedule, got str"),
        ({"jobs": []}, "schedule: expected a Schedule, got dict"),
    ],
)
def test_write_schedule_of_something_else_names_what_was_given(
    given: object, expected: str, tmp_path: Path
) -> None:
    """``write_schedule`` given no schedule (None, a file name, a dict) raises a TypeError
    naming what it got and what it expects, writes nothing; a Result is pointed to its
    ``.schedule``."""
    from ddlsched.api import solve
    from ddlsched.core.io import write_schedule
    from ddlsched.core.model import Cluster, Instance, Job

    with pytest.raises(TypeError, match=expected.replace("(", r"\(")):
        write_schedule(given, tmp_path / "s.json")  # type: ignore[arg-type]
    result = solve(Instance(Cluster((2,), 2.0, 1.0), (Job("a", 0.0, 1, 1.0, 1),)), "fifo")
    with pytest.raises(TypeError, match=r"got Result; a Result\? write its \.schedule"):
        write_schedule(result, tmp_path / "s.json")  # type: ignore[arg-type]
    assert not (tmp_path / "s.json").exists()


class _YieldsIds:
    """A user policy that dispatches job ids (or other wrong things) instead of views."""

    name = "yields-ids"

    def __init__(self, shape: str) -> None:
        self.shape, self.waiting = shape, []

    def on_arrival(self, job, now):  # type: ignore[no-untyped-def]
        self.waiting.append(job)

    def dispatch(self, now, free):  # type: ignore[no-untyped-def]
        while self.waiting:
            job = self.waiting.pop()
            mapping = (0,) * job.gpus
            yield {"id": (job.id, mapping), "view": job, "unknown": (object(), mapping)}[
                self.shape
            ]

    def on_start(self, *args):  # type: ignore[no-untyped-def]
        pass

    on_completion = on_preempt = on_start

    def preempt(self, now, running):  # type: ignore[no-untyped-def]
        return ()

    def next_wakeup(self):  # type: ignore[no-untyped-def]
        return None


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ("id", "dispatch() yielded the job id 'a' as a job; expected the JobView"),
        ("view", "dispatch() yielded JobView(.*); expected \\(job, mapping\\) pairs"),
        ("unknown", "dispatch() yielded <object object at .*> as a job; expected the JobView"),
    ],
)
def test_a_policy_dispatching_something_else_than_view_and_mapping_is_named(
    shape: str, expected: str
) -> None:
    """A user policy whose ``dispatch`` yields a job id, a bare view, or an object that is
    no job's view gets a TypeError naming the policy, what it yielded and what is expected
    (not an AttributeError from inside the simulator)."""
    from ddlsched.api import simulate
    from ddlsched.core.model import Cluster, Instance, Job

    instance = Instance(Cluster((2,), 2.0, 1.0), (Job("a", 0.0, 1, 1.0, 1),))
    pattern = "policy 'yields-ids': " + expected.replace("()", r"\(\)")
    with pytest.raises(TypeError, match=pattern):
        simulate(instance, _YieldsIds(shape), bound=False)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"predictor": "graph"}, "predictor: unknown predictor 'graph' (known: oracle"),
        ({"predictor": "nope"}, "predictor: unknown predictor 'nope'"),
        ({"predictor": ""}, "predictor: unknown predictor ''"),
        ({"mapper": "forest"}, "mapper: unknown mapper 'forest' (known: graph"),
        ({"mapper": "first_fit"}, "mapper: unknown mapper 'first_fit'"),
        ({"predictor": 3}, "predictor: expected a name, got 3"),
        ({"mapper": object()}, "mapper: expected a name, got <object"),
    ],
)
def test_online_params_refuse_a_predictor_or_mapper_of_the_wrong_kind(
    settings: dict[str, object], expected: str
) -> None:
    """``OnlineParams`` checks on construction that its predictor is a predictor's name
    and its mapper a mapper's (a mapper's name as predictor says so), naming the setting,
    the value and the names known; known names are accepted."""
    from ddlsched.core.params import OnlineParams

    with pytest.raises(ValueError) as caught:
        OnlineParams(**settings)  # type: ignore[arg-type]
    assert str(caught.value).startswith(expected), caught.value
    if settings == {"predictor": "graph"}:
        assert str(caught.value).endswith("; 'graph' is a mapper")
    assert OnlineParams(predictor="forest", mapper="first-fit").mapper == "first-fit"
