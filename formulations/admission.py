"""Which schedules may enter an exact solve: each is checked by the independent verifier.

A schedule enters a solve as the caller's warm start, as an incumbent one backend offers
another, or as a schedule built from a bound's order. Each of them may become the
incumbent, and an incumbent that meets a lower bound is returned as ``optimal``
(:mod:`ddlsched.formulations.certify`). A schedule of another problem (a schedule of the
preemptive relaxation A2 offered to problem A, say) can sit below every valid bound on
``OPT(A)`` and so "prove" an objective no schedule of A reaches. So every such schedule
is first read as a schedule of the problem being solved and checked by
:func:`ddlsched.proofs_checks.verifier.verify`, which shares no code with the methods:

- :func:`check_warm_start` refuses a caller's warm start with an
  :class:`~ddlsched.core.model.InputError` of one line naming the first violation and
  the problems the schedule does fit;
- :func:`refusal` says why an internal schedule is not admitted (``None`` when it is);
  the portfolio drops such a schedule, so it never becomes an incumbent or lends a proof.

Problem A is solved without preemption, so a schedule of A with preempted jobs (pieces,
as the LAS baseline writes) is not a schedule of the problem being solved, though the
verifier accepts it as a preemptive schedule of A.
"""

from __future__ import annotations

import dataclasses

from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.model import InputError, Instance, Problem, Schedule


class InadmissibleSchedule(RuntimeError):
    """A method produced a schedule that is not one of the problem it solved: an internal
    error (exit 3 on the command line), never a result."""


def violations(instance: Instance, problem: Problem | str, schedule: Schedule) -> tuple[str, ...]:
    """Every rule ``schedule`` breaks when read as a schedule of ``problem`` of ``instance``
    (whatever problem the schedule itself names): the verifier's, and preemption for A."""
    problem = Problem(problem)
    found = []
    if problem is Problem.A:  # first: it says more than the pieces' own violations
        found += [
            f"job {entry.id!r}: is preempted (has pieces); problem A runs each job in one piece"
            for entry in schedule.jobs
            if entry.pieces is not None
        ]
    found += verify(instance, dataclasses.replace(schedule, problem=problem)).violations
    return tuple(found)


def fitting_problems(instance: Instance, schedule: Schedule) -> tuple[Problem, ...]:
    """The problems of which ``schedule`` is a feasible schedule of ``instance``."""
    return tuple(p for p in Problem if not violations(instance, p, schedule))


def refusal(
    instance: Instance, problem: Problem | str, schedule: Schedule, what: str = "the schedule"
) -> str | None:
    """One line saying why ``schedule`` (called ``what``) is not a schedule of ``problem``,
    and which problems it does fit; ``None`` when it is one."""
    problem = Problem(problem)
    found = violations(instance, problem, schedule)
    if not found:
        return None
    more = f" (and {len(found) - 1} more violation(s))" if len(found) > 1 else ""
    fits = [p.value for p in fitting_problems(instance, schedule)]
    where = (
        f"it is feasible for problem {' and '.join(fits)}"
        if fits
        else "it is a schedule of no problem of this instance"
    )
    return f"{what} is not a schedule of problem {problem.value}: {found[0]}{more}; {where}"


def check_warm_start(
    instance: Instance, problem: Problem | str, warm_start: Schedule | None
) -> None:
    """Refuse a warm start that is not a feasible schedule of ``problem`` of ``instance``.

    Raises
    ------
    InputError
        One line: the first violation, how many more, and the problems it fits (e.g.
        "the warm start is not a schedule of problem A: job 'j0': has no mapping (and 3
        more violation(s)); it is feasible for problem A2").
    """
    if warm_start is None:
        return
    reason = refusal(instance, problem, warm_start, "the warm start")
    if reason is not None:
        raise InputError(reason)
