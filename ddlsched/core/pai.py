"""Reader of Alibaba's PAI 2020 GPU trace (``cluster-trace-gpu-v2020`` of
alibaba/clusterdata).

The trace of Weng et al., *MLaaS in the Wild: Workload Analysis and Scheduling in
Large-Scale Heterogeneous GPU Clusters* (NSDI 2022): tables without a header row (the
columns are in ``.header`` files beside them; a first row naming the columns is also
accepted), joined by ``job_name``:

- ``pai_job_table.csv``: ``job_name, inst_id, user, status, start_time, end_time``
  (``start_time`` is the submission; times in seconds from a shifted origin);
- ``pai_task_table.csv`` (beside it): ``job_name, task_name, inst_num, status,
  start_time, end_time, plan_cpu, plan_mem, plan_gpu, gpu_type``, ``plan_gpu`` in
  percent of a GPU per instance (50 is half a GPU).

A job becomes a row *(choices)*:

- *GPUs*: the sum over its tasks of ``inst_num`` instances of ``plan_gpu / 100`` GPUs
  each. A fractional share (50) follows the fractional rule of
  :mod:`ddlsched.core.trace_formats`: refused by default; ``ceil`` gives each instance
  whole GPUs (an instance is its own container, possibly on its own machine, so two
  half-GPU instances take two GPUs); ``drop`` leaves the job out;
- *duration*: from its first task's launch to its last task's end (tasks with a time
  of 0, never launched, aside);
- *features*: ``user``, ``trace_state`` (``status``: Terminated, Failed, Running,
  Waiting; only Terminated jobs succeeded), ``gpu_type`` (of its GPU tasks: MISC, T4,
  P100, V100, ...; several joined by ``+``);
- *left out*: a job with no GPU (``"cpu-only"``), no task in the task table or none
  that launched and ended (``"no run"``).

``pai_instance_table.csv`` (2 GB: each instance's machine and times) is not read: the
task table already gives each job's instances, GPUs and run; this project's replay
places jobs itself.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ddlsched.core.model import MAX_TIME, InputError
from ddlsched.core.trace_formats import (
    LeftOutRow,
    RowsRead,
    StateFilter,
    TraceFormat,
    TraceRow,
    gpu_count,
)

JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
"""The columns of ``pai_job_table.csv``, in order."""

TASK_COLUMNS = (
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
)
"""The columns of ``pai_task_table.csv``, in order."""

PAI2020 = TraceFormat(
    "pai2020",
    JOB_COLUMNS,
    (
        ("id", "job_name"),
        ("user", "user"),
        ("state", "status"),
        ("submit", "start_time"),
        ("duration", "start_time"),
        ("gpus", "plan_gpu"),
    ),
)
"""The PAI 2020 tables: the column each field is read from."""


@dataclass
class _Tasks:
    """A job's tasks as read: GPUs, first launch, last end, GPU types, and the first
    fractional share left out under ``drop`` (``(task line, value)``)."""

    gpus: int = 0
    first: float = math.inf
    last: float = -math.inf
    types: set[str] = field(default_factory=set)
    dropped: tuple[int, str] | None = None


def read_pai(job_file: Path, keep: StateFilter, fractional: str, unit: float) -> RowsRead:
    """Every job of a PAI job table as a row (see the module docstring), its tasks read
    from ``pai_task_table.csv`` beside it; ``keep`` the states kept, ``fractional`` the
    rule for a fractional GPU share, ``unit`` the seconds of a time unit.

    Raises
    ------
    InputError
        A missing task table, or a bad field naming the file, line and column.
    """
    where = os.fspath(job_file)
    task_file = job_file.with_name(job_file.name.replace("job", "task", 1))
    if task_file == job_file or not task_file.is_file():
        raise InputError(
            f"{where}: no PAI task table {task_file.name} beside it (it gives each job's "
            "GPUs and run)"
        )
    tasks = _read_tasks(task_file, fractional, unit)
    task_where = os.fspath(task_file)
    rows = []
    for line, cells in _table(job_file, JOB_COLUMNS):
        name, state = cells["job_name"], cells["status"] or None
        job = tasks.get(name)
        rows.append(
            TraceRow(
                line=line,
                submit=_seconds(cells["start_time"], "start_time", where, line, unit),
                duration=0.0 if job is None else max(0.0, job.last - job.first),
                gpus=0 if job is None else job.gpus,
                id=name,
                user=cells["user"] or None,
                state=state,
                extra=(("gpu_type", "+".join(sorted(job.types))),) if job and job.types else (),
                left_out=keep.left_out(state, line, "status") or _left_out(job, line, task_where),
            )
        )
    return RowsRead(PAI2020, rows, keep.states)


def _left_out(job: _Tasks | None, line: int, task_where: str) -> LeftOutRow | None:
    """Why a job with these tasks is left out (no task, none that ran, a dropped
    fractional share, no GPU), or ``None``."""
    if job is None or job.first > job.last:
        reason = (
            f"no task in {task_where}"
            if job is None
            else f"no task of the job both launched and ended in {task_where}"
        )
        return LeftOutRow(line, "job_name", "", "no run", reason)
    if job.dropped is not None:
        task_line, value = job.dropped
        reason = (
            f"{value} GPUs per instance is fractional ({task_where}:{task_line}; job left "
            "out: --fractional drop)"
        )
        return LeftOutRow(line, "plan_gpu", value, "fractional", reason)
    if job.gpus == 0:
        return LeftOutRow(line, "plan_gpu", "0", "cpu-only", "no GPU asked (a CPU job, left out)")
    return None


def _read_tasks(task_file: Path, fractional: str, unit: float) -> dict[str, _Tasks]:
    """Each job's tasks, summed (see :class:`_Tasks`)."""
    where = os.fspath(task_file)
    jobs: dict[str, _Tasks] = {}
    for line, cells in _table(task_file, TASK_COLUMNS):
        job = jobs.setdefault(cells["job_name"], _Tasks())
        instances = _number(cells["inst_num"], "inst_num", where, line)
        if not (instances >= 0 and instances == int(instances)):
            raise InputError(
                f"{where}:{line}: inst_num: expected a whole number >= 0, got "
                f"{cells['inst_num']!r}"
            )
        share = _number(cells["plan_gpu"] or "0", "plan_gpu", where, line) / 100
        per_instance, left_out = gpu_count(share, fractional, f"{where}:{line}", "plan_gpu", line)
        if left_out is not None and left_out.kind == "fractional" and job.dropped is None:
            job.dropped = (line, left_out.value)
        job.gpus += per_instance * int(instances)
        if per_instance and cells["gpu_type"]:
            job.types.add(cells["gpu_type"])
        start = _seconds(cells["start_time"] or "0", "start_time", where, line, unit)
        end = _seconds(cells["end_time"] or "0", "end_time", where, line, unit)
        if start > 0 and end > 0:  # a time of 0 is a task that never launched
            job.first, job.last = min(job.first, start), max(job.last, end)
    return jobs


def _table(file: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """Each record of a PAI table by line (a first row naming ``columns`` skipped).

    Raises
    ------
    InputError
        A file that is not UTF-8 CSV, or a record with another number of fields.
    """
    where = os.fspath(file)
    try:
        with file.open(newline="", encoding="utf-8-sig") as stream:
            reader = csv.reader(stream)
            for record in reader:
                line = reader.line_num
                cells = [cell.strip() for cell in record]
                if not any(cells) or (line == 1 and tuple(cells) == columns):
                    continue
                if len(cells) != len(columns):
                    raise InputError(
                        f"{where}:{line}: {len(cells)} fields, a {file.name} record has "
                        f"{len(columns)} ({', '.join(columns)})"
                    )
                yield line, dict(zip(columns, cells, strict=True))
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: not UTF-8 text (byte {error.start}: {error.reason})") from None
    except csv.Error as error:
        raise InputError(f"{where}: not a CSV file ({error})") from None


def _number(text: str, column: str, where: str, line: int) -> float:
    """``text`` as a finite number, or an error naming the file, line and column."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}:{line}: {column}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{where}:{line}: {column}: not finite: {text!r}")
    return value


def _seconds(text: str, column: str, where: str, line: int, unit: float) -> float:
    """A time of ``unit`` seconds, within the model's limit."""
    seconds = _number(text, column, where, line) * unit
    if abs(seconds) > MAX_TIME:
        raise InputError(f"{where}:{line}: {column}: {text} is beyond the limit of {MAX_TIME:g}")
    return seconds
