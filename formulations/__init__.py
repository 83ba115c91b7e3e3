"""Exact MILP formulations (Pyomo + HiGHS): the offline optima."""
