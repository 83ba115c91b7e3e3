"""Re-checking the library's certificates (``ddlsched bench verify``).

A certificate holds if:

1. its schedule is a non-preemptive schedule of problem A that the independent verifier
   (:mod:`ddlsched.proofs_checks.verifier`) finds feasible, and whose objective ``sum_i w_i
   C_i``, recomputed from the instance, is the certificate's upper bound;
2. an entry of tiers S and M is a proven optimum (status ``optimal``); its lower bound is at
   most its upper bound, and an ``optimal`` certificate's bounds
   meet (:meth:`~ddlsched.formulations.certify.BoundSet.proof`: the home of proofs, with
   the project's one rule of a closed gap);
3. its lower bound is what its name and settings recompute: a fast bound of
   :mod:`ddlsched.formulations.lower_bounds` always; the expensive ones (an exact solve's
   proof, the start-time Lagrangian) with ``full``;
4. none of the fast bounds lies above its upper bound (which would contradict the
   schedule or the bound);
5. in tier S, the brute force (:mod:`ddlsched.bench.brute`) finds no schedule better than
   its upper bound, and its lower bound is not above the brute force's optimum.

An elastic entry (:mod:`ddlsched.bench.elastic`) is checked likewise by
:func:`check_elastic_entry`: its stored run through the independent elastic check, its total
JCT against the upper bound, the fast elastic bound recomputed, the Lagrangian with ``full``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ddlsched.bench.elastic import ElasticEntry
from ddlsched.bench.library import TIERS, Entry, elastic_entries, entries
from ddlsched.core.model import InputError, Problem

RELATIVE = 1e-9
"""Relative tolerance when a value is recomputed by the same arithmetic (objectives, the
fast bounds)."""
RELATIVE_EXPENSIVE = 1e-6
"""Relative tolerance when an expensive bound is recomputed (an iterative method's last
digits may differ between machines)."""


@dataclass(frozen=True)
class EntryCheck:
    """What checking one entry found.

    Attributes
    ----------
    name, tier
        The entry's.
    problems
        One line per failed check (empty: the certificate holds).
    skipped
        The checks not made (expensive bounds without ``full``).
    seconds
        Wall-clock time of the checks.
    """

    name: str
    tier: str
    problems: tuple[str, ...]
    skipped: tuple[str, ...]
    seconds: float

    @property
    def holds(self) -> bool:
        """Whether every check made passed."""
        return not self.problems


class VerifyInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`verify_library`, with the checks finished before it (:attr:`done`)."""

    def __init__(self, done: list[EntryCheck]) -> None:
        super().__init__()
        self.done = done


def _close(a: float, b: float, relative: float) -> bool:
    return abs(a - b) <= relative * max(1.0, abs(a), abs(b))


def check_entry(item: Entry, full: bool = False, brute: bool = True) -> EntryCheck:
    """Check one entry's certificate (module docstring).

    Parameters
    ----------
    item
        The entry.
    full
        Recompute the expensive bounds too.
    brute
        Run the brute force on tier S.
    """
    began = time.monotonic()
    problems: list[str] = []
    skipped: list[str] = []
    certificate = item.certificate
    if certificate.problem != "A":
        problems.append(f"problem {certificate.problem!r}: this version checks problem A only")
    else:
        problems += _schedule_problems(item)
        problems += _interval_problems(item)
        found, skip = _bound_problems(item, full)
        problems += found
        skipped += skip
        if brute and item.tier == "S":
            problems += _brute_force_problems(item)
    return EntryCheck(
        item.name, item.tier, tuple(problems), tuple(skipped), time.monotonic() - began
    )


def check_elastic_entry(item: ElasticEntry, full: bool = False) -> EntryCheck:
    """Check an elastic entry's certificate (:mod:`ddlsched.bench.elastic`): its run
    through the independent elastic check
    (:func:`~ddlsched.proofs_checks.elastic.check_elastic`), the run's total JCT recomputed
    and compared with the upper bound, lower <= upper (meeting if ``optimal``), the fast
    bound recomputed (never above the upper bound; equal to the lower bound when that is the
    one named), and the Lagrangian bound recomputed with its settings when ``full``."""
    began = time.monotonic()
    problems: list[str] = []
    skipped: list[str] = []
    try:
        problems += _elastic_run_problems(item)
    except InputError as error:
        problems.append(f"the run cannot be read: {error}")
    certificate = item.certificate
    lower, upper = certificate.lower_bound, certificate.upper_bound
    if lower > upper and not _close(lower, upper, RELATIVE):
        problems.append(f"lower bound {lower!r} above the upper bound {upper!r}")
    elif certificate.status == "optimal" and not _close(lower, upper, 1e-6):
        problems.append(f"status optimal but the bounds [{lower!r}, {upper!r}] do not meet")
    found, skip = _elastic_bound_problems(item, full)
    problems += found
    skipped += skip
    return EntryCheck(
        item.name, item.tier, tuple(problems), tuple(skipped), time.monotonic() - began
    )


def _elastic_run_problems(item: ElasticEntry) -> list[str]:
    """The run passes the independent check and its total JCT is the upper bound."""
    from ddlsched.bench.elastic import total_jct
    from ddlsched.proofs_checks.elastic import check_elastic

    result = item.result()
    violations = check_elastic(result)
    if violations:
        return [f"the run fails the elastic check ({len(violations)} violations; {violations[0]})"]
    recomputed = total_jct(item.instance, result.completion)
    if not _close(recomputed, item.certificate.upper_bound, RELATIVE):
        return [
            f"upper bound {item.certificate.upper_bound!r} but the run's total JCT is "
            f"{recomputed!r}"
        ]
    return []


def _elastic_bound_problems(item: ElasticEntry, full: bool) -> tuple[list[str], list[str]]:
    """The fast bound recomputed (cheap), the Lagrangian with ``full``."""
    from ddlsched.formulations.elastic_bounds import elastic_flow_bound

    certificate = item.certificate
    instance = item.instance
    jobs = instance.fitted().jobs
    settings = (instance.cluster.total_gpus, instance.round_length, instance.restart_time)
    fast = elastic_flow_bound(jobs, *settings).value
    problems = []
    if fast > certificate.upper_bound * (1 + RELATIVE):
        problems.append(f"the fast bound {fast!r} is above the upper bound")
    name = certificate.lower_bound_name
    if name == "combined":
        expected = min(fast, certificate.upper_bound)
        if not _close(expected, certificate.lower_bound, RELATIVE):
            problems.append(
                f"lower bound {certificate.lower_bound!r} but the fast bound recomputes "
                f"{expected!r}"
            )
        return problems, []
    if name != "lagrangian":
        return [*problems, f"no way to recompute the elastic bound {name!r}"], []
    if not full:
        return problems, ["the lagrangian bound (expensive: --full recomputes it)"]
    from ddlsched.formulations.elastic_lagrangian import elastic_lagrangian_bound

    steps = certificate.lower_bound_settings.get("lagrangian_steps")
    steering = certificate.lower_bound_settings.get("steering_upper_bound")
    if not isinstance(steps, int) or not isinstance(steering, int | float):
        return [*problems, "lagrangian bound without its lagrangian_steps and steering"], []
    value = elastic_lagrangian_bound(jobs, *settings, steps=steps, upper=float(steering)).value
    expected = min(max(value, fast), certificate.upper_bound)
    if not _close(expected, certificate.lower_bound, RELATIVE_EXPENSIVE):
        problems.append(
            f"lower bound {certificate.lower_bound!r} but the lagrangian recomputes {expected!r}"
        )
    return problems, []


def _schedule_problems(item: Entry) -> list[str]:
    """Check 1: the schedule is feasible for problem A and its objective is the upper bound."""
    from ddlsched.proofs_checks.verifier import verify

    schedule = item.certificate.schedule
    if schedule.problem is not Problem.A or any(j.pieces is not None for j in schedule.jobs):
        return [f"the schedule is not a non-preemptive schedule of problem A ({schedule.problem})"]
    report = verify(item.instance, schedule)
    if not report.feasible:
        first = report.violations[0]
        return [f"the schedule is infeasible ({len(report.violations)} violations; {first})"]
    recomputed = report.total_completion_time
    if not _close(recomputed, item.certificate.upper_bound, RELATIVE):
        return [
            f"upper bound {item.certificate.upper_bound!r} but the schedule's sum w C is "
            f"{recomputed!r}"
        ]
    return []


PROVEN_TIERS = ("S", "M")
"""The tiers whose every entry is a proven optimum (an interval there is a weakened
certificate, whatever its bounds)."""


def _interval_problems(item: Entry) -> list[str]:
    """Check 2: an entry of tiers S and M is optimal, lower <= upper, and an optimal
    certificate's bounds meet."""
    from ddlsched.core.result import LowerBound
    from ddlsched.formulations.certify import BoundSet

    certificate = item.certificate
    if item.tier in PROVEN_TIERS and certificate.status != "optimal":
        return [f"tier {item.tier} holds proven optima, but the status is {certificate.status!r}"]
    lower, upper = certificate.lower_bound, certificate.upper_bound
    if lower > upper and not _close(lower, upper, RELATIVE):
        return [f"lower bound {lower!r} above the upper bound {upper!r}"]
    stored = LowerBound(lower, certificate.lower_bound_name, True)
    if (
        certificate.status == "optimal"
        and BoundSet.empty(item.instance).added(stored).proof(upper) is None
    ):
        return [f"status optimal but the bounds [{lower!r}, {upper!r}] do not meet"]
    return []


def _bound_problems(item: Entry, full: bool) -> tuple[list[str], list[str]]:
    """Checks 3 and 4: the lower bound recomputed by its name and settings, and no fast
    bound above the upper bound."""
    from ddlsched.formulations.certify import BoundSet
    from ddlsched.formulations.lower_bounds import BOUNDS

    certificate = item.certificate
    fast = BoundSet.of(item.instance).bounds
    problems = [
        f"the {bound.name} bound {bound.value!r} is above the upper bound "
        f"{certificate.upper_bound!r}"
        for bound in fast
        if bound.valid and bound.value > certificate.upper_bound * (1 + RELATIVE)
    ]
    name = certificate.lower_bound_name
    if name in BOUNDS.names():
        bound = next(b for b in fast if b.name == name)
        problems += _compare(item, bound.value, bound.flow_value, RELATIVE)
        return problems, []
    if not full:
        return problems, [f"the {name} bound (expensive: --full recomputes it)"]
    return problems + _expensive_problems(item), []


def _compare(item: Entry, value: float, flow_value: float, relative: float) -> list[str]:
    """The stored lower bound against a recomputed bound: the value on ``sum w C``
    (certificates of an exact solve) or the flow value plus ``sum w r`` (of a sandwich),
    in both cases capped at the upper bound as stored."""
    certificate = item.certificate
    on_flow = certificate.lower_bound_settings.get("method") == "study_sandwich"
    recomputed = flow_value + item.release_weight if on_flow else value
    expected = min(recomputed, certificate.upper_bound)
    if _close(expected, certificate.lower_bound, relative):
        return []
    return [
        f"lower bound {certificate.lower_bound!r} but {certificate.lower_bound_name} "
        f"recomputes {expected!r}"
    ]


def _expensive_problems(item: Entry) -> list[str]:
    """Check 3 for the expensive bounds: an exact solve's proof by solving again with the
    recorded time limit, the start-time Lagrangian by recomputing it with its steering."""
    certificate = item.certificate
    settings = certificate.lower_bound_settings
    if settings.get("method") == "exact":
        return _solved_again(item)
    if certificate.lower_bound_name == "start-lagrangian":
        from ddlsched.formulations.lower_bounds import BoundInputs
        from ddlsched.formulations.start_lagrangian import start_lagrangian_bound

        steering = settings.get("steering_upper_bound")
        if not isinstance(steering, int | float):
            return ["start-lagrangian bound without its steering_upper_bound"]
        bound = start_lagrangian_bound(BoundInputs.of(item.instance), None, float(steering))
        return _compare(item, bound.value, bound.flow_value, RELATIVE_EXPENSIVE)
    return [f"no way to recompute the bound {certificate.lower_bound_name!r}"]


def _solved_again(item: Entry) -> list[str]:
    from ddlsched import api
    from ddlsched.core.params import ExactParams
    from ddlsched.formulations.certify import clearly_better

    limit = item.certificate.lower_bound_settings.get("time_limit")
    params = ExactParams(time_limit=float(limit) if isinstance(limit, int | float) else None)
    result = api.solve(item.instance, "exact", params=params)
    upper, fixed = item.certificate.upper_bound, item.release_weight
    if not result.proven_optimal:
        return [f"solved again, the optimum is not proven ({result.status})"]
    if not clearly_better(upper, result.objective, fixed) and not clearly_better(
        result.objective, upper, fixed
    ):
        return []
    return [f"solved again, the optimum is {result.objective!r}, not {upper!r}"]


def _brute_force_problems(item: Entry) -> list[str]:
    """Check 5: no schedule beats the upper bound, and the lower bound is not above the
    optimum."""
    from ddlsched.bench.brute import TooBigError, brute_force_optimum

    certificate = item.certificate
    try:
        answer = brute_force_optimum(item.instance, known=certificate.upper_bound)
    except TooBigError as error:
        return [f"the brute force cannot check it: {error}"]
    if answer.optimum < certificate.upper_bound * (1 - RELATIVE):
        return [f"the brute force finds {answer.optimum!r}, below the upper bound"]
    if certificate.lower_bound > answer.optimum * (1 + RELATIVE):
        return [f"lower bound {certificate.lower_bound!r} above the brute force's optimum"]
    return []


def verify_library(
    tiers: Iterable[str] | None = None,
    full: bool = False,
    path: Path | str | None = None,
    progress: Callable[[int, int, EntryCheck], None] | None = None,
) -> list[EntryCheck]:
    """Check every certificate of the chosen tiers of the library at ``path`` (default:
    the shipped one).

    Parameters
    ----------
    tiers
        The tiers (``None``: all).
    full
        Recompute the expensive bounds too.
    path
        A library folder.
    progress
        Called after each entry with (entries done, entries in all, its check).

    Returns
    -------
    list[EntryCheck]
        One per entry, in library order.

    Raises
    ------
    VerifyInterrupted
        On Ctrl-C, with the checks finished so far.
    InputError
        On an unknown tier or a missing or corrupt file, naming it.
    """
    chosen: list[Entry | ElasticEntry] = [*entries(tiers, path=path)]
    chosen += elastic_entries(tiers, path=path)
    chosen.sort(key=lambda item: (TIERS.index(item.tier), item.name))
    done: list[EntryCheck] = []
    try:
        for item in chosen:
            if isinstance(item, Entry):
                done.append(check_entry(item, full))
            else:
                done.append(check_elastic_entry(item, full))
            if progress is not None:
                progress(len(done), len(chosen), done[-1])
    except KeyboardInterrupt:
        raise VerifyInterrupted(done) from None
    return done
