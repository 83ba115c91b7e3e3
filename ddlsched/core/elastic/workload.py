"""Elastic jobs, workloads and clusters, and the Pollux workload CSV reader."""

from __future__ import annotations

import csv
import math
import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

from ddlsched.core.data import resolve_trace
from ddlsched.core.elastic.application import EPOCH_BUDGETS, MODELS
from ddlsched.core.elastic.gpu_types import ELASTIC_GPU_TYPES
from ddlsched.core.model import MAX_TIME, InputError, is_whole, replaced

__all__ = [
    "WORKLOAD_COLUMNS",
    "AskedReplicasCapped",
    "ElasticCluster",
    "ElasticJob",
    "ElasticWorkload",
    "fit_to_cluster",
    "load_pollux_workload",
]

WORKLOAD_COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")
"""The header of a Pollux workload file (petuum/adaptdl, simulator/workloads/)."""


@dataclass(frozen=True)
class ElasticCluster:
    """Nodes of ``gpus_per_node`` GPUs each, of one GPU type or of several.

    Untyped (``node_types`` empty, the Pollux study's 16 nodes x 4 GPUs): every
    job runs at its profiled goodput. Typed: node ``n`` holds GPUs of type
    ``node_types[n]`` (one of
    :data:`~ddlsched.core.elastic.gpu_types.ELASTIC_GPU_TYPES`), a job runs on
    one type at a time at the type's speed
    (:func:`~ddlsched.core.elastic.gpu_types.goodput_scale`).

    Attributes
    ----------
    num_nodes
        Nodes.
    gpus_per_node
        GPUs on each node.
    node_types
        The GPU type of each node (empty: one untyped pool).
    """

    num_nodes: int = 16
    gpus_per_node: int = 4
    node_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("num_nodes", "gpus_per_node"):
            value = getattr(self, name)
            if not is_whole(value) or value < 1:
                raise ValueError(f"ElasticCluster.{name} must be a positive int, got {value!r}")
            object.__setattr__(self, name, int(value))
        if isinstance(self.node_types, str):
            raise ValueError(
                f"ElasticCluster.node_types must be a sequence of type names, got "
                f"{self.node_types!r}"
            )
        object.__setattr__(self, "node_types", tuple(self.node_types))
        if self.node_types and len(self.node_types) != self.num_nodes:
            raise ValueError(
                f"ElasticCluster.node_types names {len(self.node_types)} nodes, "
                f"num_nodes is {self.num_nodes}"
            )
        unknown = sorted(set(self.node_types) - set(ELASTIC_GPU_TYPES), key=str)
        if unknown:
            raise ValueError(
                f"ElasticCluster.node_types: unknown GPU type {unknown[0]!r}; elastic "
                f"clusters know {', '.join(ELASTIC_GPU_TYPES)}"
            )

    @classmethod
    def from_type_counts(
        cls, counts: Iterable[tuple[str, int]], gpus_per_node: int = 4
    ) -> ElasticCluster:
        """A typed cluster from ``(type, nodes)`` pairs (the ``--gpu-types v100:6,k80:5`` form).

        Raises
        ------
        ValueError
            A count that is not a positive int, a type named twice or unknown, no nodes.
        """
        pairs = list(counts)
        names = [name for name, _ in pairs]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"ElasticCluster: GPU type {repeated[0]!r} named more than once")
        for name, number in pairs:
            if not is_whole(number) or number < 1:
                raise ValueError(
                    f"ElasticCluster: nodes of type {name!r} must be a positive int, got "
                    f"{number!r}"
                )
        types = tuple(name for name, number in pairs for _ in range(int(number)))
        if not types:
            raise ValueError("ElasticCluster: no GPU types given")
        return cls(len(types), gpus_per_node, types)

    @property
    def total_gpus(self) -> int:
        """All GPUs."""
        return self.num_nodes * self.gpus_per_node

    @property
    def typed(self) -> bool:
        """Whether nodes have GPU types (else one untyped pool)."""
        return bool(self.node_types)

    @property
    def gpu_types(self) -> tuple[str | None, ...]:
        """The distinct types in order of first node (``(None,)`` when untyped)."""
        return tuple(dict.fromkeys(self.node_types)) if self.node_types else (None,)

    def type_of(self, node: int) -> str | None:
        """The GPU type of ``node`` (``None`` when untyped)."""
        return self.node_types[node] if self.node_types else None

    def nodes_of(self, gpu_type: str | None) -> tuple[int, ...]:
        """The nodes of ``gpu_type`` in index order (every node when untyped)."""
        return tuple(n for n in range(self.num_nodes) if self.type_of(n) == gpu_type)

    def gpus_of(self, gpu_type: str | None) -> int:
        """GPUs of ``gpu_type`` (every GPU when untyped)."""
        return len(self.nodes_of(gpu_type)) * self.gpus_per_node

    @property
    def most_gpus_per_job(self) -> int:
        """The most GPUs one job can hold: every GPU, or on a typed cluster those of the
        type with most (a job runs on one type at a time)."""
        return max(self.gpus_of(gpu_type) for gpu_type in self.gpu_types)


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
        Training budget in epochs, from 1 to the model's Pollux budget (the epochs its
        profile covers); default that budget.
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
        if not (math.isfinite(self.submit_time) and 0 <= self.submit_time <= MAX_TIME):
            raise ValueError(
                f"ElasticJob.submit_time must be in [0, {MAX_TIME:g}] s, got {self.submit_time!r}"
            )
        for name in ("asked_replicas", "asked_batch_size"):
            value = getattr(self, name)
            if not is_whole(value) or value < 1:
                raise ValueError(f"ElasticJob.{name} must be a positive int, got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.epochs == 0:
            object.__setattr__(self, "epochs", EPOCH_BUDGETS[self.model])
        most = EPOCH_BUDGETS[self.model]
        if not is_whole(self.epochs) or not 1 <= self.epochs <= most:
            raise ValueError(
                f"ElasticJob {self.name!r}: epochs must be in 1..{most} for model "
                f"{self.model!r} (its profiled epochs), got {self.epochs!r}"
            )
        object.__setattr__(self, "epochs", int(self.epochs))

    def replace(self, **changes: object) -> ElasticJob:
        """A copy with some fields changed (validated again)."""
        return replaced(self, **changes)


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

    def replace(self, **changes: object) -> ElasticWorkload:
        """A copy with some fields changed (validated again)."""
        return replaced(self, **changes)


def load_pollux_workload(path: str | os.PathLike[str]) -> ElasticWorkload:
    """Read a Pollux workload CSV (header ``name,time,application,num_replicas,batch_size``);
    a bare name such as ``workload-6.csv`` is one of the shipped workloads
    (:func:`~ddlsched.core.data.resolve_trace`). A leading UTF-8 byte-order mark is skipped;
    arrival times run from 0 to :data:`~ddlsched.core.model.MAX_TIME` seconds, as a rigid
    trace's submit times.

    Raises
    ------
    InputError
        One line naming the file, line and column of the first bad value (a row with fewer
        or more fields than the header: its line).
    """
    path = resolve_trace(path)
    jobs = []
    with path.open(newline="", encoding="utf-8-sig") as handle:
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
            fields = len(header) + len(row.get(None, ())) - list(row.values()).count(None)
            if fields != len(header):
                raise InputError(
                    f"{path}: line {line}: {fields} fields, the header names {len(header)} "
                    f"({','.join(header)})"
                )
            jobs.append(_job_from_row(row, f"{path}: line {line}"))
    if not jobs:
        raise InputError(f"{path}: no jobs")
    try:
        return ElasticWorkload(tuple(jobs))
    except ValueError as error:
        raise InputError(f"{path}: {error}") from None


def _job_from_row(row: dict[str, str], where: str) -> ElasticJob:
    def number(column: str, whole: bool = False) -> float:
        """The column's value, refused unless a number (a whole one if ``whole``) in range."""
        text = (row.get(column) or "").strip()
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            raise InputError(f"{where}: column {column}: not a number: {text!r}") from None
        if not math.isfinite(value) or value < (0 if column == "time" else 1):
            raise InputError(f"{where}: column {column}: out of range: {text!r}")
        if column == "time" and value > MAX_TIME:
            raise InputError(f"{where}: column time: {text!r} s is past {MAX_TIME:g} s")
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
        submit_time=number("time"),
        asked_replicas=int(number("num_replicas", whole=True)),
        asked_batch_size=int(number("batch_size", whole=True)),
    )


class AskedReplicasCapped(UserWarning):
    """Jobs asked more GPUs than one job can hold on the cluster: :func:`fit_to_cluster`
    capped them (the message names the jobs)."""


SHOWN_JOBS = 3
"""Capped jobs a warning names (then how many more)."""


def fit_to_cluster(
    workload: ElasticWorkload, cluster: ElasticCluster, where: str = "workload"
) -> ElasticWorkload:
    """``workload`` with each job's asked GPUs capped to the most one job can hold on
    ``cluster`` (:attr:`ElasticCluster.most_gpus_per_job`), with one
    :class:`AskedReplicasCapped` warning naming ``where`` (the file), the field and the
    jobs. Every elastic run starts from it, so every policy sees the same jobs (a rigid
    policy runs a job at its asked GPUs; an elastic one chooses its own)."""
    most = cluster.most_gpus_per_job
    capped = [job for job in workload.jobs if job.asked_replicas > most]
    if not capped:
        return workload
    named = ", ".join(
        f"job {job.name!r} asks {job.asked_replicas:,} GPUs" for job in capped[:SHOWN_JOBS]
    )
    more = f" (and {len(capped) - SHOWN_JOBS} more)" if len(capped) > SHOWN_JOBS else ""
    warnings.warn(
        f"{where}: num_replicas: {named}{more}; capped to {most}, the most GPUs one job can "
        "hold on this cluster, for every policy",
        AskedReplicasCapped,
        stacklevel=2,
    )
    jobs = tuple(
        job.replace(asked_replicas=min(job.asked_replicas, most)) for job in workload.jobs
    )
    return workload.replace(jobs=jobs)
