"""ddlsched: scheduling distributed deep-learning training jobs on GPU clusters.

The front door. Everything a researcher needs day to day is importable from
here::

    from ddlsched import generate, GeneratorConfig, solve, simulate, ExactParams

    instance = generate(GeneratorConfig.exact_friendly(10, 2, 4), seed=0)
    optimum = solve(instance, "milp", params=ExactParams(time_limit=60))
    online = simulate(instance, "asrpt")
    print(online.objective / optimum.objective)

The checks and certificates are here too: ``verify(instance, schedule)`` (the independent
verifier), ``lower_bounds(instance)`` (every proven bound on ``OPT(A)``), each result's
``flow_ratio`` and ``gap``; ``zoo_job("gpt2_xl", dp=2, pp=2, tp=2)`` builds a job from the
model zoo in one call; ``ddlsched.plotting`` draws the figures (the [plot] extra).

The floors, bottom up (``tests/test_layers.py`` enforces them):

- :mod:`ddlsched.core`, the ground floor: the data model, formats, ``alpha``
  and ``rho``, zoo, graphs, generators, workloads, traces, ``Result``, typed
  parameters, the registry type. It imports nothing else of the project.
- ``formulations`` and ``algorithms`` import only the ground floor;
  ``proofs_checks`` imports only the data model (it shares no code with
  what it checks); :mod:`ddlsched.plotting` imports only the ground floor
  and is the only module that imports matplotlib.
- The top floor: the façades (:mod:`ddlsched.api`), the experiments
  (:mod:`ddlsched.experiments`), sweeps (:mod:`ddlsched.sweep`) and the
  command line (:mod:`ddlsched.cli`) may import anything, heavy backends
  lazily.
"""

from typing import Any

from ddlsched import core as _core
from ddlsched.api import lower_bounds, method_names, simulate, solve
from ddlsched.core import *  # noqa: F403 - the front door re-exports the ground floor's names
from ddlsched.core.graphs import zoo_job

__all__ = [
    *_core.__all__,
    "lower_bounds",
    "method_names",
    "simulate",
    "solve",
    "verify",  # noqa: F405 - lazy, through __getattr__ below
    "zoo_job",
]


def __getattr__(name: str) -> Any:
    """``ddlsched.plotting`` on first use (it imports matplotlib, the [plot] extra), and
    ``verify`` (imported here, the verifier would import this package half-initialised
    whenever ``proofs_checks.verifier`` is imported first: its data model is in here)."""
    import importlib

    if name == "plotting":
        return importlib.import_module("ddlsched.plotting")
    if name == "verify":
        return importlib.import_module("proofs_checks.verifier").verify
    raise AttributeError(f"module 'ddlsched' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the lazy ones included."""
    return sorted({*globals(), *__all__, "plotting"})
