"""Loaders for real cluster traces (``shared/data/traces/``).

A file is recognised by its columns:

============  ==========================================================  ============
format        columns used                                                times in
============  ==========================================================  ============
``philly``    timestamp, duration, num_gpus (+ cluster as the user)       seconds
``muri``      job_id, num_gpu, submit_time, iterations, model_name,       microseconds
              duration, iteration_time (+ batch_size)
``tiresias``  job_id, num_gpu, submit_time, iterations, model_name,       seconds
              duration
============  ==========================================================  ============

Sources: the Microsoft Philly trace (Jeon et al., USENIX ATC 2019; CC BY
4.0) as preprocessed by the Pollux artifact; the Muri job lists (Zhao et
al., *Multi-Resource Interleaving for Deep Learning Training*, SIGCOMM
2022; Apache-2.0); Tiresias's 60-job workload (Gu et al., NSDI 2019;
Apache-2.0).

**Row to job** *(choices, documented here and in the README)*:

1. *Model*: the row's ``model_name`` mapped to the zoo by
   :data:`MODEL_ALIASES` (``vgg19`` -> ``vgg16``, ...); a name with no
   alias, or a Philly row (which names none), gets a zoo model drawn by
   the caller's seeded generator. The original name is kept as feature
   ``trace_model``.
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
4. Rows with a non-positive duration are skipped (counted); jobs wider than
   the cluster are dropped (counted) unless the caller asks for an error.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ddlsched.core.alpha import alpha
from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import Cluster, InputError, Instance, Job, Parallelism
from ddlsched.core.zoo import ZOO, ModelProfile

DATA_ENV = "DDLSCHED_DATA"
"""The environment variable naming the data folder (traces/, profiles/)."""


def data_dir() -> Path:
    """The folder of real data: ``$DDLSCHED_DATA``, else ``../shared/data`` beside the checkout.

    Notebooks, benchmarks and tests find traces and profiles through this
    one setting (``data_dir() / "traces" / "philly_jobs.csv"``).
    """
    configured = os.environ.get(DATA_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path(__file__).resolve().parents[3] / "shared" / "data"


def data_path(*parts: str) -> Path:
    """A file under :func:`data_dir`.

    Raises
    ------
    InputError
        If it does not exist, naming the path and the setting to change.
    """
    path = data_dir().joinpath(*parts)
    if not path.exists():
        raise InputError(
            f"{path}: no such data file (set {DATA_ENV} to the folder holding traces/ and "
            "profiles/)"
        )
    return path


MODEL_ALIASES = {
    "resnet50": "resnet50",
    "resnet": "resnet50",
    "resnet101": "resnet50",
    "resnet152": "resnet50",
    "inception3": "resnet50",
    "inception": "resnet50",
    "vgg11": "vgg16",
    "vgg13": "vgg16",
    "vgg16": "vgg16",
    "vgg19": "vgg16",
    "vgg": "vgg16",
    "alexnet": "vgg16",
    "bert": "bert_base",
    "bert_base": "bert_base",
    "gpt2": "gpt2_xl",
    "gpt": "gpt2_xl",
    "transformer": "gpt2_xl",
    "megatron": "megatron_8b",
    "deepspeech": "deepspeech2",
    "deepspeech2": "deepspeech2",
    "lstm": "deepspeech2",
    "yolov3": "yolov3",
    "yolo": "yolov3",
    "resnet18": "resnet18_cifar10",
    "cifar10": "resnet18_cifar10",
    "shufflenet": "resnet18_cifar10",
    "googlenet": "resnet18_cifar10",
}
"""Trace model names to zoo models (lower case; unknown names are drawn)."""


@dataclass(frozen=True)
class TraceFormat:
    """How to read one kind of trace."""

    name: str
    required: tuple[str, ...]
    seconds_per_unit: float
    gpus_column: str
    submit_column: str


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
        1e-6,
        "num_gpu",
        "submit_time",
    ),
    TraceFormat(
        "tiresias",
        ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration"),
        1.0,
        "num_gpu",
        "submit_time",
    ),
    TraceFormat("philly", ("timestamp", "duration", "num_gpus"), 1.0, "num_gpus", "timestamp"),
)


def detect_format(columns: list[str], path: str = "trace") -> TraceFormat:
    """The first format whose columns the file has.

    Raises
    ------
    InputError
        Naming the columns missing for the closest format.
    """
    present = set(columns)
    for fmt in FORMATS:
        if set(fmt.required) <= present:
            return fmt
    closest = min(FORMATS, key=lambda f: len(set(f.required) - present))
    missing = sorted(set(closest.required) - present)
    raise InputError(
        f"{path}: unknown trace columns; closest format {closest.name!r} is missing "
        f"{', '.join(missing)} (columns found: {', '.join(columns) or 'none'})"
    )


@dataclass(frozen=True)
class LoadedTrace:
    """A trace turned into an instance, with what was left out."""

    instance: Instance
    format: str
    rows_read: int
    skipped_invalid: int
    dropped_wide: int


def _number(row: dict[str, str], column: str, path: str, line: int) -> float:
    text = row.get(column, "")
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{path}:{line}: {column}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{path}:{line}: {column}: not finite: {text!r}")
    return value


def _submit_seconds(row: dict[str, str], fmt: TraceFormat, path: str, line: int) -> float:
    if fmt.name == "philly":
        text = row[fmt.submit_column]
        try:
            # Naive times read as UTC, so no daylight-saving jump distorts gaps.
            return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()
        except ValueError:
            raise InputError(f"{path}:{line}: timestamp: not a date and time: {text!r}") from None
    return _number(row, fmt.submit_column, path, line) * fmt.seconds_per_unit


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as stream:
        reader = csv.DictReader(stream)
        yield from enumerate(reader, start=2)


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
) -> Job:
    """A job of zoo ``model`` on ``gpus`` GPUs (rules 2-3 of the module docstring).

    With ``duration``, times are scaled so that ``K * alpha_packed`` equals
    it (and ``K`` is derived when ``iterations`` is ``None``); without it the
    zoo's own times are kept and ``iterations`` is required.
    """
    profile = ZOO[model]
    parallelism = _parallelism(profile, gpus, cluster.max_gpus_per_server)
    compute, edges = build_job_graph(profile, parallelism)
    scale = 1.0
    count = iterations
    if duration is not None:
        unscaled = Job(
            id="x", release=0.0, iterations=1, compute_time=compute, gpus=gpus, edges=edges
        )
        packed = alpha(unscaled, cluster, packed_mapping(gpus, cluster))
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
    )


def load_trace(
    path: str | os.PathLike[str],
    cluster: Cluster,
    *,
    seed: int = 0,
    limit: int | None = None,
    drop_wide: bool = True,
    slot: float = 1.0,
) -> LoadedTrace:
    """Read a trace file into an :class:`Instance` on ``cluster``.

    Parameters
    ----------
    path
        A CSV file in one of :data:`FORMATS`.
    cluster
        The cluster the jobs will run on (it fixes the packed mapping).
    seed
        Seeds the model drawn for rows that name none (or an unknown one).
    limit
        Keep only the first ``limit`` jobs by submit time.
    drop_wide
        Drop jobs wider than the cluster (else raise).
    slot
        The instance's slot.

    Raises
    ------
    InputError
        Unknown columns (naming what is missing), a bad value (naming the
        file, line and column), or no usable job.
    """
    file = Path(path)
    where = os.fspath(path)
    if not file.exists():
        raise InputError(f"{where}: no such file")
    with file.open(newline="", encoding="utf-8") as stream:
        header = next(csv.reader(stream), [])
    fmt = detect_format(header, where)
    rng = np.random.default_rng(seed)
    zoo_names = sorted(ZOO)
    drafts = []
    skipped = dropped = read = 0
    for line, row in _rows(file):
        read += 1
        gpus_value = _number(row, fmt.gpus_column, where, line)
        if gpus_value < 1 or gpus_value != int(gpus_value):
            raise InputError(
                f"{where}:{line}: {fmt.gpus_column}: expected a whole number >= 1, "
                f"got {row[fmt.gpus_column]!r}"
            )
        gpus = int(gpus_value)
        duration = _number(row, "duration", where, line) * fmt.seconds_per_unit
        if duration <= 0:
            skipped += 1
            continue
        if gpus > cluster.num_gpus:
            if not drop_wide:
                raise InputError(
                    f"{where}:{line}: {fmt.gpus_column}: {gpus} GPUs, the cluster "
                    f"has {cluster.num_gpus}"
                )
            dropped += 1
            continue
        submit = _submit_seconds(row, fmt, where, line)
        trace_model = row.get("model_name", "").strip().lower()
        draw = zoo_names[int(rng.integers(len(zoo_names)))]
        model = MODEL_ALIASES.get(trace_model, draw)
        iterations = None
        if "iterations" in row:
            iterations = int(_number(row, "iterations", where, line))
        features: dict[str, str | int | float | bool] = {"model": model, "num_gpus": gpus}
        if trace_model:
            features["trace_model"] = trace_model
        if "batch_size" in row:
            features["batch_size"] = int(_number(row, "batch_size", where, line))
        if "cluster" in row:
            features["user"] = row["cluster"]
        drafts.append((submit, line, gpus, duration, model, iterations, features))
    drafts.sort(key=lambda d: (d[0], d[1]))
    if limit is not None:
        drafts = drafts[:limit]
    if not drafts:
        raise InputError(f"{where}: no usable job ({skipped} skipped, {dropped} too wide)")
    first = drafts[0][0]
    jobs = [
        zoo_job(f"t{line}", model, gpus, cluster, submit - first, iterations, duration, features)
        for submit, line, gpus, duration, model, iterations, features in drafts
    ]
    return LoadedTrace(
        Instance(cluster=cluster, jobs=tuple(jobs), slot=slot), fmt.name, read, skipped, dropped
    )
