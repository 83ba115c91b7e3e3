"""Exact formulations (Pyomo + HiGHS): the offline optima.

``solve_milp(instance, problem, params)`` solves problem A, A1 or A2;
``build`` and ``solve_built`` separate the two steps; ``solve_mapping``
finds the fastest (or slowest) mapping of one job; :data:`EXACT_METHODS`
names the exact methods. Pyomo is imported on first use of a solver, not
by ``import formulations``.

The exact pipeline runs one way, floor by floor (:data:`FLOORS`): an instance
becomes a prepared problem (:mod:`ddlsched.formulations.prepared`: modes, grid, horizon,
incumbent), a backend builds and solves its model (:mod:`ddlsched.formulations.milp`, the
MILP; :mod:`ddlsched.formulations.cpsat`), its answer is decoded
(:mod:`ddlsched.formulations.outcome`) and certified (:mod:`ddlsched.formulations.certify`,
the one home of bounds and proofs: the bounds computed once per instance, the status, the
gap and the bound that proves it); the portfolio races the backends. A module imports
only from floors below its own (checked by ``tests/test_layers.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ddlsched.formulations.registry import EXACT_METHODS

if TYPE_CHECKING:
    # What the lazy names are, for type checkers (at run time: __getattr__).
    from ddlsched.formulations.mapping import solve_mapping as solve_mapping
    from ddlsched.formulations.memory import ModelTooLarge as ModelTooLarge
    from ddlsched.formulations.milp import build as build
    from ddlsched.formulations.milp import solve_built as solve_built
    from ddlsched.formulations.milp import solve_milp as solve_milp

FLOORS: tuple[tuple[str, ...], ...] = (
    ("grid", "slotted", "memory", "timeline"),
    (
        "admission",
        "forkserver_hook",
        "isolation",
        "solver",
        "timeindexed",
        "lower_bounds",
        "elastic",
        "elastic_bounds",
    ),
    (
        "mapping",
        "problem_a2",
        "start_lagrangian",
        "elastic_lagrangian",
        "cpsat_runtime",
        "decomposition",
    ),
    ("modes",),
    ("prepared", "outcome", "pack"),
    ("certify",),
    ("milp", "cpsat", "continuous"),
    ("portfolio",),
    ("registry",),
)
"""The modules of this package from the bottom floor up: the slot grid, the slotted
problem's data (:mod:`ddlsched.formulations.slotted`), the memory estimates
(:mod:`ddlsched.formulations.memory`) and the free-GPU timeline of the list schedules
(:mod:`ddlsched.formulations.timeline`); the admission of schedules (by the
independent verifier), children and HiGHS, the time-indexed model and the relaxations; the
mapping MILP, problem A2's data and what every CP-SAT model shares
(:mod:`ddlsched.formulations.cpsat_runtime`); the modes; the prepared problem and the
outcome (decoding) and the searches from the pooled relaxation
(:mod:`ddlsched.formulations.pack`); the certificate (bounds and proofs); the backends (the
MILP, slotted CP-SAT and continuous-time CP-SAT, none borrowing from another); the portfolio; the
registry of methods. Two modules of one floor never import each other."""

_LAZY = {
    "ModelTooLarge": "ddlsched.formulations.prepared",
    "build": "ddlsched.formulations.milp",
    "solve_built": "ddlsched.formulations.milp",
    "solve_milp": "ddlsched.formulations.milp",
    "solve_mapping": "ddlsched.formulations.mapping",
}

__all__ = ["EXACT_METHODS", *_LAZY]


def __getattr__(name: str) -> object:
    """Import the Pyomo-backed names on first use (PEP 562)."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'formulations' has no attribute {name!r}")
