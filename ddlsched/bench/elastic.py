"""Entries of the elastic model: the Pollux workloads, each with its elastic sandwich.

An elastic entry's instance is a Pollux workload (Qiao et al., *Pollux: Co-adaptive Cluster
Scheduling for Goodput-Optimized Deep Learning*, OSDI 2021; the eight workloads of its
artifact ship with the package) on a cluster with the round-based simulator's settings
(:mod:`ddlsched.elastic`: 16 nodes x 4 GPUs, 60 s rounds, 30 s restarts by default). Its
objective is the total JCT ``sum_i (C_i - r_i)`` (s) of a run of the simulator, so an elastic
entry's bounds are on the flow directly (no ``sum w r`` to add: every weight is 1).

Its certificate (``problem: "elastic"``) holds the elastic sandwich
(:func:`ddlsched.elastic.sandwich`): the proven lower bound (the fast bound of
:mod:`ddlsched.formulations.elastic_bounds` or the Lagrangian of
:mod:`ddlsched.formulations.elastic_lagrangian`, named with its settings) and, as the upper
bound, the best run the independent check accepts, stored as its completions and every
round's allocations: what :func:`ddlsched.proofs_checks.elastic.check_elastic` reads and
recomputes. The entry file is ``ddlsched.bench-elastic-entry/1`` (``elastic-entry.schema.json``),
listed in the library's index with ``"problem": "elastic"``.
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ddlsched.core.elastic import ElasticCluster, ElasticJob, ElasticWorkload
from ddlsched.core.jsontypes import JsonObject, JsonValue
from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from ddlsched.algorithms.elastic import ElasticResult, ElasticSimParams

ELASTIC_PROBLEM = "elastic"
ELASTIC_ENTRY_FORMAT = "ddlsched.bench-elastic-entry/1"
WORKLOAD_HEADER = ("name", "time", "application", "num_replicas", "batch_size")
"""The columns of a Pollux workload CSV, as :func:`ddlsched.elastic.load_workload` reads it."""

_INSTANCE_FIELDS = ("workload", "cluster", "round_length", "restart_time")
_JOB_FIELDS = ("name", "model", "submit_time", "asked_replicas", "asked_batch_size", "epochs")
_CERTIFICATE_FIELDS = (
    "problem",
    "status",
    "lower_bound",
    "lower_bound_name",
    "lower_bound_settings",
    "upper_bound",
    "upper_method",
    "run",
    "command",
    "version",
    "produced",
    "history",
)
_ENTRY_FIELDS = ("format", "library_version", "name", "tier", "family", "instance", "certificate")


@dataclass(frozen=True)
class ElasticInstance:
    """A Pollux workload on a cluster, with the simulator's round length and restart delay.

    Attributes
    ----------
    workload
        The jobs.
    cluster
        The cluster (one GPU type: the elastic bounds take a uniform cluster).
    round_length, restart_time
        Seconds per round and of each restart after a placement change.
    """

    workload: ElasticWorkload
    cluster: ElasticCluster
    round_length: float = 60.0
    restart_time: float = 30.0

    @property
    def num_jobs(self) -> int:
        """The number of jobs."""
        return len(self.workload.jobs)

    def params(self) -> ElasticSimParams:
        """The simulator's settings of this instance."""
        from ddlsched.algorithms.elastic import ElasticSimParams

        return ElasticSimParams(round_length=self.round_length, restart_time=self.restart_time)

    def fitted(self) -> ElasticWorkload:
        """The jobs as every run and bound sees them: asked GPUs capped to the most one job
        can hold (:func:`~ddlsched.core.elastic.fit_to_cluster`; the warning is the loader's
        business, not the library's)."""
        from ddlsched.core.elastic import fit_to_cluster

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fit_to_cluster(self.workload, self.cluster)

    def to_dict(self) -> JsonObject:
        """The JSON form (``elastic-entry.schema.json``, ``instance``)."""
        return {
            "workload": [
                {
                    "name": job.name,
                    "model": job.model,
                    "submit_time": job.submit_time,
                    "asked_replicas": job.asked_replicas,
                    "asked_batch_size": job.asked_batch_size,
                    "epochs": job.epochs,
                }
                for job in self.workload.jobs
            ],
            "cluster": {
                "num_nodes": self.cluster.num_nodes,
                "gpus_per_node": self.cluster.gpus_per_node,
                "node_types": list[JsonValue](self.cluster.node_types),
            },
            "round_length": self.round_length,
            "restart_time": self.restart_time,
        }

    @classmethod
    def from_dict(cls, doc: object) -> ElasticInstance:
        """Read :meth:`to_dict`'s form.

        Raises
        ------
        InputError
            Naming the bad field.
        """
        fields = _fields(doc, "instance", _INSTANCE_FIELDS)
        rows = fields["workload"]
        if not isinstance(rows, list) or not rows:
            raise InputError("instance.workload: expected a non-empty list of jobs")
        jobs = []
        for k, row in enumerate(rows):
            job = _fields(row, f"instance.workload[{k}]", _JOB_FIELDS)
            try:
                jobs.append(ElasticJob(**job))  # type: ignore[arg-type]
            except (TypeError, ValueError) as error:
                raise InputError(f"instance.workload[{k}]: {error}") from None
        cluster = _fields(fields["cluster"], "instance.cluster", _CLUSTER_FIELDS)
        try:
            types = cluster["node_types"]
            built = ElasticCluster(
                num_nodes=cluster["num_nodes"],  # type: ignore[arg-type]
                gpus_per_node=cluster["gpus_per_node"],  # type: ignore[arg-type]
                node_types=tuple(types) if isinstance(types, list) else (),  # type: ignore[arg-type]
            )
            workload = ElasticWorkload(tuple(jobs))
        except (TypeError, ValueError) as error:
            raise InputError(f"instance: {error}") from None
        length, restart = fields["round_length"], fields["restart_time"]
        if not _positive(length) or not _positive(restart, zero=True):
            raise InputError(
                f"instance: round_length {length!r} and restart_time {restart!r}: "
                "expected numbers > 0 and >= 0"
            )
        return cls(workload, built, float(length), float(restart))  # type: ignore[arg-type]

    def workload_csv(self) -> str:
        """The jobs as a Pollux workload CSV (what ``ddlsched simulate --trace`` and
        :func:`ddlsched.elastic.load_workload` read).

        Raises
        ------
        InputError
            When a job's epochs are not its model's budget (the CSV has no column for them).
        """
        from ddlsched.core.elastic.application import EPOCH_BUDGETS

        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(WORKLOAD_HEADER)
        for job in self.workload.jobs:
            if job.epochs != EPOCH_BUDGETS[job.model]:
                raise InputError(
                    f"job {job.name!r}: epochs {job.epochs} is not the {job.model} budget; a "
                    "Pollux workload CSV cannot hold it"
                )
            time = int(job.submit_time) if job.submit_time.is_integer() else job.submit_time
            writer.writerow([job.name, time, job.model, job.asked_replicas, job.asked_batch_size])
        return text.getvalue()


_CLUSTER_FIELDS = ("num_nodes", "gpus_per_node", "node_types")


@dataclass(frozen=True)
class ElasticCertificate:
    """What is proven of an elastic entry's least total JCT ``OPT`` (s), and how.

    Attributes
    ----------
    status
        ``"optimal"`` (the bounds meet) or ``"interval"``.
    lower_bound
        A proven lower bound on the total JCT of any run of the simulator.
    lower_bound_name
        ``"combined"`` (the fast bound) or ``"lagrangian"`` (the sandwich's
        :attr:`~ddlsched.experiments.elastic.ElasticSandwich.lower_method`).
    lower_bound_settings
        What recomputes it: ``method`` (``"elastic_sandwich"``), ``lagrangian_steps`` and
        ``steering_upper_bound`` (the best run's total, which steers the Lagrangian's steps).
    upper_bound
        The total JCT of :attr:`run`.
    upper_method
        The policy or offline schedule that made :attr:`run`.
    run
        The run: ``completion`` (job name -> completion time, s) and ``rounds`` (each
        round's ``time`` and ``allocations``: job name -> ``placement`` ``[[node, gpus],
        ...]``, ``atomic_bsz``, ``accum_steps``).
    command, version, produced, history
        As :class:`~ddlsched.bench.library.Certificate`'s.

    Raises
    ------
    InputError
        On an unknown status, a bound that is not a finite number, or a missing text.
    """

    status: str
    lower_bound: float
    lower_bound_name: str
    lower_bound_settings: dict[str, JsonValue]
    upper_bound: float
    upper_method: str
    run: dict[str, JsonValue]
    command: str
    version: str
    produced: str
    history: tuple[dict[str, JsonValue], ...] = field(default=())

    problem = ELASTIC_PROBLEM

    def __post_init__(self) -> None:
        from ddlsched.bench.library import STATUSES

        if self.status not in STATUSES:
            raise InputError(
                f"certificate.status: expected one of {STATUSES}, got {self.status!r}"
            )
        for name in ("lower_bound", "upper_bound"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"certificate.{name}: expected a number, got {value!r}")
            if not math.isfinite(value):
                raise InputError(f"certificate.{name}: must be finite, got {value!r}")
            object.__setattr__(self, name, float(value))
        for name in ("lower_bound_name", "upper_method", "command", "version", "produced"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise InputError(f"certificate.{name}: expected a non-empty text")
        for name in ("lower_bound_settings", "run"):
            if not isinstance(getattr(self, name), dict):
                raise InputError(f"certificate.{name}: expected an object")
        object.__setattr__(self, "history", tuple(self.history))

    @property
    def optimum(self) -> float | None:
        """``OPT``: the upper bound when proven optimal, else ``None``."""
        return self.upper_bound if self.status == "optimal" else None

    def to_dict(self) -> JsonObject:
        """The JSON form (``elastic-entry.schema.json``, ``certificate``)."""
        return {
            "problem": ELASTIC_PROBLEM,
            "status": self.status,
            "lower_bound": self.lower_bound,
            "lower_bound_name": self.lower_bound_name,
            "lower_bound_settings": self.lower_bound_settings,
            "upper_bound": self.upper_bound,
            "upper_method": self.upper_method,
            "run": self.run,
            "command": self.command,
            "version": self.version,
            "produced": self.produced,
            "history": list(self.history),
        }

    @classmethod
    def from_dict(cls, doc: object) -> ElasticCertificate:
        """Read :meth:`to_dict`'s form.

        Raises
        ------
        InputError
            Naming the missing, unknown or bad field.
        """
        fields = _fields(doc, "certificate", _CERTIFICATE_FIELDS)
        if fields["problem"] != ELASTIC_PROBLEM:
            raise InputError(
                f"certificate.problem: expected {ELASTIC_PROBLEM!r}, got {fields['problem']!r}"
            )
        history = fields["history"]
        if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
            raise InputError("certificate.history: expected a list of objects")
        return cls(
            status=fields["status"],  # type: ignore[arg-type]
            lower_bound=fields["lower_bound"],  # type: ignore[arg-type]
            lower_bound_name=fields["lower_bound_name"],  # type: ignore[arg-type]
            lower_bound_settings=fields["lower_bound_settings"],  # type: ignore[arg-type]
            upper_bound=fields["upper_bound"],  # type: ignore[arg-type]
            upper_method=fields["upper_method"],  # type: ignore[arg-type]
            run=fields["run"],  # type: ignore[arg-type]
            command=fields["command"],  # type: ignore[arg-type]
            version=fields["version"],  # type: ignore[arg-type]
            produced=fields["produced"],  # type: ignore[arg-type]
            history=tuple(h for h in history if isinstance(h, dict)),
        )


@dataclass(frozen=True)
class ElasticEntry:
    """One elastic instance of the library with its certificate.

    Attributes
    ----------
    name, tier, family
        As :class:`~ddlsched.bench.library.Entry`'s; the family is ``{"workload": file,
        "cluster": {...}}``.
    instance
        The workload and cluster.
    certificate
        What is proven of its least total JCT.
    """

    name: str
    tier: str
    family: dict[str, JsonValue]
    instance: ElasticInstance
    certificate: ElasticCertificate

    @property
    def flow_lower_bound(self) -> float:
        """A proven lower bound on the least total JCT (s)."""
        return self.certificate.lower_bound

    @property
    def flow_upper_bound(self) -> float:
        """The total JCT of the certificate's run (s)."""
        return self.certificate.upper_bound

    def to_dict(self) -> JsonObject:
        """The entry file's document (``ddlsched.bench-elastic-entry/1``)."""
        from ddlsched.bench.library import LIBRARY_VERSION

        return {
            "format": ELASTIC_ENTRY_FORMAT,
            "library_version": LIBRARY_VERSION,
            "name": self.name,
            "tier": self.tier,
            "family": self.family,
            "instance": self.instance.to_dict(),
            "certificate": self.certificate.to_dict(),
        }

    @classmethod
    def from_dict(cls, doc: object) -> ElasticEntry:
        """Read :meth:`to_dict`'s form.

        Raises
        ------
        InputError
            Naming the bad field (and the entry, once its name is read).
        """
        from ddlsched.bench.library import LIBRARY_VERSION, TIERS

        fields = _fields(doc, "entry", _ENTRY_FIELDS)
        if fields["format"] != ELASTIC_ENTRY_FORMAT:
            raise InputError(
                f"entry.format: expected {ELASTIC_ENTRY_FORMAT!r}, got {fields['format']!r}"
            )
        if fields["library_version"] != LIBRARY_VERSION:
            raise InputError(
                f"entry.library_version: this ddlsched reads {LIBRARY_VERSION!r}, got "
                f"{fields['library_version']!r}"
            )
        name, tier, family = fields["name"], fields["tier"], fields["family"]
        if not isinstance(name, str) or tier not in TIERS or not isinstance(family, dict):
            raise InputError(f"entry: bad name {name!r}, tier {tier!r} or family")
        try:
            return cls(
                name,
                str(tier),
                family,
                ElasticInstance.from_dict(fields["instance"]),
                ElasticCertificate.from_dict(fields["certificate"]),
            )
        except InputError as error:
            raise InputError(f"{name}: {error}") from None

    def result(self) -> ElasticResult:
        """The certificate's run as the simulator's result, for the independent check.

        Raises
        ------
        InputError
            On a run whose form is wrong (naming the field).
        """
        from ddlsched.algorithms.elastic.simulator import (
            Allocation,
            ElasticResult,
            RoundRecord,
        )

        run = _fields(self.certificate.run, "certificate.run", ("completion", "rounds"))
        completion, rounds = run["completion"], run["rounds"]
        if not isinstance(completion, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in completion.values()
        ):
            raise InputError("certificate.run.completion: expected job name -> time")
        if not isinstance(rounds, list):
            raise InputError("certificate.run.rounds: expected a list")
        records = []
        for k, row in enumerate(rounds):
            where = f"certificate.run.rounds[{k}]"
            fields = _fields(row, where, ("time", "allocations"))
            allocations = fields["allocations"]
            time = fields["time"]
            if not isinstance(allocations, dict) or not isinstance(time, int | float):
                raise InputError(f"{where}: expected a time and allocations")
            built = {}
            for job, alloc in allocations.items():
                parts = _fields(
                    alloc, f"{where}.{job}", ("placement", "atomic_bsz", "accum_steps")
                )
                placement, bsz, accum = (
                    parts[key] for key in ("placement", "atomic_bsz", "accum_steps")
                )
                if not (
                    isinstance(placement, list) and isinstance(bsz, int) and isinstance(accum, int)
                ):
                    raise InputError(f"{where}.{job}: expected a placement and whole batches")
                pairs = [
                    (node, gpus)
                    for pair in placement
                    if isinstance(pair, list)
                    and len(pair) == 2
                    and isinstance(node := pair[0], int)
                    and isinstance(gpus := pair[1], int)
                ]
                if len(pairs) != len(placement):
                    raise InputError(f"{where}.{job}.placement: expected [[node, gpus], ...]")
                try:
                    built[job] = Allocation(tuple(pairs), bsz, accum)
                except (TypeError, ValueError) as error:
                    raise InputError(f"{where}.{job}: {error}") from None
            records.append(RoundRecord(float(time), built, {}))
        return ElasticResult(
            self.certificate.upper_method,
            self.instance.fitted(),
            self.instance.cluster,
            self.instance.params(),
            {job: float(value) for job, value in completion.items()},  # type: ignore[arg-type]
            tuple(records),
        )


def run_document(result: ElasticResult) -> dict[str, JsonValue]:
    """A run as :attr:`ElasticCertificate.run` stores it."""
    rounds: list[JsonValue] = [
        {
            "time": record.time,
            "allocations": {
                job: {
                    "placement": [[node, gpus] for node, gpus in alloc.placement],
                    "atomic_bsz": alloc.atomic_bsz,
                    "accum_steps": alloc.accum_steps,
                }
                for job, alloc in record.allocations.items()
            },
        }
        for record in result.records
    ]
    completion: dict[str, JsonValue] = dict(result.completion)
    return {"completion": completion, "rounds": rounds}


def total_jct(instance: ElasticInstance, completion: Mapping[str, float]) -> float:
    """``sum_i (C_i - r_i)`` of ``completion`` over the instance's jobs."""
    return math.fsum(completion[job.name] - job.submit_time for job in instance.workload.jobs)


def _positive(value: object, zero: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    return value >= 0 if zero else value > 0


def _fields(doc: object, where: str, names: tuple[str, ...]) -> Mapping[str, JsonValue]:
    """``doc``'s fields, exactly ``names``: a missing or an unknown one is refused."""
    if not isinstance(doc, dict):
        raise InputError(f"{where}: expected an object, got {type(doc).__name__}")
    missing = [name for name in names if name not in doc]
    if missing:
        raise InputError(f"{where}: missing field {missing[0]!r}")
    unknown = sorted(set(doc) - set(names))
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r}")
    return doc
