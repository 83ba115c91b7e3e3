"""The results file's schema versions: files written in each schema the project has had open,
migrate once and keep every value; a file of a newer ddlsched is refused; a migration that
fails or is killed part way leaves the file as it was.

The old files are written here with the SQL of their time (independent of
:data:`ddlsched.sweeps.schema.MIGRATIONS`) and read back with plain ``sqlite3``.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ddlsched.core.generators import GeneratorConfig
from ddlsched.core.model import InputError
from ddlsched.sweeps import COLUMNS, MIGRATIONS, SCHEMA_VERSION, ResultStore, load_results
from ddlsched.sweeps.schema import Migration, migrate

FIRST = (
    "key TEXT PRIMARY KEY, method TEXT, params TEXT, seed INTEGER, status TEXT, "
    "objective REAL, total_jct REAL, best_bound REAL, gap REAL, runtime_s REAL, "
    "verified INTEGER, finished_at REAL"
)
HISTORY = {
    1: FIRST,
    2: FIRST + ", message TEXT",
    3: FIRST + ", message TEXT, version TEXT, revision TEXT, mixed INTEGER",
    4: FIRST + ", message TEXT, version TEXT, revision TEXT, mixed INTEGER, limits TEXT",
}
"""The results table of each schema the project has written: the first sweeps, then the
failure message, the producing code (version, revision, mixed) and the exact limits."""

LATEST = [part.split()[0] for part in HISTORY[4].split(", ")]
"""Every column of the latest table, in order."""


def _settings(rng: np.random.Generator) -> str:
    """Generator settings as a row stores them: sizes drawn, now and then a mixed cluster."""
    config = GeneratorConfig(
        num_jobs=int(rng.integers(2, 9)),
        servers=2,
        gpus_per_server=int(rng.choice([2, 4])),
        load=float(rng.choice([0.5, 1.25])),
        gpu_types=(("v100", 1), ("k80", 1)) if rng.random() < 0.5 else (),
    )
    return json.dumps(dataclasses.asdict(config), sort_keys=True)


def _rows(version: int, count: int, seed: int) -> list[tuple[object, ...]]:
    """``count`` rows of the table of ``version``: non-integral objectives and bounds, NULLs,
    large seeds, failed rows with a message in several scripts, two producers."""
    rng = np.random.default_rng(seed)
    width = len(HISTORY[version].split(", "))
    rows = []
    for index in range(count):
        failed = index % 4 == 3
        objective = None if failed else float(rng.uniform(1, 1e4))
        values: list[object] = [
            f"key-{version}-{index}",
            ["fifo", "milp", "asrpt", "las"][index % 4],
            _settings(rng),
            int(rng.integers(0, 2**62)) if index % 2 else index,
            "failed" if failed else ["optimal", "feasible"][index % 2],
            objective,
            None if failed else float(rng.uniform(1, 1e4)),
            None if failed or index % 3 else (objective or 0) * float(rng.uniform(0.5, 1)),
            None if failed else float(rng.uniform(0, 0.3)),
            float(rng.exponential(2)),
            int(not failed),
            1.7e9 + index + float(rng.random()),
            "ModelTooLarge: naïve ✓ 模型" if failed else None,
            f"0.{index % 2 + 1}.0",
            ["deadbeef", "unknown"][index % 2],
            index % 2,
            "work 60; nodes 20,000" if index % 4 == 1 else None,
        ]
        rows.append(tuple(values[:width]))
    return rows


def _old_file(path: Path, version: int, recorded: bool, rows: list[tuple[object, ...]]) -> None:
    """A results file with the table of ``version`` holding ``rows``; its version recorded in
    ``user_version`` when ``recorded``, else left 0 (as files were written before)."""
    with sqlite3.connect(path) as connection:
        connection.execute(f"CREATE TABLE results ({HISTORY[version]})")
        marks = ", ".join("?" * len(rows[0]))
        connection.executemany(f"INSERT INTO results VALUES ({marks})", rows)
        if recorded:
            connection.execute(f"PRAGMA user_version = {version}")
    connection.close()


def _read(path: Path) -> tuple[int, list[str], list[tuple[object, ...]]]:
    """The file's recorded version, its results columns and rows (by key), with plain sqlite3."""
    with sqlite3.connect(path) as connection:
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
        rows = connection.execute("SELECT * FROM results ORDER BY key").fetchall()
    connection.close()
    return version, columns, rows


def _schema_cookie(path: Path) -> int:
    """SQLite's own counter of schema changes to the file."""
    with sqlite3.connect(path) as connection:
        (cookie,) = connection.execute("PRAGMA schema_version").fetchone()
    connection.close()
    return int(cookie)


def test_the_migrations_are_numbered_in_order_and_end_at_the_table_rows_use() -> None:
    """Versions 1, 2, ... with no gap or repeat, and the rows a sweep writes have exactly the
    columns of the last table written by hand above."""
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert max(HISTORY) == SCHEMA_VERSION
    assert list(COLUMNS) == LATEST


@pytest.mark.parametrize(
    ("version", "recorded"),
    [(v, False) for v in HISTORY] + [(v, True) for v in (1, 2, 3)],
    ids=lambda value: str(value),
)
def test_a_file_of_an_older_schema_is_migrated_once_keeping_every_value(
    tmp_path: Path, version: int, recorded: bool
) -> None:
    """A file of each older table, version recorded or not, opens: the versions it lacks are
    applied (each once), every row keeps each value it had and NULL in the new columns, a
    second open changes nothing, and a sweep can add rows and see the old ones as done."""
    path = tmp_path / "old.sqlite"
    rows = _rows(version, 12, seed=version)
    _old_file(path, version, recorded, rows)
    store = ResultStore(path)
    assert store.migrated == tuple(range(version + 1, SCHEMA_VERSION + 1))
    assert store.done() == {row[0] for row in rows if row[4] != "failed"}
    store.close()
    found, columns, stored = _read(path)
    assert (found, columns) == (SCHEMA_VERSION, LATEST)
    padding = (None,) * (len(LATEST) - len(rows[0]))
    assert stored == sorted(row + padding for row in rows)

    cookie = _schema_cookie(path)
    again = ResultStore(path)
    assert again.migrated == ()
    again.close()
    assert _schema_cookie(path) == cookie and _read(path) == (found, columns, stored)


@pytest.mark.parametrize("version", list(HISTORY))
def test_reading_an_older_file_shows_its_rows_and_leaves_it_unchanged(
    tmp_path: Path, version: int
) -> None:
    """``load_results`` reads an old file through a migrated copy: one frame row per stored
    row with its objective and status, ``unknown`` producers where none was recorded, and
    the file's bytes as they were (it stays at its version)."""
    path = tmp_path / "old.sqlite"
    rows = _rows(version, 8, seed=10 + version)
    _old_file(path, version, False, rows)
    before = path.read_bytes()
    frame = load_results(path).set_index("key")
    assert path.read_bytes() == before
    assert sorted(frame.index) == sorted(row[0] for row in rows)
    for row in rows:
        assert frame.loc[row[0], "status"] == row[4]
        assert frame.loc[row[0], "seed"] == row[3]
        objective = frame.loc[row[0], "objective"]
        assert (np.isnan(objective) and row[5] is None) or objective == row[5]
        expected = row[13] if version >= 3 else "unknown"
        assert frame.loc[row[0], "version"] == expected


def test_a_file_of_a_newer_schema_is_refused_naming_both_versions(tmp_path: Path) -> None:
    """A file whose recorded version is past this code's is refused, by a sweep and by a
    reader, in one line naming the file and both versions, and is left unchanged; a
    database of another program with a version of its own is not taken for a newer one."""
    path = tmp_path / "new.sqlite"
    _old_file(path, 4, True, _rows(4, 3, seed=0))
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    before = path.read_bytes()
    for open_it in (ResultStore, load_results):
        with pytest.raises(InputError) as refused:
            open_it(path)
        message = str(refused.value)
        assert "\n" not in message and message.startswith(f"{path}: written by a newer")
        assert f"version {SCHEMA_VERSION + 1}" in message and f"up to {SCHEMA_VERSION}" in message
    assert path.read_bytes() == before

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE accounts (id INTEGER)")
        connection.execute("PRAGMA user_version = 7")
    connection.close()
    with pytest.raises(InputError, match=r"not a ddlsched results database \(its tables"):
        ResultStore(other)


def _failing(version: int) -> tuple[Migration, ...]:
    """The migrations with the one to ``version`` failing after its first statement ran."""
    broken = MIGRATIONS[version - 1]
    statements = (*broken.statements[:1], "ALTER TABLE results ADD COLUMN key TEXT")
    return (*MIGRATIONS[: version - 1], Migration(version, broken.what, statements))


@pytest.mark.parametrize(("start", "fails_at"), [(1, 3), (1, 2), (2, 4), (3, 4)])
def test_a_migration_failing_part_way_leaves_the_file_at_its_old_version(
    tmp_path: Path, start: int, fails_at: int
) -> None:
    """A statement that fails inside a migration (after others of it, and after earlier
    migrations, ran) undoes them all: the file keeps its columns, version and rows, reads
    as before, and migrates fully once the migrations work."""
    path = tmp_path / "old.sqlite"
    rows = _rows(start, 6, seed=start)
    _old_file(path, start, False, rows)
    before = _read(path)
    connection = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(InputError, match="left as it was"):
        migrate(connection, str(path), _failing(fails_at))
    connection.close()
    assert _read(path) == before
    assert len(load_results(path)) == len(rows)
    store = ResultStore(path)
    assert store.migrated == tuple(range(start + 1, SCHEMA_VERSION + 1))
    store.close()


KILLED = """
import os, sqlite3, sys
from ddlsched.sweeps.schema import MIGRATIONS, Migration, migrate
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA journal_mode=" + sys.argv[2])
connection.create_function("die", 0, lambda: os._exit(9))
broken = Migration(3, "dies", (*MIGRATIONS[2].statements[:2], "SELECT die()"))
migrate(connection, sys.argv[1], (*MIGRATIONS[:2], broken, *MIGRATIONS[3:]))
"""
"""A process that dies (no clean-up at all, as under ``kill -9``) inside migration 3."""


@pytest.mark.parametrize("journal", ["WAL", "DELETE"])
def test_a_migration_killed_part_way_leaves_the_file_as_it_was(
    tmp_path: Path, journal: str
) -> None:
    """A process killed in the middle of a migration leaves a file that opens at its old
    version with its rows (SQLite undoes the unfinished transaction), then migrates."""
    path = tmp_path / "old.sqlite"
    rows = _rows(1, 5, seed=3)
    _old_file(path, 1, False, rows)
    before = _read(path)
    child = subprocess.run(
        [sys.executable, "-c", KILLED, str(path), journal], capture_output=True, check=False
    )
    assert child.returncode == 9, child.stderr
    assert _read(path) == before
    store = ResultStore(path)
    assert store.migrated == (2, 3, 4)
    store.close()
    assert _read(path)[:2] == (SCHEMA_VERSION, LATEST)


def test_the_command_line_refuses_a_newer_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ddlsched results`` on a file of a newer schema exits 2 with one line naming the
    file and the versions, no traceback, nothing on stdout."""
    from ddlsched.cli import main

    path = tmp_path / "new.sqlite"
    _old_file(path, 4, True, _rows(4, 2, seed=1))
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 3}")
    connection.close()
    assert main(["results", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert (
        f"{path}: written by a newer ddlsched (results schema version {SCHEMA_VERSION + 3}" in err
    )
