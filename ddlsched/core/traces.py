"""Loaders for real cluster traces (the shipped ones: :mod:`ddlsched.core.data`).

A file is recognised by its columns (any other CSV loads through a column
mapping, :func:`parse_columns`; :func:`read_rows` types every row):

============  ==========================================================  ============
format        columns used                                                times in
============  ==========================================================  ============
``philly``    timestamp, duration, num_gpus (+ cluster: user and vc)      dates, seconds
``muri``      job_id, num_gpu, submit_time, iterations, model_name,       microseconds
              duration, iteration_time (+ batch_size)
``tiresias``  job_id, num_gpu, submit_time, iterations, model_name,       seconds
              duration
``helios``    job_id, user, vc, gpu_num, state, submit_time, duration      dates, seconds
``acme``      job_id, user, gpu_num, type, state, submit_time, duration    dates, seconds
``minimal``   a submit time, a duration and a GPU count under common      seconds
              names (:data:`MINIMAL_NAMES`)
============  ==========================================================  ============

Two formats are not one CSV file: Microsoft's raw Philly log (``philly-raw``, one
JSON list of jobs with their attempts: :mod:`ddlsched.core.philly_raw`) and Alibaba's
PAI 2020 tables (``pai2020``, job and task tables joined by job name:
:mod:`ddlsched.core.pai`). Every format can be named (:data:`FORMAT_NAMES`) instead of
recognised; the rules every reader shares (time zones, states, CPU-only rows,
fractional GPUs) are in :mod:`ddlsched.core.trace_formats`, and
``docs/guide/trace_formats.md`` says where each trace comes from and what is left out.

Sources: the Microsoft Philly trace (Jeon et al., USENIX ATC 2019; CC BY
4.0) as preprocessed by the Pollux artifact; the Muri job lists (Zhao et
al., *Multi-Resource Interleaving for Deep Learning Training*, SIGCOMM
2022; Apache-2.0); Tiresias's 60-job workload (Gu et al., NSDI 2019;
Apache-2.0).

**Row to job** *(choices, documented here and in the README)*:

1. *Model*: the row's model name matched to the zoo by
   :func:`match_model` (normalised, then :data:`MODEL_ALIASES`: ``vgg19``
   -> ``vgg16``, ``dqn`` -> ``rl_atari``, ...); a row naming no known model
   (every Philly row) follows the ``unnamed`` rule of :func:`load_trace`.
   The original name is kept as feature ``trace_model``, the recorded
   duration as ``trace_duration``.
2. *Parallelism*: tensor parallelism of the largest power of two that
   divides the GPU count, is at most the model's ``max_tp`` and fits one
   server; the rest data parallel (``pp = 1``). So CNNs are pure data
   parallel and the transformer LMs get tensor groups.
3. *Times*: release = submit time minus the first submit time. The trace's
   duration ``D`` is taken as the run time under the *packed* mapping (nodes
   filling servers in index order, as a consolidating scheduler places
   them). Iterations ``K``: the file's, or ``round(D / alpha_packed)`` from
   the zoo's times. The zoo's compute time and traffic are then scaled by
   one factor so that ``K * alpha_packed = D`` exactly: the job keeps its
   model's shape (communication to compute) and the trace's duration.
4. Rows with a non-positive duration are skipped; jobs wider than the
   cluster are dropped unless the caller asks for an error; rows the reader
   leaves out (a state not kept, no GPU, a fractional count dropped, no recorded
   run) are left out too. All are counted and named (:class:`LeftOutRow`: line,
   column, why), among the rows read up to the last job kept when a ``limit``
   leaves jobs out (else all rows).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ddlsched.core.alpha import alpha
from ddlsched.core.data import resolve_trace
from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import (
    MAX_GPUS,
    MAX_ITERATIONS,
    MAX_TIME,
    Cluster,
    InputError,
    Instance,
    Job,
    Parallelism,
    Schedule,
    is_whole,
)
from ddlsched.core.trace_check import TraceCheck, check_rows
from ddlsched.core.trace_formats import (
    FRACTIONAL_RULES,
    LEFT_OUT_KINDS,
    FeatureValue,
    LeftOutRow,
    Moments,
    RowsRead,
    StateFilter,
    TraceFormat,
    TraceRow,
    check_fractional,
    gpu_count,
    parse_states,
)
from ddlsched.core.zoo import DRAWN_MODELS, ZOO, ModelProfile, type_compute_times

MODEL_ALIASES = {
    "resnet50": "resnet50",
    "resnet": "resnet50",
    "resnet101": "resnet50",
    "resnet152": "resnet50",
    "inception": "resnet50",
    "vgg": "vgg16",
    "vgg16": "vgg16",
    "alexnet": "vgg16",
    "bert": "bert_base",
    "bertbase": "bert_base",
    "gpt2": "gpt2",
    "gpt2small": "gpt2",
    "gpt2xl": "gpt2_xl",
    "gpt": "gpt2",
    "transformer": "gpt2",
    "lm": "gpt2",
    "megatron": "megatron_8b",
    "megatron8b": "megatron_8b",
    "deepspeech": "deepspeech2",
    "deepspeech2": "deepspeech2",
    "lstm": "deepspeech2",
    "yolo": "yolov3",
    "yolov3": "yolov3",
    "resnet18": "resnet18_cifar10",
    "cifar10": "resnet18_cifar10",
    "resnet18cifar10": "resnet18_cifar10",
    "shufflenet": "resnet18_cifar10",
    "mobilenet": "resnet18_cifar10",
    "googlenet": "resnet18_cifar10",
    "dqn": "rl_atari",
    "a2c": "rl_atari",
    "a3c": "rl_atari",
    "ppo": "rl_atari",
    "rl": "rl_atari",
}
"""Normalised trace model names to zoo models (see :func:`match_model`)."""


_KNOWN_NAMES = {"".join(ch for ch in name if ch.isalnum()): name for name in ZOO} | MODEL_ALIASES
"""Normalised names (zoo keys without separators, and the aliases) to zoo models."""


def match_model(name: str) -> str | None:
    """The zoo model a trace's model name stands for, or ``None``.

    Tried in order, each lower-cased with separators removed: the name; the
    name with trailing ``_``/``-`` parts dropped one at a time
    (``shufflenet_v2_x1_0`` -> ``shufflenet``); the name without trailing
    digits (``vgg19`` -> ``vgg``, ``inception4`` -> ``inception``). Each is
    looked up in the zoo and in :data:`MODEL_ALIASES`.
    """
    text = name.strip().lower()
    if not text:
        return None
    parts = [p for p in text.replace("-", "_").split("_") if p]
    candidates = ["".join(parts[:k]) for k in range(len(parts), 0, -1)]
    candidates += [c.rstrip("0123456789") for c in candidates]
    return next((_KNOWN_NAMES[c] for c in candidates if c in _KNOWN_NAMES), None)


UNNAMED_RULES = ("data-parallel", "zoo-data-parallel", "zoo")
"""How rows without a (known) model become jobs (see :func:`load_trace`); the first is
:func:`load_trace`'s default (``simulate``, ``bound``), :func:`trace_sample` draws
``zoo-data-parallel`` by default (``generate`` and ``compare --from-trace``)."""

DATA_PARALLEL_MODEL = "resnet50"
"""The profile of the ``data-parallel`` rule: measured compute (Pollux), data
parallel at every GPU count, and a gradient volume (102 MB) whose all-reduce
is small against its compute inside a server."""

FIELDS = (
    "submit",
    "duration",
    "gpus",
    "id",
    "model",
    "iterations",
    "batch_size",
    "user",
    "vc",
    "state",
    "type",
)
"""The fields a trace row can give; the first three are required (``vc``: the virtual
cluster, ``state``: the job's final state, ``type``: its kind of workload)."""

TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "min": 60.0, "h": 3600.0}
"""Time units of the numeric columns, in seconds."""


class UnknownTraceColumns(InputError):
    """A file whose columns match no trace format (the message names what is missing)."""


_LIST_COLUMNS = (
    ("id", "job_id"),
    ("gpus", "num_gpu"),
    ("submit", "submit_time"),
    ("iterations", "iterations"),
    ("model", "model_name"),
    ("duration", "duration"),
    ("batch_size", "batch_size"),
)

FORMATS = (
    TraceFormat(
        "muri",
        (
            "job_id",
            "num_gpu",
            "submit_time",
            "iterations",
            "model_name",
            "duration",
            "iteration_time",
        ),
        _LIST_COLUMNS,
        1e-6,
    ),
    TraceFormat(
        "tiresias",
        ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration"),
        _LIST_COLUMNS,
    ),
    TraceFormat(
        "philly",
        ("timestamp", "duration", "num_gpus"),
        (
            ("submit", "timestamp"),
            ("duration", "duration"),
            ("gpus", "num_gpus"),
            ("user", "cluster"),
            ("vc", "cluster"),
        ),
        dates=True,
    ),
    TraceFormat(
        "helios",
        ("job_id", "user", "vc", "gpu_num", "state", "submit_time", "duration"),
        (
            ("id", "job_id"),
            ("user", "user"),
            ("vc", "vc"),
            ("gpus", "gpu_num"),
            ("state", "state"),
            ("submit", "submit_time"),
            ("duration", "duration"),
        ),
        dates=True,
    ),
    TraceFormat(
        "acme",
        ("job_id", "user", "gpu_num", "type", "state", "submit_time", "duration"),
        (
            ("id", "job_id"),
            ("user", "user"),
            ("gpus", "gpu_num"),
            ("type", "type"),
            ("state", "state"),
            ("submit", "submit_time"),
            ("duration", "duration"),
        ),
        dates=True,
    ),
)
"""The CSV formats recognised by their columns: the shared data's traces, and Helios
(Hu et al., SC'21: ``cluster_log.csv`` of HeliosData) and Acme (Hu et al., NSDI'24:
``trace_seren.csv`` and ``trace_kalos.csv`` of AcmeTrace)."""

FORMAT_NAMES = (*(fmt.name for fmt in FORMATS), "philly-raw", "pai2020", "minimal")
"""Every format a trace can be read in, by the name ``--format`` takes."""

MINIMAL_NAMES = {
    "submit": (
        "submit_time",
        "submit",
        "submission_time",
        "arrival_time",
        "arrival",
        "start_time",
    ),
    "duration": ("duration", "runtime", "run_time", "duration_s"),
    "gpus": ("num_gpus", "num_gpu", "gpus", "gpu_num", "n_gpus"),
    "id": ("job_id", "id", "jobid", "name"),
    "model": ("model_name", "model"),
    "iterations": ("iterations", "iters", "num_iterations"),
    "batch_size": ("batch_size", "batch"),
    "user": ("user", "user_id", "cluster", "vc"),
    "vc": ("vc", "virtual_cluster"),
    "state": ("state", "status"),
}
"""The *minimal* format: submit time and duration in seconds and a GPU count
(ElasticFlow's traces, many simulators' inputs), under any of these column
names; the optional fields too."""


def _named_columns(header: list[str]) -> dict[str, str]:
    """Field to the first column of ``header`` with one of its minimal-format names."""
    present = {column.strip().lower(): column for column in header}
    found = {}
    for name, candidates in MINIMAL_NAMES.items():
        column = next((present[n] for n in candidates if n in present), None)
        if column is not None:
            found[name] = column
    return found


def _named_format(columns: list[str], path: str, name: str) -> TraceFormat:
    """The CSV format ``name`` over ``columns``, refused naming the columns it lacks."""
    if name == "minimal":
        minimal = minimal_format(columns)
        if minimal is None:
            raise UnknownTraceColumns(
                f"{path}: the minimal format needs a submit time, duration and GPU count "
                f"(columns found: {', '.join(columns) or 'none'})"
            )
        return minimal
    fmt = next((f for f in FORMATS if f.name == name), None)
    if fmt is None:
        raise InputError(f"format: expected one of {', '.join(FORMAT_NAMES)}, got {name!r}")
    missing = [column for column in fmt.detect if column not in columns]
    if missing:
        raise UnknownTraceColumns(
            f"{path}: not in the {name} format: no column {', '.join(missing)} (columns found: "
            f"{', '.join(columns) or 'none'})"
        )
    return fmt


def minimal_format(header: list[str]) -> TraceFormat | None:
    """The minimal format over ``header``, or ``None`` if a required field has no column."""
    columns = _named_columns(header)
    if {"submit", "duration", "gpus"} <= set(columns):
        return TraceFormat("minimal", (), tuple(columns.items()))
    return None


def parse_columns(text: str) -> dict[str, str]:
    """``"submit=submission_time,gpus=num_gpu"`` as a dict, fields checked.

    Raises
    ------
    InputError
        Naming the part that is not ``FIELD=COLUMN``, the unknown field, or
        a field mapped twice.
    """
    mapping: dict[str, str] = {}
    for part in text.split(","):
        field, sep, column = part.partition("=")
        field, column = field.strip(), column.strip()
        if not sep or not field or not column:
            raise InputError(f"columns: {part!r} is not FIELD=COLUMN")
        if field not in FIELDS:
            raise InputError(f"columns: unknown field {field!r} (fields: {', '.join(FIELDS)})")
        if field in mapping:
            raise InputError(
                f"columns: field {field!r} mapped twice ({field}={mapping[field]} and "
                f"{field}={column}); give each field one column"
            )
        mapping[field] = column
    return mapping


def detect_format(
    columns: list[str],
    path: str = "trace",
    mapping: dict[str, str] | None = None,
    name: str | None = None,
) -> TraceFormat:
    """The format of a file with these columns.

    With ``mapping`` (field to column, see :func:`parse_columns`) the file
    is read as the minimal format with those columns; with ``name`` (one of
    :data:`FORMATS`, or ``"minimal"``) as that format, its columns checked; otherwise
    the first of :data:`FORMATS` whose columns the file has, else the minimal format.

    Raises
    ------
    InputError
        Naming the columns missing for the closest (or the named) format, or a
        mapped column the file lacks.
    """
    present = set(columns)
    if name is not None and not mapping:
        return _named_format(columns, path, name)
    if mapping:
        missing = sorted(set(mapping.values()) - present)
        if missing:
            raise InputError(
                f"{path}: mapped column(s) {', '.join(missing)} not in the file (columns: "
                f"{', '.join(columns) or 'none'})"
            )
        columns_used = _named_columns(columns) | mapping
        lacking = [f for f in ("submit", "duration", "gpus") if f not in columns_used]
        if lacking:
            raise InputError(f"{path}: no column for {', '.join(lacking)}; map it with --columns")
        return TraceFormat("mapped", (), tuple(columns_used.items()))
    for fmt in FORMATS:
        if set(fmt.detect) <= present:
            return fmt
    minimal = minimal_format(columns)
    if minimal is not None:
        return minimal
    closest = min(FORMATS, key=lambda f: len(set(f.detect) - present))
    missing = sorted(set(closest.detect) - present)
    raise UnknownTraceColumns(
        f"{path}: unknown trace columns; closest format {closest.name!r} is missing "
        f"{', '.join(missing)}, and the minimal format needs a submit time, duration and GPU "
        f"count (map yours with --columns submit=...,duration=...,gpus=...; columns found: "
        f"{', '.join(columns) or 'none'})"
    )


class RowsLeftOut(UserWarning):
    """Rows of a trace that did not become jobs (each in :attr:`LoadedTrace.left_out`)."""


LEFT_OUT_SHOWN = 3
"""How many of the rows left out of a trace are named, by line, in a report."""


def left_out_report(
    left_out: tuple[LeftOutRow, ...], rows_read: int, path: str, shown: int = LEFT_OUT_SHOWN
) -> list[str]:
    """What the reader left out, as lines: a count, then the first ``shown`` rows as
    ``FILE:LINE: COLUMN: reason`` (nothing if no row was left out)."""
    if not left_out:
        return []
    named = left_out[:shown]
    which = f"the first {len(named)}" if len(named) < len(left_out) else "each"
    head = f"{len(left_out)} of {rows_read} rows left out ({_kind_counts(left_out)}); {which}:"
    return [head, *(f"  {entry.message(path)}" for entry in named)]


def _kind_counts(left_out: Iterable[LeftOutRow]) -> str:
    """``"1 too wide, 2 invalid, 5 cpu-only"``: the rows left out by kind, in the order of
    :data:`LEFT_OUT_KINDS` (too wide and invalid always, the reader's own kinds when
    present)."""
    counts = Counter(entry.kind for entry in left_out)
    return ", ".join(
        f"{counts[kind]} {kind}"
        for kind in LEFT_OUT_KINDS
        if counts[kind] or kind in ("too wide", "invalid")
    )


@dataclass(frozen=True)
class LoadedTrace:
    """A trace turned into an instance, with what was left out or guessed.

    Every count describes the rows read up to the last job kept in submit
    order when a ``limit`` left jobs out (else the whole file): ``rows_read`` rows, of which
    ``skipped_invalid`` were skipped and ``dropped_wide`` dropped, and the others the
    reader left out (:data:`LEFT_OUT_KINDS`), each named in ``left_out`` (by line);
    ``unnamed_jobs`` jobs of the instance
    had no known model, and ``unmatched_models`` counts their model names
    that no zoo model matched (those jobs follow the ``unnamed`` rule,
    ``unnamed_rule``). ``states`` are the states kept (``None``: every state) and
    ``state_counts`` the jobs in each; ``check`` what :mod:`ddlsched.core.trace_check`
    finds in the rows on the cluster (jobs wider than a server, offered load, duplicate
    ids, ...).
    """

    instance: Instance
    format: str
    rows_read: int
    skipped_invalid: int
    dropped_wide: int
    unmatched_models: dict[str, int] = dataclasses.field(default_factory=dict)
    unnamed_rule: str = UNNAMED_RULES[0]
    unnamed_jobs: int = 0
    left_out: tuple[LeftOutRow, ...] = ()
    states: tuple[str, ...] | None = None
    state_counts: dict[str, int] = dataclasses.field(default_factory=dict)
    check: TraceCheck | None = None

    def left_out_counts(self) -> dict[str, int]:
        """How many rows were left out for each reason (:data:`LEFT_OUT_KINDS`)."""
        counts = Counter(entry.kind for entry in self.left_out)
        return {kind: counts[kind] for kind in LEFT_OUT_KINDS if counts[kind]}

    def summary_lines(self) -> list[str]:
        """The states kept, when the trace names states (``states kept: all (COMPLETED
        40, FAILED 3)``)."""
        if not self.state_counts:
            return []
        kept = "all" if self.states is None else ",".join(self.states)
        counts = ", ".join(f"{state} {n}" for state, n in sorted(self.state_counts.items()))
        return [f"states kept: {kept} ({counts})"]


def _float(text: str, column: str, path: str, line: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{path}:{line}: {column}: not a number: {text!r}") from None


def _real(text: str, column: str, path: str, line: int, scale: float, limit: float) -> float:
    value = _float(text, column, path, line)
    if not math.isfinite(value):
        raise InputError(f"{path}:{line}: {column}: not finite: {text!r}")
    seconds = value * scale
    if abs(seconds) > limit:
        raise InputError(f"{path}:{line}: {column}: {text} is beyond the limit of {limit:g}")
    return seconds


def _whole(text: str, column: str, path: str, line: int, limit: int) -> int:
    value = _float(text, column, path, line)
    if not (math.isfinite(value) and value == int(value) and 1 <= value <= limit):
        raise InputError(
            f"{path}:{line}: {column}: expected a whole number from 1 to {limit:,}, got {text!r}"
        )
    return int(value)


def _submit(
    text: str, moments: Moments | None, column: str, path: str, line: int, unit: float
) -> float:
    """A submit time in seconds: a date and time when the format has dates
    (``moments``), else a number of ``unit`` from the trace's origin."""
    if moments is not None:
        return moments.seconds(text, column, line)
    seconds = _real(text, column, path, line, unit, MAX_TIME)
    if seconds < 0:
        # A submit time is a moment after the trace's origin: a negative one is a sign
        # error or a shifted column, not a job that arrived before the trace began.
        raise InputError(f"{path}:{line}: {column}: negative submit time {text} (must be >= 0)")
    return seconds


def read_rows(
    path: str | os.PathLike[str],
    *,
    columns: dict[str, str] | None = None,
    time_unit: str | None = None,
) -> tuple[TraceFormat, list[TraceRow]]:
    """Every row of a trace file that :func:`read_trace_rows` keeps, typed and checked, in
    file order, and the file's format.

    Raises
    ------
    InputError
        As :func:`read_trace_rows`.
    """
    read = read_trace_rows(path, columns=columns, time_unit=time_unit)
    return read.format, read.kept


def read_trace_rows(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    columns: dict[str, str] | None = None,
    time_unit: str | None = None,
    states: str | Iterable[str] | None = None,
    fractional: str = FRACTIONAL_RULES[0],
) -> RowsRead:
    """Every row of a trace file, typed and checked, in file order; each row the reader
    leaves out carries its reason (:attr:`TraceRow.left_out`).

    Parameters
    ----------
    path
        A CSV file (UTF-8, a byte-order mark allowed), a raw Philly ``cluster_job_log``
        (JSON) or a PAI ``pai_job_table.csv`` (its ``pai_task_table.csv`` beside it).
    format
        One of :data:`FORMAT_NAMES`; default: recognised (a JSON list is raw Philly, a
        file named ``pai_job_table*.csv`` PAI, a CSV file by its columns).
    columns
        Field to column, for CSV files in no known format (see
        :func:`parse_columns`).
    time_unit
        Unit of the numeric submit and duration columns (:data:`TIME_UNITS`);
        default the format's (microseconds for Muri lists, else seconds).
    states
        The states to keep (``"COMPLETED,FAILED"`` or a list), case aside; default every
        state. Refused for a file without a state column.
    fractional
        What a fractional GPU count does (:data:`FRACTIONAL_RULES`).

    Raises
    ------
    InputError
        One line naming the file, the line (as an editor counts them) and
        the column: unreadable or binary files, short or long rows, values
        that are not numbers, not whole, non-finite, or out of range, naive and
        zoned times mixed; or a bad argument, named.
    """
    file = resolve_trace(path)
    where = os.fspath(file)
    if not file.is_file():
        raise InputError(f"{where}: not a file")
    if time_unit is not None and time_unit not in TIME_UNITS:
        raise InputError(f"time unit: expected one of {', '.join(TIME_UNITS)}, got {time_unit!r}")
    if format is not None and format not in FORMAT_NAMES:
        raise InputError(f"format: expected one of {', '.join(FORMAT_NAMES)}, got {format!r}")
    check_fractional(fractional)
    keep = StateFilter(parse_states(states))
    kind = format or _file_kind(file)
    if kind in ("philly-raw", "pai2020"):
        if columns:
            raise InputError(f"columns: only for CSV traces in no known format, not {kind}")
        if kind == "philly-raw":
            from ddlsched.core.philly_raw import read_philly_raw

            return read_philly_raw(file, keep, fractional)
        from ddlsched.core.pai import read_pai

        return read_pai(file, keep, fractional, TIME_UNITS[time_unit or "s"])
    return _read_csv(file, kind, columns, time_unit, keep, fractional)


def _file_kind(file: Path) -> str | None:
    """``"philly-raw"`` for a JSON list, ``"pai2020"`` for a PAI job table by its name,
    else ``None`` (a CSV file, recognised by its columns)."""
    if file.name.lower().startswith("pai_job_table"):
        return "pai2020"
    with file.open("rb") as stream:
        start = stream.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "philly-raw" if start.startswith(b"[") else None


def _read_csv(
    file: Path,
    name: str | None,
    columns: dict[str, str] | None,
    time_unit: str | None,
    keep: StateFilter,
    fractional: str,
) -> RowsRead:
    """The rows of a CSV trace (:func:`read_trace_rows`)."""
    where = os.fspath(file)
    rows: list[TraceRow] = []
    try:
        with file.open(newline="", encoding="utf-8-sig") as stream:
            reader = csv.reader(stream)
            header = [name.strip() for name in next(reader, [])]
            _refuse_repeated_columns(header, where, reader.line_num)
            fmt = detect_format(header, where, columns, name)
            unit = TIME_UNITS[time_unit] if time_unit else fmt.seconds_per_unit
            known = set(header)
            spec = {f: c if (c := fmt.column(f)) in known else None for f in FIELDS}
            if keep.states is not None and spec["state"] is None:
                raise InputError(f"states: {where} has no state column ({fmt.name} format)")
            reading = _CsvReading(spec, where, unit, Moments(where) if fmt.dates else None)
            for record in reader:
                line = reader.line_num
                if not record or all(not cell.strip() for cell in record):
                    continue
                if len(record) != len(header):
                    raise InputError(
                        f"{where}:{line}: {len(record)} fields, the header has {len(header)}"
                    )
                cells = dict(zip(header, record, strict=True))
                rows.append(reading.row(cells, line, keep, fractional))
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: not UTF-8 text (byte {error.start}: {error.reason})") from None
    except csv.Error as error:
        raise InputError(f"{where}: not a CSV file ({error})") from None
    return RowsRead(fmt, rows, keep.states)


def _refuse_repeated_columns(header: list[str], where: str, line: int) -> None:
    """Refuse a header naming a column twice (case and spaces aside, as column names are
    matched): which of the two a field reads would be a silent guess."""
    seen: dict[str, int] = {}
    for number, name in enumerate(header, 1):
        key = name.lower()
        if not key:
            continue  # unnamed columns (a trailing comma) are never read
        if key in seen:
            raise InputError(
                f"{where}:{line}: column {name!r} appears twice (columns {seen[key]} and "
                f"{number}); rename or remove one"
            )
        seen[key] = number


@dataclass(frozen=True)
class _CsvReading:
    """How the rows of one CSV file are typed: ``spec`` names the file column of each
    field (the required ones exist), ``unit`` the seconds of a numeric time, ``moments``
    reads its dates (``None``: times are numbers)."""

    spec: dict[str, str | None]
    where: str
    unit: float
    moments: Moments | None

    def row(
        self, cells: dict[str, str], line: int, keep: StateFilter, fractional: str
    ) -> TraceRow:
        """One typed row, with why the reader leaves it out (a state not kept, no GPU, a
        fractional count dropped), if it does."""
        spec, where = self.spec, self.where

        def text(field: str) -> str:  # "" when the file has no column for the field
            column = spec[field]
            return cells[column].strip() if column else ""

        def whole(field: str, limit: int) -> int | None:
            value = text(field)
            return _whole(value, str(spec[field]), where, line, limit) if value else None

        gpus_column = str(spec["gpus"])
        requested = _float(text("gpus"), gpus_column, where, line)
        gpus, no_gpu = gpu_count(requested, fractional, f"{where}:{line}", gpus_column, line)
        state = text("state") or None
        kind = text("type")
        return TraceRow(
            line=line,
            submit=_submit(
                text("submit"), self.moments, str(spec["submit"]), where, line, self.unit
            ),
            duration=_real(
                text("duration"), str(spec["duration"]), where, line, self.unit, MAX_TIME
            ),
            gpus=gpus,
            id=text("id") or None,
            model=text("model") or None,
            iterations=whole("iterations", MAX_ITERATIONS),
            batch_size=whole("batch_size", MAX_GPUS),
            user=text("user") or None,
            vc=text("vc") or None,
            state=state,
            extra=(("workload_type", kind),) if kind else (),
            left_out=keep.left_out(state, line, str(spec["state"])) or no_gpu,
        )


def _parallelism(profile: ModelProfile, gpus: int, per_server: int) -> Parallelism:
    tp = 1
    while gpus % (tp * 2) == 0 and tp * 2 <= min(profile.max_tp, per_server):
        tp *= 2
    return Parallelism(dp=gpus // tp, pp=1, tp=tp)


def packed_mapping(gpus: int, cluster: Cluster) -> tuple[int, ...]:
    """Nodes filling servers in index order (the consolidated placement)."""
    mapping: list[int] = []
    for server, size in enumerate(cluster.gpus_per_server):
        mapping += [server] * min(size, gpus - len(mapping))
        if len(mapping) == gpus:
            break
    return tuple(mapping)


def zoo_job(
    job_id: str,
    model: str,
    gpus: int,
    cluster: Cluster,
    release: float,
    iterations: int | None,
    duration: float | None,
    features: dict[str, str | int | float | bool],
    slowdown: Mapping[str, float] | None = None,
) -> Job:
    """A job of zoo ``model`` on ``gpus`` GPUs (rules 2-3 of the module docstring).

    With ``duration``, times are scaled so that ``K * alpha_packed`` equals
    it (and ``K`` is derived when ``iterations`` is ``None``); without it the
    zoo's own times are kept and ``iterations`` is required. On a cluster of GPU types,
    ``slowdown`` gives types other than the measured ones their factor
    (:func:`~ddlsched.core.zoo.type_compute_times`).
    """
    profile = ZOO[model]
    parallelism = _parallelism(profile, gpus, cluster.max_gpus_per_server)
    compute, edges = build_job_graph(profile, parallelism)
    typed: dict[str, float] = {}
    reference = cluster
    if cluster.server_types:
        # GPU types: the zoo's per-type times (V100 = the zoo's); a recorded duration is
        # read as the job's consolidated duration on the types' fastest bandwidth *(choice)*.
        every = type_compute_times(model, compute, slowdown)
        unknown = [t for t in cluster.types if t not in every]
        if unknown:
            raise InputError(
                f"GPU type {unknown[0]!r}: no measured compute times for trace jobs "
                f"(measured: {', '.join(every)}); give it a type_slowdown"
            )
        typed = {t: every[t] for t in cluster.types}
        fastest = max(cluster.intra_of(t) for t in cluster.types)
        reference = Cluster(cluster.gpus_per_server, fastest, cluster.bandwidth_inter)
    scale = 1.0
    count = iterations
    if duration is not None:
        unscaled = Job(
            id="x", release=0.0, iterations=1, compute_time=compute, gpus=gpus, edges=edges
        )
        packed = alpha(unscaled, reference, packed_mapping(gpus, reference))
        count = iterations if iterations and iterations >= 1 else max(1, round(duration / packed))
        scale = duration / (count * packed)
    if count is None:
        raise ValueError("zoo_job needs iterations or a duration")
    return Job(
        id=job_id,
        release=release,
        iterations=count,
        compute_time=compute * scale,
        gpus=gpus,
        parallelism=parallelism,
        edges=tuple((u, v, q * scale) for u, v, q in edges),
        features=features,
        compute_times=tuple((t, c * scale) for t, c in typed.items()),
    )


def _unnamed_model(rule: str, gpus: int, cluster: Cluster, rng: np.random.Generator) -> str:
    # Drawn for every row, whatever the rule: so "zoo" draws exactly what every
    # unnamed row got before the rules existed (same seed, same models).
    draw = DRAWN_MODELS[int(rng.integers(len(DRAWN_MODELS)))]
    if rule == "zoo":
        return draw
    if rule == "zoo-data-parallel":
        fitting = [
            m
            for m in DRAWN_MODELS
            if _parallelism(ZOO[m], gpus, cluster.max_gpus_per_server).tp == 1
        ]
        return fitting[int(rng.integers(len(fitting)))]
    return DATA_PARALLEL_MODEL


class _Draft(NamedTuple):
    """A usable row on its way to a job: the zoo model it runs, whether that model was
    guessed (no known model named), and the job's features."""

    row: TraceRow
    model: str
    guessed: bool
    features: dict[str, str | int | float | bool]


def load_trace(
    path: str | os.PathLike[str],
    cluster: Cluster,
    *,
    seed: int = 0,
    limit: int | None = None,
    drop_wide: bool = True,
    slot: float = 1.0,
    unnamed: str = UNNAMED_RULES[0],
    columns: dict[str, str] | None = None,
    time_unit: str | None = None,
    format: str | None = None,
    states: str | Iterable[str] | None = None,
    fractional: str = FRACTIONAL_RULES[0],
) -> LoadedTrace:
    """Read a trace file into an :class:`Instance` on ``cluster``.

    Parameters
    ----------
    path
        A CSV file in one of :data:`FORMATS`, the minimal format, or any
        format through ``columns``; a raw Philly log or a PAI job table
        (:func:`read_trace_rows`).
    cluster
        The cluster the jobs will run on (it fixes the packed mapping).
    seed
        Seeds the models drawn for rows without a known model.
    limit
        Keep only the first ``limit`` jobs by submit time.
    drop_wide
        Drop jobs wider than the cluster (else raise).
    slot
        The instance's slot.
    unnamed
        How a row without a known model becomes a job (:data:`UNNAMED_RULES`):
        ``"data-parallel"`` (default) the :data:`DATA_PARALLEL_MODEL` profile,
        pure data parallel, so that a recorded duration is not stretched by a
        chance tensor-parallel draw when the job is spread; ``"zoo-data-
        parallel"`` a zoo model drawn among those that are pure data parallel
        at the row's GPU count; ``"zoo"`` any zoo model (tensor-parallel
        transformers included: a spread 8-GPU ``megatron_8b`` runs up to ~14x
        its recorded duration).
    columns, time_unit, format, states, fractional
        See :func:`read_trace_rows`.

    Raises
    ------
    InputError
        Unknown columns (naming what is missing), a bad value (naming the
        file, line and column), or no usable job.
    """
    _check_load_arguments(path, cluster, seed, limit, columns)
    if unnamed not in UNNAMED_RULES:
        raise InputError(f"unnamed: expected one of {', '.join(UNNAMED_RULES)}, got {unnamed!r}")
    where = os.fspath(path)
    read = read_trace_rows(
        path,
        format=format,
        columns=columns,
        time_unit=time_unit,
        states=states,
        fractional=fractional,
    )
    rng = np.random.default_rng(seed)
    drafts, left_out = _drafts(read.rows, read.format, cluster, where, drop_wide, unnamed, rng)
    drafts, named_out = _first_jobs(drafts, left_out, limit)
    skipped = sum(entry.kind == "invalid" for entry in named_out)
    dropped = sum(entry.kind == "too wide" for entry in named_out)
    if not drafts:
        raise InputError(f"{where}: no usable job ({_kind_counts(named_out)})")
    jobs = _zoo_jobs(drafts, cluster)
    report = left_out_report(named_out, len(drafts) + len(named_out), where)
    if report:  # the caller learns of dropped jobs unasked; each is in .left_out
        warnings.warn("\n".join(report), RowsLeftOut, stacklevel=2)
    return LoadedTrace(
        _trace_instance(where, cluster, jobs, slot),
        read.format.name,
        len(drafts) + len(named_out),
        skipped,
        dropped,
        _unmatched_models(drafts),
        unnamed,
        sum(draft.guessed for draft in drafts),
        named_out,
        read.states,
        dict(Counter(draft.row.state for draft in drafts if draft.row.state is not None)),
        check_rows(
            [row for row in read.kept if _submit_order(row) <= _submit_order(drafts[-1].row)],
            cluster.num_gpus,
            cluster.max_gpus_per_server,
        ),
    )


ARRIVALS = ("consecutive", "sampled")
"""How :func:`trace_sample` takes its jobs: a window of consecutive submissions, or jobs
drawn from the whole trace released at a consecutive window's times."""


def trace_sample(
    path: str | os.PathLike[str],
    cluster: Cluster,
    jobs: int,
    *,
    seed: int = 0,
    arrivals: str = ARRIVALS[0],
    unnamed: str = "zoo-data-parallel",
    slot: float = 1.0,
    load: float | None = None,
    slowdown: Mapping[str, float] | None = None,
) -> Instance:
    """A small instance of real jobs from a trace: ``jobs`` jobs with their recorded
    durations and GPU counts, on ``cluster``, for exact optima on real job mixes.

    Every row is read and turned into a job as by :func:`load_trace` (rows wider than the
    cluster or without a positive duration are left out); then, with
    ``numpy.random.default_rng(seed)``, ``"consecutive"`` takes the jobs of a window of
    ``jobs`` consecutive submissions starting at a random one, released as recorded
    (relative to the first); ``"sampled"`` draws ``jobs`` jobs uniformly without
    replacement from the whole trace and releases them, in submit order, at the times of
    a random consecutive window (the trace's own arrival pattern). Rows that name no zoo
    model follow ``unnamed`` (default: a zoo model drawn among those that are pure data
    parallel at the row's GPU count, so the mix has the zoo's communication patterns).
    With ``load``, the sample's arrivals are then scaled so that its offered load is
    ``load`` (:func:`~ddlsched.core.offered_load.at_load`: the same jobs, the gaps between
    their releases multiplied by one factor). On a cluster of GPU types, each job has the
    zoo's per-type compute times, ``slowdown`` giving a type of one's own its factor.

    Raises
    ------
    InputError
        Bad arguments, an unreadable trace, fewer usable jobs than ``jobs``, or a ``load``
        for a sample whose jobs all arrive at once.
    """
    _check_load_arguments(path, cluster, seed, None, None)
    if not is_whole(jobs) or jobs < 1:
        raise InputError(f"jobs: expected a whole number >= 1, got {jobs!r}")
    if arrivals not in ARRIVALS:
        raise InputError(f"arrivals: expected one of {', '.join(ARRIVALS)}, got {arrivals!r}")
    if unnamed not in UNNAMED_RULES:
        raise InputError(f"unnamed: expected one of {', '.join(UNNAMED_RULES)}, got {unnamed!r}")
    where = os.fspath(path)
    read = read_trace_rows(path)
    rng = np.random.default_rng(seed)
    drafts, _ = _drafts(read.rows, read.format, cluster, where, True, unnamed, rng)
    drafts = sorted(drafts, key=lambda draft: _submit_order(draft.row))
    if len(drafts) < jobs:
        raise InputError(f"{where}: {len(drafts)} usable jobs on this cluster, {jobs} asked")
    start = int(rng.integers(0, len(drafts) - jobs + 1))
    window = drafts[start : start + jobs]
    if arrivals == "sampled":
        picked = sorted(rng.choice(len(drafts), size=jobs, replace=False))
        times = [draft.row.submit for draft in window]
        window = [
            drafts[k]._replace(row=dataclasses.replace(drafts[k].row, submit=time))
            for k, time in zip(picked, times, strict=True)
        ]
    instance = _trace_instance(where, cluster, _zoo_jobs(window, cluster, slowdown), slot)
    return instance if load is None else _at_load(instance, load, where)


def _at_load(instance: Instance, load: float, where: str) -> Instance:
    """``instance`` with its arrivals scaled to offered load ``load``.

    Raises
    ------
    InputError
        Naming the trace and ``load``: a sample whose jobs all arrive at once (no span to
        scale), or a load so low that the last arrival passes the time limit.
    """
    from ddlsched.core.offered_load import at_load

    if len({job.release for job in instance.jobs}) < 2:
        raise InputError(
            f"{where}: load {load:g}: the {instance.num_jobs} jobs of the sample all arrive "
            "at once, so their arrivals cannot be scaled to a load (another seed or more "
            "jobs, or no load: the recorded arrivals)"
        )
    try:
        return at_load(instance, load)[0]
    except ValueError as error:
        raise InputError(f"{where}: load {load:g}: {error}") from None


def _drafts(
    rows: list[TraceRow],
    fmt: TraceFormat,
    cluster: Cluster,
    where: str,
    drop_wide: bool,
    unnamed: str,
    rng: np.random.Generator,
) -> tuple[list[_Draft], list[tuple[TraceRow, LeftOutRow]]]:
    """Each usable row as a draft job, in file order, and each other row with the entry
    saying why it is left out.

    Raises
    ------
    InputError
        On a row wider than the cluster, unless ``drop_wide``.
    """
    drafts: list[_Draft] = []
    left_out: list[tuple[TraceRow, LeftOutRow]] = []
    duration_column, gpus_column = str(fmt.column("duration")), str(fmt.column("gpus"))
    for row in rows:
        entry = _left_out_entry(row, cluster, where, duration_column, gpus_column, drop_wide)
        if entry is not None:
            left_out.append((row, entry))
            continue
        # Drawn for every usable row in file order, so a job's model does not depend on
        # the limit.
        fallback = _unnamed_model(unnamed, row.gpus, cluster, rng)
        matched = match_model(row.model) if row.model else None
        model = matched or fallback
        drafts.append(_Draft(row, model, matched is None, _features(row, model)))
    return drafts, left_out


def _left_out_entry(
    row: TraceRow,
    cluster: Cluster,
    where: str,
    duration_column: str,
    gpus_column: str,
    drop_wide: bool,
) -> LeftOutRow | None:
    """Why ``row`` cannot become a job (the reader's reason, a duration that is not
    positive, more GPUs than the cluster has), or ``None`` when it can.

    Raises
    ------
    InputError
        On a row wider than the cluster, unless ``drop_wide``, naming its file and line.
    """
    if row.left_out is not None:
        return row.left_out
    if row.duration <= 0:
        reason = f"{row.duration:g} s is not > 0 (row skipped)"
        return LeftOutRow(row.line, duration_column, f"{row.duration:g}", "invalid", reason)
    if row.gpus > cluster.num_gpus:
        wide = f"{row.gpus} GPUs, the cluster has {cluster.num_gpus}"
        if not drop_wide:
            raise InputError(f"{where}:{row.line}: {gpus_column}: {wide}")
        reason = f"{wide} (job dropped)"
        return LeftOutRow(row.line, gpus_column, str(row.gpus), "too wide", reason)
    return None


def _features(row: TraceRow, model: str) -> dict[str, FeatureValue]:
    """The features a job of ``row`` keeps: its model, GPU count and recorded duration,
    and what the row names of its model, batch size, user, virtual cluster, state, id
    and the format's own (:attr:`TraceRow.extra`)."""
    features: dict[str, FeatureValue] = {
        "model": model,
        "num_gpus": row.gpus,
        "trace_duration": row.duration,
    }
    if row.model:
        features["trace_model"] = row.model.lower()
    if row.batch_size is not None:
        features["batch_size"] = row.batch_size
    if row.user is not None:
        features["user"] = row.user
    if row.vc is not None:
        features["vc"] = row.vc
    if row.state is not None:
        features["trace_state"] = row.state
    if row.id is not None:
        features["trace_id"] = row.id
    features.update(row.extra)
    return features


def _first_jobs(
    drafts: list[_Draft], left_out: list[tuple[TraceRow, LeftOutRow]], limit: int | None
) -> tuple[list[_Draft], tuple[LeftOutRow, ...]]:
    """The first ``limit`` drafts in submit order (all without a limit), and the rows left
    out up to the last of them, by line: the counts then describe the rows read up to the
    last job kept."""
    drafts = sorted(drafts, key=lambda draft: _submit_order(draft.row))
    if limit is not None and len(drafts) > limit:
        drafts = drafts[:limit]
        last = _submit_order(drafts[-1].row)
        left_out = [entry for entry in left_out if _submit_order(entry[0]) <= last]
    return drafts, tuple(sorted((entry for _, entry in left_out), key=lambda entry: entry.line))


def _unmatched_models(drafts: list[_Draft]) -> dict[str, int]:
    """How many jobs name each model no zoo model matches (they follow the ``unnamed``
    rule)."""
    unmatched: dict[str, int] = {}
    for draft in drafts:
        if draft.guessed and draft.row.model:
            unmatched[draft.row.model] = unmatched.get(draft.row.model, 0) + 1
    return unmatched


def _zoo_jobs(
    drafts: list[_Draft], cluster: Cluster, slowdown: Mapping[str, float] | None = None
) -> list[Job]:
    """The drafts as zoo jobs named ``t<line>``, released relative to the first submit
    (``slowdown``: see :func:`zoo_job`)."""
    first = drafts[0].row.submit
    return [
        zoo_job(
            f"t{draft.row.line}",
            draft.model,
            draft.row.gpus,
            cluster,
            draft.row.submit - first,
            draft.row.iterations,
            draft.row.duration,
            draft.features,
            slowdown,
        )
        for draft in drafts
    ]


def _trace_instance(where: str, cluster: Cluster, jobs: list[Job], slot: float) -> Instance:
    """The trace's instance; a refusal of the whole (its horizon) names the file."""
    try:
        return Instance(cluster=cluster, jobs=tuple(jobs), slot=slot)
    except InputError as error:
        raise InputError(f"{where}: {error}") from None


def _submit_order(row: TraceRow) -> tuple[float, int]:
    """Rows in submit order, ties in file order (how ``limit`` takes the first jobs)."""
    return (row.submit, row.line)


def _check_load_arguments(
    path: object, cluster: object, seed: object, limit: object, columns: object
) -> None:
    """:func:`load_trace`'s arguments of the wrong type or out of range, named."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path: expected a file name (str or Path), got {type(path).__name__}")
    if not isinstance(cluster, Cluster):
        raise TypeError(
            f"cluster: expected a Cluster (e.g. Cluster.uniform(servers, gpus_per_server, "
            f"bandwidth_intra, bandwidth_inter)), got {type(cluster).__name__}"
        )
    for name, value, least in (("seed", seed, 0), ("limit", limit, 1)):
        if value is None and name == "limit":
            continue
        if not is_whole(value):
            raise TypeError(f"{name}: expected a whole number, got {type(value).__name__}")
        if value < least:
            raise ValueError(f"{name}: expected a whole number >= {least}, got {value}")
    if columns is not None and not isinstance(columns, Mapping):
        raise TypeError(
            f"columns: expected a mapping of field to column (parse_columns(text) reads "
            f"'submit=a,gpus=b'), got {type(columns).__name__}"
        )


def stretched_jobs(instance: Instance, schedule: Schedule, factor: float = 2.0) -> int:
    """How many trace jobs ran more than ``factor`` times their recorded duration.

    A job's run time is the length of its pieces (its whole span when it
    ran in one piece), restart costs included; jobs without a recorded
    duration (feature ``trace_duration``) are not counted.
    """
    entries = schedule.by_id()
    count = 0
    for job in instance.jobs:
        recorded = job.features.get("trace_duration")
        entry = entries.get(job.id)
        if not isinstance(recorded, int | float) or entry is None or entry.end is None:
            continue
        ran = (
            sum(piece.end - piece.start for piece in entry.pieces)
            if entry.pieces
            else entry.end - entry.start
        )
        count += ran > factor * recorded
    return count
