"""Elastic jobs, workloads and clusters, and the Pollux workload CSV reader."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ddlsched.core.data import resolve_trace
from ddlsched.core.elastic.application import EPOCH_BUDGETS, MODELS
from ddlsched.core.model import InputError

__all__ = [
    "WORKLOAD_COLUMNS",
    "ElasticCluster",
    "ElasticJob",
    "ElasticWorkload",
    "load_pollux_workload",
]

WORKLOAD_COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")
"""The header of a Pollux workload file (petuum/adaptdl, simulator/workloads/)."""


@dataclass(frozen=True)
class ElasticCluster:
    """Identical nodes of identical GPUs (the Pollux study: 16 nodes x 4 GPUs).

    Attributes
    ----------
    num_nodes
        Nodes.
    gpus_per_node
        GPUs on each node.
    """

    num_nodes: int = 16
    gpus_per_node: int = 4

    def __post_init__(self) -> None:
        for name in ("num_nodes", "gpus_per_node"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"ElasticCluster.{name} must be a positive int, got {value!r}")

    @property
    def total_gpus(self) -> int:
        """All GPUs."""
        return self.num_nodes * self.gpus_per_node


@dataclass(frozen=True)
class ElasticJob:
    """A training job whose GPUs and batch size may change between rounds.

    Attributes
    ----------
    name
        Unique name.
    model
        One of :data:`~ddlsched.core.elastic.application.MODELS`.
    submit_time
        Arrival (s).
    asked_replicas
        GPUs the user asked for (what rigid policies give it).
    asked_batch_size
        Total batch size the user asked for (what rigid policies use).
    epochs
        Training budget in epochs; default the model's Pollux budget.
    """

    name: str
    model: str
    submit_time: float
    asked_replicas: int
    asked_batch_size: int
    epochs: int = 0

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("ElasticJob.name must be non-empty")
        if self.model not in EPOCH_BUDGETS:
            raise ValueError(
                f"ElasticJob.model must be one of {', '.join(MODELS)}, got {self.model!r}"
            )
        if not (math.isfinite(self.submit_time) and self.submit_time >= 0):
            raise ValueError(f"ElasticJob.submit_time must be >= 0, got {self.submit_time!r}")
        for name in ("asked_replicas", "asked_batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"ElasticJob.{name} must be a positive int, got {value!r}")
        if self.epochs == 0:
            object.__setattr__(self, "epochs", EPOCH_BUDGETS[self.model])
        if not isinstance(self.epochs, int) or self.epochs < 1:
            raise ValueError(f"ElasticJob.epochs must be a positive int, got {self.epochs!r}")

    def replace(self, **changes: Any) -> ElasticJob:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class ElasticWorkload:
    """Jobs in submission order (ties by name), with unique names.

    Attributes
    ----------
    jobs
        The jobs, sorted on construction.
    """

    jobs: tuple[ElasticJob, ...]

    def __post_init__(self) -> None:
        names = [job.name for job in self.jobs]
        if len(set(names)) != len(names):
            duplicated = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"ElasticWorkload.jobs: duplicate names {duplicated[:5]}")
        ordered = tuple(sorted(self.jobs, key=lambda j: (j.submit_time, j.name)))
        object.__setattr__(self, "jobs", ordered)

    def __len__(self) -> int:
        return len(self.jobs)

    def replace(self, **changes: Any) -> ElasticWorkload:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def load_pollux_workload(path: str | Path) -> ElasticWorkload:
    """Read a Pollux workload CSV (header ``name,time,application,num_replicas,batch_size``);
    a bare name such as ``workload-6.csv`` is one of the shipped workloads
    (:func:`~ddlsched.core.data.resolve_trace`).

    Raises
    ------
    InputError
        One line naming the file, line and column of the first bad value.
    """
    path = resolve_trace(path)
    jobs = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = tuple(reader.fieldnames or ())
        missing = [c for c in WORKLOAD_COLUMNS if c not in header]
        if missing:
            raise InputError(
                f"{path}: line 1: missing column(s) {missing}; expected header "
                f"{','.join(WORKLOAD_COLUMNS)}"
            )
        for row in reader:
            line = reader.line_num
            jobs.append(_job_from_row(row, f"{path}: line {line}"))
    if not jobs:
        raise InputError(f"{path}: no jobs")
    try:
        return ElasticWorkload(tuple(jobs))
    except ValueError as error:
        raise InputError(f"{path}: {error}") from None


def _job_from_row(row: dict[str, str], where: str) -> ElasticJob:
    def number(column: str, kind: type) -> Any:
        text = (row.get(column) or "").strip()
        try:
            value = kind(text) if kind is float else int(text)
        except ValueError:
            raise InputError(f"{where}: column {column}: not a number: {text!r}") from None
        if not math.isfinite(value) or value < (0 if column == "time" else 1):
            raise InputError(f"{where}: column {column}: out of range: {text!r}")
        return value

    name = (row.get("name") or "").strip()
    if not name:
        raise InputError(f"{where}: column name: empty")
    model = (row.get("application") or "").strip()
    if model not in EPOCH_BUDGETS:
        raise InputError(
            f"{where}: column application: unknown model {model!r} "
            f"(expected one of {', '.join(MODELS)})"
        )
    return ElasticJob(
        name=name,
        model=model,
        submit_time=number("time", float),
        asked_replicas=number("num_replicas", int),
        asked_batch_size=number("batch_size", int),
    )
