"""``ddlsched results`` on hand-written results files: one summary row per grid point
(every generator setting that varies, not only the size and load), the ratio to the
strongest bound recorded for an instance, and CSV rows at full precision.

The files are written directly in SQLite (no solving), so every figure the tests expect
is worked out by hand from the rows inserted."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ddlsched.cli import main
from ddlsched.core.generators import GeneratorConfig
from ddlsched.sweeps import load_results, summarise

SCHEMA = (
    "CREATE TABLE results (key TEXT PRIMARY KEY, method TEXT, params TEXT, seed INTEGER, "
    "status TEXT, objective REAL, total_jct REAL, best_bound REAL, gap REAL, runtime_s REAL, "
    "verified INTEGER, finished_at REAL, message TEXT)"
)
"""The results table, as the first files held it (still read)."""


def _write(path: Path, rows: list[tuple[str, str, dict, int, str, float, float | None]]) -> None:
    """A results file of ``rows``: key, method, generator settings, seed, status,
    objective, best bound."""
    with sqlite3.connect(path) as connection:
        connection.execute(SCHEMA)
        for number, (key, method, settings, seed, status, objective, bound) in enumerate(rows):
            connection.execute(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, 1.0, ?, NULL, 0.1, 1, ?, NULL)",
                (key, method, json.dumps(settings, sort_keys=True), seed, status, objective,
                 bound, float(number)),
            )  # fmt: skip
    connection.close()


def _settings(**changes: Any) -> dict:
    """The settings of a small exact-friendly grid point, with ``changes``."""
    config = dataclasses.replace(GeneratorConfig.exact_friendly(4, 2, 2), **changes)
    return json.loads(json.dumps(dataclasses.asdict(config)))


def test_grid_points_differing_in_any_setting_are_not_averaged(tmp_path: Path) -> None:
    """Two grid points that differ only in ``bandwidth_intra`` (2 and 20 GB/s) give two
    summary rows, each with its own mean objective (10 and 30), not one row of 20."""
    slow, fast = _settings(bandwidth_intra=2.0), _settings(bandwidth_intra=20.0)
    db = tmp_path / "g.sqlite"
    _write(
        db,
        [
            ("a", "fifo", slow, 1, "feasible", 8.0, None),
            ("b", "fifo", slow, 2, "feasible", 12.0, None),
            ("c", "fifo", fast, 1, "feasible", 28.0, None),
            ("d", "fifo", fast, 2, "feasible", 32.0, None),
        ],
    )
    table = summarise(load_results(db))
    assert len(table) == 2
    means = dict(zip(table["bandwidth_intra"], table["mean_objective"], strict=True))
    assert means == {2.0: 10.0, 20.0: 30.0}
    assert list(table["tasks"]) == [2, 2]


def test_the_ratio_to_the_bound_uses_the_strongest_bound_of_the_instance(
    tmp_path: Path,
) -> None:
    """An instance whose exact row (time limit hit) proved a bound of 18 and whose online
    row recorded a weaker 10: the online row's C/LB is 27 / 18 = 1.5, against the larger
    bound (any proven bound is valid, so the largest is the tightest certificate)."""
    settings = _settings()
    db = tmp_path / "b.sqlite"
    _write(
        db,
        [
            ("e", "exact", settings, 1, "feasible", 20.0, 18.0),
            ("f", "fifo", settings, 1, "feasible", 27.0, 10.0),
        ],
    )
    frame = load_results(db).set_index("key")
    assert frame.loc["f", "bound"] == 18.0
    assert frame.loc["f", "C/LB"] == 1.5
    assert pd.isna(frame.loc["f", "C/OPT"])  # no row proved an optimum


def test_results_csv_and_json_keep_every_digit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``results --csv`` and ``--json`` write numbers as ``compare`` does, at full
    precision: an objective of 3 + 1/3 and its ratio read back bit for bit."""
    settings = _settings()
    db, csv = tmp_path / "p.sqlite", tmp_path / "rows.csv"
    _write(
        db,
        [
            ("g", "exact", settings, 1, "optimal", 3.0, 3.0),
            ("h", "fifo", settings, 1, "feasible", 1 / 3 + 3.0, None),
        ],
    )
    assert main(["results", str(db), "--csv", str(csv)]) == 0
    rows = pd.read_csv(csv).set_index("key")
    assert rows.loc["h", "objective"] == 1 / 3 + 3.0
    assert rows.loc["h", "C/OPT"] == (1 / 3 + 3.0) / 3.0
    capsys.readouterr()
    assert main(["results", str(db), "--json"]) == 0
    table = {row["method"]: row for row in json.loads(capsys.readouterr().out)}
    assert table["fifo"]["mean_objective"] == 1 / 3 + 3.0
