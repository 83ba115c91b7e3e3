"""Exact MILP formulations (Pyomo + HiGHS): the offline optima.

``solve_milp(instance, problem="A"|"A1"|"A2", ...)`` solves one problem;
``build`` and ``solve_built`` separate the two steps; ``solve_mapping``
finds the fastest (or slowest) mapping of one job.
"""

from formulations.exact import ModelTooLarge, build, solve_built, solve_milp
from formulations.mapping import solve_mapping
from formulations.solver import SolverOptions

__all__ = ["ModelTooLarge", "SolverOptions", "build", "solve_built", "solve_mapping", "solve_milp"]
