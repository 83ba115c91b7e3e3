"""``exact``: the HiGHS MILP and CP-SAT raced on two cores; the first proof wins.

The two exact backends are complementary (the README's ``bench_exact`` table:
CP-SAT proves most instances several times faster, the MILP some that
CP-SAT does not). :func:`solve_exact` runs both at once, one thread each,
each in its own child process, under the same time limit:

- CP-SAT starts first; the MILP follows after a head start of
  :data:`HEAD_START` seconds (:func:`head_start`; or at once when CP-SAT stops
  sooner without a proof), with what remains of the limit when it starts
  (:func:`milp_params`), so both end by the same deadline; deterministic
  limits (``node_limit``, ``solution_limit``, ``deterministic_limit``) pass
  to both unchanged;
- the first to prove optimality stops the other and its result is returned;
- otherwise, when both stop, the best schedule of either is returned with
  the best bound of either; if that bound meets that schedule's objective
  (within ``mip_gap``) the optimum is proven *jointly* and the status is
  ``optimal`` (a lower bound from one method and a feasible schedule of
  equal value from the other are a proof);
- a schedule is always returned when either has one (each falls back to the
  list schedule), so the portfolio never returns without one when a
  feasible schedule exists.

Both bounds are honest (:func:`formulations.exact.honest_status`): on a
non-integral instance or with unproven mode durations neither has a bound,
and the portfolio claims none. Problems A, A1 and A2 alike.

**Incumbents cross** from CP-SAT to the MILP: CP-SAT's child reports each
improving schedule as it finds it (a solution callback); the MILP starts
from CP-SAT's best so far (which also shortens every job's horizon, hence
the MILP: with CP-SAT's optimum as start the three 16-job 4 x 4 instances of
``bench_exact`` took the MILP 0.9, 11.5 and 2.6 s instead of 1.4, 33.2 and
10.9 s), and CP-SAT's later ones are offered to the running HiGHS (its
user-solution callback) when better than its incumbent. The other way is
not possible: CP-SAT takes hints only before it starts, and it starts
first. The MILP's deadline is hard (:func:`formulations.exact.solve_milp`).
"""

from __future__ import annotations

import dataclasses
import math
import queue
import threading
import time
from collections.abc import Callable

from ddlsched.core.model import Instance, Problem, Schedule
from ddlsched.core.params import ExactParams
from ddlsched.core.result import Result, SolveStatus
from formulations.isolation import Cancelled

HEAD_START = 2.0
"""Seconds CP-SAT runs alone before the MILP starts (at most :data:`HEAD_START_SHARE` of the
limit). Starting both at once made the race 10-19% slower than CP-SAT alone where CP-SAT
proves in 1-3 s (measured before CP-SAT's interpreter was reused); instances CP-SAT proves
within the head start never start the MILP."""
HEAD_START_SHARE = 0.1


def solve_exact(
    instance: Instance,
    problem: Problem | str = Problem.A,
    params: ExactParams | None = None,
    *,
    warm_start: Schedule | None = None,
    seed: int = 0,
) -> Result:
    """Race the MILP and CP-SAT on problem ``problem`` (see the module docstring).

    ``params.threads`` is ignored: each backend gets one thread (two cores
    in all). ``metrics["first_proof_milp"]`` / ``["first_proof_cpsat"]`` say
    which proved first (1) if one did.
    """
    from formulations.cpsat import solve_cpsat
    from formulations.exact import objectives, solve_milp

    params = params or ExactParams()
    problem = Problem(problem)
    began = time.perf_counter()
    each = params.replace(threads=1, isolate=True)
    head = head_start(params.time_limit)
    cancel = threading.Event()
    cpsat_done = threading.Event()
    offers: queue.Queue[Schedule] = queue.Queue()  # CP-SAT's incumbents, for the running MILP
    found: list[Schedule] = []  # CP-SAT's incumbents so far, best last

    def from_cpsat(schedule: Schedule) -> None:
        found.append(schedule)
        offers.put(schedule)

    def milp_start() -> Schedule | None:
        """The MILP's warm start: CP-SAT's best so far when it beats the caller's (a smaller
        incumbent shortens every job's horizon, hence the model)."""
        while not offers.empty():  # what is already the warm start need not be offered
            offers.get_nowait()
        if not found:
            return warm_start
        if warm_start is None or any(entry.end is None for entry in warm_start.jobs):
            return found[-1]  # a start without ends cannot be compared; CP-SAT's has them
        return min(warm_start, found[-1], key=lambda s: objectives(instance, s)[0])

    backends: dict[str, Callable[[], Result]] = {
        "milp": lambda: solve_milp(
            instance,
            problem,
            milp_params(params, time.perf_counter() - began),
            warm_start=milp_start(),
            cancel=cancel,
            offers=offers,
        ),
        "cpsat": lambda: solve_cpsat(
            instance,
            problem,
            each,
            warm_start=warm_start,
            seed=seed,
            cancel=cancel,
            on_incumbent=None if problem is Problem.A2 else from_cpsat,
        ),
    }
    outcomes: dict[str, Result | BaseException] = {}
    first: list[str] = []  # the backend that proved optimality first, if any

    def run(name: str) -> None:
        if name == "milp":  # CP-SAT's head start; it ends early if CP-SAT stops first
            cpsat_done.wait(head)
            if cancel.is_set():
                return
        try:
            outcomes[name] = result = backends[name]()
        except Cancelled:
            return
        except BaseException as error:  # reported below, never lost
            outcomes[name] = error
            return
        finally:
            if name == "cpsat":
                cpsat_done.set()
        if result.proven_optimal and not cancel.is_set():
            first.append(name)
            cancel.set()

    threads = [threading.Thread(target=run, args=(name,), daemon=True) for name in backends]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.01)
    except KeyboardInterrupt:
        cancel.set()
        for thread in threads:
            thread.join()
        raise
    return _combine(outcomes, first, time.perf_counter() - began)


def head_start(limit: float | None) -> float:
    """Seconds CP-SAT runs alone under a time limit of ``limit``: :data:`HEAD_START`, at most
    :data:`HEAD_START_SHARE` of the limit."""
    return HEAD_START if limit is None else min(HEAD_START, HEAD_START_SHARE * limit)


def milp_params(params: ExactParams, elapsed: float) -> ExactParams:
    """The MILP's settings when it starts ``elapsed`` seconds into the race.

    One thread, isolated, the caller's deterministic limits, and what remains of
    the time limit (at least a hundredth of a second, to read its start), so that
    the MILP ends by the portfolio's deadline, not a head start later.
    """
    each = params.replace(threads=1, isolate=True)
    if params.time_limit is None:
        return each
    return each.replace(time_limit=max(0.01, params.time_limit - elapsed))


def _combine(
    outcomes: dict[str, Result | BaseException],
    first: list[str],
    wall: float,
) -> Result:
    """One result from the backends' outcomes (the module docstring's rules)."""
    from formulations.solver import gap_closed

    results = {name: r for name, r in outcomes.items() if isinstance(r, Result)}
    errors = {name: e for name, e in outcomes.items() if not isinstance(e, Result)}
    if not results:
        raise next(iter(errors.values()))  # e.g. ModelTooLarge: the same for both
    notes = [
        f"{name}: {result.status.value}, objective {result.objective:.6g}"
        for name, result in results.items()
    ]
    notes += [f"{name} failed: {type(e).__name__}: {e}" for name, e in errors.items()]
    if first:
        chosen = results[first[0]]
        status, bound = chosen.status, chosen.best_bound
        notes.insert(0, f"{first[0]} proved optimality first; the other was stopped")
    else:
        with_schedule = [r for r in results.values() if r.schedule is not None]
        bounds = [r.best_bound for r in results.values() if math.isfinite(r.best_bound)]
        bound = max(bounds) if bounds else math.nan
        if with_schedule:
            chosen = min(with_schedule, key=lambda r: r.objective)
            status = SolveStatus.FEASIBLE
            if gap_closed(chosen.objective, bound):
                status = SolveStatus.OPTIMAL
                notes.insert(0, "optimal, proven jointly: the best bound meets the best schedule")
        else:
            chosen = next(iter(results.values()))
            status = chosen.status
    metrics = {f"first_proof_{name}": int(name in first) for name in ("milp", "cpsat")}
    return dataclasses.replace(
        chosen,
        method="exact",
        status=status,
        best_bound=bound,
        runtime_s=wall,
        metrics={**chosen.metrics, **metrics},
        notes=(*notes, *chosen.notes),
    )
