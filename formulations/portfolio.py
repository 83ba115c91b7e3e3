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

Both bounds are honest (:func:`ddlsched.formulations.outcome.honest_status`): on a
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
first. The MILP's deadline is hard (:func:`ddlsched.formulations.milp.solve_milp`).

**Without a time limit the backends run in turn**, each to its deterministic limits
(``deterministic_limit`` and ``solution_limit`` for CP-SAT, ``node_limit`` for the MILP):
CP-SAT first, the MILP once CP-SAT has stopped (from its best schedule), then the LP and
pooled bounds. Nothing then depends on the clock (which backend reaches a point first, an
incumbent crossing mid-search), so the answer is the same on an idle and on a loaded
machine: what ``compare`` and sweeps use by default.

**Bounds race too** (problem A). The fast combinatorial bound is computed at
once, and the LP bound (:func:`ddlsched.formulations.certify.exact_lp_bound`: on an
integral instance set on the instance's own slot) in a third child, with
windows from the best schedule known when it starts, then the pooled
integral bound (the same model with integral starts: bound 7 of
:mod:`ddlsched.formulations.lower_bounds`, the one that closes batch arrivals). A :class:`_Watch`
sees every schedule (the warm start, CP-SAT's and the MILP's incumbents)
and every bound; as soon as the best schedule meets the best valid bound it
stops both backends and returns that schedule as ``optimal``, saying which
bound proved it (a valid lower bound met by a feasible schedule is a proof,
:mod:`ddlsched.formulations.certify`). The result's ``best_bound`` is the largest of
the backends', the combinatorial, the LP and the pooled bounds.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import threading
import time
from typing import TYPE_CHECKING

from ddlsched.formulations.isolation import Cancelled

from ddlsched.core.model import Instance, Problem, Schedule
from ddlsched.core.params import DEFAULT_MEMORY_LIMIT, ExactParams
from ddlsched.core.result import LowerBound, Result, SolveStatus, best_lower_bound

if TYPE_CHECKING:
    from ddlsched.formulations.certify import BoundSet
    from ddlsched.formulations.prepared import ModelTooLarge

HEAD_START = 2.0
"""Seconds CP-SAT runs alone before the MILP starts (at most :data:`HEAD_START_SHARE` of the
limit). Starting both at once made the race 10-19% slower than CP-SAT alone where CP-SAT
proves in 1-3 s (measured before CP-SAT's interpreter was reused); instances CP-SAT proves
within the head start never start the MILP."""
HEAD_START_SHARE = 0.1

STOP_SLACK = 0.5
"""Seconds past the time limit at which the portfolio stops whatever still runs and answers
from what was reported (:class:`_Watch`): a 60 s call ended after 64-68 s before, the
MILP's own hard stop and the LP coming on top. Equal to the MILP's hard stop
(:data:`ddlsched.formulations.milp.OVERRUN_GRACE`)."""

POOLED_MARGIN = 0.5
"""Seconds before the time limit at which the pooled bound's child ends by itself (HiGHS
reporting its dual bound, valid though unfinished, and the search its best schedule) rather
than being stopped with the race."""

BOUND_LIMIT = 3600.0
"""Seconds at most for the LP's and the pooled bound's children (all the time there is when
the race has no time limit)."""

POOLED_SOURCE = "a schedule from the pooled bound's order"
"""How notes name a schedule the pooled bound's search reported."""

REFUSALS_NOTED = 3
"""Schedules the watch dropped that a result's notes name one by one."""

RACE_BOUNDS = True
"""Whether the portfolio races the bounds too (problem A; module docstring). Off, only a
backend's own proof or the joint one ends the race: tests of the racing itself, and
``bench_exact`` to measure what the bounds add."""


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
    which proved first (1) if one did; ``["proof_by_bound"]`` is 1 when a lower bound
    met a schedule first (:class:`_Watch`). The fast bounds are computed once, here, and
    every stage certifies with them (:class:`~ddlsched.formulations.certify.BoundSet`).
    """
    from ddlsched.formulations.certify import BoundSet
    from ddlsched.formulations.prepared import ModelTooLarge

    params = params or ExactParams()
    problem = Problem(problem)
    began = time.perf_counter()
    known = BoundSet.of(instance) if problem is Problem.A else BoundSet.empty(instance)
    refused = slotted_refusal(instance, problem, params.memory_limit)
    if refused is not None:
        return _without_slots(known, problem, params, warm_start, seed, began, refused)
    racing = problem is Problem.A and RACE_BOUNDS
    race = _Race(known, problem, params, warm_start, seed, began, racing)
    if race.watch.proof is not None:
        return _from_watch(problem, race.watch, {}, race.elapsed())
    threads = race.start()
    stop_at = None if params.time_limit is None else began + params.time_limit + STOP_SLACK
    stopped = race.join(threads, stop_at)
    try:
        result = _answer(race, stopped)
    except ModelTooLarge as error:  # both refused once the modes were known
        if problem is Problem.A2:
            raise
        return _without_slots(known, problem, params, warm_start, seed, began, error)
    return _continued_in_continuous_time(result, known, problem, params, seed, began)


def _continued_in_continuous_time(
    result: Result,
    known: BoundSet,
    problem: Problem,
    params: ExactParams,
    seed: int,
    began: float,
) -> Result:
    """``result`` of a slotted race or, where the slotted models are not exact for the
    instance (durations off the slot grid: ``facts["integral"]`` false) and did not prove
    it, the continuous-time answer with the time that remains, started from the race's
    schedule, when that is proven or better; the slotted answer otherwise."""
    if result.proven_optimal or result.facts.get("integral", True) or problem is Problem.A2:
        return result
    if params.time_limit is not None and params.time_limit - (time.perf_counter() - began) < 0.1:
        return result
    reason = "the slotted models are not exact for this instance"
    continued = _continuous(known, problem, params, result.schedule, seed, began, reason)
    if continued.proven_optimal or continued.objective < result.objective:
        return continued
    return result


def slotted_refusal(
    instance: Instance, problem: Problem, memory_limit: int | None = DEFAULT_MEMORY_LIMIT
) -> ModelTooLarge | None:
    """Why the slotted models of problem A or A1 are certainly too large for ``instance``
    (:func:`ddlsched.formulations.prepared.estimate_size`, before any mode is enumerated), or
    ``None``: then the race runs as before. On A2, which has no continuous-time backend to
    turn to, a model too large is refused here, before either backend starts: both models
    together over ``memory_limit`` bytes (:data:`ddlsched.formulations.memory.A2_RACE`;
    ``None``: no limit).

    Raises
    ------
    ModelTooLarge
        For problem A2 (:func:`ddlsched.formulations.prepared.guard_a2`).
    """
    from ddlsched.formulations.memory import A2_RACE
    from ddlsched.formulations.prepared import ModelTooLarge, estimate_size

    if problem is Problem.A2:
        estimate_size(instance, problem, memory_limit, A2_RACE)
        return None
    try:
        estimate_size(instance, problem)
    except ModelTooLarge as error:
        return error
    return None


def _without_slots(
    known: BoundSet,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
    seed: int,
    began: float,
    refused: ModelTooLarge,
) -> Result:
    """Problem A or A1 where the slotted models were refused: in continuous time, or, where
    that model is too large as well (:func:`continuous_refusal`), by the bounds and the
    searches from the pooled relaxation alone (:func:`_pooled_alone`)."""
    too_large = continuous_refusal(known.instance, problem, params.memory_limit)
    if too_large is not None:
        return _pooled_alone(known, params, warm_start, seed, began, too_large)
    return _continuous(known, problem, params, warm_start, seed, began, refused)


def continuous_refusal(
    instance: Instance, problem: Problem, memory_limit: int | None = DEFAULT_MEMORY_LIMIT
) -> ModelTooLarge | None:
    """Why the continuous-time model of problem A is certainly too large for ``instance``
    (one interval per vector of GPU counts of every job,
    :data:`ddlsched.formulations.memory.CPSAT_INTERVALS`), counted before any mode is
    enumerated (14.4 million on 200 jobs on 16 x 8 GPUs; enumerating them took the modes'
    share of the limit before the model was refused), or ``None``."""
    from ddlsched.formulations.memory import CPSAT_INTERVALS
    from ddlsched.formulations.modes import count_vectors_total
    from ddlsched.formulations.prepared import ModelTooLarge

    if problem is not Problem.A:
        return None
    capacities = instance.cluster.gpus_per_server
    total = sum(count_vectors_total(job.gpus, capacities) for job in instance.jobs)
    try:
        CPSAT_INTERVALS.check((total,), memory_limit, "problem A in continuous time")
    except ModelTooLarge as error:
        return error
    return None


def _pooled_alone(
    known: BoundSet,
    params: ExactParams,
    warm_start: Schedule | None,
    seed: int,
    began: float,
    refused: ModelTooLarge,
) -> Result:
    """Problem A where neither the slotted nor the continuous-time models fit: the bounds'
    children alone (the LP, then the pooled bound, the packing of its starts and the
    searches from it, :func:`ddlsched.formulations.certify.pooled_bound_and_schedules`),
    watched as in a race, from the warm start or else the best list schedule; a schedule
    meeting a bound is a proof as anywhere else."""
    if warm_start is None:
        warm_start = _list_schedule(known.instance)
    race = _Race(known, Problem.A, params, warm_start, seed, began, True)
    try:
        race.run_bounds()
    finally:
        race.lp_stop.set()
    result = _from_watch(Problem.A, race.watch, {}, race.elapsed())
    note = (
        f"the slotted and the continuous-time models were refused ({refused}); "
        "answered by the bounds and the searches from the pooled relaxation"
    )
    return dataclasses.replace(result, notes=(note, *result.notes))


def _list_schedule(instance: Instance) -> Schedule:
    """The best list schedule of problem A on the searches' modes
    (:func:`ddlsched.formulations.pack.search_problem`)."""
    from ddlsched.formulations.outcome import schedule_from_plan
    from ddlsched.formulations.pack import search_problem
    from ddlsched.formulations.slotted import greedy_schedule

    problem = search_problem(instance)
    return schedule_from_plan(instance, Problem.A, problem, greedy_schedule(problem))


def _continuous(
    known: BoundSet,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
    seed: int,
    began: float,
    refused: ModelTooLarge | str,
) -> Result:
    """Problem A or A1 solved in continuous time (:mod:`ddlsched.formulations.continuous`) where
    the
    slotted models are refused, with what remains of the time limit. CP-SAT gets both
    cores (two workers) unless a deterministic limit asks for one worker, the same work
    on every machine."""
    from ddlsched.formulations.continuous import METHOD, solve_continuous

    deterministic = params.deterministic_limit is not None or params.solution_limit is not None
    own = params.replace(threads=1 if deterministic else 2, isolate=True)
    if params.time_limit is not None:
        own = own.replace(time_limit=max(0.01, params.time_limit - (time.perf_counter() - began)))
    result = solve_continuous(
        known.instance, problem, own, warm_start=warm_start, seed=seed, bounds=known
    )
    if warm_start is not None:  # kept when better: its modes may not all be enumerated
        watch = _Watch.started(known, problem, threading.Event(), False, warm_start)
        result = _with_watched_schedule(result, watch)
    why = refused if isinstance(refused, str) else f"the slotted models were refused ({refused})"
    note = f"{why}; solved in continuous time by {METHOD}"
    return dataclasses.replace(
        result,
        method="exact",
        runtime_s=time.perf_counter() - began,
        notes=(note, *result.notes),
    )


class _Race:
    """The state one call of :func:`solve_exact` shares between its threads, and what each
    thread runs: the two backends (:meth:`run_backend`) and, when the bounds race, their
    children (:meth:`run_bounds`).

    Attributes
    ----------
    cancel
        Set when the race is over for the backends: a proof, or the deadline.
    cpsat_done
        Set when CP-SAT stops, which ends the MILP's wait for its head start.
    offers
        CP-SAT's incumbents (and the pooled bound's schedules) for the running MILP.
    found
        CP-SAT's incumbents so far, best last.
    outcomes
        Each backend's result, or the exception it raised.
    first
        The backend that proved optimality first, if any.
    known
        The fast bounds of the instance and the schedules admitted, shared by every stage
        (:class:`~ddlsched.formulations.certify.BoundSet`).
    watch
        The best schedule and the valid bounds seen so far (:class:`_Watch`).
    lp_stop
        Set when the race is over for the bounds: they are no longer wanted.
    fixed_upper
        The objective the bounds' children take as their upper bound (see
        :meth:`_bound_step`).
    """

    def __init__(
        self,
        known: BoundSet,
        problem: Problem,
        params: ExactParams,
        warm_start: Schedule | None,
        seed: int,
        began: float,
        racing: bool,
    ) -> None:
        from ddlsched.formulations.cpsat import solve_cpsat
        from ddlsched.formulations.milp import solve_milp

        self.instance, self.problem, self.params = known.instance, problem, params
        self.warm_start, self.seed, self.began = warm_start, seed, began
        self.racing, self.known = racing, known
        self.solve_milp, self.solve_cpsat = solve_milp, solve_cpsat
        self.head = head_start(params.time_limit)
        self.cancel = threading.Event()
        self.cpsat_done = threading.Event()
        self.offers: queue.Queue[Schedule] = queue.Queue()
        self.found: list[Schedule] = []
        self.outcomes: dict[str, Result | BaseException] = {}
        self.first: list[str] = []
        self.watch = _Watch.started(known, problem, self.cancel, racing, warm_start)
        self.lp_stop = threading.Event()
        # The bounds' children get the warm start's objective as their upper bound, fixed
        # before the race: the best objective when a child starts depends on how far the
        # backends got by then, i.e. on the machine's speed, and the node-limited pooled
        # MILP and its search would then end at different places on an idle and a loaded
        # machine (proving 212 on one, stopping at 213 on the other). Without a warm start:
        # the best seen when a child starts.
        self.fixed_upper = self.watch.objective

    def elapsed(self) -> float:
        """Seconds since the call began."""
        return time.perf_counter() - self.began

    def from_cpsat(self, schedule: Schedule) -> None:
        """CP-SAT's incumbent: watched, and offered to the MILP when admitted (only admitted
        ones cross)."""
        if self.watch.schedule(schedule, "a CP-SAT incumbent"):
            self.found.append(schedule)
            self.offers.put(schedule)

    def from_milp(self, schedule: Schedule, _bound: float) -> None:
        """The MILP's incumbent: watched."""
        self.watch.schedule(schedule, "a MILP incumbent")

    def milp_start(self) -> Schedule | None:
        """The MILP's warm start: CP-SAT's best so far when it beats the caller's (a smaller
        incumbent shortens every job's horizon, hence the model)."""
        from ddlsched.formulations.outcome import objectives

        while not self.offers.empty():  # what is already the warm start need not be offered
            self.offers.get_nowait()
        warm_start = self.warm_start
        if not self.found:
            return warm_start
        if warm_start is None or any(entry.end is None for entry in warm_start.jobs):
            return self.found[-1]  # a start without ends cannot be compared; CP-SAT's has them
        return min(warm_start, self.found[-1], key=lambda s: objectives(self.instance, s)[0])

    def start(self) -> list[threading.Thread]:
        """The race's threads, started: the MILP's, CP-SAT's, then the bounds' if they race."""
        threads = [
            threading.Thread(target=self.run_backend, args=(name,), daemon=True)
            for name in ("milp", "cpsat")
        ]
        if self.racing and self.params.time_limit is not None:
            threads.append(threading.Thread(target=self.run_bounds, daemon=True))
        for thread in threads:
            thread.start()
        return threads

    def run_backend(self, name: str) -> None:
        """Run backend ``name`` (``"milp"`` or ``"cpsat"``) and record its outcome; the first
        to prove optimality stops the other."""
        if name == "milp":  # CP-SAT's head start; it ends early if CP-SAT stops first
            self.cpsat_done.wait(self.head)
            if self.cancel.is_set():
                return
        try:
            self.outcomes[name] = result = self._solve(name)
        except Cancelled:
            return
        except BaseException as error:  # reported in the answer, never lost
            self.outcomes[name] = error
            return
        finally:
            if name == "cpsat":
                self.cpsat_done.set()
        if result.proven_optimal and not self.cancel.is_set():
            self.first.append(name)
            self.cancel.set()

    def _solve(self, name: str) -> Result:
        """Backend ``name``'s solve: CP-SAT under the whole limit, the MILP under what remains
        of it (:func:`milp_params`) from :meth:`milp_start`; both report their incumbents
        (not on A2, whose schedules are not schedules of A)."""
        report = self.problem is not Problem.A2
        if name == "milp":
            return self.solve_milp(
                self.instance,
                self.problem,
                milp_params(self.params, self.elapsed()),
                warm_start=self.milp_start(),
                cancel=self.cancel,
                on_incumbent=self.from_milp if report else None,
                offers=self.offers,
                bounds=self.known,
            )
        return self.solve_cpsat(
            self.instance,
            self.problem,
            self.params.replace(threads=1, isolate=True),
            warm_start=self.warm_start,
            seed=self.seed,
            cancel=self.cancel,
            on_incumbent=self.from_cpsat if report else None,
            bounds=self.known,
        )

    def run_bounds(self) -> None:
        """The LP bound, then the pooled integral bound and the schedules from its solution
        (:func:`ddlsched.formulations.certify.pooled_bound_and_schedules`), then, if that
        child ends unproven before the race, the decomposition bound
        (:func:`ddlsched.formulations.certify.exact_decomposition_bound`), each in its own
        child, stopped when the race ends."""
        for step in ("lp", "pooled", "decomposition"):
            if not self._bound_step(step):
                return

    def _bound_step(self, step: str) -> bool:
        """Run bound ``step`` (``"lp"``, ``"pooled"`` or ``"decomposition"``) in its child and
        watch its value; whether the next step is still wanted. The pooled child's own limit
        ends a little before the race's, so that what it found is handed over rather than
        lost with it."""
        limit = self.params.time_limit
        remaining = math.inf if limit is None else limit - self.elapsed()
        # Without a time limit each child still gets a finite one: HiGHS needs a number,
        # and the LP does not run without one.
        remaining = min(remaining, BOUND_LIMIT)
        if step == "pooled":
            remaining -= POOLED_MARGIN
        upper = self.fixed_upper if math.isfinite(self.fixed_upper) else self.watch.objective
        if remaining <= 0 or self.lp_stop.is_set() or not math.isfinite(upper):
            return False
        try:
            bound = self._bound_child(step, upper, remaining)
        except Exception:
            return False
        self.watch.bound(bound)
        return self.watch.proof is None

    def _bound_child(self, step: str, upper: float, remaining: float) -> LowerBound:
        """Bound ``step`` computed in a child with windows from ``upper`` within ``remaining``
        seconds, stopped by :attr:`lp_stop`."""
        from ddlsched.formulations.certify import (
            exact_decomposition_bound,
            exact_lp_bound,
            pooled_bound_and_schedules,
        )
        from ddlsched.formulations.isolation import run_isolated

        if step != "pooled":
            bound = exact_lp_bound if step == "lp" else exact_decomposition_bound
            return run_isolated(bound, self.instance, upper, remaining, cancel=self.lp_stop)
        return run_isolated(
            pooled_bound_and_schedules,
            self.instance,
            upper,
            remaining,
            self.seed,
            cancel=self.lp_stop,
            on_report=self._received,
        )

    def _received(self, payload: tuple[str, object]) -> None:
        """A report of the pooled bound's child: its bound, or a schedule its order gave
        (offered to the MILP once the watch admits it as a schedule of the problem)."""
        kind, item = payload
        if kind == "bound" and isinstance(item, LowerBound):
            self.watch.bound(item)
        elif isinstance(item, Schedule) and self.watch.schedule(item, POOLED_SOURCE):
            self.offers.put(item)

    def join(self, threads: list[threading.Thread], stop_at: float | None) -> bool:
        """Wait for the backends, stopping them at ``stop_at``, then for the bounds while they
        may still prove the instance; whether the backends were stopped at ``stop_at``."""
        stopped = self._join_backends(threads, stop_at)
        answered = any(isinstance(outcome, Result) for outcome in self.outcomes.values())
        if self.racing and self.params.time_limit is None:
            if answered and not self.first and self.watch.proof is None:
                self.run_bounds()  # in turn, after the backends (module docstring)
            return stopped
        if len(threads) > 2 and answered and not self.first and self.watch.proof is None:
            # The backends stopped unproven within the limit (not refused: a model too large
            # for both ends the call): the pooled bound and its schedules may still prove the
            # instance, until the limit (without one, their own deterministic ends).
            self._join_bounds(threads[2], stop_at)
        self.lp_stop.set()
        if len(threads) > 2:
            threads[2].join()
        return stopped

    def _join_backends(self, threads: list[threading.Thread], stop_at: float | None) -> bool:
        """Wait for the two backends' threads (the first two of ``threads``), cancelling them
        once past ``stop_at``; whether they were. Ctrl-C safe."""
        stopped = False
        try:
            for thread in threads[:2]:
                while thread.is_alive():
                    thread.join(0.01)
                    if (
                        stop_at is not None
                        and not self.cancel.is_set()
                        and time.perf_counter() > stop_at
                    ):
                        stopped = True
                        self.cancel.set()
        except BaseException:  # Ctrl-C, or SystemExit from a SIGTERM / SIGHUP handler
            # Stop and join every thread before leaving: a thread left running while the
            # interpreter exits may be starting a child, which then dies reading its start-up
            # data and prints an EOFError traceback (a SIGHUP during the race, for one).
            self.cancel.set()
            self.lp_stop.set()
            for thread in threads:
                thread.join()
            raise
        return stopped

    def _join_bounds(self, bounds: threading.Thread, stop_at: float | None) -> None:
        """Wait for the bounds' thread until a proof, or until ``stop_at``. Ctrl-C safe."""
        try:
            while bounds.is_alive() and not self.cancel.is_set():
                bounds.join(0.01)
                if stop_at is not None and time.perf_counter() > stop_at:
                    break
        except BaseException:  # as above: Ctrl-C or a SIGTERM / SIGHUP handler's SystemExit
            self.lp_stop.set()
            bounds.join()
            raise


def _answer(race: _Race, stopped: bool) -> Result:
    """The result of a finished race: the watch's when it proved the instance first (or
    nothing else answered before the stop), else the backends' combined
    (:func:`_combine`), with the best schedule watched and, when the bounds raced,
    certified with every bound the watch saw (:func:`ddlsched.formulations.certify.certify`)."""
    from ddlsched.formulations.certify import RawAnswer, certify

    problem, watch, outcomes = race.problem, race.watch, race.outcomes
    if (watch.proof is not None and not race.first) or (stopped and not outcomes):
        return _from_watch(problem, watch, outcomes, race.elapsed())
    result = _combine(*_admitted(race.known, problem, outcomes, race.first), race.elapsed())
    result = _with_watched_schedule(result, watch)
    if stopped:
        result = dataclasses.replace(
            result, notes=(*result.notes, f"stopped {STOP_SLACK:g} s past the time limit")
        )
    if not race.racing:
        return result
    answer = dataclasses.replace(RawAnswer.of(result), runtime_s=race.elapsed())
    return certify(answer, watch.bounds)


class _Watch:
    """The best schedule and the valid bounds seen during a race; sets ``cancel`` once a
    bound meets a schedule (a proof), remembering which (:attr:`proof`). Only schedules the
    verifier accepts for :attr:`problem` are kept (:mod:`ddlsched.formulations.admission`); the
    others are named in :attr:`refused` and never become the best or lend a proof.

    :attr:`bounds` is the race's :class:`~ddlsched.formulations.certify.BoundSet` when the
    bounds race (the fast ones, then each bound reported), else the same set without its
    bounds (the watch then proves nothing); either way it admits each schedule once.
    """

    def __init__(
        self,
        known: BoundSet,
        cancel: threading.Event,
        racing: bool = True,
        problem: Problem = Problem.A,
    ) -> None:
        self.instance = known.instance
        self.bounds = known if racing else dataclasses.replace(known, bounds=())
        self.problem = problem
        self.cancel = cancel
        self.lock = threading.Lock()
        self.best: tuple[Schedule, str] | None = None
        self.objective = math.inf
        self.proof: tuple[Schedule, str, LowerBound] | None = None
        self.refused: list[str] = []

    @classmethod
    def started(
        cls,
        known: BoundSet,
        problem: Problem,
        cancel: threading.Event,
        racing: bool,
        warm_start: Schedule | None,
    ) -> _Watch:
        """A watch that has seen the caller's warm start, which must be a schedule of
        ``problem`` (an :class:`~ddlsched.core.model.InputError` otherwise: a schedule of
        the relaxation A2 would sit below the bounds on ``OPT(A)`` and "prove" itself). On
        A2 it has seen preemptive SRPT instead (the backends of A2 take no warm start), and
        on A1 without a warm start a list schedule, so that a race stopped before either
        backend answers still returns a schedule (problem A's front door,
        :func:`ddlsched.api.solve`, gives it the online policies' best as warm start)."""
        from ddlsched.formulations.continuous import pooled_list_schedule
        from ddlsched.formulations.problem_a2 import single_machine, srpt_schedule

        known.admit_warm_start(problem, warm_start)
        watch = cls(known, cancel, racing, problem)
        if problem is Problem.A2:
            watch.schedule(srpt_schedule(single_machine(known.instance)), "preemptive SRPT")
        elif warm_start is not None:
            watch.schedule(warm_start, "the warm start")
        elif problem is Problem.A1:
            watch.schedule(pooled_list_schedule(known.instance), "a list schedule")
        return watch

    def schedule(self, schedule: Schedule, source: str) -> bool:
        """A schedule (with ends) found by ``source``; whether it was admitted (a schedule
        without ends is admitted but cannot be scored, so it is not kept)."""
        from ddlsched.formulations.outcome import objectives

        reason = self.bounds.refusal(self.problem, schedule, source)
        if reason is not None:
            with self.lock:
                self.refused.append(f"dropped: {reason}")
            return False
        if any(entry.end is None for entry in schedule.jobs):
            return True
        objective, _ = objectives(self.instance, schedule)
        with self.lock:
            if objective < self.objective:
                self.best, self.objective = (schedule, source), objective
            self._check()
        return True

    def refusal_notes(self) -> tuple[str, ...]:
        """Notes naming the schedules dropped (the first :data:`REFUSALS_NOTED`, then a count)."""
        with self.lock:
            refused = list(self.refused)
        notes = refused[:REFUSALS_NOTED]
        if len(refused) > REFUSALS_NOTED:
            notes.append(f"and {len(refused) - REFUSALS_NOTED} more schedule(s) dropped")
        return tuple(notes)

    def bound(self, bound: LowerBound) -> None:
        """A lower bound on ``OPT(A)`` (ignored unless valid)."""
        if bound.valid and math.isfinite(bound.value):
            with self.lock:
                self.bounds = self.bounds.added(bound)
                self._check()

    def _check(self) -> None:
        if self.proof is not None or self.best is None:
            return
        proving = self.bounds.proof(self.objective)
        if proving is not None:
            self.proof = (self.best[0], self.best[1], proving)
            self.cancel.set()


def _from_watch(
    problem: Problem,
    watch: _Watch,
    outcomes: dict[str, Result | BaseException],
    wall: float,
) -> Result:
    """The result of a race ended by :class:`_Watch`'s proof (``optimal``, the bound that
    proved it named) or stopped at :data:`STOP_SLACK` past its limit before either backend
    answered (``feasible``: the best schedule reported, the best valid bound), certified
    with the watch's bounds and the facts a proof by them rests on."""
    from ddlsched.formulations.certify import RawAnswer, certify
    from ddlsched.formulations.outcome import objectives

    if watch.proof is not None:
        schedule, source, _ = watch.proof
        notes = ["both backends were stopped"]
    elif watch.best is not None:
        schedule, source = watch.best
        notes = [f"stopped {STOP_SLACK:g} s past the time limit; {source} is returned"]
    else:
        return Result.unsolved(
            "exact", problem, "stopped at the time limit without a schedule", wall
        )
    notes += [
        f"{name}: {r.status.value}, objective {r.objective:.6g}"
        for name, r in outcomes.items()
        if isinstance(r, Result)
    ]
    notes += watch.refusal_notes()
    objective, total_jct = objectives(watch.instance, schedule)
    answer = RawAnswer(
        method="exact",
        problem=problem,
        status=SolveStatus.FEASIBLE,
        schedule=schedule,
        objective=objective,
        total_jct=total_jct,
        facts=watch.bounds.facts(),
        runtime_s=wall,
        metrics={
            "milp_objective": math.nan,
            "first_proof_milp": 0,
            "first_proof_cpsat": 0,
            "proof_by_bound": int(watch.proof is not None),
        },
        notes=tuple(notes),
    )
    return certify(answer, watch.bounds, source=source)


def _with_watched_schedule(result: Result, watch: _Watch) -> Result:
    """``result`` with the best schedule :class:`_Watch` saw (the warm start, the pooled
    bound's search) when that beats the backends' own by more than the closed gap, status
    ``feasible`` until a bound meets it (:func:`ddlsched.formulations.certify.certify`)."""
    from ddlsched.formulations.certify import clearly_better
    from ddlsched.formulations.outcome import objectives

    if watch.refused:
        result = dataclasses.replace(result, notes=(*result.notes, *watch.refusal_notes()))
    if watch.best is None or result.proven_optimal or result.problem is not Problem.A:
        return result
    schedule, source = watch.best
    if math.isfinite(result.objective) and not clearly_better(
        watch.objective, result.objective, watch.bounds.fixed
    ):
        return result
    objective, total_jct = objectives(watch.instance, schedule)
    return dataclasses.replace(
        result,
        status=SolveStatus.FEASIBLE,
        objective=objective,
        total_jct=total_jct,
        schedule=schedule,
        notes=(*result.notes, f"{source} is returned: better than the backends' best"),
    )


def head_start(limit: float | None) -> float | None:
    """Seconds CP-SAT runs alone under a time limit of ``limit``: :data:`HEAD_START`, at most
    :data:`HEAD_START_SHARE` of the limit; without a time limit ``None``: the MILP waits
    until CP-SAT stops (:func:`solve_exact` runs in turn then)."""
    return None if limit is None else min(HEAD_START, HEAD_START_SHARE * limit)


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


def _admitted(
    known: BoundSet,
    problem: Problem,
    outcomes: dict[str, Result | BaseException],
    first: list[str],
) -> tuple[dict[str, Result | BaseException], list[str]]:
    """``outcomes`` with each result whose schedule the verifier rejects for ``problem``
    turned into a failure (its schedule is never returned and its bound never joins a
    proof: a backend that returns a schedule of another problem is not trusted), and
    ``first`` without it. Schedules ``known`` admitted already are not verified again."""
    from ddlsched.formulations.admission import InadmissibleSchedule

    kept = dict(outcomes)
    for name, outcome in outcomes.items():
        if isinstance(outcome, Result) and outcome.schedule is not None:
            reason = known.refusal(problem, outcome.schedule, f"{name}'s schedule")
            if reason is not None:
                kept[name] = InadmissibleSchedule(reason)
    return kept, [name for name in first if isinstance(kept[name], Result)]


def _combine(
    outcomes: dict[str, Result | BaseException],
    first: list[str],
    wall: float,
) -> Result:
    """One result from the backends' outcomes (the module docstring's rules): the first
    proof's, else the best schedule with the best bound of either, certified on them alone
    (:func:`ddlsched.formulations.certify.certify`: a joint proof when they meet)."""
    from ddlsched.formulations.certify import RawAnswer, certify

    results = {name: r for name, r in outcomes.items() if isinstance(r, Result)}
    errors = {name: e for name, e in outcomes.items() if not isinstance(e, Result)}
    if not results:
        raise next(iter(errors.values()))  # e.g. ModelTooLarge: the same for both
    notes = [
        f"{name}: {result.status.value}, objective {result.objective:.6g}"
        for name, result in results.items()
    ]
    notes += [f"{name} failed: {type(e).__name__}: {e}" for name, e in errors.items()]
    with_schedule = [r for r in results.values() if r.schedule is not None]
    if first:
        chosen = results[first[0]]
        status, bound = chosen.status, chosen.lower_bound
        notes.insert(0, f"{first[0]} proved optimality first; the other was stopped")
    else:
        chosen = (
            min(with_schedule, key=lambda r: r.objective)
            if with_schedule
            else next(iter(results.values()))
        )
        status = SolveStatus.FEASIBLE if with_schedule else chosen.status
        known = [chosen.lower_bound, *(r.lower_bound for r in results.values())]
        bound = best_lower_bound([b for b in known if b is not None])
    metrics = {f"first_proof_{name}": int(name in first) for name in ("milp", "cpsat")}
    metrics["proof_by_bound"] = 0
    answer = dataclasses.replace(
        RawAnswer.of(chosen),
        method="exact",
        status=status,
        lower_bound=bound,
        runtime_s=wall,
        metrics={**chosen.metrics, **metrics},
        notes=(*notes, *chosen.notes),
    )
    return certify(answer, source="the best schedule")
