"""The largest known lower bound on an exact result, and the proof it may give.

An exact backend knows its own dual bound, which on instances it cannot
prove is often far weaker than the combinatorial bounds of
:mod:`ddlsched.formulations.lower_bounds` (on a 24-job batch instance CP-SAT reported
147 after 3 s while the mean-busy-time bound was 202.8). :func:`with_best_bound`
raises a result's ``best_bound`` to the largest valid bound known, so its
``gap`` (and its flow-time gap, :attr:`ddlsched.core.result.Result.flow_gap`,
which translates it) is measured from the best bound, not the solver's.

Status honesty: ``optimal`` needs a proof for the instance. A valid lower
bound on ``OPT(A)`` that meets the objective of a feasible schedule *is*
such a proof, whichever method found either: ``LB <= OPT <= objective <=
LB (1 + CLOSED_GAP)``. So a ``feasible`` result whose schedule meets a
combinatorial bound becomes ``optimal``, with a note saying that the proof
came from that bound. This holds on non-integral instances and with unproven
mode durations too (:func:`ddlsched.formulations.outcome.honest_status` withdraws the
*solver's* bound there, which bounds only the slotted problem; the
combinatorial bounds bound the continuous problem itself, and the returned
schedule is feasible for it). Problem A only: the combinatorial bounds are
bounds on ``OPT(A)``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ddlsched.formulations.lower_bounds import lower_bounds

from ddlsched.core.model import Instance, Problem
from ddlsched.core.result import (
    ExactFacts,
    LowerBound,
    Result,
    SolveStatus,
    best_lower_bound,
    fixed_part,
    gap_closed,
    with_solver_bound,
)


def combinatorial_bound(instance: Instance, extra: Sequence[LowerBound] = ()) -> LowerBound | None:
    """The best proven lower bound on ``OPT(A)`` among the fast bounds of
    :mod:`ddlsched.formulations.lower_bounds` (milliseconds on the instances exact methods solve)
    and any ``extra`` ones (a MILP's dual bound)."""
    return best_lower_bound([*extra, *lower_bounds(instance)])


def with_best_bound(
    result: Result,
    instance: Instance,
    extra: Sequence[LowerBound] = (),
    combinatorial: LowerBound | None = None,
) -> Result:
    """``result`` with ``best_bound`` the largest valid lower bound known, and ``optimal``
    when that bound meets its schedule (module docstring).

    Parameters
    ----------
    result
        An exact method's result on ``instance``.
    instance
        The instance it solved.
    extra
        Further bounds (the LP, when it was computed); invalid ones are ignored.
    combinatorial
        The fast bound, if already computed (else it is computed here).

    Returns
    -------
    Result
        Unchanged for problems other than A and for results without a schedule
        or with a status other than ``optimal`` / ``feasible``.

    Raises
    ------
    InadmissibleSchedule
        When the schedule is not one of A (:func:`admitted_schedule`).
    """
    if result.problem is not Problem.A or result.schedule is None:
        return result
    if result.status not in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
        return result
    admitted_schedule(result, instance)
    if combinatorial is None:
        combinatorial = combinatorial_bound(instance)
    known = [combinatorial, *extra] if combinatorial is not None else list(extra)
    best = best_lower_bound(known)
    notes = list(result.notes)
    bound = result.best_bound
    if best is not None and not (math.isfinite(bound) and bound >= best.value):
        solver = f"{bound:.8g}" if math.isfinite(bound) else "none"
        notes.append(
            f"best bound {best.value:.8g} from the {best.name} bound (the solver's: {solver})"
        )
        bound = best.value
    lower = result.lower_bound
    if best is not None and (lower is None or best.value > lower.value):
        lower = best
    lower = with_solver_bound(lower, bound)  # the bound named is the one that proves
    status = result.status
    if status is SolveStatus.FEASIBLE and gap_closed(
        result.objective, bound, fixed_part(instance)
    ):
        status = SolveStatus.OPTIMAL
        name = lower.name if lower is not None else "best"
        notes.insert(
            0,
            f"optimal: the {name} lower bound {bound:.8g} meets this schedule's objective, "
            "a proof for the instance",
        )
    return dataclasses.replace(result, status=status, notes=tuple(notes), lower_bound=lower)


def instance_facts(instance: Instance) -> ExactFacts:
    """What a result answered from the race's watch knows of its proof's inputs, as
    :class:`~ddlsched.core.result.ExactFacts`: ``integral`` when the instance is provably
    integral on its slot (:func:`~ddlsched.formulations.lower_bounds.proven_grid`),
    ``modes_proven`` when every ``alpha_min`` the bounds used is exact, ``modes_complete``
    true (a proof by a bound enumerates no mode, so none was cut short), and no slotted
    model solved. Without them an integral instance proven by a bound read
    ``integral: false`` beside a note saying it was proven."""
    from ddlsched.formulations.lower_bounds import proven_grid

    from ddlsched.core.alpha import fastest_processing

    return ExactFacts(
        integral=proven_grid(instance) is not None,
        modes_proven=fastest_processing(instance)[1] == 0,
        modes_complete=True,
    )


def admitted_schedule(result: Result, instance: Instance) -> None:
    """Raise :class:`~ddlsched.formulations.admission.InadmissibleSchedule` unless the verifier
    accepts ``result``'s schedule as a schedule of its problem: only such a schedule may
    meet a bound in a proof, or be returned at all."""
    from ddlsched.formulations.admission import InadmissibleSchedule, refusal

    if result.schedule is None:
        return
    what = f"the {result.method} schedule"
    reason = refusal(instance, result.problem, result.schedule, what)
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


POOLED_VARIABLES = 5_000
"""The pooled integral model's variable budget beside an exact solve: an integral instance's
own grid fits it (2,328 binaries on the 24-job batch instances of ``bench_exact``); off a grid
a finer slot would make the integral model slow and hardly stronger than the LP."""

POOLED_SEARCH = 20_000
"""Steps of the local search that turns the pooled relaxation's order into schedules of A
(:func:`ddlsched.formulations.timeindexed.improve_order`), if the time limit allows: about 30 ms
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
) -> LowerBound:
    """The pooled integral bound (bound 7 of :mod:`ddlsched.formulations.lower_bounds`), then
    schedules of A from its order, as an exact solve uses them. Run in a child by the
    portfolio, which receives each as it is found (:func:`ddlsched.formulations.isolation.report`:
    ``("bound", LowerBound)`` at once, then ``("schedule", Schedule)`` per improvement).

    HiGHS gets half of ``time_limit`` (its dual bound is valid when it stops early),
    the local search the rest, at most ``iterations`` steps and
    :data:`POOLED_PATIENCE` without progress; a schedule that meets the bound is a proof
    (:func:`with_best_bound`). Returns the bound.
    """
    import time

    from ddlsched.formulations.isolation import report
    from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, time_indexed_bound
    from ddlsched.formulations.modes import problem_a
    from ddlsched.formulations.outcome import objectives, schedule_from_plan
    from ddlsched.formulations.slotted import improve_order

    began = time.perf_counter()
    slotted = problem_a(instance, None)
    settings = LpSettings(
        max_variables=POOLED_VARIABLES,
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
    order = sorted(range(instance.num_jobs), key=lambda i: (starts[i], inputs.processing[i], i))

    best = [math.inf]
    fixed = fixed_part(instance)

    def better(plan: list[tuple[int, int]]) -> None:
        schedule = schedule_from_plan(instance, Problem.A, slotted, plan)
        best[0] = objectives(instance, schedule)[0]
        report(("schedule", schedule))

    def done() -> bool:
        """Out of time, or a schedule met the bound (a proof: nothing left to find)."""
        proven = bound.valid and gap_closed(best[0], bound.value, fixed)
        return proven or time.perf_counter() - began > time_limit

    improve_order(slotted, order, iterations, seed, done, better, POOLED_PATIENCE)
    return bound
