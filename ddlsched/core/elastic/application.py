"""One trainable model of the Pollux study: its speed, its statistical efficiency, its budget.

An :class:`Application` bundles what the round-based elastic simulator and the
policies need to know about a model (bert, cifar10, ncf, imagenet,
deepspeech2, yolov3), all read from the shipped data (:mod:`ddlsched.core.data`; Pollux artifact,
petuum/adaptdl, branch osdi21-artifact, Apache-2.0):

- the **throughput model** (:class:`~ddlsched.core.elastic.throughput.PerfParams`)
  fitted to ``profiles/pollux_MODEL_placements.csv`` and
  ``pollux/scalability/MODEL.csv``;
- the **gradient statistics** ``grad_sqr`` and ``grad_var`` of every epoch of
  full training runs at several total batch sizes
  (``pollux/efficiency/MODEL_BATCH.csv``);
- the **progress** of each epoch and the **budget** in epochs.

Statistical efficiency (Pollux, Section 3.1). Progress is counted in
iterations at the initial batch size ``M0`` (the smallest measured batch
size). With ``grad_sqr`` = ``|g|^2`` and ``grad_var`` = the gradient variance at
batch ``M0`` (so the noise at batch ``M`` is ``grad_var * M0 / M``), one
iteration at batch ``M = scale * M0`` makes as much progress as::

    gain(M) = (grad_var + grad_sqr) / (grad_var / scale + grad_sqr)

iterations at ``M0``; the efficiency per example is ``E(M) = gain(M) / scale``.
Writing the gradient noise scale ``phi = M0 * grad_var / grad_sqr`` this is
the paper's ``E(M) = (phi + M0) / (phi + M)``, so ``E(M0) = 1`` and
``E`` falls towards ``(phi + M0) / M`` for large batches. Goodput (progress
per second) is ``gain(M) / T_iter``. The statistics of epoch ``e`` at batch
``M`` are interpolated linearly between the two measured batch sizes that
bracket ``M`` (clamped at the ends), and held constant during the epoch, as
the Pollux simulator does.

Epochs and the target. Epoch ``e`` (1-based) ends at progress
``min_M progress_M[e-1]`` over the measured runs (the Pollux simulator's
``get_progress``; one epoch is about the first row's value, within 1.2% across
runs); a job is done at the end of its last budgeted epoch.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ddlsched.core.data import data_roots
from ddlsched.core.elastic.throughput import (
    FitError,
    PerfParams,
    ProfileRows,
    fit_error,
    fit_perf_params,
)
from ddlsched.core.model import InputError

__all__ = [
    "EPOCH_BUDGETS",
    "MODELS",
    "Application",
    "BatchChoice",
    "load_application",
    "load_profile_rows",
]

EPOCH_BUDGETS: Mapping[str, int] = MappingProxyType(
    {"bert": 2, "cifar10": 100, "ncf": 10, "imagenet": 90, "deepspeech2": 80, "yolov3": 50}
)
"""Epochs each model trains for in the Pollux study (its simulator's ``max_epochs``)."""

MODELS = tuple(EPOCH_BUDGETS)
"""The six models with profiles."""

MAX_LOCAL_BSZ_OVERRIDE: Mapping[str, int] = MappingProxyType({"yolov3": 8})
"""Per-GPU batch limits tighter than the profiles' largest (the Pollux simulator's setting)."""

BATCH_CANDIDATES = 50
"""How many total batch sizes (geometrically spaced) a batch-size search tries."""


@dataclass(frozen=True)
class BatchChoice:
    """A per-GPU batch configuration and its goodput.

    Attributes
    ----------
    atomic_bsz
        Examples per GPU per micro-batch.
    accum_steps
        Extra micro-batches accumulated before each synchronisation.
    goodput
        Progress per second (iterations at ``M0`` per second); 0 if invalid.
    """

    atomic_bsz: int
    accum_steps: int
    goodput: float


@dataclass(frozen=True, eq=False)
class Application:
    """A model's throughput, gradient statistics, progress units and limits (read-only).

    Attributes
    ----------
    name
        The model.
    perf
        The fitted throughput model.
    fit
        Its error against the profiles it was fitted to.
    batch_sizes
        The measured total batch sizes, ascending; ``batch_sizes[0]`` is
        ``M0``, the initial batch size and unit of progress.
    grad_sqr, grad_var
        Arrays ``(len(batch_sizes), epochs)``: the statistics of each epoch.
    epoch_ends
        ``epoch_ends[e]`` = progress at the end of epoch ``e + 1``.
    epochs
        The budget; the target is ``epoch_ends[epochs - 1]``.
    min_local_bsz, max_local_bsz
        Per-GPU micro-batch limits (from the profiles).
    max_batch_size
        Largest total batch size (the largest measured).
    """

    name: str
    perf: PerfParams
    fit: FitError
    batch_sizes: NDArray[np.int64]
    grad_sqr: NDArray[np.float64]
    grad_var: NDArray[np.float64]
    epoch_ends: NDArray[np.float64]
    epochs: int
    min_local_bsz: int
    max_local_bsz: int
    max_batch_size: int = field(init=False)

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.epochs > len(self.epoch_ends):
            raise ValueError(
                f"Application.epochs must be in 1..{len(self.epoch_ends)}, got {self.epochs}"
            )
        if not 1 <= self.min_local_bsz <= self.max_local_bsz:
            raise ValueError(
                f"Application local batch limits {self.min_local_bsz}..{self.max_local_bsz}"
            )
        if np.any(np.diff(self.epoch_ends) <= 0) or self.epoch_ends[0] <= 0:
            raise ValueError("Application.epoch_ends must be positive and increasing")
        for array in (self.batch_sizes, self.grad_sqr, self.grad_var, self.epoch_ends):
            array.setflags(write=False)
        object.__setattr__(self, "max_batch_size", int(self.batch_sizes[-1]))

    @property
    def init_batch_size(self) -> int:
        """M0: the smallest measured batch size; progress counts iterations at it."""
        return int(self.batch_sizes[0])

    @property
    def target_progress(self) -> float:
        """The progress at which the job is done (end of its last epoch)."""
        return float(self.epoch_ends[self.epochs - 1])

    @property
    def max_replicas(self) -> int:
        """Most GPUs a job can use: every GPU needs at least ``min_local_bsz`` examples."""
        return self.max_batch_size // self.min_local_bsz

    def epoch_at(self, progress: float) -> int:
        """Completed epochs at ``progress`` (0-based index of the epoch under way)."""
        return int(np.searchsorted(self.epoch_ends, progress, side="right"))

    def grad_stats(self, batch_size: ArrayLike, epoch: int) -> tuple[NDArray, NDArray]:
        """``(grad_sqr, grad_var)`` during ``epoch`` (0-based) at total ``batch_size``.

        Linear in the batch size between the bracketing measured runs, clamped
        outside them; the last epoch's values after the budget.
        """
        row = min(epoch, self.grad_sqr.shape[1] - 1)
        sizes = self.batch_sizes.astype(float)
        batch = np.clip(np.asarray(batch_size, dtype=float), sizes[0], sizes[-1])
        sqr = np.interp(batch, sizes, self.grad_sqr[:, row])
        var = np.interp(batch, sizes, self.grad_var[:, row])
        return sqr, var

    def gain(self, batch_size: ArrayLike, epoch: int) -> NDArray[np.float64]:
        """Progress per iteration at ``batch_size``: ``(var + sqr) / (var / scale + sqr)``."""
        sqr, var = self.grad_stats(batch_size, epoch)
        scale = np.asarray(batch_size, dtype=float) / self.init_batch_size
        return (var + sqr) / (var / scale + sqr)

    def efficiency(self, batch_size: ArrayLike, epoch: int) -> NDArray[np.float64]:
        """E(M) = gain / scale, statistical efficiency per example relative to M0 (1 at M0)."""
        scale = np.asarray(batch_size, dtype=float) / self.init_batch_size
        return self.gain(batch_size, epoch) / scale

    def goodput(
        self,
        num_nodes: ArrayLike,
        replicas: ArrayLike,
        atomic_bsz: ArrayLike,
        accum_steps: ArrayLike,
        epoch: int,
    ) -> NDArray[np.float64]:
        """Progress per second: ``gain(M) / T_iter`` with ``M = replicas * atomic * (accum+1)``."""
        reps = np.asarray(replicas)
        batch = reps * np.asarray(atomic_bsz) * (np.asarray(accum_steps) + 1)
        time = self.perf.iteration_time(num_nodes, reps, atomic_bsz, accum_steps)
        return self.gain(batch, epoch) / time

    def rigid_batch(self, replicas: int, batch_size: int) -> tuple[int, int]:
        """``(atomic_bsz, accum_steps)`` for a job fixed at ``batch_size`` on ``replicas`` GPUs.

        The Pollux simulator's rule: split the per-GPU share into the fewest
        micro-batches within ``max_local_bsz``; a single GPU above ``M0``
        accumulates at least once; never beyond ``max_batch_size`` in total
        (a larger ``batch_size`` runs at ``max_batch_size``).
        """
        batch_size = min(batch_size, self.max_batch_size)
        local = math.ceil(batch_size / replicas - 1e-8)
        accum = math.ceil(local / self.max_local_bsz - 1e-8) - 1
        if replicas == 1 and batch_size > self.init_batch_size:
            accum = max(1, accum)
        atomic = math.ceil(local / (accum + 1) - 1e-8)
        atomic = min(atomic, self.max_batch_size // (replicas * (accum + 1)))
        return max(atomic, 1), accum

    def best_batch(self, num_nodes: int, replicas: int, epoch: int) -> BatchChoice:
        """The goodput-maximising batch configuration on a placement, during ``epoch``.

        See :meth:`best_batches`; goodput 0 if the placement cannot hold
        ``min_local_bsz`` examples per GPU within ``max_batch_size``.
        """
        atomic, accum, good = self.best_batches(np.array([num_nodes]), np.array([replicas]), epoch)
        return BatchChoice(int(atomic[0]), int(accum[0]), float(good[0]))

    def best_batches(
        self, num_nodes: NDArray[np.int64], replicas: NDArray[np.int64], epoch: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """:meth:`best_batch` for many placements at once: ``(atomic, accum, goodput)`` arrays.

        Tries :data:`BATCH_CANDIDATES` total batch sizes geometrically spaced
        from ``max(M0, min_local_bsz * replicas)`` to ``max_batch_size``,
        splitting each per-GPU share as :meth:`rigid_batch` does (Pollux's
        ``GoodputFunction.optimize`` with accumulation); invalid candidates
        (micro-batch outside the local limits) count as goodput 0.
        """
        nodes = np.asarray(num_nodes)[:, None]
        reps = np.asarray(replicas)[:, None]
        low = np.maximum(self.init_batch_size, self.min_local_bsz * reps).astype(float)
        feasible = low <= self.max_batch_size
        low = np.minimum(low, self.max_batch_size)
        steps = np.linspace(0.0, 1.0, BATCH_CANDIDATES)[None, :]
        batch = np.exp(np.log(low) + steps * (np.log(self.max_batch_size) - np.log(low)))
        local = batch / reps
        accum = np.ceil(local / self.max_local_bsz - 1e-8) - 1
        single_large = (reps == 1) & (local > self.init_batch_size + 1e-8)
        accum = np.where(single_large, np.maximum(accum, 1), accum).astype(int)
        atomic = np.ceil(local / (accum + 1) - 1e-8).astype(int)
        valid = (atomic >= self.min_local_bsz) & (atomic <= self.max_local_bsz) & feasible
        good = np.where(valid, self.goodput(nodes, reps, atomic, accum, epoch), 0.0)
        best = np.argmax(good, axis=1)
        rows = np.arange(len(best))
        return atomic[rows, best], accum[rows, best], good[rows, best]


def load_profile_rows(model: str, root: Path | None = None) -> ProfileRows:
    """Every measured row of a model: the placements file and the scalability file, from
    ``root`` or else the data folder holding the model's profiles (:func:`_model_root`).

    Raises
    ------
    InputError
        A missing file or column, a file without rows, or a bad value (naming the file,
        line and column).
    """
    base = root or _model_root(model)
    placements = read_table(
        base / "profiles" / f"pollux_{model}_placements.csv",
        texts={"placement": _placement},
        numbers={"local_bsz": whole_count, "step_time": finite_non_negative,
                 "sync_time": finite_non_negative},
    )  # fmt: skip
    scalability = read_table(
        base / "pollux" / "scalability" / f"{model}.csv",
        numbers={"num_nodes": whole_count, "num_replicas": whole_count, "local_bsz": whole_count,
                 "step_time": finite_non_negative, "sync_time": finite_non_negative},
    )  # fmt: skip
    placed = placements.texts["placement"]
    nodes = [len(p) for p in placed] + scalability.numbers["num_nodes"]
    reps = [sum(map(int, p)) for p in placed] + scalability.numbers["num_replicas"]
    columns = ("local_bsz", "step_time", "sync_time")
    bsz, step, sync = (placements.numbers[c] + scalability.numbers[c] for c in columns)
    return ProfileRows(
        np.array(nodes), np.array(reps), np.array(bsz), np.array(step), np.array(sync)
    )


def _model_files(model: str, root: Path) -> dict[str, bool]:
    """Which of a model's profile files ``root`` holds (a link counts, broken or not)."""
    efficiency = root / "pollux" / "efficiency"
    return {
        f"profiles/pollux_{model}_placements.csv": os.path.lexists(
            root / "profiles" / f"pollux_{model}_placements.csv"
        ),
        f"pollux/scalability/{model}.csv": os.path.lexists(
            root / "pollux" / "scalability" / f"{model}.csv"
        ),
        f"pollux/efficiency/{model}_BATCH.csv": efficiency.is_dir()
        and any(efficiency.glob(f"{model}_*.csv")),
    }


def _model_root(model: str) -> Path:
    """The data folder a model's profiles are read from: the first that holds any of them,
    which must then hold them all (profiles measured apart are never mixed).

    Raises
    ------
    InputError
        If a data folder holds some of the model's files but not all, naming which.
    """
    for root in data_roots():
        held = _model_files(model, root)
        if any(held.values()):
            lacking = [name for name, present in held.items() if not present]
            if lacking:
                kept = [name for name, present in held.items() if present]
                raise InputError(
                    f"{root}: holds {', '.join(kept)} but not {', '.join(lacking)} (a model's "
                    "profiles are read from one folder)"
                )
            return root
    raise InputError(f"{model}: no profiles in {', '.join(map(str, data_roots()))}")


def _placement(text: str) -> str:
    if not text or not text.isdigit() or "0" in text:
        raise ValueError("expected GPUs per node, one digit 1-9 a node")
    return text


def whole_count(text: str) -> int:
    """A cell of :func:`read_table` that must be a whole number >= 1."""
    value = int(text)
    if value < 1:
        raise ValueError("expected a whole number >= 1")
    return value


def finite_non_negative(text: str) -> float:
    """A cell of :func:`read_table` that must be a finite number >= 0 (a time, a speed)."""
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError("expected a finite number >= 0")
    return value


Cell = TypeVar("Cell", str, float)
"""What a column's converter makes of a cell's text: a text or a number."""


@dataclass(frozen=True)
class Table:
    """The checked values of a CSV data table (:func:`read_table`), by column.

    Attributes
    ----------
    texts
        The text columns' values, by column name.
    numbers
        The number columns' values, by column name.
    lines
        Each row's line in the file.
    """

    texts: dict[str, list[str]]
    numbers: dict[str, list[float]]
    lines: list[int]


def read_table(
    path: Path,
    texts: Mapping[str, Callable[[str], str]] | None = None,
    numbers: Mapping[str, Callable[[str], float]] | None = None,
) -> Table:
    """The checked values of a CSV file's text and number columns (each named with its
    converter), and each row's line (the reader of every data table: the Pollux profiles
    and Gavel's throughputs). A row's cells are converted in turn, its text columns first.

    Raises
    ------
    InputError
        A missing or unreadable file, a missing column, no rows, or a value its converter
        refuses, naming the file, the line and the column.
    """
    texts, numbers = texts or {}, numbers or {}
    if not path.is_file():
        raise InputError(f"{path}: no such data file")
    table = Table({c: [] for c in texts}, {c: [] for c in numbers}, [])
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in [*texts, *numbers] if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}: line 1: missing column(s) {missing}")
        for row in reader:
            table.lines.append(reader.line_num)
            where = f"{path}: line {reader.line_num}"
            for column, to_text in texts.items():
                table.texts[column].append(_cell(row, column, to_text, where))
            for column, to_number in numbers.items():
                table.numbers[column].append(_cell(row, column, to_number, where))
    if not table.lines:
        raise InputError(f"{path}: no rows")
    return table


def _cell(
    row: Mapping[str, str | None], column: str, convert: Callable[[str], Cell], where: str
) -> Cell:
    """``convert`` of the text of ``row``'s cell in ``column`` (stripped), or an
    :class:`InputError` naming ``where`` (the file and line), the column and the text."""
    text = (row.get(column) or "").strip()
    try:
        return convert(text)
    except ValueError as error:
        reason = str(error) if "expected" in str(error) else "not a number"
        raise InputError(f"{where}: column {column}: {reason}: {text!r}") from None


def _efficiency_tables(model: str, base: Path) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    pattern = re.compile(rf"^{re.escape(model)}_(\d+)\.csv$")
    runs: dict[int, Table] = {}
    for path in sorted((base / "pollux" / "efficiency").glob(f"{model}_*.csv")):
        match = pattern.match(path.name)
        if match:
            runs[int(match.group(1))] = read_table(
                path,
                numbers={
                    "progress": finite_non_negative,
                    "grad_sqr": finite_non_negative,
                    "grad_var": finite_non_negative,
                },
            )
    if not runs:
        raise InputError(f"{base / 'pollux' / 'efficiency'}: no {model}_BATCH.csv files")
    sizes = sorted(runs)
    epochs = min(len(run.lines) for run in runs.values())
    sqr, var, progress = (
        np.array([runs[b].numbers[c][:epochs] for b in sizes])
        for c in ("grad_sqr", "grad_var", "progress")
    )
    return np.array(sizes), sqr, var, progress.min(axis=0)


@functools.cache
def _fitted_application(model: str, root: str) -> Application:
    base = Path(root)
    rows = load_profile_rows(model, base)
    perf = fit_perf_params(rows)
    sizes, sqr, var, epoch_ends = _efficiency_tables(model, base)
    return Application(
        name=model,
        perf=perf,
        fit=fit_error(perf, rows),
        batch_sizes=sizes,
        grad_sqr=sqr,
        grad_var=var,
        epoch_ends=epoch_ends,
        epochs=EPOCH_BUDGETS[model],
        min_local_bsz=int(rows.local_bsz.min()),
        max_local_bsz=MAX_LOCAL_BSZ_OVERRIDE.get(model, int(rows.local_bsz.max())),
    )


@functools.cache
def _cached_application(model: str, epochs: int | None, root: str) -> Application:
    fitted = _fitted_application(model, root)
    if epochs is None or epochs == fitted.epochs:
        return fitted
    return dataclasses.replace(fitted, epochs=epochs)


def load_application(
    model: str, epochs: int | None = None, root: Path | None = None
) -> Application:
    """The :class:`Application` of a model, fitted once per process (cached).

    Parameters
    ----------
    model
        One of :data:`MODELS`.
    epochs
        The budget; default :data:`EPOCH_BUDGETS`.
    root
        The data folder; default the first of :func:`~ddlsched.core.data.data_roots`
        holding the model's placements file (a user's ``$DDLSCHED_DATA``, else the
        package's), all of the model's files then read from it.

    Raises
    ------
    InputError
        If the model is unknown or its files are missing.
    """
    if model not in EPOCH_BUDGETS:
        raise InputError(f"unknown model {model!r}; expected one of {', '.join(MODELS)}")
    # Keyed by the folder itself, so that a changed $DDLSCHED_DATA is read afresh.
    return _cached_application(model, epochs, str(root or _model_root(model)))
