"""Experiment sweeps on Dask, with results in SQLite.

A sweep is a grid: methods x generator parameters x seeds, read from TOML::

    [sweep]
    methods = ["milp", "asrpt", "asrpt-greedy", "fifo"]
    seeds = 5                 # or a list: [0, 1, 2]
    work_limit = 60           # exact methods: CP-SAT work units (deterministic)
    node_limit = 20000        # exact methods: MILP nodes (deterministic)
    # time_limit = 30         # a wall-clock limit too (then rows depend on the machine)
    placement = "any"         # online policies: any, consolidated, prefer-consolidated

    [sweep.grid]              # each a list: every combination is run
    num_jobs = [6, 8]
    servers = [2]
    gpus_per_server = [4]
    load = [1.0]

    [generator]               # fixed generator settings (optional)
    preset = "exact-friendly" # a preset of ddlsched.core.generators.PRESETS:
                              # integral, bandwidth_intra / bandwidth_inter = 2

Every task (one method on one generated instance) runs on a Dask worker: a
``LocalCluster`` by default, or any running scheduler (``tcp://host:8786``),
e.g. one started on a SLURM cluster with dask-jobqueue (see the README).

**Results** go to a SQLite file, one row per task, keyed by the SHA-256 of
the task's inputs (method, every generator setting, seed, limits). The
driver writes each row in its own transaction as the task completes, so a
sweep killed at any moment, ``kill -9`` included, loses only the tasks in
flight, and no row is ever half-written; a re-run skips every key already
present. :func:`load_results` reads the file into a pandas DataFrame and
:func:`summarise` aggregates it per method and grid point.

**Schema.** The file records its schema version; a file of an older version is
migrated when a sweep opens it (:mod:`ddlsched.sweeps.schema`), and read as
migrated, unchanged, by :func:`load_results`. A file of a newer ddlsched is refused.

**Provenance.** Every row records the package version and the git revision of
the code that produced it (``"unknown"`` when not found,
:mod:`ddlsched.provenance`). Adding rows to a file that holds rows of other code
is refused, naming both, unless ``allow_mixed`` (``--allow-mixed-versions``) is
given; the rows added so are marked ``mixed = 1``.

The modules, in the order a sweep goes through them: :mod:`~ddlsched.sweeps.config`
(the TOML file, tasks and their keys), :mod:`~ddlsched.sweeps.rows` (a task run on a
worker, its row), :mod:`~ddlsched.sweeps.schema` and :mod:`~ddlsched.sweeps.store` (the
SQLite file), :mod:`~ddlsched.sweeps.cluster` and :mod:`~ddlsched.sweeps.runner` (Dask),
:mod:`~ddlsched.sweeps.results` and :mod:`~ddlsched.sweeps.summary` (reading and
summarising).
"""

from ddlsched.provenance import Producer
from ddlsched.sweeps.config import (
    KEY_VERSION,
    LATER_FIELDS,
    MAX_TASKS,
    Setting,
    Settings,
    SweepConfig,
    Task,
    read_sweep,
)
from ddlsched.sweeps.results import load_results
from ddlsched.sweeps.rows import (
    COLUMNS,
    FAILED,
    Cell,
    Row,
    failed_row,
    run_task,
    run_task_recording_failure,
)
from ddlsched.sweeps.runner import WORKERS_PER_CPU, Recorder, SweepOutcome, run_sweep
from ddlsched.sweeps.schema import MIGRATIONS, SCHEMA_VERSION, Migration
from ddlsched.sweeps.store import ResultStore
from ddlsched.sweeps.summary import (
    GRID_KEYS,
    RESULT_COLUMNS,
    grid_settings,
    invalid_numbers,
    producers,
    ratio_samples,
    summarise,
    with_ratios,
)

__all__ = [
    "COLUMNS",
    "FAILED",
    "GRID_KEYS",
    "KEY_VERSION",
    "LATER_FIELDS",
    "MAX_TASKS",
    "MIGRATIONS",
    "RESULT_COLUMNS",
    "SCHEMA_VERSION",
    "WORKERS_PER_CPU",
    "Cell",
    "Migration",
    "Producer",
    "Recorder",
    "ResultStore",
    "Row",
    "Setting",
    "Settings",
    "SweepConfig",
    "SweepOutcome",
    "Task",
    "failed_row",
    "grid_settings",
    "invalid_numbers",
    "load_results",
    "producers",
    "ratio_samples",
    "read_sweep",
    "run_sweep",
    "run_task",
    "run_task_recording_failure",
    "summarise",
    "with_ratios",
]
