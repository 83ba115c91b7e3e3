"""The results file's schema: an ordered list of migrations, and the version a file is at.

A results file records its schema version in SQLite's ``user_version`` (the header field
SQLite keeps for the application's own use). Opening a file for writing applies the
migrations it lacks, in order, in one transaction that also sets the version: a failure or a
kill part way leaves the file as it was, at its old version. A file written before versions
were recorded (``user_version`` 0) is at the version whose columns its table has.

A file at a newer version than this code knows, or a database of another program, is
refused in one line naming the file.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from ddlsched.core.model import InputError


@dataclass(frozen=True)
class Migration:
    """One step of the schema: the SQL statements taking a file from ``version - 1`` to
    ``version``, and what they add."""

    version: int
    what: str
    statements: tuple[str, ...]


MIGRATIONS = (
    Migration(
        1,
        "the results table: one row per task, keyed by the hash of its inputs",
        (
            "CREATE TABLE results (key TEXT PRIMARY KEY, method TEXT, params TEXT, "
            "seed INTEGER, status TEXT, objective REAL, total_jct REAL, best_bound REAL, "
            "gap REAL, runtime_s REAL, verified INTEGER, finished_at REAL)",
        ),
    ),
    Migration(
        2,
        "message: a task's notes, or why it failed",
        ("ALTER TABLE results ADD COLUMN message TEXT",),
    ),
    Migration(
        3,
        "version, revision, mixed: the code that produced each row",
        (
            "ALTER TABLE results ADD COLUMN version TEXT",
            "ALTER TABLE results ADD COLUMN revision TEXT",
            "ALTER TABLE results ADD COLUMN mixed INTEGER",
        ),
    ),
    Migration(
        4,
        "limits: what stops an exact task (deterministic limits, a time limit)",
        ("ALTER TABLE results ADD COLUMN limits TEXT",),
    ),
)
"""Every step of the schema, oldest first; a new one goes at the end, never in between."""

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The version of the files this code writes."""

UNRECORDED = 4
"""The last version written without its number: a file whose ``user_version`` is 0 is at
the latest of versions 1 to this one whose columns it has."""


@functools.cache
def columns_at(version: int) -> tuple[str, ...]:
    """The columns of the results table at ``version``: the migrations up to it applied to
    an empty database in memory (so the list is never written twice)."""
    with contextlib.closing(sqlite3.connect(":memory:")) as connection:
        for migration in MIGRATIONS[:version]:
            for statement in migration.statements:
                connection.execute(statement)
        return _columns(connection)


def stored_version(
    connection: sqlite3.Connection,
    name: str,
    migrations: Sequence[Migration] = MIGRATIONS,
    *,
    empty: bool = False,
) -> int:
    """The schema version of the database of ``connection``; with ``empty``, 0 for a
    database without tables (a new file), refused otherwise.

    Raises
    ------
    InputError
        Naming ``name`` when the database is not a ddlsched results file, or is at a
        version newer than the last of ``migrations``.
    """
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    recorded = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if empty and not tables and not recorded:
        return 0
    if "results" not in tables:
        reason = f"its tables: {', '.join(sorted(tables))}" if tables else "no results table"
        raise InputError(f"{name}: not a ddlsched results database ({reason})")
    present = set(_columns(connection))
    missing = [column for column in columns_at(1) if column not in present]
    if missing:
        raise InputError(
            f"{name}: not a ddlsched results database (its results table has no column "
            f"{', '.join(missing)})"
        )
    latest = migrations[-1].version
    if recorded > latest:
        raise InputError(
            f"{name}: written by a newer ddlsched (results schema version {recorded}; this "
            f"version reads up to {latest}): upgrade ddlsched to use it"
        )
    return recorded or _version_of_columns(present)


def _version_of_columns(present: set[str]) -> int:
    """The latest version up to :data:`UNRECORDED` whose columns ``present`` holds (a file
    written before versions were recorded: each version added columns)."""
    versions = range(1, UNRECORDED + 1)
    return max(version for version in versions if set(columns_at(version)) <= present)


def migrate(
    connection: sqlite3.Connection, name: str, migrations: Sequence[Migration] = MIGRATIONS
) -> tuple[int, ...]:
    """Bring the database of ``connection`` to the last version of ``migrations``: the
    versions it lacks, applied in order in one transaction with the new version number.

    The version is read once the transaction holds the write lock, so two processes
    opening one old file migrate it once. Returns the versions applied (none when the
    file is up to date). The connection must be in autocommit mode
    (``isolation_level=None``) so that the transaction is this function's alone.

    Raises
    ------
    InputError
        As :func:`stored_version`, and when a statement fails (the file then stays at
        the version it was).
    """
    connection.execute("BEGIN IMMEDIATE")
    try:
        found = stored_version(connection, name, migrations, empty=True)
        pending = [m for m in migrations if m.version > found]
        for migration in pending:
            for statement in migration.statements:
                connection.execute(statement)
        latest = migrations[-1].version
        if connection.execute("PRAGMA user_version").fetchone()[0] != latest:
            connection.execute(f"PRAGMA user_version = {latest}")
        connection.execute("COMMIT")
    except BaseException as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        if isinstance(error, sqlite3.Error):
            raise InputError(
                f"{name}: cannot bring it to results schema version {migrations[-1].version} "
                f"({error}); the file is left as it was"
            ) from None
        raise
    return tuple(m.version for m in pending)


def _columns(connection: sqlite3.Connection) -> tuple[str, ...]:
    """The columns of the results table, in order."""
    return tuple(row[1] for row in connection.execute("PRAGMA table_info(results)"))
