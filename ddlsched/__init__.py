"""ddlsched: scheduling distributed deep-learning training jobs on GPU clusters.

The core package: the validated data model (:mod:`ddlsched.model`), file
formats (:mod:`ddlsched.io`), the communication model ``alpha`` and ``rho``
(:mod:`ddlsched.alpha`), the model zoo and job graphs, generators, and the
command line. It imports none of ``formulations``, ``algorithms`` and
``proofs_checks`` (only the CLI reaches them, lazily).
"""

from ddlsched.alpha import Bound, alpha, alpha_max, alpha_min, rho
from ddlsched.generators import GeneratorConfig, generate
from ddlsched.io import read_instance, read_schedule, write_instance, write_schedule
from ddlsched.model import (
    Cluster,
    InputError,
    Instance,
    Job,
    Parallelism,
    Schedule,
    ScheduledJob,
)
from ddlsched.result import Result, SolveStatus

__all__ = [
    "Bound",
    "Cluster",
    "GeneratorConfig",
    "InputError",
    "Instance",
    "Job",
    "Parallelism",
    "Result",
    "Schedule",
    "ScheduledJob",
    "SolveStatus",
    "alpha",
    "alpha_max",
    "alpha_min",
    "generate",
    "read_instance",
    "read_schedule",
    "rho",
    "write_instance",
    "write_schedule",
]
