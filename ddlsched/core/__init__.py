"""The ground floor: what every other part of the project stands on.

The validated data model (:mod:`~ddlsched.core.model`), the file formats
(:mod:`~ddlsched.core.io`), the communication model ``alpha`` and ``rho``
(:mod:`~ddlsched.core.alpha`), the model zoo and job graphs, generators,
recurring workloads, trace loaders, the common :class:`Result`, typed
parameters and the registry type. It imports nothing of the project outside
itself; ``formulations``, ``algorithms`` and ``proofs_checks`` import it.
"""

from ddlsched.core.alpha import ExactOrBound, alpha, alpha_max, alpha_min, rho
from ddlsched.core.data import data_path, resolve_trace, shipped_files
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.io import read_instance, read_schedule, write_instance, write_schedule
from ddlsched.core.model import (
    PROBLEMS,
    Cluster,
    InputError,
    Instance,
    Job,
    Parallelism,
    Piece,
    Problem,
    Schedule,
    ScheduledJob,
)
from ddlsched.core.params import ExactParams, OnlineParams, from_toml
from ddlsched.core.registry import Registry
from ddlsched.core.result import Result, SolveStatus
from ddlsched.core.traces import load_trace

Bound = ExactOrBound
"""The former name of :class:`ExactOrBound`, kept so that existing imports work."""

__all__ = [
    "PROBLEMS",
    "Cluster",
    "ExactOrBound",
    "ExactParams",
    "GeneratorConfig",
    "InputError",
    "Instance",
    "Job",
    "OnlineParams",
    "Parallelism",
    "Piece",
    "Problem",
    "Registry",
    "Result",
    "Schedule",
    "ScheduledJob",
    "SolveStatus",
    "alpha",
    "alpha_max",
    "alpha_min",
    "data_path",
    "from_toml",
    "generate",
    "load_trace",
    "read_instance",
    "read_schedule",
    "resolve_trace",
    "rho",
    "shipped_files",
    "write_instance",
    "write_schedule",
]
