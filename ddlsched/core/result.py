"""One result type for every method: exact models, heuristics, simulations.

After PyJobShop's ``Result`` and ``SolveStatus``: whatever produced it, a
result carries the objective, a lower bound where one is known, a status,
the runtime and the schedule.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

from ddlsched.core.model import Problem, Schedule


class SolveStatus(enum.StrEnum):
    """How a method ended.

    OPTIMAL
        Proven optimal for the problem it solved (for a slotted MILP on a
        non-integral instance: optimal for the slotted problem only; see
        :attr:`Result.notes`).
    FEASIBLE
        A schedule without proof of optimality (a time limit with an
        incumbent, or a heuristic).
    TIME_LIMIT
        Stopped by the time limit with no schedule.
    INFEASIBLE
        Proven to have no schedule.
    ERROR
        The method failed; see :attr:`Result.notes`.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    ERROR = "error"


@dataclass(frozen=True)
class LowerBound:
    """A lower bound on the optimal objective ``OPT(A) = min sum_i w_i C_i``.

    Attributes
    ----------
    value
        The bound (``nan`` when it could not be computed).
    name
        Which bound (``"job"``, ``"squashed-area"``, ``"mean-busy-time"``,
        ``"lp"``, ``"milp-dual"``).
    valid
        Whether it is proven to be ``<= OPT(A)`` for this instance (an LP
        stopped by its time limit, for example, is not).
    runtime_s
        Seconds it took.
    notes
        What a reader must know (e.g. how many ``alpha_min`` were only bounds,
        which makes the bound weaker, still valid).
    """

    value: float
    name: str
    valid: bool
    runtime_s: float = 0.0
    notes: tuple[str, ...] = ()

    def ratio(self, objective: float) -> float:
        """``objective / value``: an upper bound on ``objective / OPT`` if valid, else ``nan``."""
        if not self.valid or not math.isfinite(self.value) or self.value <= 0:
            return math.nan
        return objective / self.value

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "value": self.value if math.isfinite(self.value) else None,
            "name": self.name,
            "valid": self.valid,
            "runtime_s": self.runtime_s,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Result:
    """What a method returns.

    Attributes
    ----------
    method
        Its name (``"milp"``, ``"asrpt"``, ...; for a policy object, its
        ``name``).
    problem
        The :class:`~ddlsched.core.model.Problem` solved.
    status
        See :class:`SolveStatus`.
    objective
        ``sum_i w_i C_i`` of :attr:`schedule` (``nan`` without one).
    total_jct
        ``sum_i w_i (C_i - r_i)`` (``nan`` without a schedule).
    best_bound
        A proven lower bound on the optimal objective, or ``nan``.
    runtime_s
        Wall-clock seconds.
    schedule
        The schedule, or ``None``.
    build_time_s
        Seconds spent building a model before solving (exact methods).
    metrics
        Further figures (simulator metrics, solver statistics); counts are
        ``int``.
    facts
        True/false facts about the run (``integral``: the instance is
        integral, so a slotted optimum is exact; ``slotted_optimal``: the
        slotted model was solved to optimality).
    notes
        Caveats a reader must know (e.g. "optimum of the slotted problem").
    lower_bound
        The best proven lower bound on ``OPT(A)`` known for the instance (see
        :mod:`formulations.lower_bounds`), or ``None``; ``objective /
        lower_bound.value`` is then a certified upper bound on the ratio to
        the optimum.
    """

    method: str
    problem: Problem
    status: SolveStatus
    objective: float
    total_jct: float
    best_bound: float
    runtime_s: float
    schedule: Schedule | None
    build_time_s: float = 0.0
    metrics: dict[str, float | int] = field(default_factory=dict)
    facts: dict[str, bool] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    lower_bound: LowerBound | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "problem", Problem(self.problem))
        object.__setattr__(self, "status", SolveStatus(self.status))

    def __repr__(self) -> str:
        """One line: method, problem, status, objective, bound, gap and time (the schedule,
        metrics and notes are in :meth:`summary`)."""
        gap = "" if math.isnan(self.gap) else f", gap={self.gap:.2%}"
        bound = "" if math.isnan(self.best_bound) else f", bound={self.best_bound:.6g}"
        return (
            f"Result({self.method!r}, problem {self.problem.value}, {self.status.value}, "
            f"objective={self.objective:.6g}{bound}{gap}, {self.runtime_s:.3g} s)"
        )

    @classmethod
    def unsolved(
        cls, method: str, problem: Problem | str, reason: str, runtime_s: float = 0.0
    ) -> Result:
        """An ``error`` result with no schedule and every number unknown, saying why.

        Its facts are all false and ``metrics["milp_objective"]`` is ``nan``, so
        code reading an exact method's result needs no special case.
        """
        return cls(
            method=method,
            problem=Problem(problem),
            status=SolveStatus.ERROR,
            objective=math.nan,
            total_jct=math.nan,
            best_bound=math.nan,
            runtime_s=runtime_s,
            schedule=None,
            metrics={"milp_objective": math.nan},
            facts={"slotted_optimal": False, "integral": False, "modes_proven": False},
            notes=(reason,),
        )

    @property
    def proven_optimal(self) -> bool:
        """Whether the status is :attr:`SolveStatus.OPTIMAL` (proven for the instance)."""
        return self.status is SolveStatus.OPTIMAL

    @property
    def gap(self) -> float:
        """Relative gap ``(objective - best_bound) / objective``, or ``nan``."""
        if not (math.isfinite(self.objective) and math.isfinite(self.best_bound)):
            return math.nan
        if self.objective == 0:
            return 0.0
        return max(0.0, (self.objective - self.best_bound) / abs(self.objective))

    def summary(self) -> dict[str, Any]:
        """The ``--json`` document of ``ddlsched solve``/``simulate``."""

        def number(value: float | int) -> float | int | None:
            return value if math.isfinite(value) else None

        out: dict[str, Any] = {
            "method": self.method,
            "problem": self.problem.value,
            "status": self.status.value,
            "total_completion_time": number(self.objective),
            "total_jct": number(self.total_jct),
            "best_bound": number(self.best_bound),
            "gap": number(self.gap),
            "runtime_s": self.runtime_s,
            "build_time_s": self.build_time_s,
        }
        out.update({key: number(value) for key, value in self.metrics.items()})
        out.update(self.facts)
        if self.lower_bound is not None:
            out["lower_bound"] = self.lower_bound.to_dict()
            out["ratio_to_lower_bound"] = number(self.lower_bound.ratio(self.objective))
        if self.notes:
            out["notes"] = list(self.notes)
        return out
