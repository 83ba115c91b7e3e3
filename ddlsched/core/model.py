"""The shared, validated data model: clusters, jobs, instances and schedules.

Every object checks itself on construction and raises :class:`InputError` (a
``ValueError``) naming the field and the bad value. Objects are immutable;
use :meth:`Cluster.replace`, :meth:`Job.replace` or :meth:`Instance.replace`
to derive a changed copy. Nothing in ``formulations/``, ``algorithms/`` or
``proofs_checks/`` mutates them.

The model is defined in :ref:`model-notation` (``docs/guide/model.md``),
after Luo, Liu, Lee, Shroff, *Prediction-Assisted Online Distributed Deep
Learning Workload Scheduling in GPU Clusters*, INFOCOM 2025,
arXiv:2501.05563: a job is a graph of workers, one GPU each, with traffic
``q_e`` (GB per iteration) on its edges.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeGuard, TypeVar, cast

import numpy as np

from ddlsched.core.jsontypes import JsonObject

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

FeatureValue = str | int | float | bool


class InputError(ValueError):
    """Bad input: the message names the field (as a path) and the value."""


Frozen = TypeVar("Frozen", bound="DataclassInstance")
"""A frozen dataclass of the package, which checks itself on construction."""


def replaced(obj: Frozen, **changes: object) -> Frozen:
    """A copy of the dataclass ``obj`` with ``changes`` applied, validated again by its
    constructor (the ``replace()`` of every validated object of the package).

    Parameters
    ----------
    obj
        A dataclass instance.
    **changes
        New values by field name; the constructor checks them.

    Raises
    ------
    TypeError
        For a name that is not a field of ``obj``.
    ValueError
        For a value the constructor refuses, naming the field.
    """
    return dataclasses.replace(obj, **changes)


def _fail(path: str, message: str) -> InputError:
    return InputError(f"{path}: {message}")


MAX_TIME = 1e11
"""Largest release in seconds (about 3,000 years); also the largest trace submit time
and duration."""
MAX_HORIZON = 1e12
"""Largest horizon bound of an instance (:attr:`Instance.horizon`): its latest release
plus every job's slowest duration ``K_i * alpha_i^max``, in seconds. A schedule that
never leaves the cluster empty while a job waits ends by then."""
SCHEDULE_ROOM = 10.0
"""How many times the horizon cap a schedule may reach: room for schedules that idle
(A-SRPT starts a job at its virtual completion, itself by the horizon, so it ends by
twice the horizon; time-indexed models round to slots; resumed pieces pay restart costs)."""
MAX_SCHEDULE_TIME = SCHEDULE_ROOM * MAX_HORIZON
"""Largest start, end or piece time of a schedule, in seconds: every schedule of an
accepted instance fits, since its horizon is at most :data:`MAX_HORIZON`."""
MAX_COMPUTE_TIME = 1e6
"""Largest compute time of one iteration, in seconds."""
MAX_TRAFFIC = 1e9
"""Largest traffic of one edge per iteration, in GB."""
MAX_ITERATIONS = 10**12
"""Largest iteration count."""
MAX_WEIGHT = 1e6
"""Largest job weight."""
BANDWIDTH_RANGE = (1e-6, 1e9)
"""Accepted bandwidths, in GB/s."""
SLOT_RANGE = (1e-6, 1e6)
"""Accepted slot lengths, in seconds."""
MAX_GPUS = 1_000_000
"""Largest GPU count of a server or a job, and largest number of servers."""


def is_whole(value: object) -> TypeGuard[int | np.integer]:
    """Whether ``value`` is an integer: a Python ``int`` or a NumPy integer (``np.int64``,
    what arithmetic on arrays gives), never a bool (``True`` is an int in Python, and a
    ``"gpus": true`` in a file is a mistake). Every integer setting is checked with it."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _check_int(value: object, path: str, minimum: int, maximum: int | None = None) -> int:
    if not is_whole(value):
        raise _fail(path, f"expected an integer, got {_short(value)}")
    if value < minimum:
        raise _fail(path, f"must be >= {minimum}, got {_short(value)}")
    if maximum is not None and value > maximum:
        raise _fail(path, f"must be <= {maximum:,}, got {_short(value)}")
    return int(value)


def _short(value: object) -> str:
    """``repr(value)``, shortened if huge (a 400-digit integer)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def _check_real(
    value: object,
    path: str,
    *,
    minimum: float | None = None,
    positive: bool = False,
    maximum: float | None = None,
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _fail(path, f"expected a number, got {_short(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise _fail(path, f"must be finite, got {_short(value)}")
    if positive and number <= 0:
        raise _fail(path, f"must be > 0, got {_short(value)}")
    if minimum is not None and number < minimum:
        raise _fail(path, f"must be >= {minimum:g}, got {_short(value)}")
    if maximum is not None and number > maximum:
        raise _fail(path, f"must be <= {maximum:g}, got {_short(value)}")
    return number


@dataclass(frozen=True)
class Cluster:
    """A GPU cluster: servers of one or several GPU types, two bandwidths.

    Parameters
    ----------
    gpus_per_server
        ``G_h`` for each server ``h`` (:ref:`model-cluster`), each >= 1.
    bandwidth_intra
        ``B_intra`` in GB/s, bandwidth between two GPUs of one server (of a
        type without its own value in ``type_bandwidth``).
    bandwidth_inter
        ``B_inter`` in GB/s, bandwidth between GPUs of different servers;
        ``0 < B_inter <= B_intra`` (and ``<=`` every type's bandwidth).
    server_types
        The GPU type of each server (``"v100"``, ``"k80"``, a user's own
        names), or empty: one unnamed type (the homogeneous cluster,
        every ``ddlsched.instance/1`` file). A job's compute time per
        iteration depends on the type (:meth:`Job.compute_on`).
    type_bandwidth
        Intra-server bandwidth (GB/s) per type, as a mapping or pairs;
        types not listed use ``bandwidth_intra``. Stored as sorted pairs.

    Raises
    ------
    InputError
        If a field is missing, of the wrong type or out of range.
    """

    gpus_per_server: tuple[int, ...]
    bandwidth_intra: float
    bandwidth_inter: float
    server_types: tuple[str, ...] = ()
    type_bandwidth: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        gpus = self.gpus_per_server
        if isinstance(gpus, (str, bytes)) or not isinstance(gpus, Iterable):
            raise _fail("cluster.gpus_per_server", f"expected a list, got {gpus!r}")
        checked = tuple(
            _check_int(g, f"cluster.gpus_per_server[{h}]", 1, MAX_GPUS) for h, g in enumerate(gpus)
        )
        if not checked:
            raise _fail("cluster.gpus_per_server", "needs at least one server")
        low, high = BANDWIDTH_RANGE
        intra = _check_real(
            self.bandwidth_intra, "cluster.bandwidth_intra", minimum=low, maximum=high
        )
        inter = _check_real(
            self.bandwidth_inter, "cluster.bandwidth_inter", minimum=low, maximum=high
        )
        if inter > intra:
            raise _fail(
                "cluster.bandwidth_inter",
                f"must be <= bandwidth_intra ({intra:g}), got {inter:g}",
            )
        object.__setattr__(self, "gpus_per_server", checked)
        object.__setattr__(self, "bandwidth_intra", intra)
        object.__setattr__(self, "bandwidth_inter", inter)
        types = self.server_types
        if isinstance(types, (str, bytes)) or not isinstance(types, Iterable):
            raise _fail("cluster.server_types", f"expected a list of names, got {_short(types)}")
        types = tuple(types)
        if types and len(types) != len(checked):
            raise _fail(
                "cluster.server_types",
                f"has {len(types)} entries but the cluster has {len(checked)} servers",
            )
        for h, name in enumerate(types):
            _check_type_name(name, f"cluster.server_types[{h}]")
        pairs = _type_pairs(self.type_bandwidth, "cluster.type_bandwidth")
        known = set(types)
        bandwidths = []
        for name, value in pairs:
            where = f"cluster.type_bandwidth.{name}"
            if name not in known:
                raise _fail(where, f"no server has type {name!r} (types: {sorted(known)})")
            bandwidth = _check_real(value, where, minimum=low, maximum=high)
            if bandwidth < inter:
                raise _fail(where, f"must be >= bandwidth_inter ({inter:g}), got {bandwidth:g}")
            bandwidths.append((name, bandwidth))
        object.__setattr__(self, "server_types", types)
        object.__setattr__(self, "type_bandwidth", tuple(bandwidths))

    @classmethod
    def uniform(
        cls,
        servers: int,
        gpus_per_server: int,
        bandwidth_intra: float,
        bandwidth_inter: float,
    ) -> Cluster:
        """``servers`` servers of ``gpus_per_server`` GPUs each."""
        _check_int(servers, "servers", 1, MAX_GPUS)
        return cls((gpus_per_server,) * servers, bandwidth_intra, bandwidth_inter)

    @cached_property
    def types(self) -> tuple[str, ...]:
        """The GPU types, in order of first server; ``("",)`` for an unnamed single type."""
        return tuple(dict.fromkeys(self.server_types)) or ("",)

    @cached_property
    def heterogeneous(self) -> bool:
        """Whether servers differ in type (then ``alpha`` needs the per-server formula)."""
        return len(self.types) > 1

    def type_of(self, server: int) -> str:
        """The GPU type of ``server`` (``""`` on a cluster without types)."""
        return self.server_types[server] if self.server_types else ""

    def intra_of(self, gpu_type: str) -> float:
        """Intra-server bandwidth (GB/s) of servers of ``gpu_type``."""
        for name, value in self.type_bandwidth:
            if name == gpu_type:
                return value
        return self.bandwidth_intra

    @cached_property
    def intra_by_server(self) -> np.ndarray:
        """Intra-server bandwidth of each server, as an array."""
        return np.array([self.intra_of(self.type_of(h)) for h in range(self.num_servers)])

    def __getstate__(self) -> dict[str, object]:
        # Pickling (child processes): cached values are recomputed on demand.
        cached = ("intra_by_server", "types", "heterogeneous", "num_gpus", "max_gpus_per_server")
        return {k: v for k, v in self.__dict__.items() if k not in cached}

    @property
    def num_servers(self) -> int:
        """``H``, the number of servers."""
        return len(self.gpus_per_server)

    @cached_property
    def num_gpus(self) -> int:
        """``M = sum_h G_h``, the number of GPUs (cached: loading a trace asks once per row,
        and on a million servers each sum took 0.6 ms, 50 s for the Philly trace)."""
        return sum(self.gpus_per_server)

    @cached_property
    def max_gpus_per_server(self) -> int:
        """``max_h G_h``."""
        return max(self.gpus_per_server)

    def replace(self, **changes: object) -> Cluster:
        """A copy with ``changes`` applied (validated again)."""
        return replaced(self, **changes)

    def to_dict(self) -> JsonObject:
        """The JSON form of the instance's ``cluster`` (types only in version 2)."""
        out: JsonObject = {
            "gpus_per_server": list(self.gpus_per_server),
            "bandwidth_intra": self.bandwidth_intra,
            "bandwidth_inter": self.bandwidth_inter,
        }
        if self.server_types:
            out["server_types"] = list(self.server_types)
        if self.type_bandwidth:
            out["type_bandwidth"] = dict(self.type_bandwidth)
        return out


def time_on(
    compute_times: tuple[tuple[str, float], ...], compute_time: float, gpu_type: str
) -> float:
    """The time listed for ``gpu_type`` in ``compute_times``, else ``compute_time``
    (:meth:`Job.compute_on`, shared with the online policies' job views)."""
    for name, value in compute_times:
        if name == gpu_type:
            return value
    return compute_time


def expand_types(counts: Iterable[tuple[str, int]]) -> tuple[str, ...]:
    """Server types from ``(type, servers)`` pairs: ``[("v100", 2), ("k80", 1)]`` gives
    ``("v100", "v100", "k80")`` (the ``--gpu-types`` and ``gpu_types`` settings)."""
    return tuple(name for name, count in counts for _ in range(count))


_TYPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")


def _check_type_name(name: object, path: str) -> str:
    if not isinstance(name, str) or not _TYPE_NAME.fullmatch(name):
        raise _fail(
            path,
            f"expected a GPU type name (letters, digits, _ . + -, at most 64), got {_short(name)}",
        )
    return name


def _type_pairs(value: object, path: str) -> tuple[tuple[str, object], ...]:
    """A mapping or pairs ``(type, value)`` as sorted pairs; names checked, no repeats."""
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise _fail(path, f"expected a mapping of GPU type to number, got {_short(value)}")
    else:
        items = []
        for k, pair in enumerate(value):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable):
                raise _fail(f"{path}[{k}]", f"expected (type, value), got {_short(pair)}")
            parts = tuple(pair)
            if len(parts) != 2:
                raise _fail(f"{path}[{k}]", f"expected (type, value), got {_short(pair)}")
            items.append(parts)
    names = [_check_type_name(name, f"{path} key") for name, _ in items]
    if len(set(names)) != len(names):
        raise _fail(path, "repeats a GPU type")
    return tuple(sorted(items))


@dataclass(frozen=True)
class Parallelism:
    """A parallelism configuration ``(dp, pp, tp)``.

    Worker ``(d, p, t)`` (data replica, pipeline stage, tensor shard) is node
    ``d * pp * tp + p * tp + t`` of the job graph (see :meth:`node`).
    """

    dp: int = 1
    pp: int = 1
    tp: int = 1

    def __post_init__(self) -> None:
        for name in ("dp", "pp", "tp"):
            _check_int(getattr(self, name), f"parallelism.{name}", 1)

    @property
    def gpus(self) -> int:
        """``g = dp * pp * tp``, one GPU per worker."""
        return self.dp * self.pp * self.tp

    def node(self, d: int, p: int, t: int) -> int:
        """The node index of worker ``(d, p, t)``."""
        return (d * self.pp + p) * self.tp + t

    def to_dict(self) -> JsonObject:
        """The JSON form: ``{"dp": .., "pp": .., "tp": ..}``."""
        return {"dp": self.dp, "pp": self.pp, "tp": self.tp}


Edge = tuple[int, int, float]


@dataclass(frozen=True)
class Job:
    """A distributed training job: a graph of ``gpus`` workers.

    Parameters
    ----------
    id
        Unique name within an instance.
    release
        ``r_i >= 0`` (s).
    iterations
        ``K_i >= 1``, the true iteration count (hidden from online policies).
    compute_time
        ``c_i > 0``, seconds per iteration excluding communication.
    gpus
        ``g_i >= 1``, one GPU per worker node ``0..gpus-1``.
    edges
        Undirected edges ``(u, v, q_e)`` with traffic ``q_e > 0`` in GB per
        iteration. Stored with ``u < v``; a self-loop or a repeated pair is
        an error (merge traffic before building the job).
    weight
        ``w_i > 0`` (default 1).
    parallelism
        The configuration the graph came from, if any; must have ``gpus``
        workers.
    features
        What a predictor may see (model name, user, batch size, ...).
    compute_times
        Seconds per iteration on each GPU type, as a mapping or pairs (the
        heterogeneous model; stored as sorted pairs): ``c_i(type)``. A type
        not listed runs at ``compute_time``; on a cluster without types
        only ``compute_time`` counts.
    """

    id: str
    release: float
    iterations: int
    compute_time: float
    gpus: int
    edges: tuple[Edge, ...] = ()
    weight: float = 1.0
    parallelism: Parallelism | None = None
    features: Mapping[str, FeatureValue] = field(default_factory=dict)
    compute_times: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise _fail("job.id", f"expected a non-empty string, got {self.id!r}")
        where = f"job {self.id!r}"
        release = _check_real(self.release, f"{where}.release", minimum=0.0, maximum=MAX_TIME)
        iterations = _check_int(self.iterations, f"{where}.iterations", 1, MAX_ITERATIONS)
        compute = _check_real(
            self.compute_time, f"{where}.compute_time", positive=True, maximum=MAX_COMPUTE_TIME
        )
        gpus = _check_int(self.gpus, f"{where}.gpus", 1, MAX_GPUS)
        weight = _check_real(self.weight, f"{where}.weight", positive=True, maximum=MAX_WEIGHT)
        if self.parallelism is not None:
            if not isinstance(self.parallelism, Parallelism):
                raise _fail(
                    f"{where}.parallelism",
                    f"expected a Parallelism, got {self.parallelism!r}",
                )
            if self.parallelism.gpus != gpus:
                p = self.parallelism
                raise _fail(
                    f"{where}.gpus",
                    f"{gpus} does not match parallelism dp*pp*tp = "
                    f"{p.dp}*{p.pp}*{p.tp} = {p.gpus}",
                )
        edges = _check_edges(self.edges, gpus, f"{where}.edges")
        if not isinstance(self.features, Mapping):
            raise _fail(f"{where}.features", f"expected a mapping, got {self.features!r}")
        for key, value in self.features.items():
            if not isinstance(key, str) or not isinstance(value, (str, int, float, bool)):
                raise _fail(
                    f"{where}.features",
                    f"{key!r}: {value!r} is not a string, number or boolean",
                )
        object.__setattr__(self, "release", release)
        object.__setattr__(self, "iterations", iterations)
        object.__setattr__(self, "compute_time", compute)
        object.__setattr__(self, "gpus", gpus)
        object.__setattr__(self, "weight", weight)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "features", MappingProxyType(dict(self.features)))
        times = tuple(
            (
                name,
                _check_real(
                    value, f"{where}.compute_times.{name}", positive=True, maximum=MAX_COMPUTE_TIME
                ),
            )
            for name, value in _type_pairs(self.compute_times, f"{where}.compute_times")
        )
        object.__setattr__(self, "compute_times", times)

    def compute_on(self, gpu_type: str) -> float:
        """``c_i(type)``: seconds per iteration on ``gpu_type`` (``compute_time`` if unlisted)."""
        return time_on(self.compute_times, self.compute_time, gpu_type)

    def __getstate__(self) -> dict[str, object]:
        # Pickling (child processes): a plain dict for the read-only view,
        # cached arrays left out.
        state = {k: v for k, v in self.__dict__.items() if k != "edge_arrays"}
        state["features"] = dict(self.features)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        # ``state`` is what __getstate__ gave, its features a plain dict.
        features = cast("dict[str, FeatureValue]", state["features"])
        self.__dict__.update(state, features=MappingProxyType(dict(features)))

    @cached_property
    def edge_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(u, v, q)`` as NumPy arrays, for vectorised ``alpha``."""
        if not self.edges:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy(), np.zeros(0)
        u, v, q = zip(*self.edges, strict=True)
        return (
            np.asarray(u, dtype=np.int64),
            np.asarray(v, dtype=np.int64),
            np.asarray(q, dtype=float),
        )

    @property
    def total_traffic(self) -> float:
        """``sum_e q_e`` (GB per iteration)."""
        return math.fsum(q for _, _, q in self.edges)

    def replace(self, **changes: object) -> Job:
        """A copy with ``changes`` applied (validated again)."""
        return replaced(self, **changes)

    def __hash__(self) -> int:
        return hash((self.id, self.release, self.iterations, self.edges))

    def to_dict(self) -> JsonObject:
        """The JSON form of one job of ``ddlsched.instance/1``.

        Edges are always written explicitly, so the file needs no model zoo.
        """
        out: JsonObject = {
            "id": self.id,
            "release": self.release,
            "weight": self.weight,
            "iterations": self.iterations,
            "compute_time": self.compute_time,
            "gpus": self.gpus,
        }
        if self.parallelism is not None:
            out["parallelism"] = self.parallelism.to_dict()
        out["edges"] = [[u, v, q] for u, v, q in self.edges]
        out["features"] = dict(self.features)
        if self.compute_times:
            out["compute_times"] = dict(self.compute_times)
        return out


def _check_edges(edges: object, gpus: int, path: str) -> tuple[Edge, ...]:
    if isinstance(edges, (str, bytes)) or not isinstance(edges, Iterable):
        raise _fail(path, f"expected a list of [u, v, traffic], got {edges!r}")
    checked: list[Edge] = []
    seen: set[tuple[int, int]] = set()
    for k, edge in enumerate(edges):
        here = f"{path}[{k}]"
        if isinstance(edge, (str, bytes)) or not isinstance(edge, Iterable):
            raise _fail(here, f"expected [u, v, traffic], got {edge!r}")
        parts = list(edge)
        if len(parts) != 3:
            raise _fail(here, f"expected [u, v, traffic], got {edge!r}")
        u = _check_int(parts[0], f"{here}[0]", 0)
        v = _check_int(parts[1], f"{here}[1]", 0)
        for node in (u, v):
            if node >= gpus:
                raise _fail(
                    here,
                    f"node {node} does not exist (the job has {gpus} nodes, 0..{gpus - 1})",
                )
        if u == v:
            raise _fail(here, f"self-loop on node {u}")
        q = _check_real(parts[2], f"{here}[2]", positive=True, maximum=MAX_TRAFFIC)
        key = (min(u, v), max(u, v))
        if key in seen:
            raise _fail(here, f"repeated edge between nodes {key[0]} and {key[1]}")
        seen.add(key)
        checked.append((key[0], key[1], q))
    return tuple(checked)


@dataclass(frozen=True)
class Instance:
    """A scheduling instance: a cluster, jobs and the MILP slot length.

    Parameters
    ----------
    cluster
        The cluster.
    jobs
        At least one job; ids unique; no job wider than the cluster.
    slot
        ``Delta > 0``, the slot length of time-indexed models (s).
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    slot: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.cluster, Cluster):
            raise _fail("cluster", f"expected a Cluster, got {self.cluster!r}")
        jobs = tuple(self.jobs)
        if not jobs:
            raise _fail("jobs", "needs at least one job")
        seen: set[str] = set()
        for k, job in enumerate(jobs):
            if not isinstance(job, Job):
                raise _fail(f"jobs[{k}]", f"expected a Job, got {job!r}")
            if job.id in seen:
                raise _fail(f"jobs[{k}].id", f"duplicate job id {job.id!r}")
            seen.add(job.id)
            if job.gpus > self.cluster.num_gpus:
                raise _fail(
                    f"jobs[{k}].gpus",
                    f"job {job.id!r} needs {job.gpus} GPUs but the cluster "
                    f"has only {self.cluster.num_gpus}",
                )
        slot = _check_real(self.slot, "slot", minimum=SLOT_RANGE[0], maximum=SLOT_RANGE[1])
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(self, "slot", slot)
        _check_horizon(self)

    @property
    def num_jobs(self) -> int:
        """``n``, the number of jobs."""
        return len(self.jobs)

    @property
    def horizon(self) -> float:
        """The latest release plus every job's :func:`slowest_duration` (s): a schedule
        that never leaves the cluster empty while a job waits ends by then. At most
        :data:`MAX_HORIZON` (checked on construction)."""
        latest = max(job.release for job in self.jobs)
        return latest + math.fsum(slowest_duration(job, self.cluster) for job in self.jobs)

    def __getstate__(self) -> dict[str, object]:
        # Pickling (child processes): the cached read-only index is rebuilt on demand.
        return {k: v for k, v in self.__dict__.items() if k != "job_index"}

    @cached_property
    def job_index(self) -> Mapping[str, int]:
        """Job id to position in :attr:`jobs`."""
        return MappingProxyType({job.id: k for k, job in enumerate(self.jobs)})

    @property
    def max_job_gpus(self) -> int:
        """``g_max``, the widest job."""
        return max(job.gpus for job in self.jobs)

    def replace(self, **changes: object) -> Instance:
        """A copy with ``changes`` applied (validated again)."""
        return replaced(self, **changes)

    def __hash__(self) -> int:
        return hash((self.cluster, self.jobs, self.slot))

    @property
    def typed(self) -> bool:
        """Whether the instance uses GPU types (and so needs ``ddlsched.instance/2``)."""
        return bool(self.cluster.server_types or self.cluster.type_bandwidth) or any(
            job.compute_times for job in self.jobs
        )

    def to_dict(self) -> JsonObject:
        """The JSON document: ``ddlsched.instance/1`` unless GPU types are used, then ``/2``."""
        return {
            "format": INSTANCE_FORMAT_V2 if self.typed else INSTANCE_FORMAT,
            "cluster": self.cluster.to_dict(),
            "slot": self.slot,
            "jobs": [job.to_dict() for job in self.jobs],
        }


class JobTimes(Protocol):
    """What :func:`slowest_alpha` reads of a job: a :class:`Job`, or an online
    policy's view of one."""

    @property
    def total_traffic(self) -> float:
        """``sum_e q_e`` (GB per iteration)."""
        ...

    def compute_on(self, gpu_type: str) -> float:
        """``c_i(type)``: seconds per iteration on ``gpu_type``."""
        ...


def slowest_alpha(job: JobTimes, cluster: Cluster) -> float:
    """``max_t c_i(t) + Q_i / B_inter`` (s per iteration): every edge across servers, on the
    cluster's slowest GPU type for the job; no mapping is slower (SPEC's ``alpha_i^max``,
    :func:`ddlsched.core.alpha.all_cut_alpha`). ``job`` is a :class:`Job` or a view of one."""
    compute = max(job.compute_on(gpu_type) for gpu_type in cluster.types)
    return compute + job.total_traffic / cluster.bandwidth_inter


def slowest_duration(job: Job, cluster: Cluster) -> float:
    """``K_i * alpha_i^max`` (s): the longest the job runs, whatever its mapping."""
    return job.iterations * slowest_alpha(job, cluster)


def _check_horizon(instance: Instance) -> None:
    """Refuse an instance whose schedules could end past what a schedule may hold: its
    horizon (latest release plus the jobs' slowest durations) must be at most
    :data:`MAX_HORIZON`. The message names the longest job, the usual culprit."""
    horizon = instance.horizon
    if horizon <= MAX_HORIZON:
        return
    durations = [slowest_duration(job, instance.cluster) for job in instance.jobs]
    k = max(range(len(durations)), key=durations.__getitem__)
    job = instance.jobs[k]
    raise _fail(
        "jobs",
        f"the horizon (latest release + the jobs' slowest durations, iterations x "
        f"(compute_time + traffic / bandwidth_inter)) must be <= {MAX_HORIZON:g} s, got "
        f"{horizon:g} s; the longest is jobs[{k}] {job.id!r}: {job.iterations:,} iterations "
        f"x {durations[k] / job.iterations:g} s = {durations[k]:g} s",
    )


def as_instance(value: object, what: str = "instance") -> Instance:
    """``value`` itself, or the instance of a loaded trace (anything with an ``instance``
    attribute holding one: :func:`ddlsched.core.traces.load_trace`'s answer).

    Raises
    ------
    TypeError
        Anything else, naming the argument ``what`` and what was expected (and, for a
        file name or a parsed document, how to read it).
    """
    if isinstance(value, Instance):
        return value
    inner = getattr(value, "instance", None)
    if isinstance(inner, Instance):
        return inner
    hint = ""
    if isinstance(value, str | bytes) or hasattr(value, "__fspath__"):
        hint = (
            "; a file name? read it first: ddlsched.core.io.read_instance(path), or "
            "ddlsched.core.traces.load_trace(path, cluster) for a trace"
        )
    elif isinstance(value, dict):
        hint = "; a parsed JSON document? build it with ddlsched.core.io.instance_from_dict(doc)"
    raise TypeError(
        f"{what}: expected an Instance (or a loaded trace), got {type(value).__name__}{hint}"
    )


INSTANCE_FORMAT = "ddlsched.instance/1"
INSTANCE_FORMAT_V2 = "ddlsched.instance/2"
"""Version 2 adds GPU types: ``cluster.server_types``, ``cluster.type_bandwidth``
and each job's ``compute_times``; version 1 files read as one unnamed type."""
SCHEDULE_FORMAT = "ddlsched.schedule/1"


class Piece(NamedTuple):
    """An interval ``[start, end)`` during which a preempted job runs."""

    start: float
    end: float
    mapping: tuple[int, ...] | None = None


def _plain_piece(piece: object) -> bool:
    """A :class:`Piece` of finite float times in ``[0, MAX_SCHEDULE_TIME]`` with a tuple of
    non-negative ints (or no mapping): what the full check would accept unchanged."""
    if type(piece) is not Piece:
        return False
    start, end, mapping = piece
    if not (
        type(start) is float
        and type(end) is float
        and 0.0 <= start <= MAX_SCHEDULE_TIME
        and 0.0 <= end <= MAX_SCHEDULE_TIME
    ):
        return False
    return mapping is None or (
        type(mapping) is tuple and all(type(s) is int and s >= 0 for s in mapping)
    )


def _checked_piece(piece: object, here: str) -> Piece:
    """``[start, end(, mapping)]`` as a :class:`Piece`, each part checked."""
    if isinstance(piece, (str, bytes)) or not isinstance(piece, Iterable):
        raise _fail(here, f"expected [start, end(, mapping)], got {piece!r}")
    parts = list(piece)
    if len(parts) == 3 and parts[2] is None:
        parts = parts[:2]
    if len(parts) not in (2, 3):
        raise _fail(here, f"expected [start, end(, mapping)], got {piece!r}")
    begin = _check_real(parts[0], f"{here}[0]", minimum=0.0, maximum=MAX_SCHEDULE_TIME)
    finish = _check_real(parts[1], f"{here}[1]", minimum=0.0, maximum=MAX_SCHEDULE_TIME)
    servers = None
    if len(parts) == 3:
        if isinstance(parts[2], (str, bytes)) or not isinstance(parts[2], Iterable):
            raise _fail(f"{here}[2]", f"expected a mapping list, got {parts[2]!r}")
        servers = tuple(_check_int(s, f"{here}[2][{n}]", 0) for n, s in enumerate(parts[2]))
    return Piece(begin, finish, servers)


@dataclass(frozen=True)
class ScheduledJob:
    """One job's entry in a schedule.

    Parameters
    ----------
    id
        The job's id.
    start
        ``S_i`` (s): the first instant the job runs.
    end
        ``C_i`` (s), optional in files; when given it must agree with the
        instance (the verifier checks).
    mapping
        Server index (0-based) of each node, for schedules of problem A;
        ``None`` in schedules of A1 and A2, where placement does not matter,
        and in preemptive schedules, whose pieces carry their own mappings.
    pieces
        For preemptive schedules: the :class:`Piece` s during which the job
        runs, in time order. In A2 schedules pieces have no mapping; in
        preemptive cluster (A) schedules every piece has one (a resumed job
        may land elsewhere). ``None`` for non-preemptive schedules.
    """

    id: str
    start: float
    end: float | None = None
    mapping: tuple[int, ...] | None = None
    pieces: tuple[Piece, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise _fail("schedule job.id", f"expected a string, got {self.id!r}")
        where = f"schedule job {self.id!r}"
        start = _check_real(self.start, f"{where}.start", minimum=0.0, maximum=MAX_SCHEDULE_TIME)
        object.__setattr__(self, "start", start)
        if self.end is not None:
            end = _check_real(self.end, f"{where}.end", minimum=0.0, maximum=MAX_SCHEDULE_TIME)
            object.__setattr__(self, "end", end)
        if self.mapping is not None:
            if isinstance(self.mapping, (str, bytes)) or not isinstance(self.mapping, Iterable):
                raise _fail(f"{where}.mapping", f"expected a list, got {self.mapping!r}")
            mapping = tuple(
                _check_int(s, f"{where}.mapping[{k}]", 0) for k, s in enumerate(self.mapping)
            )
            object.__setattr__(self, "mapping", mapping)
        if self.pieces is not None:
            pieces = [
                # the simulator's millions of pieces are valid as given
                piece if _plain_piece(piece) else _checked_piece(piece, f"{where}.pieces[{k}]")
                for k, piece in enumerate(self.pieces)
            ]
            object.__setattr__(self, "pieces", tuple(pieces))

    def to_dict(self) -> JsonObject:
        """The JSON form of one entry of ``ddlsched.schedule/1``."""
        out: JsonObject = {"id": self.id, "start": self.start}
        if self.end is not None:
            out["end"] = self.end
        if self.mapping is not None:
            out["mapping"] = list(self.mapping)
        if self.pieces is not None:
            out["pieces"] = [
                [p.start, p.end] if p.mapping is None else [p.start, p.end, list(p.mapping)]
                for p in self.pieces
            ]
        return out


class Problem(enum.StrEnum):
    """The three problems of the model (a ``str``: ``Problem.A == "A"``).

    Defined in :ref:`model-problem-a`, :ref:`model-problem-a1` and :ref:`model-problem-a2`.

    A
        The cluster: gang-scheduled jobs with mappings, non-preemptive.
    A1
        Rigid jobs on the ``M`` pooled GPUs, every job at ``alpha^max``.
    A2
        The preemptive virtual single machine with sizes ``v_i``.
    """

    A = "A"
    A1 = "A1"
    A2 = "A2"


PROBLEMS = tuple(Problem)
"""Every problem, in order."""


@dataclass(frozen=True)
class Schedule:
    """A schedule for an instance: one entry per job.

    Parameters
    ----------
    jobs
        The entries, in any order.
    problem
        Which problem the schedule is for: ``"A"`` (the cluster, with
        mappings), ``"A1"`` (rigid jobs on ``M`` pooled GPUs) or ``"A2"``
        (the preemptive virtual single machine, with pieces).
    restart_cost
        Preemptive cluster schedules: seconds a resumed job spends restoring
        (checkpoint reload) at the start of each piece after its first,
        making no progress while holding its GPUs (Tiresias-style).
    """

    jobs: tuple[ScheduledJob, ...]
    problem: Problem = Problem.A
    restart_cost: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(
            self,
            "restart_cost",
            _check_real(self.restart_cost, "schedule.restart_cost", minimum=0.0),
        )
        if self.problem not in PROBLEMS:
            raise _fail(
                "schedule.problem",
                f"expected one of {', '.join(PROBLEMS)}, got {self.problem!r}",
            )
        object.__setattr__(self, "problem", Problem(self.problem))
        for k, entry in enumerate(self.jobs):
            if not isinstance(entry, ScheduledJob):
                raise _fail(f"schedule.jobs[{k}]", f"expected a ScheduledJob, got {entry!r}")

    def by_id(self) -> dict[str, ScheduledJob]:
        """Entries keyed by job id (the last one wins on duplicates)."""
        return {entry.id: entry for entry in self.jobs}

    def to_dict(self) -> JsonObject:
        """The ``ddlsched.schedule/1`` JSON document."""
        out: JsonObject = {"format": SCHEDULE_FORMAT}
        if self.problem != "A":
            out["problem"] = self.problem
        if self.restart_cost:
            out["restart_cost"] = self.restart_cost
        out["jobs"] = [entry.to_dict() for entry in self.jobs]
        return out
