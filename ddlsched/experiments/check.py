"""Every claim of the theory checked on one instance, and on many.

:func:`check_instance` runs the methods (the MILPs of A, A1 and A2, SRPT on
the virtual machine, guided and greedy A-SRPT) and hands their values, each
with its exactness, to the independent checks of :mod:`proofs_checks`.
:func:`check_random` does so on generated instances and tallies the records
per claim (:class:`ClaimTally`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ddlsched.api import simulate
from ddlsched.core.alpha import virtual_size
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance, Piece, Problem, Schedule, ScheduledJob
from ddlsched.core.params import ExactParams
from ddlsched.core.result import Result
from ddlsched.proofs_checks.claims import ClaimRecord, ClaimStatus


@dataclass(frozen=True)
class CheckReport:
    """Every claim of the theory (:ref:`model-claims`) checked on one instance.

    Attributes
    ----------
    values
        ``opt_A``, ``opt_A1``, ``opt_A2``, ``srpt_A2``, ``rho`` (``nan`` when
        unknown, e.g. a MILP stopped without a solution), and the facts
        ``rho_exact``, ``integral``.
    exact
        For each number of ``values``: whether it is exactly the named
        quantity (a time-limited or slotted optimum is not; ``rho`` is not
        when some ``alpha_min`` is only a bound).
    alpha_min, alpha_max
        Per job, recomputed by :mod:`ddlsched.proofs_checks.bounds`.
    claims
        One :class:`ddlsched.proofs_checks.claims.ClaimRecord` per claim (claim 6 once
        per method).
    """

    values: dict[str, float | bool]
    alpha_min: tuple[tuple[float, bool], ...]
    alpha_max: tuple[float, ...]
    claims: tuple[ClaimRecord, ...]
    exact: dict[str, bool] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """The ``check --json`` document: every number with its exactness, unknown as null."""
        values: dict[str, object] = {}
        for name, value in self.values.items():
            if isinstance(value, bool):
                values[name] = value
            else:
                known = math.isfinite(value)
                values[name] = {
                    "value": value if known else None,
                    "exact": self.exact.get(name, False) and known,
                }
        return {
            "values": values,
            "alpha_min": [{"value": v, "exact": e} for v, e in self.alpha_min],
            "alpha_max": list(self.alpha_max),
            "claims": [claim.to_dict() for claim in self.claims],
        }


def _optimum(instance: Instance, problem: Problem, params: ExactParams) -> Result:
    """The MILP's result, or an unknown one when the model is refused as too large."""
    from ddlsched.formulations.memory import ModelTooLarge
    from ddlsched.formulations.milp import solve_milp

    try:
        return solve_milp(instance, problem, params)
    except ModelTooLarge as refused:
        return Result.unsolved("milp", problem, f"not solved: {refused}")


def check_instance(
    instance: Instance,
    time_limit: float | None = 60.0,
    prediction_error: float | None = None,
    seed: int = 0,
) -> CheckReport:
    """Compute ``opt_A``, ``opt_A1``, ``opt_A2``, ``srpt_A2``, ``rho`` and check every claim.

    With ``prediction_error`` ``E`` (>= 0), also A-SRPT's bound under prediction error
    (:mod:`ddlsched.proofs_checks.prediction`): guided A-SRPT run with predictions perturbed
    within a
    factor ``1 + E``, adversarially and at random (``seed``); ``E = 0`` gives exact
    predictions and Theorem 1's bound.

    The methods (MILPs, SRPT, guided and greedy A-SRPT) run here; the checks
    in :mod:`proofs_checks` recompute independently what they can and mark
    a claim inconclusive when a value is not exact (a time limit, a bounded
    ``alpha_min``, a non-integral instance).
    """
    from ddlsched.core.virtual import srpt
    from ddlsched.proofs_checks import claims as c
    from ddlsched.proofs_checks.bounds import rho_of

    params = ExactParams(time_limit=time_limit)
    optima = {p: _optimum(instance, p, params) for p in Problem}
    integral = all(r.facts.get("integral", False) for r in optima.values())

    def value(problem: Problem, slotted: bool = False) -> c.Value:
        result = optima[problem]
        if slotted:
            return c.Value(result.metrics["milp_objective"], result.facts["slotted_optimal"])
        return c.Value(result.objective, result.proven_optimal)

    sizes = [virtual_size(job, instance.cluster, job.iterations) for job in instance.jobs]
    ids = [job.id for job in instance.jobs]
    completions, pieces = srpt(sizes, [job.release for job in instance.jobs], ids)
    srpt_schedule = Schedule(
        tuple(
            ScheduledJob(
                i, pieces[i][0][0], completions[i], pieces=tuple(Piece(*p) for p in pieces[i])
            )
            for i in ids
        ),
        problem=Problem.A2,
    )
    rho = rho_of(instance)
    guided = simulate(instance, "asrpt")
    greedy = simulate(instance, "asrpt-greedy")
    assert guided.schedule is not None and greedy.schedule is not None

    records = [
        c.srpt_optimal_a2(instance, srpt_schedule, value(Problem.A2)),
        c.relaxation(value(Problem.A2), value(Problem.A1)),
        c.lemma1(value(Problem.A1, not integral), value(Problem.A, not integral), rho, integral),
        c.mapping_bounds(instance, guided.schedule),
        c.theorem1(instance, guided.schedule, value(Problem.A), rho),
    ]
    if prediction_error is not None:
        from ddlsched.experiments.prediction_error import prediction_records

        records.extend(
            prediction_records(instance, prediction_error, value(Problem.A), rho, seed=seed)
        )
    schedules = {f"milp-{p.value}": r.schedule for p, r in optima.items()}
    schedules.update(
        {"srpt-A2": srpt_schedule, "asrpt": guided.schedule, "asrpt-greedy": greedy.schedule}
    )
    for method, schedule in schedules.items():
        if schedule is not None:
            records.append(c.verifier(instance, schedule, method))
    values: dict[str, float | bool] = {
        "opt_A": optima[Problem.A].objective,
        "opt_A1": optima[Problem.A1].objective,
        "opt_A2": optima[Problem.A2].objective,
        "srpt_A2": float(sum(completions.values())),
        "rho": rho.rho,
        "rho_exact": rho.exact,
        "integral": integral,
    }
    exact = {
        "opt_A": optima[Problem.A].proven_optimal,
        "opt_A1": optima[Problem.A1].proven_optimal,
        "opt_A2": optima[Problem.A2].proven_optimal,
        "srpt_A2": True,
        "rho": rho.exact,
    }
    return CheckReport(
        values,
        tuple((low.value, low.exact) for low in rho.alpha_min),
        rho.alpha_max,
        tuple(records),
        exact,
    )


def claim_family(name: str) -> str:
    """``verifier[asrpt]`` -> ``verifier``: one table row per claim."""
    return name.split("[", 1)[0]


@dataclass
class ClaimTally:
    """Counts over many instances for one claim (the worst ratio over conclusive ones;
    ``has_ratio`` false when every right-hand side was 0, as for the verifier's count of
    violations, where ``lhs / rhs`` means nothing)."""

    name: str
    checked: int = 0
    held: int = 0
    inconclusive: int = 0
    violated: int = 0
    worst_ratio: float = float("-inf")
    worst_seed: int | None = None
    has_ratio: bool = False

    def add(self, record: ClaimRecord, seed: int) -> None:
        """Count ``record`` found on the instance of ``seed``."""
        self.checked += 1
        if record.status is ClaimStatus.HOLDS:
            self.held += 1
        elif record.status is ClaimStatus.VIOLATED:
            self.violated += 1
        else:
            self.inconclusive += 1
        if record.status is ClaimStatus.INCONCLUSIVE:
            return  # an inexact value says nothing about tightness
        self.has_ratio = self.has_ratio or bool(record.rhs)
        ratio = record.ratio if record.rhs else -record.margin
        if ratio > self.worst_ratio:
            self.worst_ratio, self.worst_seed = ratio, seed


def check_generator(
    jobs: int, servers: int, gpus_per_server: int, load: float | None = None
) -> GeneratorConfig:
    """The instances of ``check --random``: small integral ones every MILP proves.

    The exact-friendly settings of :meth:`GeneratorConfig.exact_friendly`
    with 1-2 iterations and one-server durations of 1-3 slots.
    """
    return GeneratorConfig.exact_friendly(jobs, servers, gpus_per_server, load).replace(
        max_iterations=2, duration_slots=(1, 3)
    )


@dataclass
class RandomCheck:
    """What :func:`check_random` found: one tally per claim."""

    first_seed: int
    instances: int = 0
    interrupted: bool = False
    tallies: dict[str, ClaimTally] = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        """Whether any claim was violated on any instance."""
        return any(t.violated for t in self.tallies.values())


def check_random(
    config: GeneratorConfig,
    count: int,
    seed: int = 0,
    time_limit: float | None = 60.0,
    on_violation: Callable[[ClaimRecord, Instance, int], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    prediction_error: float | None = None,
) -> RandomCheck:
    """Check every claim on ``count`` instances drawn with seeds ``seed, seed + 1, ...``.

    ``on_violation(record, instance, seed)`` is called for each violated
    record (to save the instance). Ctrl-C stops cleanly: the result holds
    the instances finished and says it was interrupted.
    """
    found = RandomCheck(seed)
    try:
        for k in range(count):
            instance = generate(config, seed + k)
            report = check_instance(
                instance, time_limit=time_limit, prediction_error=prediction_error, seed=seed + k
            )
            for record in report.claims:
                family = claim_family(record.name)
                found.tallies.setdefault(family, ClaimTally(family)).add(record, seed + k)
                if record.status is ClaimStatus.VIOLATED and on_violation is not None:
                    on_violation(record, instance, seed + k)
            found.instances += 1
            if progress is not None:
                progress(found.instances, count)
    except KeyboardInterrupt:
        found.interrupted = True
    return found
