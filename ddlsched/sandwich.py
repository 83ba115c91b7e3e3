"""The optimum pinned from both sides: a proven lower bound and a verified schedule.

For either model, the non-preemptive problem A or the preemptive one (a job may be
stopped and resumed, paying the restart cost), :func:`flow_sandwich` gives the best
lower bound valid for *that* model and the best verified schedule known, so that the
optimal total (weighted) JCT lies between them and any schedule's distance to it is
at most ``UB / LB``:

- lower side, problem A: the fast bounds of
  :mod:`ddlsched.formulations.lower_bounds` and the start-time Lagrangian bound of
  :mod:`ddlsched.formulations.start_lagrangian`, the largest flow value kept (each is
  valid on its own, so the largest whole sum is);
- lower side, preemptive model: only the bounds proved for it
  (:data:`~ddlsched.formulations.lower_bounds.PREEMPTIVE_BOUNDS`);
- upper side: :func:`ddlsched.algorithms.offline.best_upper_bound` for the same
  model (every candidate checked by the independent verifier).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ddlsched.core.model import Instance
from ddlsched.core.result import LowerBound, Result


@dataclass(frozen=True)
class Sandwich:
    """The optimal total JCT of one model, pinned between two proven values.

    Attributes
    ----------
    preemptive
        Which model: ``True`` the preemptive one, ``False`` problem A.
    lower
        The best lower bound valid for the model; its ``flow_value`` bounds the
        optimal total (weighted) JCT ``sum w (C - r)`` from below.
    upper
        The best verified schedule (its ``total_jct`` bounds the optimum from above).
    runtime_s
        Seconds for the lower side (the upper side's are ``upper.runtime_s``).
    """

    preemptive: bool
    lower: LowerBound
    upper: Result
    runtime_s: float

    @property
    def upper_name(self) -> str:
        """Which schedule gives the upper bound."""
        return self.upper.method

    @property
    def ratio(self) -> float:
        """``UB / LB`` on the total JCT: how far from the optimum the best schedule may be
        (``nan`` without a positive bound)."""
        bound = self.lower.flow_value
        if not (math.isfinite(bound) and bound > 0):
            return math.nan
        return self.upper.total_jct / bound

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "model": "preemptive" if self.preemptive else "non-preemptive",
            "flow_lower_bound": self.lower.flow_value,
            "lower_bound": self.lower.to_dict(),
            "flow_upper_bound": self.upper.total_jct,
            "upper_bound_schedule": self.upper_name,
            "ratio": self.ratio if math.isfinite(self.ratio) else None,
            "lower_runtime_s": self.runtime_s,
            "upper_runtime_s": self.upper.runtime_s,
        }


def model_lower_bounds(
    instance: Instance,
    *,
    preemptive: bool,
    upper_bound: float | None = None,
    settings: Any = None,
) -> list[LowerBound]:
    """Every lower bound valid for the model (module docstring), each with its flow value.

    Parameters
    ----------
    instance
        The instance.
    preemptive
        ``True``: the bounds proved for the preemptive model only.
    upper_bound
        ``sum w C`` of a feasible schedule of the model: steers the start-time
        Lagrangian's steps (never its validity).
    settings
        :class:`~ddlsched.formulations.start_lagrangian.StartLagrangianSettings` (``None``:
        its defaults).
    """
    from ddlsched.formulations.lower_bounds import PREEMPTIVE_BOUNDS, BoundInputs, lower_bounds
    from ddlsched.formulations.start_lagrangian import start_lagrangian_bound

    inputs = BoundInputs.of(instance)
    if preemptive:
        return lower_bounds(instance, PREEMPTIVE_BOUNDS, inputs=inputs)
    found = lower_bounds(instance, inputs=inputs)
    return [*found, start_lagrangian_bound(inputs, settings, upper_bound)]


def best_flow_bound(bounds: list[LowerBound]) -> LowerBound:
    """The valid bound of largest flow value (each valid on its own, so the largest is).

    Raises
    ------
    ValueError
        If no bound is valid.
    """
    valid = [b for b in bounds if b.valid and math.isfinite(b.flow_value)]
    if not valid:
        raise ValueError("bounds: none is valid")
    return max(valid, key=lambda b: b.flow_value)


def flow_sandwich(
    instance: Instance,
    *,
    preemptive: bool,
    restart_cost: float | None = None,
    evaluations: int | None = None,
    settings: Any = None,
    seed: int = 0,
) -> Sandwich:
    """The best lower bound and the best verified schedule of one model (module docstring).

    Parameters
    ----------
    instance
        The instance.
    preemptive
        ``True``: the preemptive model (restart cost ``restart_cost`` per resume,
        ``None``: the simulator's default); ``False``: problem A.
    evaluations
        Local-search simulations of the upper side (``None``: its default).
    settings
        The start-time Lagrangian's settings (problem A only; ``None``: defaults).
    seed
        Seeds the upper side's local search.

    Returns
    -------
    Sandwich
        ``lower.flow_value <= optimal total JCT <= upper.total_jct``.
    """
    from ddlsched.algorithms.offline import best_upper_bound

    upper = best_upper_bound(
        instance,
        preemptive=preemptive,
        restart_cost=restart_cost,
        evaluations=evaluations,
        seed=seed,
    )
    began = time.perf_counter()
    bounds = model_lower_bounds(
        instance, preemptive=preemptive, upper_bound=upper.objective, settings=settings
    )
    return Sandwich(preemptive, best_flow_bound(bounds), upper, time.perf_counter() - began)
