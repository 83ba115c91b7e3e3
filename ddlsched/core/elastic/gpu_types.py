"""Per-GPU-type speed of the Pollux models, from Gavel's measured throughputs.

The Pollux profiles were measured on one GPU type. A typed elastic cluster
(:class:`~ddlsched.core.elastic.workload.ElasticCluster` with ``node_types``)
runs a model on a type at its profiled goodput divided by the type's
**slowdown**: how many times longer one iteration takes on that type than on
the model's fastest type, which the profiles stand for *(choice: they were
measured on T4s; taking them as the fastest type means no type runs a model
faster than profiled, so every bound built on the profiled goodput, such as
:mod:`ddlsched.formulations.elastic_bounds`, holds on typed clusters too)*. The
slowdown scales the whole iteration time, so the best batch configuration of a
placement is the same on every type and only the speed differs.

Slowdowns come from Gavel's isolated throughputs (Narayanan et al.,
*Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning Workloads*,
OSDI 2020; the shipped ``profiles/gavel_throughputs.csv``): for the Gavel model
matched to the Pollux model (:data:`GAVEL_MATCH`), the ratio
``steps_per_second(v100) / steps_per_second(type)`` on one GPU, geometric mean
over the batch sizes Gavel measured, divided by the least such ratio over the
types (1 for the fastest type: the V100, except for ncf, whose Gavel match runs
fastest on the P100). Pollux changes a job's batch size as it trains, so no
single batch size of Gavel's is the right one; :func:`slowdown_spread` gives
the range of the single batch sizes' ratios (the mapping's error, stated in
``docs/elastic.rst``). Only one-GPU rows are used: Gavel's multi-GPU rows mix
in its own communication costs, which the Pollux model already has.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Mapping
from types import MappingProxyType

from ddlsched.core.data import data_path
from ddlsched.core.elastic.application import finite_non_negative, read_table, whole_count
from ddlsched.core.model import InputError

__all__ = [
    "ELASTIC_GPU_TYPES",
    "GAVEL_MATCH",
    "GAVEL_REFERENCE",
    "goodput_scale",
    "slowdown_spread",
    "type_slowdowns",
]

ELASTIC_GPU_TYPES = ("k80", "p100", "v100")
"""GPU types with a measured speed for every Pollux model (Gavel's types)."""

GAVEL_REFERENCE = "v100"
"""The type Gavel's ratios are taken against before they are divided by the fastest's."""

GAVEL_MATCH: Mapping[str, tuple[str, bool]] = MappingProxyType(
    {
        "bert": ("Transformer", False),
        "cifar10": ("ResNet-18", True),
        "ncf": ("Recommendation", True),
        "imagenet": ("ResNet-50", True),
        "deepspeech2": ("LM", False),
        "yolov3": ("ResNet-50", False),
    }
)
"""Per Pollux model, the Gavel model whose slowdowns it takes, and whether that is the same
model (True: ResNet-18 on CIFAR-10, NeuMF on MovieLens, ResNet-50 on ImageNet) or only its
family's proxy (False: BERT takes the translation Transformer's, the recurrent
DeepSpeech 2 the LSTM language model's, the convolutional YOLOv3 ResNet-50's)."""


@functools.cache
def _gavel_rows() -> Mapping[tuple[str, str], Mapping[str, float]]:
    """``(Gavel model, batch size) -> {type: steps per second}`` of the one-GPU rows.

    Raises
    ------
    InputError
        Naming the file, line and column: a missing column, a scale factor that is not a
        whole number >= 1, a speed that is not a finite number >= 0, or a speed of 0 on a
        one-GPU row of a known type (a type's slowdown divides by it; Gavel's file holds
        zeros only on multi-GPU rows it could not run).
    """
    path = data_path("profiles", "gavel_throughputs.csv")
    read = read_table(
        path,
        texts={"gpu_type": str, "model": str, "batch_size": str},
        numbers={"scale_factor": whole_count, "steps_per_second": finite_non_negative},
    )
    table: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    texts, numbers = read.texts, read.numbers
    rows = zip(
        texts["gpu_type"],
        texts["model"],
        texts["batch_size"],
        numbers["scale_factor"],
        numbers["steps_per_second"],
        read.lines,
        strict=True,
    )
    for gpu_type, model, batch_size, scale, speed, line in rows:
        if scale != 1 or gpu_type not in ELASTIC_GPU_TYPES:
            continue
        if speed == 0:
            raise InputError(
                f"{path}: line {line}: column steps_per_second: 0 on a one-GPU row of "
                f"{gpu_type} (a type's slowdown divides by it)"
            )
        table[(model, batch_size)][gpu_type] = speed
    return MappingProxyType(dict(table))


def clear_caches() -> None:
    """Forget the speeds read (for a process that changes ``DDLSCHED_DATA``)."""
    _gavel_rows.cache_clear()
    type_slowdowns.cache_clear()


def _ratios(model: str, gpu_type: str) -> list[float]:
    """``steps_per_second(v100) / steps_per_second(gpu_type)`` per Gavel batch size."""
    if model not in GAVEL_MATCH:
        raise InputError(f"no GPU-type speeds for model {model!r}")
    if gpu_type not in ELASTIC_GPU_TYPES:
        raise InputError(
            f"unknown GPU type {gpu_type!r}; elastic clusters know {', '.join(ELASTIC_GPU_TYPES)}"
        )
    gavel = GAVEL_MATCH[model][0]
    rows = [speeds for (name, _), speeds in _gavel_rows().items() if name == gavel]
    ratios = [
        s[GAVEL_REFERENCE] / s[gpu_type] for s in rows if GAVEL_REFERENCE in s and gpu_type in s
    ]
    if not ratios:
        raise InputError(f"gavel_throughputs.csv: no one-GPU rows of {gavel} on {gpu_type}")
    return ratios


def _mean_ratios(model: str) -> dict[str, float]:
    """Per type, the geometric mean of :func:`_ratios` (against :data:`GAVEL_REFERENCE`)."""
    return {
        gpu_type: math.exp(math.fsum(map(math.log, ratios)) / len(ratios))
        for gpu_type in ELASTIC_GPU_TYPES
        for ratios in [_ratios(model, gpu_type)]
    }


@functools.cache
def type_slowdowns(model: str) -> Mapping[str, float]:
    """Seconds per iteration of ``model`` on each type over those on its fastest type (>= 1).

    Raises
    ------
    InputError
        An unknown model, or a data file without the matched model's rows.
    """
    means = _mean_ratios(model)
    fastest = min(means.values())
    return MappingProxyType({gpu_type: mean / fastest for gpu_type, mean in means.items()})


def slowdown_spread(model: str) -> Mapping[str, tuple[float, float]]:
    """Per type, the least and largest single-batch-size slowdown (each Gavel batch size's
    ratio over the fastest type's mean ratio) around :func:`type_slowdowns`."""
    fastest = min(_mean_ratios(model).values())
    return MappingProxyType(
        {
            gpu_type: (min(ratios) / fastest, max(ratios) / fastest)
            for gpu_type in ELASTIC_GPU_TYPES
            for ratios in [_ratios(model, gpu_type)]
        }
    )


def goodput_scale(model: str, gpu_type: str | None) -> float:
    """The factor of the profiled goodput of ``model`` on ``gpu_type`` (1 on an untyped cluster).

    Raises
    ------
    InputError
        An unknown model or GPU type.
    """
    if gpu_type is None:
        return 1.0
    return 1.0 / type_slowdowns(model)[gpu_type]
