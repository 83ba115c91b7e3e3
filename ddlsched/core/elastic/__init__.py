"""Elastic training jobs: Pollux's throughput and statistical-efficiency model.

A job's GPU count and batch size may change between scheduling rounds; it
progresses at its *goodput* (throughput x statistical efficiency). See
:mod:`~ddlsched.core.elastic.throughput` (the fitted step-time model),
:mod:`~ddlsched.core.elastic.application` (per-model data, efficiency,
goodput, batch-size choice) and :mod:`~ddlsched.core.elastic.workload`
(jobs, workloads, the cluster, the Pollux workload reader).
"""

from ddlsched.core.elastic.application import (
    EPOCH_BUDGETS,
    MODELS,
    Application,
    BatchChoice,
    load_application,
    load_profile_rows,
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
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    load_pollux_workload,
)

__all__ = [
    "EPOCH_BUDGETS",
    "MODELS",
    "WORKLOAD_COLUMNS",
    "Application",
    "BatchChoice",
    "ElasticCluster",
    "ElasticJob",
    "ElasticWorkload",
    "FitError",
    "PerfParams",
    "ProfileRows",
    "fit_error",
    "fit_perf_params",
    "load_application",
    "load_pollux_workload",
    "load_profile_rows",
]
