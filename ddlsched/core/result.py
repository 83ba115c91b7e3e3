"""One result type for every method: exact models, heuristics, simulations.

After PyJobShop's ``Result`` and ``SolveStatus``: whatever produced it, a
result carries the objective, a lower bound where one is known, a status,
the runtime and the schedule.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ddlsched.core.jsontypes import JsonObject
from ddlsched.core.model import Instance, Problem, Schedule


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


CLOSED_GAP = 1e-6
"""The gap that counts as closed, relative to the part of the objective a schedule controls:
a bound proves a schedule optimal when ``objective - bound <= CLOSED_GAP * (objective -
fixed)``, ``fixed = sum_i w_i r_i``
(:func:`gap_closed`). No schedule changes ``fixed``, so
a gap measured against ``sum w C`` would close on any schedule once releases dwarf the
completion times (releases at 1e7 s made a schedule 16% above the optimum "optimal"), and
a gap with an absolute floor closes on any schedule of tiny times (jobs of 1e-8 s). A
solve stopped at a larger ``mip_gap`` is ``feasible``, not ``optimal``."""

CONTRADICTION_TOLERANCE = 1e-6
"""Relative amount by which a lower bound may exceed the value it bounds before the two
contradict each other, measured as :data:`CLOSED_GAP` is (on the part of the value a
schedule controls), plus the rounding of the values themselves: a proof allows as much the
other way."""

ROUNDING = 1e-9
"""Relative rounding allowed on the times a value or bound is computed from when two of
them are compared (above the error of summing a million doubles; as much as every bound
gives up for safety, :data:`ddlsched.formulations.lower_bounds.SAFETY`)."""


def gap_closed(objective: float, bound: float, fixed: float) -> bool:
    """Whether ``bound`` proves ``objective`` optimal: ``objective - bound <= CLOSED_GAP *
    (objective - fixed)`` (false on ``nan``). The one rule of a closed gap, here on the
    ground floor so that every floor applies the same; what a result's status is, is
    decided by :func:`ddlsched.formulations.certify.certify` alone.

    Parameters
    ----------
    objective
        A feasible schedule's ``sum_i w_i C_i``.
    bound
        A valid lower bound on the optimum of the same problem.
    fixed
        The part of the objective no schedule changes, ``sum_i w_i r_i``
        (:func:`fixed_part`): the gap is judged on ``sum_i w_i (C_i -
        r_i)``, which is positive for every schedule, so its scale never vanishes.
    """
    controlled = objective - fixed
    if not (math.isfinite(controlled) and math.isfinite(bound)):
        return False
    return objective - bound <= CLOSED_GAP * max(controlled, 0.0) * (1 + 1e-9)


def fixed_part(instance: Instance) -> float:
    """``sum_i w_i r_i`` of ``instance``: the part of ``sum w C`` that no schedule changes,
    against which no gap is judged (:func:`gap_closed`)."""
    return math.fsum(job.weight * job.release for job in instance.jobs)


def whole_objective_gap(gap: float, fixed: float, floor: float) -> float:
    """The relative gap on the whole objective (what HiGHS and CP-SAT measure) that leaves
    at most ``gap`` of ``objective - fixed``, given ``floor <= objective - fixed``.

    ``gap * floor / (floor + fixed)`` is at most ``gap (objective - fixed) / objective``
    whenever ``objective >= floor + fixed``; without a fixed part it is ``gap`` itself, and
    without a floor 0 (the solver then stops only when its bound meets its incumbent).
    """
    if fixed <= 0:
        return gap
    return gap * floor / (floor + fixed)


class ContradictionError(RuntimeError):
    """A result whose numbers contradict each other (an objective below its own proven lower
    bound, so a negative gap or a ratio to the bound under 1, or ``optimal`` with a gap a
    bound leaves open): an internal error (exit 3 on the command line), never a result."""


def _below(value: float, bound: float, controlled: float, magnitude: float) -> bool:
    """Whether ``value`` lies below ``bound`` by more than :data:`CONTRADICTION_TOLERANCE`
    of ``controlled`` (the part of ``value`` a schedule controls) plus the :data:`ROUNDING`
    of times of ``magnitude`` (false when either is unknown)."""
    if not (math.isfinite(value) and math.isfinite(bound)):
        return False
    scale = abs(controlled) if math.isfinite(controlled) else abs(value)
    largest = max(abs(value), abs(bound), abs(magnitude) if math.isfinite(magnitude) else 0.0)
    return bound - value > CONTRADICTION_TOLERANCE * scale + ROUNDING * largest


@dataclass(frozen=True)
class LowerBound:
    """A lower bound on the optimal objective ``OPT(A) = min sum_i w_i C_i``.

    Attributes
    ----------
    value
        The bound (``nan`` when it could not be computed).
    name
        Which bound (``"job"``, ``"squashed-area"``, ``"mean-busy-time"``,
        ``"lp"``, ``"solver-dual"``).
    valid
        Whether it is proven to be ``<= OPT(A)`` for this instance (an LP
        stopped by its time limit, for example, is not).
    runtime_s
        Seconds it took.
    notes
        What a reader must know (e.g. how many ``alpha_min`` were only bounds,
        which makes the bound weaker, still valid).
    flow_value
        The same bound on the optimal weighted flow time (total JCT)
        ``min sum_i w_i (C_i - r_i) = OPT(A) - sum_i w_i r_i``, computed with it
        job by job (see :mod:`ddlsched.formulations.lower_bounds`), or ``nan`` when not
        known (then :attr:`Result.flow_lower_bound` translates ``value``).
    """

    value: float
    name: str
    valid: bool
    runtime_s: float = 0.0
    notes: tuple[str, ...] = ()
    flow_value: float = math.nan

    def ratio(self, objective: float) -> float:
        """``objective / value``: an upper bound on ``objective / OPT`` if valid, else ``nan``."""
        if not self.valid or not math.isfinite(self.value) or self.value <= 0:
            return math.nan
        return objective / self.value

    def to_dict(self) -> JsonObject:
        """The JSON form."""
        return {
            "value": self.value if math.isfinite(self.value) else None,
            "name": self.name,
            "valid": self.valid,
            "runtime_s": self.runtime_s,
            "notes": list(self.notes),
            "flow_value": self.flow_value if math.isfinite(self.flow_value) else None,
        }


@dataclass(frozen=True)
class ExactFacts:
    """What an exact method knows of the inputs to its proof, as :attr:`Result.facts` holds
    them (the one place their names and defaults are written).

    Attributes
    ----------
    integral
        The instance is integral for the problem: the slotted model is exact.
    modes_proven
        Every mode's duration is exact (no ``alpha_min`` known only as a bound).
    modes_complete
        Every mode was enumerated (none cut short by a limit).
    slotted_optimal
        The slotted model was solved to optimality.
    bracket_closed
        Continuous time only: the rounded-down model's bound meets the real schedule's
        objective (``None`` for the slotted backends).
    """

    integral: bool = False
    modes_proven: bool = False
    modes_complete: bool = False
    slotted_optimal: bool = False
    bracket_closed: bool | None = None

    def as_dict(self) -> dict[str, bool]:
        """The facts as :attr:`Result.facts` holds them (``bracket_closed`` only when set)."""
        facts = {
            "slotted_optimal": self.slotted_optimal,
            "integral": self.integral,
            "modes_proven": self.modes_proven,
            "modes_complete": self.modes_complete,
        }
        if self.bracket_closed is not None:
            facts["bracket_closed"] = self.bracket_closed
        return facts


SOLVER_BOUND = "solver-dual"
"""The :attr:`LowerBound.name` of a bound an exact method proved itself (its dual bound),
as :class:`Result` records a ``best_bound`` given to it."""


def best_lower_bound(bounds: Sequence[LowerBound], by: str = "value") -> LowerBound | None:
    """The best valid bound of ``bounds``, or ``None``: the one place a best bound is chosen.

    ``by="value"``: the largest valid value (on ``sum w C``), its
    :attr:`~LowerBound.flow_value` the largest valid flow bound among ``bounds`` (a bound
    given without one, such as a solver's dual bound, takes the best of the others: each is
    valid on its own). ``by="flow"``: the valid bound of largest flow value, as it is (the
    sandwich's lower end on the total JCT). The first of equal bounds wins.
    """
    if by == "flow":
        flowing = [b for b in bounds if b.valid and math.isfinite(b.flow_value)]
        return max(flowing, key=lambda b: b.flow_value) if flowing else None
    if by != "value":
        raise ValueError(f"by: expected 'value' or 'flow', got {by!r}")
    valid = [b for b in bounds if b.valid and math.isfinite(b.value)]
    if not valid:
        return None
    best = max(valid, key=lambda b: b.value)
    flows = [b.flow_value for b in valid if math.isfinite(b.flow_value)]
    flow = max(flows) if flows else math.nan
    if flow == best.flow_value or (math.isnan(flow) and math.isnan(best.flow_value)):
        return best
    return replace(best, flow_value=flow)


def with_solver_bound(given: LowerBound | None, solver: float) -> LowerBound | None:
    """The better of ``given`` and the solver's bound ``solver`` (``nan``: none), as one
    :class:`LowerBound` (:func:`best_lower_bound`); on a tie ``given`` (its name and notes).
    When the solver's value wins, ``given``'s flow value (a valid bound on the flow time in
    its own right) is kept."""
    if given is not None and given.name == SOLVER_BOUND:
        given = None  # an earlier solver bound, replaced by the one given now
    if not math.isfinite(solver):
        return given
    known = [] if given is None else [given]
    return best_lower_bound([*known, LowerBound(solver, SOLVER_BOUND, True)])


@dataclass(frozen=True, init=False)
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
        ``sum_i w_i (C_i - r_i)``, the weighted flow time (``nan`` without a
        schedule); also :attr:`total_flow_time`.
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
        True/false facts about an exact run (:class:`ExactFacts`; empty for
        online methods).
    notes
        Caveats a reader must know (e.g. "optimum of the slotted problem").
    lower_bound
        The result's one bound: the largest proven lower bound known on the optimum of
        :attr:`problem` (on ``OPT(A)`` for problem A: an exact method's own dual bound or
        the combinatorial bounds of :mod:`ddlsched.formulations.lower_bounds`, whichever
        is larger, :func:`ddlsched.formulations.certify.certify`; for an online
        method the fast bounds), with its name and its flow-time counterpart; ``None``
        when none is known. ``objective / lower_bound.value`` is then a certified upper
        bound on the ratio to the optimum. :attr:`best_bound` is its value.

    Notes
    -----
    The constructor also takes ``best_bound`` (sixth, as results have always been built;
    ``None``: not given): the value a backend proved, folded into :attr:`lower_bound`
    (named :data:`SOLVER_BOUND`) when larger (:func:`with_solver_bound`, which a copy
    with a new solver bound calls: ``dataclasses.replace(result,
    lower_bound=with_solver_bound(result.lower_bound, value))``, ``nan`` to withdraw it).
    """

    method: str
    problem: Problem
    status: SolveStatus
    objective: float
    total_jct: float
    runtime_s: float
    schedule: Schedule | None
    build_time_s: float = 0.0
    metrics: dict[str, float | int] = field(default_factory=dict)
    facts: dict[str, bool] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    lower_bound: LowerBound | None = None

    def __init__(
        self,
        method: str,
        problem: Problem | str,
        status: SolveStatus | str,
        objective: float,
        total_jct: float,
        best_bound: float | None = None,
        runtime_s: float = 0.0,
        schedule: Schedule | None = None,
        build_time_s: float = 0.0,
        metrics: dict[str, float | int] | None = None,
        facts: dict[str, bool] | None = None,
        notes: tuple[str, ...] = (),
        lower_bound: LowerBound | None = None,
    ) -> None:
        values = {
            "method": method,
            "problem": problem,
            "status": status,
            "objective": objective,
            "total_jct": total_jct,
            "runtime_s": runtime_s,
            "schedule": schedule,
            "build_time_s": build_time_s,
            "metrics": {} if metrics is None else metrics,
            "facts": {} if facts is None else facts,
            "notes": notes,
            "lower_bound": lower_bound
            if best_bound is None
            else with_solver_bound(lower_bound, float(best_bound)),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)
        self.__post_init__()

    @property
    def best_bound(self) -> float:
        """The value of :attr:`lower_bound` when it is proven, else ``nan``."""
        bound = self.lower_bound
        if bound is None or not bound.valid or not math.isfinite(bound.value):
            return math.nan
        return bound.value

    def __post_init__(self) -> None:
        object.__setattr__(self, "problem", Problem(self.problem))
        object.__setattr__(self, "status", SolveStatus(self.status))
        contradiction = self.contradiction()
        if contradiction is not None:
            raise ContradictionError(contradiction)

    def contradiction(self) -> str | None:
        """Why this result's numbers contradict each other, or ``None``.

        Every result of every method is built through here (and every
        ``dataclasses.replace`` of one), so none can leave with an objective below its
        valid :attr:`lower_bound` (a negative gap, a ratio to the bound under 1), a
        flow time below its flow bound (such a pair means the schedule is not one of the
        problem the bound bounds, or the bound is wrong), or ``optimal`` beside a bound
        that leaves its gap open (a status is a promise).
        """
        pairs = []
        if self.lower_bound is not None and self.lower_bound.valid:
            name = self.lower_bound.name
            which = "best_bound" if name == SOLVER_BOUND else f"the {name} lower bound"
            pairs.append(("objective", self.objective, which, self.lower_bound.value))
        pairs.append(
            ("total flow time", self.total_flow_time, "flow lower bound", self.flow_lower_bound)
        )
        for what, value, which, bound in pairs:
            if _below(value, bound, self.total_flow_time, self.objective):
                return (
                    f"{self.method} on problem {self.problem.value} ({self.status.value}): "
                    f"{what} {value:.10g} is below {which} {bound:.10g}, a contradiction"
                )
        if self.status is SolveStatus.OPTIMAL and self.gap > CLOSED_GAP * (1 + 1e-9):
            return (
                f"{self.method} on problem {self.problem.value}: optimal, yet its objective "
                f"{self.objective:.10g} is {self.gap:.3g} of its total flow time above its "
                f"best bound {self.best_bound:.10g}, a contradiction"
            )
        return None

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
            facts=ExactFacts().as_dict(),
            notes=(reason,),
        )

    @property
    def proven_optimal(self) -> bool:
        """Whether the status is :attr:`SolveStatus.OPTIMAL` (proven for the instance)."""
        return self.status is SolveStatus.OPTIMAL

    @property
    def gap(self) -> float:
        """Relative gap on the part of the objective a schedule controls: ``(objective -
        best_bound) / total_jct`` (``total_jct = objective - sum_i w_i r_i``, which no
        release time inflates), or ``nan``; ``optimal`` needs it at most
        :data:`CLOSED_GAP` (:func:`gap_closed`)."""
        if not (math.isfinite(self.objective) and math.isfinite(self.best_bound)):
            return math.nan
        if not math.isfinite(self.total_jct):
            return math.nan
        if self.objective <= self.best_bound:
            return 0.0
        if self.total_jct <= 0:
            return math.inf
        return (self.objective - self.best_bound) / self.total_jct

    @property
    def total_flow_time(self) -> float:
        """``sum_i w_i (C_i - r_i)``, the weighted flow time (total JCT)."""
        return self.total_jct

    @property
    def flow_lower_bound(self) -> float:
        """The largest proven lower bound on the optimal weighted flow time, or ``nan``.

        The larger of :attr:`lower_bound`'s ``flow_value`` and the translation
        ``bound - sum_i w_i r_i`` of its value (for every schedule ``sum w (C - r) =
        sum w C - sum w r``, so a bound on one, minus the constant, bounds the other).
        ``sum w r`` is read as ``objective - total_jct``; the translation is lowered by
        :data:`ROUNDING` of the bound so that the rounding of that difference cannot lift
        it.
        """
        candidates = []
        bound = self.lower_bound
        if bound is not None and bound.valid and math.isfinite(bound.flow_value):
            candidates.append(bound.flow_value)
        release_weight = self.objective - self.total_jct
        value = self.best_bound
        if math.isfinite(release_weight) and math.isfinite(value):
            candidates.append(value - release_weight - ROUNDING * abs(value))
        return max(candidates) if candidates else math.nan

    @property
    def flow_ratio(self) -> float:
        """``total_flow_time / flow_lower_bound``: an upper bound on the ratio of this
        schedule's flow time to the optimal one (``nan`` without a positive bound)."""
        bound = self.flow_lower_bound
        if not (math.isfinite(bound) and bound > 0 and math.isfinite(self.total_flow_time)):
            return math.nan
        return self.total_flow_time / bound

    @property
    def flow_gap(self) -> float:
        """Relative gap on the flow time, ``(total_flow_time - flow_lower_bound) /
        total_flow_time``, or ``nan``."""
        flow, bound = self.total_flow_time, self.flow_lower_bound
        if not (math.isfinite(flow) and math.isfinite(bound)):
            return math.nan
        if flow == 0:
            return 0.0
        return max(0.0, (flow - bound) / abs(flow))

    def summary(self) -> dict[str, Any]:
        """The ``--json`` document of ``ddlsched solve``/``simulate``."""
        # Built as a JsonObject (each value one JSON holds); returned with values of any
        # type because its keys are fixed ones beside the method's own metrics and facts,
        # which no TypedDict of Python 3.11 can hold, and readers take fixed keys as scalars.

        def number(value: float | int) -> float | int | None:
            return value if math.isfinite(value) else None

        out: JsonObject = {
            "method": self.method,
            "problem": self.problem.value,
            "status": self.status.value,
            "total_completion_time": number(self.objective),
            "total_jct": number(self.total_jct),
            "total_flow_time": number(self.total_flow_time),
            "best_bound": number(self.best_bound),
            "gap": number(self.gap),
            "flow_lower_bound": number(self.flow_lower_bound),
            "flow_ratio": number(self.flow_ratio),
            "flow_gap": number(self.flow_gap),
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
