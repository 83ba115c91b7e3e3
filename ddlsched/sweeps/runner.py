"""Running a sweep on Dask: the tasks not yet stored, submitted, their rows stored as they
finish; Ctrl-C stops it with every stored row kept."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ddlsched.core.model import InputError
from ddlsched.provenance import Producer, current_producer
from ddlsched.sweeps.cluster import (
    DASK_LOGGERS,
    connect,
    interrupts_held,
    local_cluster,
    quiet_loggers,
    shut_down,
    sigint_blocked,
)
from ddlsched.sweeps.config import SweepConfig, Task
from ddlsched.sweeps.rows import FAILED, Row, failed_row, run_task_recording_failure
from ddlsched.sweeps.store import ResultStore

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

WORKERS_PER_CPU = 4
"""Most local workers per CPU (``--workers``): each is a process, with solver children."""


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
        The SQLite file (created if missing, migrated if older).
    scheduler
        Address of a running Dask scheduler; ``None`` starts a local cluster
        of ``workers`` single-threaded worker processes.
    progress
        Called as ``progress(done, to_do)``.
    allow_mixed
        Add rows to a file that holds rows of other code (another version or git
        revision), marked ``mixed = 1``; without it, such a file is refused.
    quiet_after_interrupt
        After a Ctrl-C, leave Dask's and tornado's loggers quiet (for a process about to
        end); by default their levels come back, as after a finished sweep.

    Ctrl-C stops the sweep: the rows stored so far are kept, ``interrupted``
    is set, the local cluster is shut down. Its workers are started with SIGINT
    blocked (a Ctrl-C would end each with a traceback), and end when this process
    ends, ``kill -9`` included (Dask's workers watch their parent).

    Raises
    ------
    InputError
        On more than :data:`WORKERS_PER_CPU` workers per CPU, a scheduler address that
        does not connect, a results file that cannot be used, or one that holds rows of
        other code (without ``allow_mixed``; also when a remote worker runs other code).
    """
    from ddlsched.core.extras import require

    require("dask.distributed", "sweeps")  # the [sweep] extra, named on a miss
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
    recorder = Recorder(store, outcome, str(results), producers, allow_mixed)
    _run_on_dask(todo, recorder, scheduler, workers, progress, quiet_after_interrupt)
    return outcome


def _run_on_dask(
    todo: list[Task],
    recorder: Recorder,
    scheduler: str | None,
    workers: int,
    progress: Callable[[int, int], None] | None,
    quiet_after_interrupt: bool,
) -> None:
    """Run ``todo`` on a local cluster or at ``scheduler``, each row to ``recorder``.

    Dask's and tornado's loggers are quiet for the whole run, not only once an interrupt
    is handled: a Ctrl-C that lands while the main thread waits in Dask's ``sync`` makes
    the event loop's thread log the cancelled callback at once, before the ``except``
    below runs. Every task's failure is recorded in its row, so nothing of the sweep's
    own is lost; the levels come back when the sweep ends (unless
    ``quiet_after_interrupt``).
    """
    from dask.distributed import Client

    outcome = recorder.outcome
    cluster: LocalCluster | None = None
    client: Client | None = None
    restore_loggers = quiet_loggers(DASK_LOGGERS)
    try:
        if scheduler is None:
            with interrupts_held():
                cluster = local_cluster(workers)
            client = Client(cluster)
        else:
            client = connect(scheduler)
        for row in _rows_as_completed(_submitted(client, todo)):
            recorder.record(row)
            if progress is not None:
                progress(outcome.ran, len(todo))
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        try:
            shut_down(client, cluster, kill=outcome.interrupted or outcome.ran < len(todo))
            recorder.store.close()
        finally:
            if not (outcome.interrupted and quiet_after_interrupt):
                restore_loggers()


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


def _submitted(client: Client, todo: list[Task]) -> dict[Future, Task]:
    """Each task of ``todo`` submitted to ``client`` under the name ``task-<its key>``:
    its future, mapped to the task (a failed row names the task)."""
    return {
        client.submit(run_task_recording_failure, task, key=f"task-{task.key}", pure=False): task
        for task in todo
    }


def _rows_as_completed(futures: dict[Future, Task]) -> Iterator[Row]:
    """The result rows of ``futures`` in the order they finish. A task whose worker died
    yields a failed row, so the sweep goes on."""
    from dask.distributed import as_completed

    for future in as_completed(futures):
        try:
            row: Row = future.result()
        except Exception as error:  # a worker died: recorded, the sweep goes on
            row = failed_row(futures[future], error)
        yield row


@dataclass
class Recorder:
    """Stores rows in ``store`` and counts them in ``outcome``, refusing rows of other code
    than the file's (``producers``) unless ``allow_mixed``."""

    store: ResultStore
    outcome: SweepOutcome
    results: str
    producers: set[Producer]
    allow_mixed: bool

    def record(self, row: Row) -> None:
        """Store ``row`` and count it; marked mixed when the file then holds rows of more
        than one producer. A Ctrl-C waits until both are done, so the count printed
        matches the rows in the file.

        Raises
        ------
        InputError
            When the row's producer differs from the file's and not ``allow_mixed`` (a
            remote worker running other code).
        """
        producer = Producer(str(row["version"]), str(row["revision"]))
        _check_mixing(self.results, self.producers, producer, self.allow_mixed)
        self.producers.add(producer)
        row["mixed"] = int(len(self.producers) > 1)
        with sigint_blocked():
            self.store.add(row)
            self.outcome.failed += row["status"] == FAILED
            self.outcome.ran += 1


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
