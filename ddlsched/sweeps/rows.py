"""A task run on a worker, and the result row it gives (one per task, success or failure)."""

from __future__ import annotations

import json
import time
from typing import TypeAlias

from ddlsched.api import exact_method_names, solve
from ddlsched.core.generators import GeneratorConfig, with_tuples
from ddlsched.core.params import ExactParams, OnlineParams
from ddlsched.provenance import current_producer
from ddlsched.sweeps.config import Task
from ddlsched.sweeps.schema import SCHEMA_VERSION, columns_at

Cell: TypeAlias = str | int | float | None
"""A value SQLite stores in a results row."""

Row: TypeAlias = dict[str, Cell]
"""A results row: a value (or ``None``, NULL) for each of :data:`COLUMNS`."""

COLUMNS = columns_at(SCHEMA_VERSION)
"""The columns of a results row: those of the results table at the latest schema."""

FAILED = "failed"
"""The status of a task that raised: its row keeps the message; a re-run retries it."""


def run_task_recording_failure(task: Task) -> Row:
    """:func:`run_task`, with an exception turned into a failed row (on the worker)."""
    try:
        return run_task(task)
    except Exception as error:
        return failed_row(task, error)


def run_task(task: Task) -> Row:
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


def failed_row(task: Task, error: BaseException) -> Row:
    """The result row of a task that raised ``error`` (a worker's crash included)."""
    message = " ".join(f"{type(error).__name__}: {error}".split())[:2000]
    return _row(task, status=FAILED, verified=0, message=message)


def _row(task: Task, **values: Cell) -> Row:
    """A row of :data:`COLUMNS`: the task's identity, ``values``, unknowns as NULL."""
    producer = current_producer()
    row: Row = dict.fromkeys(COLUMNS)
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
