"""A Ctrl-C that lands while a sweep stores a row: the count the sweep prints ("N run")
matches the rows in the results file."""

from __future__ import annotations

import signal
import sqlite3
import threading
from pathlib import Path
from types import FrameType

import pytest

from ddlsched.sweeps import (
    Producer,
    Recorder,
    ResultStore,
    Row,
    SweepOutcome,
    failed_row,
    read_sweep,
)


def test_a_ctrl_c_while_a_row_is_stored_still_counts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT sent the moment a row is written (after the write, before the count) still
    stops the sweep, but only once the row is counted: one row in the file, one run."""
    config = tmp_path / "s.toml"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n')
    task = next(iter(read_sweep(config).tasks()))
    row = failed_row(task, RuntimeError("stands in for any answer"))
    results = tmp_path / "r.sqlite"
    store = ResultStore(results)
    add = store.add

    def add_then_ctrl_c(one: Row) -> None:
        add(one)
        # To the main thread: a sweep's other threads block SIGINT (as Dask's do).
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def interrupt(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "add", add_then_ctrl_c)
    previous = signal.signal(signal.SIGINT, interrupt)
    outcome = SweepOutcome(1, 0, 0, False)
    try:
        with pytest.raises(KeyboardInterrupt):
            producer = Producer(str(row["version"]), str(row["revision"]))
            Recorder(store, outcome, str(results), {producer}, allow_mixed=False).record(row)
    finally:
        signal.signal(signal.SIGINT, previous)
        store.close()
    with sqlite3.connect(results) as connection:
        (rows,) = connection.execute("SELECT COUNT(*) FROM results").fetchone()
    connection.close()
    assert rows == 1 and outcome.ran == 1 and outcome.failed == 1
