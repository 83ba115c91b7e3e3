"""ddlsched: scheduling distributed deep-learning training jobs on GPU clusters.

The front door. Everything a researcher needs day to day is importable from
here::

    from ddlsched import generate, GeneratorConfig, solve, simulate, ExactParams

    instance = generate(GeneratorConfig.exact_friendly(10, 2, 4), seed=0)
    optimum = solve(instance, "milp", params=ExactParams(time_limit=60))
    online = simulate(instance, "asrpt")
    print(online.objective / optimum.objective)

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

from ddlsched import core as _core
from ddlsched.api import method_names, simulate, solve
from ddlsched.core import *  # noqa: F403 - the front door re-exports the ground floor's names

__all__ = [*_core.__all__, "method_names", "simulate", "solve"]
