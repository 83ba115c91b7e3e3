"""ddlsched: scheduling distributed deep-learning training jobs on GPU clusters.

The front door. Everything a researcher needs day to day is importable from
here::

    from ddlsched import generate, GeneratorConfig, solve, simulate, ExactParams

    instance = generate(GeneratorConfig.exact_friendly(10, 2, 4), seed=0)
    optimum = solve(instance, "milp", params=ExactParams(time_limit=60))
    online = simulate(instance, "asrpt")
    print(online.objective / optimum.objective)

Elastic jobs (Pollux's model) have their own front door, :mod:`ddlsched.elastic`:
``elastic.simulate("workload-6.csv", "pollux")`` runs one policy round by round and checks the
run (per-job rows in ``.jobs``, ``summary()``, ``write(path)``), ``elastic.compare`` runs
several side by side and ``elastic.sandwich`` pins the optimal total JCT from both sides;
``simulate_elastic`` and ``compare_elastic`` here are its first two. The certified benchmark
library has its own too, :mod:`ddlsched.bench`: ``bench.run("asrpt-greedy", tiers=["S", "M"])``
scores a scheduler against proven optima and certified intervals.

The checks and certificates are here too: ``verify(instance, schedule)`` (the independent
verifier), ``lower_bounds(instance)`` (every proven bound on ``OPT(A)``), each result's
``flow_ratio`` and ``gap``; ``zoo_job("gpt2_xl", dp=2, pp=2, tp=2)`` builds a job from the
model zoo in one call; ``ddlsched.plotting`` draws the figures (the [plot] extra).

The floors, bottom up (``tests/test_layers.py`` enforces them):

- :mod:`ddlsched.core`, the ground floor: the data model, formats, ``alpha``
  and ``rho``, zoo, graphs, generators, workloads, traces, ``Result``, typed
  parameters, the registry type. It imports nothing else of the project.
- :mod:`ddlsched.formulations` and :mod:`ddlsched.algorithms` import only the ground floor;
  :mod:`ddlsched.proofs_checks` imports only the data model (it shares no code with
  what it checks); :mod:`ddlsched.plotting` imports only the ground floor
  and is the only module that imports matplotlib.
- The top floor: the façades (:mod:`ddlsched.api`, :mod:`ddlsched.elastic`), the experiments
  (:mod:`ddlsched.experiments`), sweeps (:mod:`ddlsched.sweeps`) and the
  command line (:mod:`ddlsched.cli`) may import anything, heavy backends
  lazily.
"""

from ddlsched import core as _core
from ddlsched.api import (
    compare_elastic,
    lower_bounds,
    method_names,
    simulate,
    simulate_elastic,
    solve,
    trace_study,
)
from ddlsched.core import *  # noqa: F403 - the front door re-exports the ground floor
from ddlsched.core.elastic import (
    ElasticCluster,
    ElasticWorkload,
    load_pollux_workload,
)
from ddlsched.core.graphs import zoo_job

_LAZY = {
    "ElasticSimParams": "ddlsched.algorithms.elastic",
    "ElasticRun": "ddlsched.experiments.elastic",
    "ElasticComparison": "ddlsched.experiments.elastic",
    "verify": "ddlsched.proofs_checks.verifier",
}
"""Names imported on first use, from the module that holds each: the elastic settings and
results (their modules import the policies and the experiments), and ``verify`` (imported
here, the verifier would import this package half-initialised whenever
``ddlsched.proofs_checks.verifier`` is imported first: its data model is in here)."""

__all__ = [
    *_core.__all__,
    "ElasticCluster",
    "ElasticComparison",  # noqa: F405 - lazy, through __getattr__ below
    "ElasticRun",  # noqa: F405 - lazy
    "ElasticSimParams",  # noqa: F405 - lazy
    "ElasticWorkload",
    "compare_elastic",
    "load_pollux_workload",
    "lower_bounds",
    "method_names",
    "simulate",
    "simulate_elastic",
    "solve",
    "trace_study",
    "verify",  # noqa: F405 - lazy, through __getattr__ below
    "zoo_job",
]


def __getattr__(name: str) -> object:
    """``ddlsched.plotting`` on first use (it imports matplotlib, the [plot] extra),
    ``ddlsched.elastic`` (the elastic front door), ``ddlsched.bench`` (the benchmark
    library's), and the names of ``_LAZY``."""
    from importlib import import_module

    if name in ("plotting", "elastic", "bench"):
        return import_module(f"ddlsched.{name}")
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ddlsched' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The API: :data:`__all__` (the lazy names included), ``plotting``, ``elastic`` (the
    elastic product's front door) and ``bench`` (the benchmark library's); no helper, import
    or other sub-package beside them."""
    return sorted({*__all__, "plotting", "elastic", "bench"})
