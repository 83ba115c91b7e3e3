"""Elastic training jobs: Pollux's throughput and statistical-efficiency model.

A job's GPU count and batch size may change between scheduling rounds; it
progresses at its *goodput* (throughput x statistical efficiency). See
:mod:`~ddlsched.core.elastic.throughput` (the fitted step-time model),
:mod:`~ddlsched.core.elastic.application` (per-model data, efficiency,
goodput, batch-size choice) and :mod:`~ddlsched.core.elastic.workload`
(jobs, workloads, the cluster, the Pollux workload reader) and
:mod:`~ddlsched.core.elastic.gpu_types` (per-GPU-type speeds from Gavel's throughputs).
"""

from ddlsched.core.elastic.application import (
    EPOCH_BUDGETS,
    MODELS,
    Application,
    BatchChoice,
    load_application,
    load_profile_rows,
)
from ddlsched.core.elastic.gpu_types import (
    ELASTIC_GPU_TYPES,
    GAVEL_MATCH,
    GAVEL_REFERENCE,
    goodput_scale,
    slowdown_spread,
    type_slowdowns,
)
from ddlsched.core.elastic.throughput import (
    FitError,
    PerfParams,
    ProfileRows,
    fit_error,
    fit_perf_params,
)
from ddlsched.core.elastic.workload import (
    WORKLOAD_COLUMNS,
    AskedReplicasCapped,
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    fit_to_cluster,
    load_pollux_workload,
)

__all__ = [
    "ELASTIC_GPU_TYPES",
    "EPOCH_BUDGETS",
    "GAVEL_MATCH",
    "GAVEL_REFERENCE",
    "MODELS",
    "WORKLOAD_COLUMNS",
    "Application",
    "AskedReplicasCapped",
    "BatchChoice",
    "ElasticCluster",
    "ElasticJob",
    "ElasticWorkload",
    "FitError",
    "PerfParams",
    "ProfileRows",
    "fit_error",
    "fit_perf_params",
    "fit_to_cluster",
    "goodput_scale",
    "load_application",
    "load_pollux_workload",
    "load_profile_rows",
    "slowdown_spread",
    "type_slowdowns",
]
