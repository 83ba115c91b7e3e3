"""Exact formulations (Pyomo + HiGHS): the offline optima.

``solve_milp(instance, problem, params)`` solves problem A, A1 or A2;
``build`` and ``solve_built`` separate the two steps; ``solve_mapping``
finds the fastest (or slowest) mapping of one job; :data:`EXACT_METHODS`
names the exact methods. Pyomo is imported on first use of a solver, not
by ``import formulations``.
"""

from __future__ import annotations

import importlib
from typing import Any

from formulations.registry import EXACT_METHODS

_LAZY = {
    "ModelTooLarge": "formulations.exact",
    "build": "formulations.exact",
    "solve_built": "formulations.exact",
    "solve_milp": "formulations.exact",
    "solve_mapping": "formulations.mapping",
}

__all__ = ["EXACT_METHODS", *_LAZY]


def __getattr__(name: str) -> Any:
    """Import the Pyomo-backed names on first use (PEP 562)."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'formulations' has no attribute {name!r}")
