"""A sweep's rows a researcher can reproduce and read: each names the command writing its
instance, ratios to the optimum and to the bound per grid point, CSV and figure out.

The rows are made by :func:`ddlsched.sweeps.run_task` on this process (no Dask cluster):
what a worker runs, stored as the driver stores it."""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
import sqlite3
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from ddlsched.cli import main
from ddlsched.core.generators import GeneratorConfig, generate, with_tuples
from ddlsched.core.io import dumps
from ddlsched.sweeps import ResultStore, load_results, read_sweep, run_task, summarise

GRID = """
[sweep]
methods = ["exact", "fifo"]
seeds = 2
time_limit = 30
[sweep.grid]
num_jobs = [4, 5]
[generator]
preset = "exact-friendly"
load = 1.0
"""


def _results(tmp_path: Path) -> tuple[Path, list]:
    """A results file of every task of :data:`GRID`, and the tasks."""
    config = tmp_path / "grid.toml"
    config.write_text(GRID)
    tasks = list(read_sweep(config).tasks())
    db = tmp_path / "r.sqlite"
    store = ResultStore(db)
    for task in tasks:
        store.add(run_task(task))
    store.close()
    return db, tasks


def test_a_sweep_row_regenerates_its_instance_and_carries_its_ratios(tmp_path: Path) -> None:
    """Each row's ``command`` writes the instance the task solved, byte for byte (the
    task's own generator settings, read back independently); ``C/OPT`` is the row's
    objective over the optimum proven by the exact row of the same instance, and
    ``C/LB`` never lies below it (the bound is at most OPT)."""
    db, tasks = _results(tmp_path)
    frame = load_results(db)
    assert len(frame) == len(tasks) == 8
    for task in tasks[::3]:
        row = frame[(frame["method"] == task.method) & (frame["seed"] == task.seed)]
        row = row[row["num_jobs"] == task.generator["num_jobs"]].iloc[0]
        words = shlex.split(row["command"])
        out = tmp_path / "again.json"
        words[words.index("--out") + 1] = str(out)
        assert main(words[1:]) == 0
        config = GeneratorConfig(**with_tuples(task.generator))
        assert out.read_bytes() == dumps(generate(config, task.seed).to_dict()).encode()
    for row in frame.itertuples():
        exact = frame[(frame["command"] == row.command) & (frame["method"] == "exact")]
        assert exact["status"].item() == "optimal"
        assert math.isclose(row.opt, exact["objective"].item())
        assert math.isclose(row.objective / row.opt, frame.loc[row.Index, "C/OPT"])
        assert frame.loc[row.Index, "C/LB"] >= frame.loc[row.Index, "C/OPT"] - 1e-9


def test_results_prints_ratios_by_grid_point_and_writes_csv_and_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``results`` shows mean, spread and worst of C/OPT and C/LB per method and grid
    point (the exact method's C/OPT is 1 everywhere), ``--csv`` writes one row per task that
    pandas reads in one line, ``--plot`` a PNG."""
    db, tasks = _results(tmp_path)
    table = summarise(load_results(db))
    assert {"C/OPT mean", "C/OPT sd", "C/OPT worst", "C/LB mean", "C/LB worst"} <= set(table)
    exact = table[table["method"] == "exact"]
    assert len(exact) == 2 and (exact["C/OPT worst"] - 1).abs().max() < 1e-9
    csv, png = tmp_path / "rows.csv", tmp_path / "f.png"
    assert main(["results", str(db), "--csv", str(csv), "--plot", str(png)]) == 0
    assert "C/OPT mean" in capsys.readouterr().out
    rows = pd.read_csv(csv)
    assert len(rows) == len(tasks) and {"command", "C/OPT", "C/LB"} <= set(rows)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


OLD_SCHEMA = (
    "CREATE TABLE results (key TEXT PRIMARY KEY, method TEXT, params TEXT, seed INTEGER, "
    "status TEXT, objective REAL, total_jct REAL, best_bound REAL, gap REAL, runtime_s REAL, "
    "verified INTEGER, finished_at REAL, message TEXT)"
)
"""The results table as files written before provenance columns existed hold it."""


def test_a_file_written_the_old_way_still_gives_commands_and_ratios(tmp_path: Path) -> None:
    """A results file in the old schema, whose generator settings lack the later fields
    and whose online rows have no bound, loads: commands are printed from its settings,
    C/OPT from its exact row, C/LB from the exact row's bound."""
    settings = {
        k: v
        for k, v in dataclasses.asdict(GeneratorConfig.exact_friendly(4, 2, 4)).items()
        if k not in ("gpu_types", "type_bandwidth", "type_slowdown", "from_trace", "arrivals")
    }
    params = json.dumps(settings, sort_keys=True)
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as connection:
        connection.execute(OLD_SCHEMA)
        for key, method, status, objective, bound in (
            ("k1", "milp", "optimal", 20.0, 20.0),
            ("k2", "fifo", "feasible", 25.0, None),
        ):
            connection.execute(
                "INSERT INTO results VALUES (?, ?, ?, 3, ?, ?, 1.0, ?, NULL, 0.1, 1, 1.0, NULL)",
                (key, method, params, status, objective, bound),
            )
    connection.close()
    frame = load_results(db).set_index("key")
    assert frame.loc["k2", "command"] == frame.loc["k1", "command"]
    assert "--seed 3" in frame.loc["k2", "command"]
    assert frame.loc["k2", "C/OPT"] == 1.25 and frame.loc["k2", "C/LB"] == 1.25


def _old_file(
    tmp_path: Path, rows: list[tuple[str, str, object, str, float, float | None]]
) -> Path:
    """A results file in the old schema holding ``(key, method, params, status, objective,
    bound)`` rows, each of seed 3."""
    db = tmp_path / "hand.sqlite"
    with sqlite3.connect(db) as connection:
        connection.execute(OLD_SCHEMA)
        for key, method, params, status, objective, bound in rows:
            connection.execute(
                "INSERT INTO results VALUES (?, ?, ?, 3, ?, ?, 1.0, ?, NULL, 0.1, 1, 1.0, NULL)",
                (key, method, params, status, objective, bound),
            )
    connection.close()
    return db


FRIENDLY = json.dumps(dataclasses.asdict(GeneratorConfig.exact_friendly(4, 2, 4)), sort_keys=True)
"""The generator settings of a valid row."""


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ("{not json", "params: not JSON"),
        (None, "params: empty"),
        ("[1, 2]", "params: expected a JSON object of generator settings, got a list"),
        ('{"num_jobs": 0}', "params: num_jobs: must be an integer >= 1"),
        ('{"colour": 1}', "params: colour: not a generator setting"),
    ],
)
def test_a_row_whose_settings_cannot_be_read_is_named_with_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], params: str | None, expected: str
) -> None:
    """``results`` on a file whose ``params`` cell is not JSON, NULL, a list, or settings
    the generator refuses is bad input (exit 2), one line naming the file, the row and the
    field; never an internal error."""
    db = _old_file(
        tmp_path,
        [
            ("k1", "milp", FRIENDLY, "optimal", 20.0, 20.0),
            ("k2", "fifo", params, "feasible", 25.0, None),
        ],  # type: ignore[list-item]
    )
    assert main(["results", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{db}: row 2 (key k2): {expected}" in err


def test_rows_whose_objective_or_bound_is_not_a_finite_positive_number_are_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row with objective -5, or a bound of 1e300 above its own objective, or an
    infinite objective, is reported as an invalid row: it gets no ratio, gives no optimum
    nor bound to the other rows of its instance, and is counted apart, not averaged
    (a C/OPT of -0.001 was averaged before)."""
    db = _old_file(
        tmp_path,
        [
            ("k1", "milp", FRIENDLY, "optimal", 20.0, 20.0),
            ("k2", "fifo", FRIENDLY, "feasible", -5.0, None),
            ("k3", "milp-2", FRIENDLY, "feasible", 30.0, 1e300),
            ("k4", "sjf", FRIENDLY, "feasible", 25.0, None),
        ],
    )
    frame = load_results(db).set_index("key")
    assert list(frame["invalid"] != "") == [False, True, True, False]
    assert frame[["C/OPT", "C/LB"]].loc[["k2", "k3"]].isna().all().all()
    assert frame.loc["k4", "C/OPT"] == 1.25 and frame.loc["k4", "C/LB"] == 1.25
    table = summarise(load_results(db)).set_index("method")
    assert table.loc["fifo", "invalid"] == 1 and math.isnan(table.loc["fifo", "C/OPT mean"])
    assert main(["results", str(db)]) == 0
    out = capsys.readouterr().out
    assert "invalid: fifo seed 3 (key k2): objective -5 is not a finite number > 0" in out
    assert "invalid: milp-2 seed 3 (key k3): bound 1e+300 is above the objective 30" in out
