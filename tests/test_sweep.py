"""Sweeps on a real local Dask cluster: results in SQLite, kill -9 and resume."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddlsched.core.model import InputError
from ddlsched.sweep import load_results, read_sweep

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
    deadline = time.time() + 120
    while len(_rows(db)) < 4 and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
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
