"""The one home of bounds and proofs in the exact pipeline.

Two things live here, and nowhere else:

- :class:`BoundSet`, the lower bounds known on ``OPT(A)`` of one instance: the fast bounds
  of :mod:`ddlsched.formulations.lower_bounds` and their inputs (``alpha_min``,
  :class:`~ddlsched.formulations.lower_bounds.BoundInputs`), computed once per solve and
  handed down the pipeline, with bounds added as they come (a solver's dual bound, the LP,
  the pooled bound), the best by value or by flow
  (:func:`~ddlsched.core.result.best_lower_bound`, the one picker), the facts a proof by a
  bound rests on, and the schedules already admitted as schedules of the problem;
- :func:`certify`, the one function that turns a backend's raw answer (:class:`RawAnswer`:
  its schedule's objective and total JCT, its own status and dual bound, its facts) into a
  :class:`~ddlsched.core.result.Result`: it demotes an ``optimal`` whose proof had an
  inexact input or leaves the schedule's gap open, raises the bound to the best known,
  promotes a ``feasible`` schedule whose gap a valid bound closes, and names the proving
  bound the same way in ``lower_bound.name`` and in the notes.

Status honesty: ``optimal`` needs a proof for the instance. A valid lower bound on
``OPT(A)`` that meets the objective of a feasible schedule *is* such a proof, whichever
method found either: ``LB <= OPT <= objective <= LB + CLOSED_GAP (objective - sum w r)``.
This holds on non-integral instances and with unproven mode durations too
(:func:`honest_status` withdraws the *solver's* bound there, which bounds only the slotted
problem; the fast bounds bound the continuous problem itself, and the schedule returned is
feasible for it). The fast bounds are bounds on ``OPT(A)`` only, so problems A1 and A2 are
certified on the backends' own bounds (:meth:`BoundSet.empty`). On a 24-job batch instance
CP-SAT reported 147 after 3 s while the mean-busy-time bound was 202.8: the gap of a result
is measured from the best bound, not the solver's.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ddlsched.formulations.lower_bounds import BoundInputs, lower_bounds, proven_grid
from ddlsched.formulations.pack import PackSettings

from ddlsched.core.model import Instance, Problem, Schedule
from ddlsched.core.result import (
    SOLVER_BOUND,
    ExactFacts,
    LowerBound,
    Result,
    SolveStatus,
    best_lower_bound,
    fixed_part,
    gap_closed,
)


def clearly_better(objective: float, than: float, fixed: float) -> bool:
    """Whether ``objective`` beats ``than`` by more than the closed gap: a schedule that is
    better only by what :func:`gap_closed` forgives replaces no proven or equal answer."""
    return objective < than and not gap_closed(than, objective, fixed)


@dataclass(frozen=True)
class BoundSet:
    """The lower bounds known on ``OPT(A)`` of one instance, and the schedules admitted for
    it: built once per solve (:meth:`of`) and passed down to every stage that certifies.

    Attributes
    ----------
    instance
        The instance.
    bounds
        The bounds known (invalid ones are kept but never chosen): the fast ones, then any
        :meth:`added`.
    inputs
        What the fast bounds were computed from (``alpha_min`` per job), or ``None`` for a
        set without them (:meth:`empty`).
    fixed
        ``sum_i w_i r_i``: the part of the objective no schedule changes (:func:`gap_closed`).
    """

    instance: Instance
    bounds: tuple[LowerBound, ...] = ()
    inputs: BoundInputs | None = None
    fixed: float = 0.0
    _admitted: dict[tuple[int, Problem], Schedule] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(cls, instance: Instance) -> BoundSet:
        """The fast bounds of ``instance`` (milliseconds on the instances exact methods
        solve; about 1.5 s for 82,000 jobs), ``alpha_min`` searched once for all of them."""
        inputs = BoundInputs.of(instance)
        found = tuple(lower_bounds(instance, inputs=inputs))
        return cls(instance, found, inputs, fixed_part(instance))

    @classmethod
    def empty(cls, instance: Instance) -> BoundSet:
        """A set with no bound of its own, for problems the fast bounds do not bound (A1,
        A2) and for certifying on a backend's own bounds alone."""
        return cls(instance, (), None, fixed_part(instance))

    def added(self, *more: LowerBound) -> BoundSet:
        """This set with ``more`` bounds (the LP, the pooled bound, a solver's dual bound);
        the schedules it admitted stay admitted."""
        return dataclasses.replace(self, bounds=(*self.bounds, *more), _admitted=self._admitted)

    def best(
        self,
        by: str = "value",
        among: Sequence[str] | None = None,
        first: Sequence[LowerBound] = (),
    ) -> LowerBound | None:
        """The best valid bound (:func:`~ddlsched.core.result.best_lower_bound`) of ``first``
        and this set's (those named in ``among`` only, if given); ``first`` wins ties."""
        chosen = [b for b in self.bounds if among is None or b.name in among]
        return best_lower_bound([*first, *chosen], by=by)

    def proof(self, objective: float) -> LowerBound | None:
        """The best bound when it meets a schedule of objective ``objective`` (a proof of
        optimality for the instance), else ``None``."""
        best = self.best()
        if best is None or not gap_closed(objective, best.value, self.fixed):
            return None
        return best

    def facts(self) -> ExactFacts:
        """What a proof by one of these bounds rests on: ``integral`` when the instance is
        provably integral on its slot (:func:`~ddlsched.formulations.lower_bounds.proven_grid`),
        ``modes_proven`` when every ``alpha_min`` the bounds used is exact, ``modes_complete``
        (a bound enumerates no mode, so none was cut short), and no slotted model solved."""
        inputs = self.inputs if self.inputs is not None else BoundInputs.of(self.instance)
        return ExactFacts(
            integral=proven_grid(self.instance) is not None,
            modes_proven=inputs.inexact == 0,
            modes_complete=True,
        )

    def refusal(
        self, problem: Problem | str, schedule: Schedule, what: str = "the schedule"
    ) -> str | None:
        """Why ``schedule`` (called ``what``) is not a schedule of ``problem`` of the instance
        (:func:`ddlsched.formulations.admission.refusal`), ``None`` when it is one. A schedule
        admitted once is not verified again: schedules and instances are immutable."""
        from ddlsched.formulations.admission import refusal

        if self._was_admitted(problem, schedule):
            return None
        reason = refusal(self.instance, problem, schedule, what)
        if reason is None:
            self._admit(problem, schedule)
        return reason

    def admit_warm_start(self, problem: Problem | str, warm_start: Schedule | None) -> None:
        """Refuse a warm start that is not a schedule of ``problem`` with an
        :class:`~ddlsched.core.model.InputError` of one line
        (:func:`ddlsched.formulations.admission.check_warm_start`); checked once per set."""
        from ddlsched.formulations.admission import check_warm_start

        if warm_start is None or self._was_admitted(problem, warm_start):
            return
        check_warm_start(self.instance, problem, warm_start)
        self._admit(problem, warm_start)

    def _was_admitted(self, problem: Problem | str, schedule: Schedule) -> bool:
        return self._admitted.get((id(schedule), Problem(problem))) is schedule

    def _admit(self, problem: Problem | str, schedule: Schedule) -> None:
        # The schedule is held, so that its id is not reused by another while the set lives.
        self._admitted[(id(schedule), Problem(problem))] = schedule


def combinatorial_bound(instance: Instance, extra: Sequence[LowerBound] = ()) -> LowerBound | None:
    """The best proven lower bound on ``OPT(A)`` among ``extra`` ones and the fast bounds of
    ``instance`` (:meth:`BoundSet.of`; ``extra`` wins ties)."""
    return BoundSet.of(instance).best(first=extra)


def honest_status(
    status: SolveStatus,
    bound: float,
    integral: bool,
    unproven: tuple[str, ...],
    unenumerated: tuple[str, ...] = (),
) -> tuple[SolveStatus, float, list[str]]:
    """An exact backend's status and bound, demoted where an input was not exact.

    The slotted optimum is the instance's optimum only on an integral instance
    with every mode enumerated and every mode's duration exact; otherwise the
    result is ``feasible``, with no bound, and the notes say which input was
    inexact.
    """
    notes = []
    if not integral:
        notes.append(
            "instance not integral: durations and releases were rounded up to the slot, so this "
            "is the optimum of the slotted problem (an upper bound for the continuous one) and "
            "its bound is not a bound for the continuous problem"
        )
    if unproven:
        notes.append(
            f"modes of {len(unproven)} job(s) ({', '.join(unproven[:5])}) use mappings that a "
            "time-limited mapping MILP did not prove fastest, so their durations may be too "
            "long: the schedule is feasible, but neither it nor the bound is proven for the "
            "instance"
        )
    if unenumerated:
        notes.append(
            f"modes of {len(unenumerated)} job(s) ({', '.join(unenumerated[:5])}) were not all "
            "enumerated before the time limit (or mode_limit): the schedule is feasible, but "
            "the optimum of the modes tried is not proven for the instance"
        )
    if notes:
        bound = math.nan
        if status is SolveStatus.OPTIMAL:
            status = SolveStatus.FEASIBLE
    return status, bound, notes


@dataclass(frozen=True)
class RawAnswer:
    """A backend's answer before it is certified: what it found and what it claims.

    Attributes
    ----------
    method
        The method's name, as the result will hold it.
    problem
        The problem solved.
    status
        The backend's own status on its model.
    schedule
        The schedule it found (``None``: none).
    objective
        ``sum w C`` of ``schedule`` on the instance (``nan``: none).
    total_jct
        ``sum w (C - r)`` of ``schedule`` (``nan``: none).
    solver_bound
        The backend's dual bound in seconds (``nan``: none), valid for its model.
    facts
        What the backend knows of its proof's inputs (``bracket_closed`` is decided by
        :func:`certify`; ``None``: a method with none, such as an online policy).
    rounded
        Durations or releases were rounded to a slot: the model's bound and optimum are the
        slotted problem's only.
    unproven
        Jobs whose modes' durations are not proven fastest.
    unenumerated
        Jobs whose modes were not all enumerated.
    lower_bound
        A bound already known to hold (a certified result's, certified again with more
        bounds or by the race).
    runtime_s
        Seconds the method ran.
    build_time_s
        Seconds spent building its model.
    metrics
        Its figures, as the result will hold them.
    notes
        Its own notes.
    """

    method: str
    problem: Problem
    status: SolveStatus
    schedule: Schedule | None
    objective: float
    total_jct: float
    solver_bound: float = math.nan
    facts: ExactFacts | None = None
    rounded: bool = False
    unproven: tuple[str, ...] = ()
    unenumerated: tuple[str, ...] = ()
    lower_bound: LowerBound | None = None
    runtime_s: float = 0.0
    build_time_s: float = 0.0
    metrics: dict[str, float | int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @classmethod
    def of(cls, result: Result) -> RawAnswer:
        """A result already certified, as an answer to certify again (with more bounds, or
        another schedule): its status, bound and facts as they are."""
        facts = ExactFacts(**result.facts) if result.facts else None
        return cls(
            method=result.method,
            problem=result.problem,
            status=result.status,
            schedule=result.schedule,
            objective=result.objective,
            total_jct=result.total_jct,
            facts=facts,
            lower_bound=result.lower_bound,
            runtime_s=result.runtime_s,
            build_time_s=result.build_time_s,
            metrics=dict(result.metrics),
            notes=result.notes,
        )


def certify(
    answer: RawAnswer, bounds: BoundSet | None = None, source: str = "this schedule"
) -> Result:
    """The certified :class:`~ddlsched.core.result.Result` of a backend's ``answer``.

    In turn: the solver's bound is withdrawn and its ``optimal`` demoted where an input was
    inexact (:func:`honest_status`); an ``optimal`` whose solver bound leaves the schedule's
    gap open is ``feasible`` (a backend's optimum is about its model; at releases near 1e11 s
    HiGHS's objective of a slotted model sat 19.5 s below the decoded schedule's, on a flow
    time of 1.5 s); the bound becomes the best of the answer's and ``bounds``'; a
    ``feasible`` schedule whose gap that bound closes is ``optimal``, the note naming the
    bound as ``lower_bound`` does (``source`` names the schedule).

    Parameters
    ----------
    answer
        The backend's raw answer.
    bounds
        The bounds known on the instance (:meth:`BoundSet.of`; they bound ``OPT(A)``, so
        problems A1 and A2 pass them over), or ``None``: the answer's own bound alone, the
        gap judged on ``objective - total_jct``. With a set, the schedule of an ``optimal``
        or ``feasible`` answer of A must be admitted as one of A first (only such a schedule
        may meet a bound in a proof).
    source
        How the proof's note names the schedule.

    Raises
    ------
    InadmissibleSchedule
        When the schedule is not one of the answer's problem.
    """
    if bounds is not None and answer.problem is not Problem.A:
        bounds = None  # they bound OPT(A) only
    status, solver, caveats = honest_status(
        answer.status,
        answer.solver_bound,
        not answer.rounded,
        answer.unproven,
        answer.unenumerated,
    )
    notes = [*answer.notes, *caveats]
    objective = answer.objective
    fixed = objective - answer.total_jct if bounds is None else bounds.fixed
    solver_closed = gap_closed(objective, solver, fixed)
    if status is SolveStatus.OPTIMAL and math.isfinite(solver) and not solver_closed:
        status = SolveStatus.FEASIBLE
        notes.append(_unsettled(answer, solver))
    scheduled = answer.schedule is not None and status in (
        SolveStatus.OPTIMAL,
        SolveStatus.FEASIBLE,
    )
    solvers = [LowerBound(solver, SOLVER_BOUND, True)] if math.isfinite(solver) else []
    own = best_lower_bound([b for b in (answer.lower_bound, *solvers) if b is not None])
    best = own
    if bounds is not None:
        if scheduled:
            _admit(bounds, answer)
        best = bounds.best(first=() if own is None else (own,))
    proven = best is not None and gap_closed(objective, best.value, fixed)
    if scheduled and status is SolveStatus.FEASIBLE and proven and best is not None:
        status = SolveStatus.OPTIMAL
        notes.insert(0, _proof_note(best, source))
    elif best is not None and (own is None or best.value > own.value):
        mine = "none" if own is None else f"{own.value:.8g}"
        notes.append(
            f"best bound {best.value:.8g} from the {best.name} bound (the solver's: {mine})"
        )
    facts = answer.facts
    if (
        facts is not None
        and facts.bracket_closed is not None
        and math.isfinite(answer.solver_bound)
    ):
        facts = dataclasses.replace(facts, bracket_closed=scheduled and solver_closed)
        if math.isfinite(solver) and not solver_closed:
            notes.append(
                f"bracket open: the schedule's real objective {objective:.10g} against the "
                f"rounded-down bound {solver:.10g}"
            )
    return Result(
        method=answer.method,
        problem=answer.problem,
        status=status,
        objective=objective,
        total_jct=answer.total_jct,
        runtime_s=answer.runtime_s,
        schedule=answer.schedule,
        build_time_s=answer.build_time_s,
        metrics=answer.metrics,
        facts={} if facts is None else facts.as_dict(),
        notes=tuple(notes),
        lower_bound=best,
    )


def _unsettled(answer: RawAnswer, solver: float) -> str:
    """Why a backend's ``optimal`` is not a proof for the schedule it decoded."""
    return (
        "not proven: the solver's optimum of its model leaves the schedule's objective "
        f"{answer.objective:.10g} above the bound {solver:.10g} by "
        f"{(answer.objective - solver) / answer.total_jct:.3g} of its total flow time"
    )


def _proof_note(bound: LowerBound, source: str) -> str:
    """The note of a proof by ``bound``, named as the result's ``lower_bound`` is."""
    return (
        f"optimal: the {bound.name} lower bound {bound.value:.8g} meets {source}'s objective, "
        "a proof for the instance"
    )


def _admit(bounds: BoundSet, answer: RawAnswer) -> None:
    """Raise :class:`~ddlsched.formulations.admission.InadmissibleSchedule` unless
    ``answer``'s schedule is one of its problem."""
    from ddlsched.formulations.admission import InadmissibleSchedule

    assert answer.schedule is not None
    reason = bounds.refusal(answer.problem, answer.schedule, f"the {answer.method} schedule")
    if reason is not None:
        raise InadmissibleSchedule(reason)


LP_VARIABLES = 20_000
"""The LP bound's variable budget beside an exact solve: the LP is set on the instance's own
grid when it is provably integral (:func:`ddlsched.formulations.lower_bounds.proven_grid`), which
for
the 24-job batch instances of ``bench_exact`` takes about 2,600 variables. The pooled
integral bound uses the same model, with integral starts."""


def exact_lp_bound(
    instance: Instance, upper_bound: float, time_limit: float, integer: bool = False
) -> LowerBound:
    """The LP bound of :func:`ddlsched.formulations.lower_bounds.lp_bound` as an exact solve uses
    it
    (the pooled integral bound with ``integer``): windows from ``upper_bound`` (a
    schedule's objective), one thread, within :data:`LP_VARIABLES`, on the instance's own
    grid where it is provably integral (a test on the job data alone: no mode is
    enumerated and no mapping solved, so it cannot outlast the solve). The LP is invalid
    if HiGHS stops at ``time_limit``; the pooled bound then gives its dual bound. Run in a
    child by the portfolio."""
    from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, lp_bound

    settings = LpSettings(
        max_variables=LP_VARIABLES,
        time_limit=max(0.01, time_limit),
        threads=1,
        integer=integer,
    )
    inputs = BoundInputs.of(instance)
    return lp_bound(instance, inputs, settings, upper_bound)


def exact_decomposition_bound(
    instance: Instance, upper_bound: float, time_limit: float
) -> LowerBound:
    """The decomposition bound (:func:`ddlsched.formulations.decomposition.decomposition_bound`:
    Dantzig-Wolfe by server, valid at every round priced exactly) as an exact solve uses it:
    windows from ``upper_bound``, within ``time_limit`` seconds, its own deterministic limits
    (rounds, pricing nodes) otherwise. Run in a child by the portfolio after the pooled bound,
    so it never delays that bound's proofs."""
    from ddlsched.formulations.decomposition import decomposition_bound

    return decomposition_bound(instance, upper_bound, time_limit=max(0.01, time_limit))


POOLED_VARIABLES = 5_000
"""The pooled integral model's variable budget beside an exact solve, off a proven grid: a
finer slot would make the integral model slow and hardly stronger than the LP (24 realistic
batch jobs on 4 x 4 GPUs: 5,016 variables gave a valid bound in 9 s, 20,016 no bound in 10 s)."""

POOLED_GRID_VARIABLES = 20_000
"""The same budget where the instance is provably integral on its own slot
(:func:`~ddlsched.formulations.lower_bounds.proven_grid`), so that the grid fits: 2,328
binaries on the 24-job batch instances of ``bench_exact``, 6,600-8,400 on 48 batch jobs on
4 x 8 GPUs and 8,300 on 100 jobs on 8 x 8 at load 1, each solved by HiGHS in 1-5 s (on a
coarser slot the bound is weaker: 360.5 against 363 on the first 48-job instance)."""

POOLED_SEARCH = 20_000
"""Steps of the local search that turns the pooled relaxation's order into schedules of A
(:func:`ddlsched.formulations.slotted.improve_order`), if the time limit allows: about 30 ms
each on a 24-job 4 x 4 instance."""


POOLED_PATIENCE = 3_000
"""Steps without a better schedule after which that search gives up (a deterministic end
when the race has no time limit)."""

POOLED_NODES = 20_000
"""Branch-and-bound nodes for the pooled integral model beside an exact solve (a
deterministic end when the race has no time limit; its dual bound stays valid)."""


def pooled_bound_and_schedules(
    instance: Instance,
    upper_bound: float,
    time_limit: float,
    seed: int = 0,
    iterations: int = POOLED_SEARCH,
    node_limit: int | None = POOLED_NODES,
    search: PackSettings | None = None,
) -> LowerBound:
    """The pooled integral bound (bound 7 of :mod:`ddlsched.formulations.lower_bounds`), then
    schedules of A from its solution, as an exact solve uses them. Run in a child by the
    portfolio, which receives each as it is found (:func:`ddlsched.formulations.isolation.report`:
    ``("bound", LowerBound)`` at once, then ``("schedule", Schedule)`` per improvement).

    HiGHS gets half of ``time_limit`` (its dual bound is valid when it stops early). Then,
    in turn, until a schedule meets the bound (a proof, :func:`certify`) or the time is up:
    the pooled solution's starts packed onto the servers
    (:func:`ddlsched.formulations.pack.pack`: where it packs at those starts, the schedule
    has the pooled optimum's objective), the local search over its order
    (:func:`ddlsched.formulations.slotted.improve_order`, at most ``iterations`` steps and
    :data:`POOLED_PATIENCE` without progress), and the large-neighbourhood search from the
    best schedule (:func:`ddlsched.formulations.pack.improve`; both by ``search``'s limits).
    Every step has a
    deterministic limit, so without a time limit the schedules are the same on every
    machine. Returns the bound.
    """
    import time

    from ddlsched.formulations.isolation import report
    from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, time_indexed_bound
    from ddlsched.formulations.outcome import schedule_from_plan
    from ddlsched.formulations.pack import improve, pack, pooled_start_slots, search_problem
    from ddlsched.formulations.slotted import improve_order

    stop_at = time.monotonic() + time_limit
    on_grid = proven_grid(instance) is not None
    settings = LpSettings(
        max_variables=POOLED_GRID_VARIABLES if on_grid else POOLED_VARIABLES,
        time_limit=max(0.01, time_limit / 2),
        threads=1,
        integer=True,
        node_limit=node_limit,
    )
    inputs = BoundInputs.of(instance)
    bound, starts = time_indexed_bound(instance, inputs, settings, upper_bound)
    report(("bound", bound))
    if starts is None:
        return bound
    searched = search_problem(instance)
    target = bound.value if bound.valid else -math.inf
    best: list[tuple[float, list[tuple[int, int]]]] = []
    fixed = fixed_part(instance)

    def better(plan: list[tuple[int, int]]) -> None:
        value = searched.objective(plan)
        if not best or value < best[-1][0]:
            best.append((value, plan))
            report(("schedule", schedule_from_plan(instance, Problem.A, searched, plan)))

    def done() -> bool:
        """Out of time, or a schedule met the bound (a proof: nothing left to find)."""
        proven = bool(best) and bound.valid and gap_closed(best[-1][0], bound.value, fixed)
        return proven or time.monotonic() > stop_at

    packed = pack(
        searched,
        pooled_start_slots(searched, starts),
        search,
        target=target,
        seed=seed,
        stop_at=stop_at,
    )
    if packed is not None:
        better(packed)
    order = sorted(range(instance.num_jobs), key=lambda i: (starts[i], inputs.processing[i], i))
    if not done():
        improve_order(searched, order, iterations, seed, done, better, POOLED_PATIENCE)
    if not done():
        plan = best[-1][1]
        improve(searched, plan, search, seed=seed, stop=done, on_better=better, stop_at=stop_at)
    return bound
