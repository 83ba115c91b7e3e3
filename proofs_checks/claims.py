"""The claims of the theory, one function each, returning a :class:`ClaimRecord`.

Every function takes the values a method produced (an optimum, an SRPT
total, a schedule) with a flag saying whether each is exact, recomputes on
its own whatever it can (``rho``, the Theorem 1 constant, feasibility and
objectives through the verifier) and decides:

- ``holds``: every quantity exact and the inequality true (to tolerance);
- ``violated``: every quantity exact and the inequality false;
- ``inconclusive``: some quantity is not exact (a time-limited MILP, a
  bounded ``alpha_min``, a slotted optimum of a non-integral instance), or
  an assumption of the claim's proof fails (a schedule the verifier
  rejects; weights not all 1 for claims 1 and 5; predicted iteration counts
  for claim 5), so nothing is concluded whatever the numbers say. Claim 4
  is the exception: a breach it finds is definite even against a bounded
  ``alpha_min`` (which lies below the true one).

Claims, as :ref:`model-claims` states them (unit weights for 1 and 5):

1. ``srpt_optimal_A2``: ``SRPT(A2) = OPT(A2)``;
2. ``relaxation``: ``OPT(A2) <= OPT(A1)``;
3. ``lemma1``: ``OPT(A1) <= rho OPT(A)``; on non-integral instances only the
   slotted optima are known, and between them only ``ceil(rho)`` is safe
   (stretching a slotted schedule by an integer keeps starts on slots),
   so that is the claim checked there;
4. ``mapping_bounds``: every mapping has ``alpha_min <= alpha <= alpha_max``,
   and a job that fits one server's free GPUs at its start is on one server;
5. ``theorem1``: guided A-SRPT has ``sum C <= (2 + M/(M - g_max + 1)) rho
   OPT(A)`` (see :mod:`ddlsched.proofs_checks.bounds` for the derivation);
6. ``verifier``: the schedule passes the independent verifier;
7. ``asrpt_preemptive``: with exact iteration counts and free restarts,
   every job of ``asrpt-preemptive`` has ``C_i <= (1 + M / D_i) C^V_i +
   K_i alpha_i^max`` (``D_i`` of :func:`blocking_share`, ``C^V_i`` its SRPT
   completion on A2), hence ``sum C <= (2 + max_i M / D_i) rho OPT`` of the
   preemptive model for unit weights (see :func:`asrpt_preemptive`).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass

from ddlsched.proofs_checks.bounds import (
    RhoCheck,
    all_cut_time,
    fastest_time,
    per_iteration_time,
    theorem1_constant,
)
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.model import Instance, Schedule

TOLERANCE = 1e-6


class ClaimStatus(enum.StrEnum):
    """What checking a claim on one instance concluded (a ``str``)."""

    HOLDS = "holds"
    VIOLATED = "violated"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Value:
    """A number a method produced, and whether it is exactly the named quantity."""

    value: float
    exact: bool


@dataclass(frozen=True)
class ClaimRecord:
    """The outcome of checking one claim on one instance.

    Attributes
    ----------
    name, statement
        Which claim, in words.
    lhs, rhs
        Both sides of ``lhs <= rhs`` (or ``lhs == rhs``), recomputed.
    bound
        The factor on the right (``rho``, the Theorem 1 constant), if any.
    status
        A :class:`ClaimStatus`.
    exact
        Whether every quantity was exact.
    margin
        ``rhs - lhs`` (negative when the inequality fails).
    detail
        What failed, for violations and inconclusive records.
    """

    name: str
    statement: str
    lhs: float
    rhs: float
    bound: float | None
    status: ClaimStatus
    exact: bool
    margin: float
    detail: str = ""

    @property
    def holds(self) -> bool | None:
        """True, False, or None when inconclusive."""
        return {ClaimStatus.HOLDS: True, ClaimStatus.VIOLATED: False}.get(self.status)

    @property
    def ratio(self) -> float:
        """``lhs / rhs`` (how close to the bound; > 1 means violated)."""
        return self.lhs / self.rhs if self.rhs else math.inf

    def to_dict(self) -> dict[str, object]:
        """The ``check --json`` form (an unknown number, NaN, is ``null``)."""

        def number(value: float | None) -> float | None:
            return value if value is not None and math.isfinite(value) else None

        return {
            "name": self.name,
            "statement": self.statement,
            "holds": self.holds,
            "status": self.status,
            "lhs": number(self.lhs),
            "rhs": number(self.rhs),
            "bound": number(self.bound),
            "exact": self.exact,
            "margin": number(self.margin),
            "detail": self.detail,
        }


def inequality(
    name: str,
    statement: str,
    lhs: float,
    rhs: float,
    exact: bool,
    bound: float | None = None,
    equality: bool = False,
    detail: str = "",
) -> ClaimRecord:
    """The record of the claim ``lhs <= rhs`` (``lhs == rhs`` with ``equality``), within
    :data:`TOLERANCE` relative to the larger side (at least 1).

    Parameters
    ----------
    name, statement
        The claim's short name and what it states.
    lhs, rhs
        The two sides, recomputed from the instance.
    exact
        Whether every quantity entering the sides is exact: if not, the claim is
        ``INCONCLUSIVE`` whatever the sides.
    bound
        The theoretical bound the claim compares against, recorded as is.
    equality
        Check ``lhs == rhs`` instead of ``lhs <= rhs``.
    detail
        Why the claim is inconclusive, or any other note.

    Returns
    -------
    ClaimRecord
        ``HOLDS``, ``VIOLATED`` or ``INCONCLUSIVE``, with ``margin = rhs - lhs``.
    """
    scale = TOLERANCE * max(1.0, abs(lhs), abs(rhs))
    true = abs(lhs - rhs) <= scale if equality else lhs <= rhs + scale
    if not exact:
        status = ClaimStatus.INCONCLUSIVE
        detail = detail or "some quantity is not exact"
    else:
        status = ClaimStatus.HOLDS if true else ClaimStatus.VIOLATED
    return ClaimRecord(name, statement, lhs, rhs, bound, status, exact, rhs - lhs, detail)


def srpt_optimal_a2(instance: Instance, srpt_schedule: Schedule, opt_a2: Value) -> ClaimRecord:
    """Claim 1: the SRPT schedule's total (recomputed) equals ``OPT(A2)``.

    Conclusive only with unit weights (SRPT is optimal for ``sum C_i``, not
    for ``sum w_i C_i``), a feasible SRPT schedule and an exact ``OPT(A2)``.
    """
    report = verify(instance, srpt_schedule)
    unit = all(job.weight == 1 for job in instance.jobs)
    reasons = []
    if not report.feasible:
        reasons.append("SRPT schedule infeasible: " + report.violations[0])
    if not unit:
        reasons.append("weights are not all 1")
    if not opt_a2.exact:
        reasons.append("OPT(A2) not proven")
    return inequality(
        "srpt_optimal_A2",
        "SRPT(A2) = OPT(A2)",
        report.total_completion_time,
        opt_a2.value,
        opt_a2.exact and report.feasible and unit,
        equality=True,
        detail="; ".join(reasons),
    )


def relaxation(opt_a2: Value, opt_a1: Value) -> ClaimRecord:
    """Claim 2: ``OPT(A2) <= OPT(A1)``."""
    return inequality(
        "relaxation",
        "OPT(A2) <= OPT(A1)",
        opt_a2.value,
        opt_a1.value,
        opt_a2.exact and opt_a1.exact,
    )


def lemma1(opt_a1: Value, opt_a: Value, rho: RhoCheck, integral: bool) -> ClaimRecord:
    """Claim 3: ``OPT(A1) <= rho OPT(A)`` (``ceil(rho)`` between slotted optima)."""
    factor = rho.rho if integral else math.ceil(rho.rho - 1e-12)
    statement = (
        "OPT(A1) <= rho * OPT(A)"
        if integral
        else ("slotted OPT(A1) <= ceil(rho) * slotted OPT(A) (instance not integral)")
    )
    detail = "" if rho.exact else "rho is an upper bound (some alpha_min is a bound)"
    return inequality(
        "lemma1",
        statement,
        opt_a1.value,
        factor * opt_a.value,
        opt_a1.exact and opt_a.exact and rho.exact,
        bound=factor,
        detail=detail,
    )


def mapping_bounds(instance: Instance, schedule: Schedule) -> ClaimRecord:
    """Claim 4 on every mapping of a problem-A schedule.

    ``lhs`` is the worst ``alpha / alpha_max`` and ``rhs`` 1; a mapping below
    ``alpha_min`` or a job split although it fit one server at its start is
    a violation (named in ``detail``). "Fit at its start" counts every
    other job running then, including those starting at the same instant,
    so it never blames a mapping the heuristic could not have improved.
    """
    cluster = instance.cluster
    entries = schedule.by_id()
    worst = 0.0
    problems: list[str] = []
    exact = True
    intervals = []
    for job in instance.jobs:
        entry = entries[job.id]
        if entry.mapping is None or len(entry.mapping) != job.gpus:
            problems.append(f"job {job.id!r} has no valid mapping")
            continue
        duration = job.iterations * per_iteration_time(job, cluster, entry.mapping)
        intervals.append((entry.start, entry.start + duration, job, entry.mapping))
    for start, _, job, mapping in intervals:
        value = per_iteration_time(job, cluster, mapping)
        low = fastest_time(job, cluster)
        exact &= low.exact
        high = all_cut_time(job, cluster)
        worst = max(worst, value / high)
        if value < low.value * (1 - TOLERANCE):
            problems.append(f"job {job.id!r}: alpha {value:g} below alpha_min {low.value:g}")
        free = list(cluster.gpus_per_server)
        for other_start, other_end, other, other_map in intervals:
            if other is not job and other_start <= start < other_end:
                for server in other_map:
                    free[server] -= 1
        if len(set(mapping)) > 1 and max(free) >= job.gpus:
            problems.append(f"job {job.id!r} spans servers though one had {max(free)} free GPUs")
    if worst > 1 + TOLERANCE:
        problems.append(f"some alpha exceeds alpha_max by a factor {worst:g}")
    # A breach found is definite (even against a bounded alpha_min, which is
    # below the true one); finding none is conclusive only if exact.
    if problems:
        status, detail = ClaimStatus.VIOLATED, "; ".join(problems[:3])
    elif exact:
        status, detail = ClaimStatus.HOLDS, ""
    else:
        status, detail = ClaimStatus.INCONCLUSIVE, "some alpha_min is only a lower bound"
    return ClaimRecord(
        "mapping_bounds",
        "alpha_min <= alpha(x) <= alpha_max; one server when it fits",
        worst,
        1.0,
        None,
        status,
        exact,
        1.0 - worst,
        detail,
    )


def theorem1(
    instance: Instance,
    guided_schedule: Schedule,
    opt_a: Value,
    rho: RhoCheck,
    exact_counts: bool = True,
) -> ClaimRecord:
    """Claim 5: guided A-SRPT's total (recomputed) within the Theorem 1 bound."""
    report = verify(instance, guided_schedule)
    constant = theorem1_constant(instance.cluster.num_gpus, instance.max_job_gpus)
    unit = all(job.weight == 1 for job in instance.jobs)
    exact = opt_a.exact and rho.exact and report.feasible and unit and exact_counts
    reasons = []
    if not report.feasible:
        reasons.append("schedule infeasible")
    if not unit:
        reasons.append("weights are not all 1")
    if not exact_counts:
        reasons.append("iteration counts were predicted")
    if not rho.exact:
        reasons.append("rho is an upper bound")
    if not opt_a.exact:
        reasons.append("OPT(A) not proven")
    return inequality(
        "theorem1",
        "sum C(guided A-SRPT) <= (2 + M/(M - g_max + 1)) * rho * OPT(A)",
        report.total_completion_time,
        constant * rho.rho * opt_a.value,
        exact,
        bound=constant * rho.rho,
        detail="; ".join(reasons),
    )


def verifier(instance: Instance, schedule: Schedule, method: str) -> ClaimRecord:
    """Claim 6: ``schedule`` (from ``method``) passes the verifier."""
    report = verify(instance, schedule)
    count = len(report.violations)
    return ClaimRecord(
        f"verifier[{method}]",
        f"the {method} schedule passes the independent verifier",
        float(count),
        0.0,
        None,
        ClaimStatus.HOLDS if report.feasible else ClaimStatus.VIOLATED,
        True,
        -float(count),
        "; ".join(report.violations[:3]),
    )


def blocking_share(gpus_per_server: tuple[int, ...], gpus: int) -> int:
    """``D_i``: the fewest GPUs that jobs ranked before job ``i`` (``gpus`` wide) hold
    whenever ``asrpt-preemptive`` leaves it waiting.

    A job that fits the largest server starts only on one server, so it waits only
    while every server that could hold it has fewer than ``g_i`` GPUs left: ``sum over
    h with G_h >= g_i of (G_h - g_i + 1)``. A wider job waits only while fewer than
    ``g_i`` GPUs are left in all: ``M - g_i + 1``.
    """
    if gpus > max(gpus_per_server):
        return sum(gpus_per_server) - gpus + 1
    return sum(size - gpus + 1 for size in gpus_per_server if size >= gpus)


def asrpt_preemptive(
    instance: Instance,
    schedule: Schedule,
    srpt_schedule: Schedule,
    exact_counts: bool = True,
) -> ClaimRecord:
    """Claim 7: ``asrpt-preemptive`` ends job i by ``(1 + M / D_i) C^V_i + K_i alpha_i^max``.

    ``schedule`` is the policy's (pieces allowed, recomputed by the verifier),
    ``srpt_schedule`` the SRPT schedule of A2 its virtual machine followed
    (its completions ``C^V_i``, recomputed by the verifier), ``D_i`` is
    :func:`blocking_share`. The proof: after ``C^V_i`` job ``i`` waits only
    while the jobs ranked before it (virtually complete earlier) hold at
    least ``D_i`` GPUs; their GPU-time is at most ``sum g_j K_j alpha_j^max =
    M sum v_j <= M C^V_i``, so ``i`` waits at most ``(M / D_i) C^V_i`` after
    ``C^V_i`` and runs at most ``K_i alpha_i^max``. Summed with unit weights,
    ``SRPT(A2) <= rho OPT`` and ``sum K_i alpha_i^max <= rho OPT`` give ``(2 +
    max_i M / D_i) rho OPT`` for the preemptive model.

    ``lhs`` and ``rhs`` are the two sides summed over jobs; the claim is
    violated when any one job breaks its own inequality (named in
    ``detail``). Conclusive only when both schedules pass the verifier, the
    counts were exact and the restart cost is 0 (the proof charges none).
    """
    report = verify(instance, schedule)
    virtual = verify(instance, srpt_schedule)
    reasons = []
    if not report.feasible:
        reasons.append("schedule infeasible")
    if not virtual.feasible or srpt_schedule.problem != "A2":
        reasons.append("SRPT schedule is not a feasible A2 schedule")
    if not exact_counts:
        reasons.append("iteration counts were predicted")
    if schedule.restart_cost != 0:
        reasons.append(f"restart cost {schedule.restart_cost:g} > 0: outside the proof")
    exact = not reasons
    cluster = instance.cluster
    lhs = rhs = 0.0
    broken = []
    for job in instance.jobs:
        completion = report.completion_times.get(job.id, math.nan)
        share = cluster.num_gpus / blocking_share(cluster.gpus_per_server, job.gpus)
        virtual_end = virtual.completion_times.get(job.id, math.nan)
        allowed = (1 + share) * virtual_end + job.iterations * all_cut_time(job, cluster)
        lhs, rhs = lhs + completion, rhs + allowed
        if not completion <= allowed + TOLERANCE * max(1.0, allowed):
            broken.append(f"job {job.id!r}: C = {completion:g} > {allowed:g}")
    record = inequality(
        "asrpt_preemptive",
        "C_i(asrpt-preemptive) <= (1 + M / D_i) C^V_i + K_i alpha_i^max for every job",
        lhs,
        rhs,
        exact,
        detail="; ".join(reasons),
    )
    if exact and broken:
        return dataclasses.replace(
            record, status=ClaimStatus.VIOLATED, detail="; ".join(broken[:3])
        )
    return record
