"""Sweeps on a real local Dask cluster: results in SQLite, kill -9 and resume."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ddlsched.core.model import InputError
from ddlsched.sweeps import load_results, read_sweep
from tests.waiting import wait_until

SWEEP = """
[sweep]
methods = ["milp", "asrpt"]
seeds = {seeds}
time_limit = 30

[sweep.grid]
num_jobs = [{jobs}]
servers = [2]
gpus_per_server = [4]

[generator]
integral = true
bandwidth_intra = 2.0
load = 1.0
"""


def _rows(db: Path) -> list[tuple[str, float]]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as connection:
            return connection.execute("SELECT key, finished_at FROM results").fetchall()
    except sqlite3.OperationalError:  # table not created yet
        return []


def _sweep(config: Path, db: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ddlsched.cli", "sweep", str(config), "--results", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_kill_midway_and_resume_runs_each_task_once(tmp_path: Path) -> None:
    """kill -9 mid-sweep keeps finished rows intact; the resume runs only the rest."""
    config = tmp_path / "sweep.toml"
    config.write_text(SWEEP.format(seeds=12, jobs=10))
    total = len(list(read_sweep(config).tasks()))
    db = tmp_path / "results.sqlite"
    process = _sweep(config, db)
    wait_until(lambda: len(_rows(db)) >= 4 or process.poll() is not None, "4 finished rows")
    os.killpg(process.pid, signal.SIGKILL)  # the driver and its Dask workers, at once
    process.wait()
    before = dict(_rows(db))
    assert 4 <= len(before) < total, "the sweep should have been killed midway"

    resumed = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", "sweep", str(config), "--results", str(db)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{total} tasks: {len(before)} already in" in resumed.stdout
    assert f"{total - len(before)} run" in resumed.stdout
    after = dict(_rows(db))
    assert len(after) == total  # every task exactly once (the key is the primary key)
    assert all(after[key] == stamp for key, stamp in before.items())  # not re-run
    frame = load_results(db)
    assert frame["verified"].all() and set(frame["method"]) == {"milp", "asrpt"}


def test_bad_sweep_files_named(tmp_path: Path) -> None:
    """Unknown methods and settings are named with their table."""
    path = tmp_path / "s.toml"
    path.write_text('[sweep]\nmethods = ["magic"]\n')
    with pytest.raises(InputError, match="unknown method 'magic'"):
        read_sweep(path)
    path.write_text("[sweep]\n[sweep.grid]\nnum_jobz = [3]\n")
    with pytest.raises(InputError, match=r"sweep\.grid\.num_jobz: not a generator setting"):
        read_sweep(path)
    with pytest.raises(InputError, match="no such file"):
        load_results(tmp_path / "none.sqlite")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('methods = "fifo"', r"sweep\.methods: expected a non-empty list of method names"),
        ("methods = []", r"sweep\.methods: expected a non-empty list"),
        ("seeds = 0", r"sweep\.seeds: expected a count >= 1"),
        ("seeds = 2.5", r"sweep\.seeds: .* got 2\.5"),
        ("seeds = [1, -2]", r"sweep\.seeds:"),
        ('time_limit = "x"', r"sweep\.time_limit: expected seconds > 0"),
        ("time_limit = 0", r"sweep\.time_limit:"),
        ('placement = "yarn"', r"sweep\.placement: expected one of any, consolidated"),
        ("[sweep.grid]\nnum_jobs = [2, -1]", r"num_jobs: must be an integer >= 1, got -1"),
        ('[generator]\nsize_weights = [[1, "x"]]', r"size_weights: expected \(GPUs >= 1, weight"),
        ("[generator]\nduration_slots = [1]", r"duration_slots: expected two whole numbers"),
        ('[generator]\nmodels = "resnet50"', r"models: expected a list of model names, got 're"),
        ("[generator]\nslot = 1e11", r"slot: must be from 1e-06 to 1e\+06, got 1"),
    ],
)
def test_nonsense_sweep_settings_refused(tmp_path: Path, body: str, expected: str) -> None:
    """Settings that would run zero tasks, or fail on a worker, are refused when read."""
    path = tmp_path / "s.toml"
    path.write_text(f"[sweep]\n{body}\n")
    with pytest.raises(InputError, match=expected):
        read_sweep(path)


def test_failing_task_recorded_and_sweep_goes_on(tmp_path: Path) -> None:
    """A MILP refused as too large (non-integral instances) fails alone; FIFO's rows land."""
    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nmethods = ["fifo", "milp"]\nseeds = 2\n')
    db = tmp_path / "r.sqlite"
    command = [sys.executable, "-m", "ddlsched.cli", "sweep", str(config), "--results", str(db)]
    first = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    assert first.returncode == 1, first.stderr
    assert "4 run, 2 failed" in first.stdout
    assert "Traceback" not in first.stderr + first.stdout
    frame = load_results(db)
    failed = frame[frame["status"] == "failed"]
    assert set(failed["method"]) == {"milp"} and len(failed) == 2
    assert failed["message"].str.contains("ModelTooLarge: problem A").all()
    assert frame[frame["method"] == "fifo"]["verified"].all()
    again = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    assert "2 already in" in again.stdout and "2 run, 2 failed" in again.stdout  # retried
    shown = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", "results", str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0 and "failed: milp seed 0: ModelTooLarge" in shown.stdout


def test_placement_is_part_of_a_task_but_not_of_old_keys(tmp_path: Path) -> None:
    """A consolidated sweep has its own keys; the default keeps the keys files already hold."""
    from ddlsched.sweeps import Task

    path = tmp_path / "s.toml"
    path.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\nplacement = "consolidated"\n')
    (task,) = read_sweep(path).tasks()
    assert task.placement == "consolidated"
    plain = Task(task.method, task.generator, task.seed, task.time_limit)
    assert plain.key != task.key
    # The generator as it was before GPU types existed: their empty settings are not in the key.
    later = ("gpu_", "type_", "from_trace", "arrivals")
    before = {k: v for k, v in task.generator.items() if not k.startswith(later)}
    document = {"version": 1, "method": "fifo", "generator": before, "seed": 0}
    document["time_limit"] = task.time_limit
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    assert plain.key == hashlib.sha256(text.encode()).hexdigest()


def test_mixed_cluster_sweep(tmp_path: Path) -> None:
    """GPU types in a sweep: a fixed [generator] setting (TOML lists of pairs), keyed apart
    from the same sweep without types; every schedule verified."""
    from ddlsched.sweeps import run_sweep

    body = (
        '[sweep]\nmethods = ["gavel", "fifo"]\nseeds = 1\n[sweep.grid]\nnum_jobs = [4]\n'
        "[generator]\nservers = 2\ngpus_per_server = 2\nintegral = true\nbandwidth_intra = 2.0\n"
    )
    plain, mixed = tmp_path / "plain.toml", tmp_path / "mixed.toml"
    plain.write_text(body)
    mixed.write_text(body + 'gpu_types = [["v100", 1], ["k80", 1]]\n')
    keys = {task.key for path in (plain, mixed) for task in read_sweep(path).tasks()}
    assert len(keys) == 4
    (task, *_) = read_sweep(mixed).tasks()
    assert task.generator["gpu_types"] == (("v100", 1), ("k80", 1))
    db = tmp_path / "r.sqlite"
    run_sweep(read_sweep(mixed), db)
    frame = load_results(db)
    assert len(frame) == 2 and frame.verified.all()


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from ddlsched.cli import main

    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err, err
    return err


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("seeds = 100000000", r"sweep\.seeds: at most 100,000"),
        (
            "seeds = 1000\n[sweep.grid]\nnum_jobs = [{}]\nservers = [1, 2]".format(
                ", ".join(str(n) for n in range(2, 1002))
            ),
            r"2,000,000 tasks \(1 methods x 1,000 seeds x 2,000 grid points\), more than",
        ),
        ("[generator]\niteration_sigma = -1", r"iteration_sigma: must be a number >= 0"),
    ],
    ids=["seeds-1e8", "two-million-tasks", "negative-sigma"],
)
def test_runaway_or_impossible_grids_refused_when_read(
    tmp_path: Path, body: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A grid too large to list (10^8 seeds, 2 million tasks) or a setting only the
    generator refuses (NumPy's ``sigma < 0``) is one line naming it, before any worker
    starts. Catches: minutes and gigabytes spent listing tasks; a task failing on every
    worker, or exit 3."""
    path = tmp_path / "s.toml"
    body = body if body.startswith("seeds") else f"seeds = 1\n{body}"
    path.write_text(f'[sweep]\nmethods = ["fifo"]\n{body}\n')
    import re

    err = _refused(["sweep", str(path), "--results", str(tmp_path / "r.sqlite")], capsys)
    assert re.search(expected, err), err
    assert not (tmp_path / "r.sqlite").exists()


@pytest.mark.parametrize(
    "results", ["folder", "/dev/full", "/proc/ddlsched.sqlite", "text", "other-sqlite"]
)
def test_unusable_results_files_are_bad_input(
    tmp_path: Path, results: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results path that is a folder, a device, in /proc, a text file or someone else's
    SQLite database: one line naming it, exit 2, and the other database is left without a
    table added. Catches: sqlite3 errors reported as internal errors (exit 3)."""
    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n')
    (tmp_path / "text").write_text("not a database\n")
    with sqlite3.connect(tmp_path / "other-sqlite") as connection:
        connection.execute("CREATE TABLE accounts (id INTEGER)")
    path = str(tmp_path / results) if not results.startswith("/") else results
    if results == "folder":
        path = str(tmp_path)
    err = _refused(["sweep", str(config), "--results", path], capsys)
    assert path in err
    if results == "other-sqlite":
        with sqlite3.connect(path) as connection:
            tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
        assert tables == [("accounts",)]


def test_binary_config_too_many_workers_and_bad_scheduler_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A binary TOML file, ``--workers 100000`` and ``--scheduler "not a url"``: one line
    each, exit 2, naming the problem, never a traceback, exit 3 or 100,000 processes."""
    binary = tmp_path / "b.toml"
    binary.write_bytes(bytes(range(256)))
    err = _refused(["sweep", str(binary)], capsys)
    assert "not valid TOML" in err
    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n')
    db = str(tmp_path / "r.sqlite")
    err = _refused(["sweep", str(config), "--results", db, "--workers", "100000"], capsys)
    assert "workers: at most" in err and "100,000" in err
    err = _refused(["sweep", str(config), "--results", db, "--scheduler", "not a url"], capsys)
    assert "scheduler 'not a url': cannot connect" in err


def test_a_byte_order_mark_is_allowed_and_repeated_seeds_refused(tmp_path: Path) -> None:
    """A TOML file starting with a UTF-8 byte-order mark reads like the same file without
    it, in a sweep and in a generator config, as the CSV and JSON readers allow one (not
    "Invalid statement (at line 1, column 1)"); a seed listed twice is refused naming it,
    since it would run the same tasks twice."""
    from ddlsched.core.generators import GeneratorConfig

    body = '[sweep]\nmethods = ["fifo"]\nseeds = [3, 4]\n[generator]\nservers = 3\n'
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    plain.write_text(body)
    marked.write_bytes(b"\xef\xbb\xbf" + body.encode())
    assert read_sweep(marked) == read_sweep(plain)
    assert read_sweep(marked).seeds == (3, 4)
    generator = tmp_path / "g.toml"
    generator.write_bytes(b"\xef\xbb\xbf[generator]\nservers = 3\n")
    assert GeneratorConfig.from_toml(generator).servers == 3
    plain.write_text('[sweep]\nmethods = ["fifo"]\nseeds = [1, 2, 1, 2, 5]\n')
    with pytest.raises(InputError, match=r"sweep\.seeds: repeats 1, 2 \(each seed"):
        read_sweep(plain)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("folder", "{path}: is a directory, not a SQLite results file"),
        ("pipe", "{path}: is a named pipe, not a regular file (expected a SQLite results file)"),
        ("device", "{path}: is a device or socket, not a regular file (expected a SQLite "
                   "results file)"),
        ("empty", "{path}: not a ddlsched results database (no results table)"),
        ("text", "{path}: not a ddlsched results database (file is not a database)"),
    ],
)  # fmt: skip
def test_results_names_what_the_file_is(
    tmp_path: Path, kind: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ddlsched results`` on a folder, a named pipe (never opened: it would block), a
    device, an empty file or a text file: one line, exit 2, saying what the file is, and
    the file is left as it was: not SQLite's "unable to open database file" or "disk I/O
    error", nor pandas' "Execution failed on sql", and an empty file never made a database."""
    from ddlsched.cli import main

    path = {"folder": tmp_path, "device": Path("/dev/zero")}.get(kind, tmp_path / kind)
    if kind == "pipe":
        os.mkfifo(path)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("not a database\n")
    assert main(["results", str(path)]) == 2
    assert capsys.readouterr().err == f"ddlsched: error: {expected.format(path=path)}\n"
    if kind == "empty":
        assert path.read_bytes() == b""


FIFO = '[sweep]\nmethods = ["fifo"]\nseeds = 1\n[sweep.grid]\nnum_jobs = [4]\n'
"""One FIFO task: a sweep that runs in a second once its cluster is up."""

OLD_SCHEMA = (
    "CREATE TABLE results (key TEXT PRIMARY KEY, method TEXT, params TEXT, seed INTEGER, "
    "status TEXT, objective REAL, total_jct REAL, best_bound REAL, gap REAL, runtime_s REAL, "
    "verified INTEGER, finished_at REAL, message TEXT)"
)
"""The results table as written before rows recorded the code that produced them."""


def _hand_made(db: Path, config: Path, producer: tuple[str, str] | None) -> None:
    """A results file of one FIFO row (seed 99, the sweep's generator settings) made by
    ``producer`` (version, revision), or in the old schema without them (``None``)."""
    (task,) = read_sweep(config).tasks()
    values = ["k-old", "fifo", json.dumps(task.generator, sort_keys=True), 99, "feasible",
              10.0, 10.0, None, None, 0.1, 1, 1.0, None]  # fmt: skip
    with sqlite3.connect(db) as connection:
        if producer is None:
            connection.execute(OLD_SCHEMA)
        else:
            connection.execute(OLD_SCHEMA[:-1] + ", version TEXT, revision TEXT, mixed INTEGER)")
            values += [*producer, 0]
        connection.execute(f"INSERT INTO results VALUES ({', '.join('?' * len(values))})", values)
    connection.close()


def _expected_revision() -> str:
    """git's own answer for the source tree the tests run from ("unknown" if not a checkout)."""
    root = Path(__file__).resolve().parents[1]

    def git(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(root), *arguments], capture_output=True,
                              text=True, check=False)  # fmt: skip

    top = git("rev-parse", "--show-toplevel")
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root:
        return "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return git("rev-parse", "HEAD").stdout.strip() + ("-dirty" if dirty else "")


def test_every_row_records_the_version_and_revision(tmp_path: Path) -> None:
    """A row says which code made it: the installed version and git's HEAD of the source tree."""
    from importlib.metadata import version

    from ddlsched.sweeps import run_sweep

    config = tmp_path / "s.toml"
    config.write_text(FIFO)
    db = tmp_path / "r.sqlite"
    run_sweep(read_sweep(config), db, workers=1)
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT version, revision, mixed FROM results").fetchall()
    connection.close()
    assert rows == [(version("ddlsched"), _expected_revision(), 0)]


@pytest.mark.parametrize(
    ("producer", "named"),
    [
        (("0.0.1", "deadbeef"), "ddlsched 0.0.1 (revision deadbeef)"),
        (None, "ddlsched unknown (revision unknown)"),
    ],
    ids=["other-version", "before-provenance"],
)
def test_resuming_into_a_file_of_other_code_is_refused(
    tmp_path: Path,
    producer: tuple[str, str] | None,
    named: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One line naming the file's producer and this one; the file is left as it was."""
    from ddlsched.provenance import current_producer

    config, db = tmp_path / "s.toml", tmp_path / "r.sqlite"
    config.write_text(FIFO)
    _hand_made(db, config, producer)
    err = _refused(["sweep", str(config), "--results", str(db)], capsys)
    assert named in err and str(current_producer()) in err and "--allow-mixed-versions" in err
    assert [key for key, _ in _rows(db)] == ["k-old"]


def test_mixing_when_asked_is_recorded_and_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--allow-mixed-versions adds the rows, marked mixed; ``ddlsched results`` names both
    producers, in its text and in its JSON."""
    from ddlsched.cli import main
    from ddlsched.provenance import current_producer

    config, db = tmp_path / "s.toml", tmp_path / "r.sqlite"
    config.write_text(FIFO)
    _hand_made(db, config, ("0.0.1", "deadbeef"))
    argv = ["sweep", str(config), "--results", str(db), "--workers", "1"]
    assert main([*argv, "--allow-mixed-versions"]) == 0
    frame = load_results(db).set_index("key")
    ours = current_producer()
    old = frame.loc["k-old", ["version", "revision", "mixed"]].tolist()
    assert old == ["0.0.1", "deadbeef", 0]
    new = frame.drop(index="k-old")
    assert len(new) == 1 and new.mixed.tolist() == [1]
    assert new[["version", "revision"]].values.tolist() == [[ours.version, ours.revision]]
    capsys.readouterr()
    assert main(["results", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "ddlsched 0.0.1 (revision deadbeef): 1 rows" in shown
    assert f"ddlsched {ours.version} (revision {ours.revision}): 1 rows, 1 added as mixed" in shown
    assert main(["results", str(db), "--json"]) == 0
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["produced_by"] == ", ".join(
        sorted(["0.0.1@deadbeef", f"{ours.version}@{ours.revision[:12]}"])
    )
    # a finished sweep and two readings leave the results file alone in its folder: no
    # write-ahead log or shared-memory file beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.sqlite", "s.toml"]


def test_dask_loggers_are_quiet_while_a_sweep_runs_and_restored_after(tmp_path: Path) -> None:
    """Dask and tornado may log a cut-off callback the instant a Ctrl-C lands, before the
    sweep's handler runs: their loggers are quiet from before the cluster starts to its end
    (seen at every progress call), and get their levels back once the sweep has finished."""
    import logging

    import distributed  # noqa: F401 (its import gives some of these loggers their levels)

    from ddlsched.sweeps import run_sweep

    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 2\n')
    names = (
        "distributed",
        "distributed.client",
        "distributed.gc",
        "tornado",
        "tornado.application",
        "asyncio",
    )
    before = {name: logging.getLogger(name).level for name in names}
    seen: list[dict[str, bool]] = []

    def progress(done: int, todo: int) -> None:
        seen.append({n: not logging.getLogger(n).isEnabledFor(logging.ERROR) for n in names})

    outcome = run_sweep(read_sweep(config), tmp_path / "r.sqlite", workers=1, progress=progress)
    assert outcome.ran == 2 and not outcome.interrupted
    assert seen and all(all(quiet.values()) for quiet in seen), seen
    assert {name: logging.getLogger(name).level for name in names} == before


def test_a_string_where_a_switch_belongs_is_refused(tmp_path: Path) -> None:
    """``integral = "false"`` (a string, truthy) generated integral instances and recorded
    "false"; it is refused in one line naming the setting."""
    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n[generator]\nintegral = "false"\n')
    with pytest.raises(InputError, match=r"integral: must be true or false, got 'false'"):
        read_sweep(config)


def test_an_interrupted_sweep_gives_the_loggers_back_unless_asked(tmp_path: Path) -> None:
    """A notebook that interrupts a sweep goes on: its Dask and asyncio loggers must not
    stay silenced for the rest of the process; the command line asks for them quiet, as
    its process ends."""
    import logging

    import distributed  # noqa: F401 (its import gives some of these loggers their levels)

    from ddlsched import sweeps

    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 2\n')
    names = ("distributed", "distributed.client", "tornado", "tornado.application", "asyncio")

    def interrupt(done: int, todo: int) -> None:
        raise KeyboardInterrupt

    for quiet, results in ((False, "a.sqlite"), (True, "b.sqlite")):
        before = {name: logging.getLogger(name).level for name in names}
        outcome = sweeps.run_sweep(
            read_sweep(config),
            tmp_path / results,
            workers=1,
            progress=interrupt,
            quiet_after_interrupt=quiet,
        )
        assert outcome.interrupted
        after = {name: logging.getLogger(name).level for name in names}
        if quiet:
            assert all(level == logging.CRITICAL for level in after.values()), after
        else:
            assert after == before
    for name, level in before.items():  # leave the process as found
        logging.getLogger(name).setLevel(level)


def test_a_task_without_a_trace_keeps_the_key_it_had(tmp_path: Path) -> None:
    """A generator without ``from_trace`` hashes to the key it had before the setting
    existed (result files resume), and naming a trace gives another key. Catches a new
    setting that silently re-runs every old task."""
    import dataclasses
    import hashlib
    import json

    from ddlsched.core.generators import GeneratorConfig
    from ddlsched.sweeps import KEY_VERSION, Task

    generator = dataclasses.asdict(GeneratorConfig())
    task = Task("fifo", generator, 0, 60.0)
    old = {k: v for k, v in generator.items() if k not in ("gpu_types", "type_bandwidth",
           "type_slowdown", "from_trace", "arrivals")}  # fmt: skip
    document = {"version": KEY_VERSION, "method": "fifo", "generator": old, "seed": 0,
                "time_limit": 60.0}  # fmt: skip
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    assert task.key == hashlib.sha256(text.encode()).hexdigest()
    traced = Task("fifo", {**generator, "from_trace": "philly_jobs.csv"}, 0, 60.0)
    assert traced.key != task.key


def test_a_trace_sweep_over_load_runs_each_load_and_records_commands_generate_takes(
    tmp_path: Path,
) -> None:
    """A sweep with ``from_trace`` and a ``load`` axis gives each load its own instance (the
    sample's arrivals scaled to it), and each task's recorded command (``generate ...
    --load X --from-trace ...``) is accepted by ``generate`` and writes that instance byte
    for byte. Guards against every load running the same instance under a command that
    ``generate`` refuses."""
    import shlex

    from ddlsched.cli import main
    from ddlsched.core.generators import GeneratorConfig, generate, generate_command, with_tuples
    from ddlsched.core.io import dumps

    trace = tmp_path / "t.csv"
    trace.write_text(
        "submit_time,duration,num_gpus\n"
        + "".join(f"{9 * k},{40.5 + 3.25 * k},{1 + k % 2}\n" for k in range(8))
    )
    config = tmp_path / "trace.toml"
    config.write_text(
        '[sweep]\nmethods = ["fifo"]\nseeds = [3]\n[sweep.grid]\nload = [0.5, 2.0]\n'
        f'[generator]\nnum_jobs = 4\nfrom_trace = "{trace}"\n'
    )
    written = []
    for task in read_sweep(config).tasks():
        instance = generate(GeneratorConfig(**with_tuples(task.generator)), task.seed)
        words = shlex.split(generate_command(GeneratorConfig(**with_tuples(task.generator)),
                                             task.seed, str(tmp_path / "again.json")))  # fmt: skip
        assert "--load" in words and "--from-trace" in words
        assert main(words[1:]) == 0
        written.append((tmp_path / "again.json").read_bytes())
        assert written[-1] == dumps(instance.to_dict()).encode()
    assert len(written) == 2 and written[0] != written[1]


def test_exact_tasks_stop_at_deterministic_limits_unless_a_time_limit_is_asked(
    tmp_path: Path,
) -> None:
    """By default an exact task has CP-SAT work units and MILP nodes as its limits and no
    wall-clock limit (so a sweep's rows do not depend on the machine's load), and its row
    says which limits it ran under; ``time_limit`` adds a wall-clock limit, and a limit
    that is not a positive number (or a fractional node count) is refused in one line
    naming it. Catches: exact tasks run with ExactParams(time_limit=...) only."""
    path = tmp_path / "s.toml"
    body = '[sweep]\nmethods = ["exact", "fifo"]\nseeds = 1\n{}\n[sweep.grid]\nnum_jobs = [4]\n'
    path.write_text(body.format(""))
    exact, online = list(read_sweep(path).tasks())
    assert online.method == "fifo" and exact.method == "exact"
    params = exact.exact_params()
    assert params.time_limit is None
    assert params.deterministic_limit == 60.0 and params.node_limit == 20_000
    assert exact.limits == "60 CP-SAT work units, 20,000 MILP nodes"
    path.write_text(body.format("time_limit = 30\nwork_limit = 5\nnode_limit = 100"))
    timed = next(read_sweep(path).tasks())
    assert timed.exact_params().time_limit == 30.0 and timed.exact_params().node_limit == 100
    assert timed.limits == "5 CP-SAT work units, 100 MILP nodes, wall-clock 30 s"
    assert timed.key != exact.key
    for setting in ("work_limit = 0", "node_limit = 2.5", "time_limit = true"):
        path.write_text(body.format(setting))
        name = setting.split()[0]
        with pytest.raises(InputError, match=f"sweep.{name}"):
            read_sweep(path)
