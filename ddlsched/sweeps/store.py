"""The results file: SQLite, one row per finished task, at the schema of
:mod:`ddlsched.sweeps.schema` (an older file is migrated when opened for writing)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

from ddlsched.core.model import InputError
from ddlsched.provenance import UNKNOWN, Producer
from ddlsched.sweeps.rows import COLUMNS, FAILED, Row
from ddlsched.sweeps.schema import migrate, stored_version


def check_results_file(path: Path, name: str) -> int:
    """The schema version of the results file at ``path``, read without changing it (a
    database of another program stays as it is).

    Raises
    ------
    InputError
        Naming ``name``: not an SQLite file, not a ddlsched results database, or written
        by a newer ddlsched.
    """
    try:
        with _read_only(path) as connection:
            return stored_version(connection, name)
    except sqlite3.DatabaseError as error:
        raise InputError(f"{name}: not a ddlsched results database ({error})") from None


@contextlib.contextmanager
def migrated_copy(path: Path, name: str) -> Iterator[sqlite3.Connection]:
    """A copy in memory of the results file at ``path``, brought to the latest schema;
    the file itself is only read.

    Raises
    ------
    InputError
        As :func:`check_results_file`.
    """
    check_results_file(path, name)
    with contextlib.closing(sqlite3.connect(":memory:", isolation_level=None)) as memory:
        try:
            with _read_only(path) as connection:
                connection.backup(memory)
        except sqlite3.DatabaseError as error:
            raise InputError(f"{name}: not a ddlsched results database ({error})") from None
        migrate(memory, name)
        yield memory


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path``: reading never creates or changes a file."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
        yield connection


class ResultStore:
    """The SQLite file: one row per finished task, written atomically.

    Attributes
    ----------
    path
        The file.
    migrated
        The schema versions applied when it was opened (none for a file already at the
        latest version).
    """

    def __init__(self, path: str | Path) -> None:
        """Open (or create) the file; bring an older file to the latest schema.

        Raises
        ------
        InputError
            When ``path`` is a folder, a device, not an SQLite file, a database of another
            program or of a newer ddlsched, or cannot be written (a read-only place such as
            ``/proc``, a full disk), naming it.
        """
        self.path = Path(path)
        _check_path(self.path, str(path))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connection = sqlite3.connect(self.path, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise InputError(f"{path}: cannot create a results file there ({error})") from None
        try:
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=FULL")
            self.migrated = migrate(self._connection, str(path))
        except (sqlite3.Error, InputError) as error:
            self._connection.close()
            if isinstance(error, InputError):
                raise
            raise InputError(f"{path}: cannot use it as a results file ({error})") from None

    def done(self) -> set[str]:
        """Keys stored with an answer (failed tasks are retried)."""
        query = "SELECT key FROM results WHERE status != ?"
        return {row[0] for row in self._connection.execute(query, (FAILED,))}

    def producers(self) -> set[Producer]:
        """The code that produced the rows stored (NULL read as ``"unknown"``)."""
        query = (
            f"SELECT DISTINCT COALESCE(version, '{UNKNOWN}'), COALESCE(revision, '{UNKNOWN}') "
            "FROM results"
        )
        return {Producer(*row) for row in self._connection.execute(query)}

    def add(self, row: Row) -> None:
        """Store one row, atomically (it replaces a failed row of the same key)."""
        self._connection.execute(
            f"INSERT OR REPLACE INTO results ({', '.join(COLUMNS)}) "
            f"VALUES ({', '.join('?' for _ in COLUMNS)})",
            [row[c] for c in COLUMNS],
        )

    def close(self) -> None:
        """Close the file, back in SQLite's rollback-journal mode: the write-ahead log is
        folded into the file, so the file stands alone (no ``-wal`` or ``-shm`` beside it),
        and later read-only opens (``ddlsched results``) create nothing beside it."""
        # another connection may still hold the log: it then stays, with the rows in it
        with contextlib.suppress(sqlite3.Error):
            self._connection.execute("PRAGMA journal_mode=DELETE")
        self._connection.close()


def _check_path(path: Path, name: str) -> None:
    """Refuse an empty name, a folder, a device, and an existing file that is not a results
    file this code can write (checked read-only: another program's file stays as is)."""
    if not name.strip():
        raise InputError("results: an empty path; give a file name")
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(status.st_mode):
        raise InputError(f"{name}: is a folder, not a results file")
    if not stat.S_ISREG(status.st_mode):
        raise InputError(f"{name}: not a regular file (a results file is SQLite)")
    if status.st_size:
        check_results_file(path, name)
