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
the task's inputs (method, every generator setting, seed, time limit). The
driver writes each row in its own transaction as the task completes, so a
sweep killed at any moment, ``kill -9`` included, loses only the tasks in
flight, and no row is ever half-written; a re-run skips every key already
present. :func:`load_results` reads the file into a pandas DataFrame and
:func:`summarise` aggregates it per method and grid point.

**Provenance.** Every row records the package version and the git revision of
the code that produced it (``"unknown"`` when not found,
:mod:`ddlsched.provenance`). Adding rows to a file that holds rows of other code
is refused, naming both, unless ``allow_mixed`` (``--allow-mixed-versions``) is
given; the rows added so are marked ``mixed = 1``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import logging
import math
import os
import signal
import sqlite3
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ddlsched.api import exact_method_names, generate_checked, method_names, solve
from ddlsched.core.generators import (
    GeneratorConfig,
    generate_command,
    with_preset,
    with_tuples,
)
from ddlsched.core.io import check_regular_file
from ddlsched.core.model import InputError, is_whole
from ddlsched.core.params import PLACEMENTS, ExactParams, OnlineParams, read_toml
from ddlsched.provenance import UNKNOWN, Producer, current_producer

SCHEMA_VERSION = 1

MAX_TASKS = 100_000
"""Most tasks a sweep file may ask for (methods x seeds x grid points): beyond it a typo
(``seeds = 100000000``) would spend minutes listing tasks before the first one runs."""

WORKERS_PER_CPU = 4
"""Most local workers per CPU (``--workers``): each is a process, with solver children."""


LATER_FIELDS = ("gpu_types", "type_bandwidth", "type_slowdown", "from_trace", "arrivals")
"""Generator settings added after result files existed: left out of a task's key when empty."""


@dataclass(frozen=True)
class Task:
    """One method on one generated instance."""

    method: str
    generator: dict[str, Any]
    seed: int
    time_limit: float | None
    placement: str = "any"
    work_limit: float | None = None
    node_limit: int | None = None

    def exact_params(self) -> ExactParams:
        """An exact method's settings: the deterministic limits, and the time limit if any."""
        return ExactParams(
            time_limit=self.time_limit,
            deterministic_limit=self.work_limit,
            node_limit=self.node_limit,
        )

    @property
    def limits(self) -> str:
        """What stopped an exact method, in words (a row's ``limits``)."""
        return self.exact_params().limits_text()

    @property
    def key(self) -> str:
        """SHA-256 of the canonical JSON of the inputs (and the schema version).

        The default placement and the GPU-type settings left empty are left
        out, so files written before placement rules and GPU types existed
        keep their keys (and resume).
        """
        document = {"version": SCHEMA_VERSION, **dataclasses.asdict(self)}
        if self.placement == "any":
            del document["placement"]
        for limit in ("work_limit", "node_limit"):  # absent from tasks written before them
            if document[limit] is None:
                del document[limit]
        document["generator"] = {
            name: value
            for name, value in document["generator"].items()
            if not (name in LATER_FIELDS and not value)
        }
        text = json.dumps(document, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class SweepConfig:
    """A parsed sweep file."""

    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    time_limit: float | None
    grid: dict[str, list[Any]]
    fixed: dict[str, Any]
    placement: str = "any"
    work_limit: float | None = 60.0
    node_limit: int | None = 20_000

    def tasks(self) -> Iterator[Task]:
        """Every task of the grid, in a fixed order."""
        names = sorted(self.grid)
        for values in itertools.product(*(self.grid[n] for n in names)):
            settings = {**self.fixed, **dict(zip(names, values, strict=True))}
            generator = dataclasses.asdict(_generator_config(settings))
            for seed in self.seeds:
                for method in self.methods:
                    yield Task(
                        method,
                        generator,
                        seed,
                        self.time_limit,
                        self.placement,
                        self.work_limit,
                        self.node_limit,
                    )


def _generator_config(settings: dict[str, Any]) -> GeneratorConfig:
    """The generator settings of a grid point (a ``preset`` expanded, lists as tuples)."""
    return GeneratorConfig(**with_tuples(with_preset(settings, "generator.preset")))


def _limit(
    sweep: dict[str, Any], name: str, default: float | None, path: Path | str, unit: str
) -> float | None:
    """``sweep.<name>``: a number > 0 (at most 1e12), or ``default`` when absent."""
    value = sweep.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1e12:
        raise InputError(
            f"{path}: sweep.{name}: expected {unit} > 0 (at most 1e12), got {value!r}"
        )
    return float(value)


def read_sweep(path: str | Path) -> SweepConfig:
    """Read and validate a sweep file.

    Raises
    ------
    InputError
        Naming the table and key that is wrong, or the size of a grid of more
        than :data:`MAX_TASKS` tasks.
    """
    doc = read_toml(path)
    sweep = doc.get("sweep")
    if not isinstance(sweep, dict):
        raise InputError(f"{path}: missing [sweep] table")
    unknown = set(sweep) - {
        "methods",
        "seeds",
        "time_limit",
        "work_limit",
        "node_limit",
        "grid",
        "placement",
    }
    if unknown:
        raise InputError(f"{path}: sweep.{sorted(unknown)[0]}: unknown key")
    methods = sweep.get("methods", ["milp", "asrpt"])
    known = method_names()
    if (
        not isinstance(methods, list)
        or not methods
        or not all(isinstance(m, str) for m in methods)
    ):
        raise InputError(
            f"{path}: sweep.methods: expected a non-empty list of method names, got {methods!r}"
        )
    for method in methods:
        if method not in known:
            raise InputError(
                f"{path}: sweep.methods: unknown method {method!r} "
                f"(expected some of {', '.join(known)})"
            )
    seeds = _seeds(sweep.get("seeds", 3), path)
    time_limit = _limit(sweep, "time_limit", None, path, "seconds")
    work_limit = _limit(sweep, "work_limit", 60.0, path, "CP-SAT work units")
    node_limit = _limit(sweep, "node_limit", 20_000, path, "MILP nodes")
    if node_limit is not None and node_limit != int(node_limit):
        raise InputError(f"{path}: sweep.node_limit: expected a whole number, got {node_limit!r}")
    grid = sweep.get("grid", {})
    fields = {f.name for f in dataclasses.fields(GeneratorConfig)} | {"preset"}
    fixed = doc.get("generator", {})
    for table, keys in (("sweep.grid", grid), ("generator", fixed)):
        for key in keys:
            if key not in fields:
                raise InputError(f"{path}: {table}.{key}: not a generator setting")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise InputError(f"{path}: sweep.grid.{key}: expected a non-empty list")
    if not isinstance(fixed, dict):
        raise InputError(f"{path}: generator: expected a table")
    _refuse_set_twice(path, grid, fixed)
    placement = sweep.get("placement", "any")
    if placement not in PLACEMENTS:
        raise InputError(
            f"{path}: sweep.placement: expected one of {', '.join(PLACEMENTS)}, got {placement!r}"
        )
    points = math.prod(len(values) for values in grid.values())
    total = len(methods) * len(seeds) * points
    if total > MAX_TASKS:
        raise InputError(
            f"{path}: {total:,} tasks ({len(methods)} methods x {len(seeds):,} seeds x "
            f"{points:,} grid points), more than {MAX_TASKS:,}: split the sweep"
        )
    config = SweepConfig(
        tuple(methods),
        seeds,
        time_limit,
        dict(grid),
        dict(fixed),
        placement,
        work_limit,
        None if node_limit is None else int(node_limit),
    )
    try:
        list(config.tasks())  # every grid point's generator settings, validated
        _try_each_setting(config)
    except (ValueError, TypeError) as error:
        raise InputError(f"{path}: {' '.join(str(error).split())}") from None
    return config


def _refuse_set_twice(path: str | Path, grid: dict[str, Any], fixed: dict[str, Any]) -> None:
    """Refuse a setting fixed in ``[generator]`` to a value its ``[sweep.grid]`` list
    differs from: one of the two would be silently ignored (the same value twice agrees)."""
    for key in sorted(set(grid) & set(fixed)):
        if grid[key] == [fixed[key]]:
            continue
        raise InputError(
            f"{path}: generator.{key} = {fixed[key]!r} contradicts sweep.grid.{key} = "
            f"{grid[key]!r}: set {key} in one of the two tables"
        )


def _try_each_setting(config: SweepConfig) -> None:
    """Generate a small instance with each value of each setting, so that a value only the
    generator refuses (a negative ``iteration_sigma``) is named here, not on every worker."""
    first = {name: values[0] for name, values in config.grid.items()}
    tried: list[dict[str, Any]] = [first]
    tried += [{**first, name: v} for name, values in config.grid.items() for v in values[1:]]
    for point in tried:
        settings = _generator_config({**config.fixed, **point})
        generate_checked(settings.replace(num_jobs=min(settings.num_jobs, 4)), config.seeds[0])


def _seeds(value: Any, path: str | Path) -> tuple[int, ...]:
    if is_whole(value) and value > MAX_TASKS:
        raise InputError(f"{path}: sweep.seeds: at most {MAX_TASKS:,}, got {value:,}")
    if is_whole(value) and value >= 1:
        return tuple(range(value))
    if isinstance(value, list) and value and all(is_whole(v) and 0 <= v < 2**63 for v in value):
        repeated = sorted({seed for seed in value if value.count(seed) > 1})
        if repeated:
            raise InputError(
                f"{path}: sweep.seeds: repeats {', '.join(map(str, repeated))} (each seed "
                "would run the same tasks twice)"
            )
        return tuple(value)
    raise InputError(
        f"{path}: sweep.seeds: expected a count >= 1 or a non-empty list of seeds >= 0, "
        f"got {value!r}"
    )


def run_task_recording_failure(task: Task) -> dict[str, Any]:
    """:func:`run_task`, with an exception turned into a failed row (on the worker)."""
    try:
        return run_task(task)
    except Exception as error:
        return failed_row(task, error)


def run_task(task: Task) -> dict[str, Any]:
    """Run one task (on a worker): generate, solve, verify; a result row."""
    from ddlsched.core.generators import generate
    from ddlsched.proofs_checks.verifier import verify

    instance = generate(GeneratorConfig(**with_tuples(task.generator)), task.seed)
    params: ExactParams | OnlineParams = (
        task.exact_params()
        if task.method in exact_method_names()
        else OnlineParams(placement=task.placement)
    )
    result = solve(instance, task.method, params=params, seed=task.seed)
    verified = result.schedule is not None and verify(instance, result.schedule).feasible
    summary = result.summary()
    return _row(
        task,
        status=summary["status"],
        objective=summary["total_completion_time"],
        total_jct=summary["total_jct"],
        best_bound=summary["best_bound"],
        gap=summary["gap"],
        runtime_s=summary["runtime_s"],
        verified=int(verified),
        message=" | ".join(result.notes)[:2000] or None,
    )


COLUMNS = (
    "key",
    "method",
    "params",
    "seed",
    "status",
    "objective",
    "total_jct",
    "best_bound",
    "gap",
    "runtime_s",
    "verified",
    "finished_at",
    "message",
    "version",
    "revision",
    "mixed",
    "limits",
)

LATER_COLUMNS = {
    "message": "TEXT",
    "version": "TEXT",
    "revision": "TEXT",
    "mixed": "INTEGER",
    "limits": "TEXT",
}
"""Columns added after result files existed: added to an older file when it is opened
(its rows keep NULL there: a NULL version or revision reads as ``"unknown"``)."""

FAILED = "failed"
"""The status of a task that raised: its row keeps the message; a re-run retries it."""


def _row(task: Task, **values: Any) -> dict[str, Any]:
    """A row of :data:`COLUMNS`: the task's identity, ``values``, unknowns as NULL."""
    producer = current_producer()
    row = dict.fromkeys(COLUMNS)
    row.update(
        key=task.key,
        method=task.method,
        params=json.dumps(task.generator, sort_keys=True),
        seed=task.seed,
        finished_at=time.time(),
        version=producer.version,
        revision=producer.revision,
        mixed=0,
        limits=task.limits if task.method in exact_method_names() else None,
        **values,
    )
    return row


def failed_row(task: Task, error: BaseException) -> dict[str, Any]:
    """The result row of a task that raised ``error`` (a worker's crash included)."""
    message = " ".join(f"{type(error).__name__}: {error}".split())[:2000]
    return _row(task, status=FAILED, verified=0, message=message)


REQUIRED_COLUMNS = tuple(column for column in COLUMNS if column not in LATER_COLUMNS)
"""The columns every ddlsched results table has, however old."""


def _not_ours(connection: sqlite3.Connection) -> str | None:
    """Why the SQLite database is not a ddlsched results database, or ``None`` if it is:
    no results table, or one without the columns every results file has."""
    query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    tables = {row[0] for row in connection.execute(query)}
    if "results" not in tables:
        return f"its tables: {', '.join(sorted(tables))}" if tables else "no results table"
    present = {row[1] for row in connection.execute("PRAGMA table_info(results)")}
    missing = [column for column in REQUIRED_COLUMNS if column not in present]
    if missing:
        return f"its results table has no column {', '.join(missing)}"
    return None


def _check_ours(file: Path, name: str) -> None:
    """Refuse a file that is not a ddlsched results database, naming it and why; the file
    is opened read-only, so a database of another program is never changed."""
    try:
        uri = f"{file.resolve().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
            reason = _not_ours(connection)
    except sqlite3.DatabaseError as error:
        reason = str(error)
    if reason is not None:
        raise InputError(f"{name}: not a ddlsched results database ({reason})")


class ResultStore:
    """The SQLite file: one row per finished task, written atomically."""

    def __init__(self, path: str | Path) -> None:
        """Open (or create) the file.

        Raises
        ------
        InputError
            When ``path`` is a folder, a device, not an SQLite file, or cannot be
            written (a read-only place such as ``/proc``, a full disk), naming it.
        """
        self.path = Path(path)
        if not str(path).strip():
            raise InputError("results: an empty path; give a file name")
        with contextlib.suppress(FileNotFoundError):
            mode = os.stat(self.path).st_mode
            if stat.S_ISDIR(mode):
                raise InputError(f"{path}: is a folder, not a results file")
            if not stat.S_ISREG(mode):
                raise InputError(f"{path}: not a regular file (a results file is SQLite)")
        with contextlib.suppress(FileNotFoundError):
            if os.stat(self.path).st_size:  # checked read-only: another program's file stays as is
                _check_ours(self.path, str(path))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connection = sqlite3.connect(self.path)
        except (OSError, sqlite3.Error) as error:
            raise InputError(f"{path}: cannot create a results file there ({error})") from None
        try:
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=FULL")
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, method TEXT, "
                "params TEXT, seed INTEGER, status TEXT, objective REAL, total_jct REAL, "
                "best_bound REAL, gap REAL, runtime_s REAL, verified INTEGER, "
                "finished_at REAL, message TEXT, version TEXT, revision TEXT, mixed INTEGER)"
            )
            present = {row[1] for row in self._connection.execute("PRAGMA table_info(results)")}
            for column, kind in LATER_COLUMNS.items():
                if column not in present:  # a file written before the column existed
                    self._connection.execute(f"ALTER TABLE results ADD COLUMN {column} {kind}")
            self._connection.commit()
        except sqlite3.Error as error:
            self._connection.close()
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

    def add(self, row: dict[str, Any]) -> None:
        """Store one row in its own transaction (it replaces a failed row of the same key)."""
        with self._connection:
            self._connection.execute(
                f"INSERT OR REPLACE INTO results ({', '.join(COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in COLUMNS)})",
                [row[c] for c in COLUMNS],
            )

    def close(self) -> None:
        """Close the file."""
        self._connection.close()


@dataclass
class SweepOutcome:
    """What a run of a sweep did."""

    total: int
    skipped: int
    ran: int
    interrupted: bool
    failed: int = 0


def run_sweep(
    config: SweepConfig,
    results: str | Path,
    scheduler: str | None = None,
    workers: int = 2,
    progress: Callable[[int, int], None] | None = None,
    allow_mixed: bool = False,
    quiet_after_interrupt: bool = False,
) -> SweepOutcome:
    """Run every task not yet in ``results`` on Dask; store rows as they finish.

    Parameters
    ----------
    config
        The sweep.
    results
        The SQLite file (created if missing).
    scheduler
        Address of a running Dask scheduler; ``None`` starts a local cluster
        of ``workers`` single-threaded worker processes.
    progress
        Called as ``progress(done, to_do)``.
    allow_mixed
        Add rows to a file that holds rows of other code (another version or git
        revision); the rows added so are marked ``mixed = 1``. Without it, such a
        file is refused.
    quiet_after_interrupt
        After a Ctrl-C, leave Dask's and tornado's loggers quiet (the command line,
        whose process is about to end: their threads may still log the cut-off calls);
        by default their levels come back, as after a finished sweep.

    Ctrl-C stops the sweep: the rows stored so far are kept, ``interrupted``
    is set, the local cluster is shut down. Its workers never see the Ctrl-C
    themselves (it would end each with a traceback): they are started with
    SIGINT blocked, and they end when this process ends, ``kill -9``
    included (Dask's workers watch their parent).

    Raises
    ------
    InputError
        On more than :data:`WORKERS_PER_CPU` workers per CPU, a scheduler
        address that does not connect, a results file that cannot be used, or
        one that holds rows of other code (without ``allow_mixed``; also when a
        remote worker runs other code than the file's).
    """
    from ddlsched.core.extras import require

    require("dask.distributed", "sweeps")  # the [sweep] extra, named on a miss
    from dask.distributed import Client

    _check_workers(scheduler, workers)
    store = ResultStore(results)
    todo, outcome = _tasks_to_do(config, store)
    if not todo:
        store.close()
        return outcome
    producers = store.producers()
    try:
        _check_mixing(results, producers, current_producer(), allow_mixed)
    except InputError:
        store.close()
        raise
    cluster = client = None
    # Dask's and tornado's loggers are quiet for the whole run, not only once an interrupt
    # is handled: a Ctrl-C that lands while the main thread waits in Dask's `sync` makes the
    # event loop's thread log the cancelled callback ("Exception in callback ... cancel",
    # a NameError inside Dask) at once, before the `except` below runs. Every task's
    # failure is recorded in its row, so nothing of the sweep's own is lost; the levels
    # come back when the sweep ends (unless ``quiet_after_interrupt``).
    restore_loggers = _quiet_loggers(_DASK_LOGGERS)
    try:
        if scheduler is None:
            with _interrupts_held():
                cluster = _local_cluster(workers)
            client = Client(cluster)
        else:
            client = _connect(Client, scheduler)
        futures = _submitted(client, todo)
        for row in _rows_as_completed(futures):
            _record(row, store, outcome, results, producers, allow_mixed)
            if progress is not None:
                progress(outcome.ran, len(todo))
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        _end_sweep(
            client,
            cluster,
            store,
            kill=outcome.interrupted or outcome.ran < len(todo),
            restore_loggers=restore_loggers,
            keep_quiet=outcome.interrupted and quiet_after_interrupt,
        )
    return outcome


def _check_workers(scheduler: str | None, workers: int) -> None:
    """Refuse a local cluster of more than :data:`WORKERS_PER_CPU` workers per CPU (or
    none): each worker is a process with solver children."""
    most = WORKERS_PER_CPU * (os.cpu_count() or 1)
    if scheduler is None and not 1 <= workers <= most:
        raise InputError(
            f"workers: at most {most} on this machine ({WORKERS_PER_CPU} per CPU), got {workers:,}"
        )


def _tasks_to_do(config: SweepConfig, store: ResultStore) -> tuple[list[Task], SweepOutcome]:
    """The tasks of ``config`` without an answer in ``store`` (a re-run resumes), and the
    outcome counting every task and those skipped."""
    tasks = list(config.tasks())
    done = store.done()
    todo = [t for t in tasks if t.key not in done]
    return todo, SweepOutcome(len(tasks), len(tasks) - len(todo), 0, False)


def _local_cluster(workers: int) -> Any:
    """A Dask ``LocalCluster`` of ``workers`` single-threaded worker processes, its Dask
    logs at error level only."""
    from dask.distributed import LocalCluster

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        # A free port of the system's choosing: Dask's default (8787, which None
        # also means) warns on stderr when another cluster holds it.
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )


def _submitted(client: Any, todo: list[Task]) -> dict[Any, Task]:
    """Each task of ``todo`` submitted to ``client`` under the name ``task-<its key>``:
    its future, mapped to the task (a failed row names the task)."""
    return {
        client.submit(run_task_recording_failure, task, key=f"task-{task.key}", pure=False): task
        for task in todo
    }


def _rows_as_completed(futures: dict[Any, Task]) -> Iterator[dict[str, Any]]:
    """The result rows of ``futures`` in the order they finish. A task whose worker died
    yields a failed row, so the sweep goes on."""
    from dask.distributed import as_completed

    for future in as_completed(futures):
        try:
            row = future.result()
        except Exception as error:  # a worker died: recorded, the sweep goes on
            row = failed_row(futures[future], error)
        yield row


def _record(
    row: dict[str, Any],
    store: ResultStore,
    outcome: SweepOutcome,
    results: str | Path,
    producers: set[Producer],
    allow_mixed: bool,
) -> None:
    """Store ``row`` and count it in ``outcome``; marked mixed when the file then holds
    rows of more than one producer. A Ctrl-C waits until both are done, so the count
    printed matches the rows in the file.

    Raises
    ------
    InputError
        When the row's producer differs from the file's and not ``allow_mixed`` (a remote
        worker running other code).
    """
    producer = Producer(row["version"], row["revision"])
    _check_mixing(results, producers, producer, allow_mixed)
    producers.add(producer)
    row["mixed"] = int(len(producers) > 1)
    with _sigint_blocked():
        store.add(row)
        outcome.failed += row["status"] == FAILED
        outcome.ran += 1


def _end_sweep(
    client: Any,
    cluster: Any,
    store: ResultStore,
    *,
    kill: bool,
    restore_loggers: Callable[[], None],
    keep_quiet: bool,
) -> None:
    """Shut the client and cluster down (at once with ``kill``), close the results file,
    and give the loggers their levels back unless ``keep_quiet``.

    Tearing down a cluster whose tasks were cut off makes Dask and tornado log errors
    about them ("Couldn't gather keys", a cancelled callback's traceback): the sweep has
    stopped on purpose and says so in one line. They may come later still, from the event
    loop's thread, so after an interrupt the command line keeps the loggers quiet
    (``quiet_after_interrupt``: its process is about to end); a caller that goes on (a
    notebook) gets its levels back. A finished sweep closes its cluster gracefully: killing
    idle workers makes the scheduler log a CommClosedError traceback now and then.
    """
    try:
        _shut_down(client, cluster, kill=kill)
        store.close()
    finally:
        if not keep_quiet:
            restore_loggers()


def _check_mixing(
    results: str | Path, stored: set[Producer], adding: Producer, allow_mixed: bool
) -> None:
    """Refuse, in one line naming both, rows of ``adding`` in a file of ``stored`` other code."""
    others = sorted(stored - {adding})
    if others and not allow_mixed:
        raise InputError(
            f"{results}: holds rows produced by {'; '.join(map(str, others))}, the new rows "
            f"by {adding}; give --allow-mixed-versions to add them anyway (marked mixed)"
        )


#: The loggers a sweep keeps quiet while it runs (see :func:`run_sweep`).
_DASK_LOGGERS = ("distributed", "tornado", "asyncio")


def _quiet_loggers(names: Sequence[str]) -> Callable[[], None]:
    """Only critical records from the loggers ``names`` and their descendants from now on;
    returns the call that gives them their levels back.

    A descendant with a level of its own is set too: Dask gives ``tornado.application``
    (where tornado logs a failed callback) and ``distributed.client`` levels of their own,
    so quieting their parents alone leaves them speaking.
    """
    known = logging.Logger.manager.loggerDict
    family = [
        name
        for name, logger in list(known.items())
        if isinstance(logger, logging.Logger) and name.startswith(tuple(f"{n}." for n in names))
    ]
    loggers = [logging.getLogger(name) for name in (*names, *family)]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)

    def restore() -> None:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)

    return restore


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT blocked while the local cluster starts (in the main thread, else nothing).

    Threads and processes started meanwhile inherit the blocked signal, so a Ctrl-C
    reaches this process alone; one pressed meanwhile waits, and is raised here as
    :class:`KeyboardInterrupt` when the block is lifted.
    """
    from multiprocessing import resource_tracker

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # Starting multiprocessing's resource tracker unblocks SIGINT in the thread that starts
    # it (Dask's loop thread, whose threads then start the workers): start it first. It
    # warns when it unlinks the semaphores of workers killed on an interrupt (the cleanup
    # it exists for): that warning is silenced in its process only.
    quiet = "ignore::UserWarning:multiprocessing.resource_tracker"
    sys.warnoptions.append(quiet)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(quiet)
    with _sigint_blocked():
        yield


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread (the main one, else nothing) for the block: a Ctrl-C
    pressed meanwhile is raised as :class:`KeyboardInterrupt` when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _connect(client_class: Any, scheduler: str) -> Any:
    """A client of the scheduler at ``scheduler``; an address that does not work is an
    :class:`InputError` naming it (not a traceback from Dask)."""
    try:
        return client_class(scheduler, timeout=30)
    except (ValueError, TypeError, OSError) as error:
        raise InputError(
            f"scheduler {scheduler!r}: cannot connect ({' '.join(str(error).split())}); "
            "expected an address such as tcp://host:8786"
        ) from None


def _shut_down(client: Any, cluster: Any, kill: bool = True) -> None:
    """Close the client and the local cluster; with ``kill`` (tasks cut off), at once:
    workers still running a task are killed (a MILP may have minutes left; its solver
    children follow their worker)."""
    if client is not None:
        with contextlib.suppress(Exception):
            client.close(timeout=2)
    if cluster is None:
        return
    for nanny in list(cluster.workers.values()) if kill else ():
        # Nanny -> WorkerProcess -> AsyncProcess: the worker's pid (None once it ended).
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        cluster.close(timeout=5)


def load_results(path: str | Path) -> pd.DataFrame:
    """The results file as a DataFrame, one row per task: generator parameters as columns
    (those that vary, and the size), ``command`` (the ``ddlsched generate`` command writing
    the row's instance, byte for byte), and the ratios of :func:`with_ratios`.

    Raises
    ------
    InputError
        If the file is missing or not a results file.
    """
    file = Path(path)
    check_regular_file(file, "SQLite results file")
    _check_ours(file, str(path))
    try:
        # Read-only: reading never creates or changes a file.
        with contextlib.closing(
            sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        ) as connection:
            frame = pd.read_sql_query(
                "SELECT rowid AS row_number, * FROM results ORDER BY finished_at", connection
            )
    except (sqlite3.DatabaseError, pd.errors.DatabaseError) as error:
        reason = str(error).split(": ")[-1]
        raise InputError(f"{path}: not a ddlsched results database ({reason})") from None
    # A file written before provenance was recorded lacks the columns, or holds NULL there.
    for column, missing in (("version", UNKNOWN), ("revision", UNKNOWN), ("mixed", 0)):
        frame[column] = frame[column].fillna(missing) if column in frame else missing
    frame["mixed"] = frame["mixed"].astype(int)
    settings, commands = [], []
    for row in frame.itertuples():
        where = f"{path}: row {row.row_number} (key {row.key})"
        one, config = _row_settings(row.params, where)
        seed = _row_seed(row.seed, where)
        settings.append(one)
        commands.append(generate_command(config, seed, f"seed{seed}.json"))
    frame = frame.drop(columns=["row_number"])
    frame["command"] = commands
    params = pd.json_normalize(settings)
    shown = {"num_jobs", "servers", "gpus_per_server"} | {
        c for c in params.columns if params[c].astype(str).nunique() > 1
    }
    columns = [c for c in params.columns if c in shown]
    return with_ratios(pd.concat([frame.drop(columns=["params"]), params[columns]], axis=1))


def _row_settings(text: Any, where: str) -> tuple[dict[str, Any], GeneratorConfig]:
    """A row's ``params`` cell read: the generator settings and their configuration.

    Raises
    ------
    InputError
        Naming ``where`` (the file, row and key) and ``params``: a cell that is empty, not
        JSON, not an object, or settings the generator refuses.
    """
    if text is None or (isinstance(text, float) and math.isnan(text)):  # NULL
        raise InputError(f"{where}: params: empty (expected the generator settings as JSON)")
    if not isinstance(text, str):
        raise InputError(f"{where}: params: expected JSON text, got {text!r:.60}")
    try:
        settings = json.loads(text)
    except ValueError as error:
        raise InputError(f"{where}: params: not JSON ({error})") from None
    if not isinstance(settings, dict):
        raise InputError(
            f"{where}: params: expected a JSON object of generator settings, got a "
            f"{_json_kind(settings)}"
        )
    known = {field.name for field in dataclasses.fields(GeneratorConfig)}
    unknown = sorted(name for name in settings if name not in known)
    if unknown:
        raise InputError(f"{where}: params: {unknown[0]}: not a generator setting")
    try:
        return settings, GeneratorConfig(**with_tuples(settings))
    except (ValueError, TypeError) as error:
        raise InputError(f"{where}: params: {' '.join(str(error).split())}") from None


def _json_kind(value: Any) -> str:
    """The JSON name of ``value``'s type (``list``, ``string``, ``number``, ...)."""
    kinds = ((list, "list"), (str, "string"), (bool, "boolean"), (int | float, "number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def _row_seed(value: Any, where: str) -> int:
    """A row's ``seed`` cell as an int.

    Raises
    ------
    InputError
        Naming ``where`` and ``seed`` when it is not a whole number from 0 to 2^63 - 1.
    """
    whole = isinstance(value, float) and value.is_integer()
    if not (is_whole(value) or whole) or not 0 <= value < 2**63:
        raise InputError(f"{where}: seed: expected a whole number >= 0, got {value!r}")
    return int(value)


def invalid_numbers(objective: Any, bound: Any) -> str:
    """Why a row's ``objective`` and ``best_bound`` cannot be ratios, or ``""`` when they
    can: each, when recorded (not NULL), must be a finite number > 0, and the bound (a
    lower bound on the objective) at most the objective."""
    values = {}
    for name, value in (("objective", objective), ("bound", bound)):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            return f"{name} {value!r:.40} is not a number"
        if not (math.isfinite(number) and number > 0):
            return f"{name} {number:g} is not a finite number > 0"
        values[name] = number
    if len(values) == 2 and values["bound"] > values["objective"] * (1 + 1e-9):
        return f"bound {values['bound']:g} is above the objective {values['objective']:g}"
    return ""


def with_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with, per row, ``opt`` (the instance's proven optimum of problem A: the
    objective of a row of the same instance, any method, with status ``optimal``),
    ``bound``, ``C/OPT`` and ``C/LB`` (an upper bound on the ratio to the optimum of the
    row's model); ``nan`` where unknown. An instance is a ``command``.

    ``bound`` is the largest proven lower bound any row of the instance recorded, except
    on a row of a preemptive policy
    (:data:`~ddlsched.algorithms.registry.PREEMPTIVE_POLICIES`): a preemptive schedule
    may beat ``OPT(A)``, so its ``bound`` is the largest recorded by the instance's
    preemptive rows, whose ``best_bound`` is the best fast bound
    (:func:`~ddlsched.formulations.certify.combinatorial_bound`, the bounds of
    :data:`~ddlsched.formulations.lower_bounds.PREEMPTIVE_BOUNDS`). Its ``C/OPT`` is
    still the ratio to ``OPT(A)`` and may be below 1.

    ``invalid`` says why a row's numbers cannot be ratios (:func:`invalid_numbers`: an
    objective or bound that is not a finite number > 0, a bound above the objective), ``""``
    when they can: an invalid row has no ratio and gives no optimum nor bound to the
    other rows of its instance."""
    from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES

    invalid = pd.Series(
        [
            invalid_numbers(objective, bound)
            for objective, bound in zip(frame["objective"], frame["best_bound"], strict=True)
        ],
        index=frame.index,
        dtype=object,
    )
    valid = invalid == ""
    objective = pd.to_numeric(frame["objective"], errors="coerce").where(valid)
    numbers = frame.assign(objective=objective, best_bound=pd.to_numeric(
        frame["best_bound"], errors="coerce").where(valid))  # fmt: skip
    preemptive = frame["method"].isin(PREEMPTIVE_POLICIES)
    proven = numbers[numbers["status"] == "optimal"].groupby("command")["objective"].min()
    bound = numbers.groupby("command")["best_bound"].max()
    relaxed = numbers[preemptive].groupby("command")["best_bound"].max()
    out = frame.assign(
        invalid=invalid,
        opt=frame["command"].map(proven).astype(float),
        bound=frame["command"]
        .map(bound)
        .astype(float)
        .where(~preemptive, frame["command"].map(relaxed).astype(float)),
    )
    out["C/OPT"] = objective / out["opt"]
    out["C/LB"] = objective / out["bound"].where(out["bound"] > 0)
    return out


def producers(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per version and revision that produced rows of ``frame``
    (:func:`load_results`): how many rows, how many of them added as mixed.

    ``ddlsched results`` prints this table above the summary.
    """
    return (
        frame.groupby(["version", "revision"])
        .agg(rows=("key", "count"), mixed=("mixed", "sum"))
        .reset_index()
    )


GRID_KEYS = ("method", "num_jobs", "servers", "gpus_per_server", "load")
"""The columns :func:`summarise` groups by first (those present)."""

RESULT_COLUMNS = frozenset(COLUMNS) | {"command", "invalid", "opt", "bound", "C/OPT", "C/LB"}
"""Columns of :func:`load_results`'s frame that are not generator settings."""


def grid_settings(frame: pd.DataFrame) -> list[str]:
    """The generator settings that tell the grid points of ``frame`` apart: those of
    :data:`GRID_KEYS` present, then every other setting column (:func:`load_results` keeps
    the settings that vary)."""
    known = [c for c in GRID_KEYS[1:] if c in frame.columns]
    return known + [c for c in frame.columns if c not in RESULT_COLUMNS and c not in known]


def _hashable(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with list or dict cells of ``columns`` as JSON text, so they can be grouped."""
    return frame.assign(
        **{
            c: frame[c].map(lambda v: json.dumps(v) if isinstance(v, list | dict) else v)
            for c in columns
        }
    )


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per method and grid point (the :func:`grid_settings` of ``frame``): tasks,
    verified, proven optimal, failed, invalid (rows whose numbers cannot be ratios, see
    :func:`with_ratios`: left out of every mean), the mean objective, the ratios to the
    optimum and to the bound (mean, standard deviation and worst over the grid point's
    instances), mean runtime, and the versions that produced them (``version@revision``,
    revisions cut to 12 digits).

    ``ddlsched results`` prints this table.
    """
    settings = grid_settings(frame)
    producer = frame["version"] + "@" + frame["revision"].str.slice(0, 12)
    return (
        _hashable(frame, settings)
        .assign(
            producer=producer,
            objective=pd.to_numeric(frame["objective"], errors="coerce").where(
                frame["invalid"] == ""
            ),
        )
        .groupby(["method", *settings], dropna=False)
        .agg(
            tasks=("key", "count"),
            verified=("verified", "sum"),
            optimal=("status", lambda s: int((s == "optimal").sum())),
            failed=("status", lambda s: int((s == FAILED).sum())),
            invalid=("invalid", lambda s: int((s != "").sum())),
            mean_objective=("objective", "mean"),
            **{
                f"{ratio} {name}": (ratio, how)
                for ratio in ("C/OPT", "C/LB")
                for name, how in (("mean", "mean"), ("sd", "std"), ("worst", "max"))
            },
            mean_runtime_s=("runtime_s", "mean"),
            produced_by=("producer", lambda s: ", ".join(sorted(set(s)))),
        )
        .reset_index()
    )


def ratio_samples(frame: pd.DataFrame, ratio: str) -> dict[str, list[float]]:
    """Per method (and grid point, when there are several), the finite values of the
    column ``ratio`` (``C/OPT`` or ``C/LB``) of :func:`load_results`'s frame: what
    ``results --plot`` draws."""
    varying = [c for c in grid_settings(frame) if frame[c].astype(str).nunique() > 1]
    samples: dict[str, list[float]] = {}
    grouped = _hashable(frame, varying).groupby(["method", *varying], dropna=False, sort=False)
    for group, rows in grouped:
        values = [float(v) for v in rows[ratio] if math.isfinite(v)]
        if not values:
            continue
        parts = group if isinstance(group, tuple) else (group,)
        label = " ".join(
            [str(parts[0]), *(f"{k}={v}" for k, v in zip(varying, parts[1:], strict=True))]
        )
        samples[label] = values
    return samples
