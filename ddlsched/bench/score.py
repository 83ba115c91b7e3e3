"""Scoring schedulers against the certified library, and narrowing its intervals.

A policy is scored on total weighted JCT, the flow time ``sum_i w_i (C_i - r_i)``: its
verified schedule's flow over the optimal flow (an entry whose certificate is a proven
optimum) or over the flow lower bound (an interval: an upper figure on the true ratio).
The objective ``sum_i w_i C_i`` would hide the gap behind the releases, which no schedule
can shorten (on a trace they are most of it); its ratio is reported beside, for papers
that quote it, never as the score.

The library improves the way the best known solutions of PSPLIB (Kolisch and Sprecher,
*PSPLIB - A project scheduling problem library*, EJOR 96, 1997) and Taillard's instances
(Taillard, *Benchmarks for basic scheduling problems*, EJOR 64, 1993) do: :func:`improve`
re-solves entries and writes a new certificate only when it is strictly better and its
schedule passes the verifier, keeping the old one's summary as provenance.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# Imported at run time, not for type checking alone, so that the API reference resolves
# the signatures' names (Entry is also the registry's entry).
from ddlsched.bench.elastic import ElasticEntry
from ddlsched.bench.library import (
    TIERS,
    Certificate,
    Entry,
    default_library_path,
    elastic_entries,
    entries,
    entry_problems,
    library,
    save_certificate,
)
from ddlsched.core.jsontypes import JsonObject
from ddlsched.core.model import InputError, Instance, Problem, Schedule
from ddlsched.core.params import ExactParams
from ddlsched.core.result import LowerBound, Result, best_lower_bound

if TYPE_CHECKING:
    from ddlsched.algorithms.protocol import Policy

ProgressCallback = Callable[[int, int], None]

OPTIMUM = "optimum"
"""The reference of a ratio against a proven optimum."""
OPTIMAL = "optimal"
"""A certificate's status when its lower bound meets its upper bound (proven)."""
LOWER_BOUND = "lower bound"
"""The reference of a ratio against a lower bound (an upper figure on the true ratio)."""
TOLERANCE = 1e-9
"""Relative rounding allowed between a policy's flow and its reference (both recomputed
from sums of the same magnitude as the objective): a flow this close below the reference
is the reference, a ratio of 1; one further below is a contradiction."""
EXACT_BOUND = "exact"
"""A certificate's bound name for an exact method's proof of optimality."""
RIGID_PROBLEM = Problem.A.value
"""The certificates' name of problem A (rigid jobs, gang-scheduled, non-preemptive)."""


@dataclass(frozen=True)
class ScoreRow:
    """One policy on one library entry.

    Attributes
    ----------
    policy
        The policy as named (a built-in name, ``module:Class`` or ``file.py:Class``).
    tier, name, jobs
        The entry.
    reference
        :data:`OPTIMUM` or :data:`LOWER_BOUND`: what :attr:`ratio` divides by.
    total_completion_time
        ``sum_i w_i C_i`` of the policy's schedule, recomputed by the verifier.
    total_jct
        ``sum_i w_i (C_i - r_i)`` of that schedule (its flow time), recomputed.
    reference_jct
        The optimal flow time, or the flow lower bound (the certificate's value less
        ``sum_i w_i r_i``).
    ratio
        ``total_jct / reference_jct``: the score (at least 1 against an optimum).
    completion_ratio
        ``total_completion_time`` over the certificate's optimum or lower bound: the
        ratio on ``sum C``, which releases pull towards 1 (not the score).
    error
        Why the row has no score (a schedule the verifier refuses, a preempted job, a
        ratio below 1 against a proven optimum or a bound), else ``""``.
    """

    policy: str
    tier: str
    name: str
    jobs: int
    reference: str
    total_completion_time: float
    total_jct: float
    reference_jct: float
    ratio: float
    completion_ratio: float
    error: str = ""

    def to_dict(self) -> JsonObject:
        """The row as ``bench run --json`` and ``--out rows.csv`` write it."""
        return {
            "policy": self.policy,
            "tier": self.tier,
            "name": self.name,
            "jobs": self.jobs,
            "reference": self.reference,
            "total_completion_time": self.total_completion_time,
            "total_jct": self.total_jct,
            "reference_jct": self.reference_jct,
            "ratio": self.ratio,
            "completion_ratio": self.completion_ratio,
            "error": self.error,
        }


@dataclass(frozen=True)
class TierScore:
    """One policy over one tier: the leaderboard's row.

    Attributes
    ----------
    policy, tier
        Which.
    instances
        Entries scored (rows with an error excluded).
    errors
        Rows with an error (:attr:`ScoreRow.error`).
    reference
        :data:`OPTIMUM`, :data:`LOWER_BOUND`, or ``"mixed"`` when the tier has both.
    mean_ratio, worst_ratio
        Mean and largest :attr:`ScoreRow.ratio` of the scored rows (``nan`` without any).
    worst_instance
        The entry of the largest ratio (the first in the library's order on a tie), or
        ``""``.
    """

    policy: str
    tier: str
    instances: int
    errors: int
    reference: str
    mean_ratio: float
    worst_ratio: float
    worst_instance: str

    def to_dict(self) -> JsonObject:
        """The row as ``bench leaderboard --json`` writes it."""
        return {
            "policy": self.policy,
            "tier": self.tier,
            "instances": self.instances,
            "errors": self.errors,
            "reference": self.reference,
            "mean_ratio": self.mean_ratio,
            "worst_ratio": self.worst_ratio,
            "worst_instance": self.worst_instance,
        }


@dataclass(frozen=True)
class BenchRun:
    """A policy over library entries: :func:`run`'s answer.

    Attributes
    ----------
    policy
        The policy as named.
    rows
        One per entry scored, in the library's order (tier, name).
    interrupted
        Whether Ctrl-C stopped the run (``partial``): :attr:`rows` holds the entries done.
    """

    policy: str
    rows: tuple[ScoreRow, ...]
    interrupted: bool = False

    def tiers(self) -> tuple[TierScore, ...]:
        """Per tier: mean and worst ratio, and the worst instance (:func:`tier_scores`)."""
        return tier_scores(self.rows)

    @property
    def errors(self) -> tuple[ScoreRow, ...]:
        """The rows with an error."""
        return tuple(row for row in self.rows if row.error)

    def to_dict(self) -> JsonObject:
        """``bench run --json``: the rows, the tiers' summaries and whether it completed."""
        return {
            "policy": self.policy,
            "interrupted": self.interrupted,
            "rows": [row.to_dict() for row in self.rows],
            "tiers": [tier.to_dict() for tier in self.tiers()],
        }


def tier_scores(rows: Iterable[ScoreRow]) -> tuple[TierScore, ...]:
    """One :class:`TierScore` per (policy, tier) of ``rows``, in the rows' order."""
    groups: dict[tuple[str, str], list[ScoreRow]] = {}
    for row in rows:
        groups.setdefault((row.policy, row.tier), []).append(row)
    return tuple(_tier_score(policy, tier, group) for (policy, tier), group in groups.items())


def _tier_score(policy: str, tier: str, rows: Sequence[ScoreRow]) -> TierScore:
    scored = [row for row in rows if not row.error]
    references = {row.reference for row in rows}
    worst = None  # the first of the largest ratio: rows come in the library's order
    for row in scored:
        if worst is None or row.ratio > worst.ratio:
            worst = row
    return TierScore(
        policy=policy,
        tier=tier,
        instances=len(scored),
        errors=len(rows) - len(scored),
        reference=references.pop() if len(references) == 1 else "mixed",
        mean_ratio=math.fsum(row.ratio for row in scored) / len(scored) if scored else math.nan,
        worst_ratio=worst.ratio if worst is not None else math.nan,
        worst_instance=worst.name if worst is not None else "",
    )


# Policies --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChosenPolicy:
    """A policy ready to run on every entry.

    Attributes
    ----------
    name
        As the user named it.
    builtin
        Whether it is a name of :data:`ddlsched.algorithms.registry.POLICIES`.
    preemptive
        Whether it may preempt (built-in ones by
        :data:`~ddlsched.algorithms.registry.PREEMPTIVE_POLICIES`; a user's policy is
        judged by its schedules: a preempted job makes its row an error on problem A).
    build
        A fresh policy for an instance: the registry's name, or the user's class called
        with the instance's cluster.
    """

    name: str
    builtin: bool
    preemptive: bool
    build: Callable[[Instance], str | Policy]


def choose_policy(spec: str) -> ChosenPolicy:
    """The policy named ``spec``: a built-in name, ``package.module:Class`` (imported) or
    ``path/to/file.py:Class`` (loaded from the file). A user's class follows
    :class:`ddlsched.algorithms.protocol.Policy` and is called with the instance's cluster,
    as the protocol's example is (``Greedy(instance.cluster)``), once per instance.

    Raises
    ------
    InputError
        Naming ``spec`` when it is no built-in name and no class can be loaded from it
        (no colon, a missing file or module, a module that fails to import, no such class).
    """
    from ddlsched.algorithms.registry import POLICIES, PREEMPTIVE_POLICIES

    if spec in POLICIES:
        return ChosenPolicy(spec, True, spec in PREEMPTIVE_POLICIES, lambda instance: spec)
    where, colon, attribute = spec.rpartition(":")
    if not colon or not where or not attribute:
        raise InputError(
            f"policy {spec!r}: expected a built-in name ({', '.join(POLICIES.names())}), "
            "module:Class or path/to/file.py:Class"
        )
    factory = getattr(_user_module(spec, where), attribute, None)
    if not callable(factory):
        raise InputError(f"policy {spec!r}: {where} has no class {attribute!r}")

    def build(instance: Instance) -> Policy:
        policy: Policy = factory(instance.cluster)
        return policy

    return ChosenPolicy(spec, False, False, build)


def _user_module(spec: str, where: str) -> object:
    """The module ``where`` names: a ``.py`` file loaded under a name of its own, or a
    module imported by its dotted name.

    Raises
    ------
    InputError
        Naming ``spec`` when the file or module is missing or fails to import.
    """
    try:
        if not where.endswith(".py"):
            return importlib.import_module(where)
        path = Path(where)
        if not path.is_file():
            raise InputError(f"policy {spec!r}: no file {where}")
        name = f"ddlsched_bench_user_{abs(hash(path.resolve()))}"
        loaded = importlib.util.spec_from_file_location(name, path)
        if loaded is None or loaded.loader is None:
            raise InputError(f"policy {spec!r}: {where} cannot be loaded as Python")
        module = importlib.util.module_from_spec(loaded)
        sys.modules[name] = module  # dataclasses and pickling look the module up
        loaded.loader.exec_module(module)
        return module
    except InputError:
        raise
    except ImportError as error:
        raise InputError(f"policy {spec!r}: {error}") from None
    except Exception as error:  # the user's module failed as it ran: say how, one line
        raise InputError(f"policy {spec!r}: {where} failed to load: {error!r}") from None


# Scoring ---------------------------------------------------------------------------------


def run(
    policy: str,
    tiers: Iterable[str] | None = None,
    names: Iterable[str] | None = None,
    *,
    path: Path | None = None,
    seed: int = 0,
    progress: ProgressCallback | None = None,
    partial: bool = False,
) -> BenchRun:
    """Score ``policy`` on the library's entries (``ddlsched bench run``).

    Parameters
    ----------
    policy
        A built-in name or a user's class (:func:`choose_policy`).
    tiers, names
        The entries (:func:`ddlsched.bench.library.entries`); default: every entry.
    path
        A library folder; default: the shipped one.
    seed
        The policy's randomness (built-in policies: random mappings, noisy predictors).
    progress
        Called as ``progress(done, total)`` before the first entry and after each.
    partial
        On Ctrl-C, return the rows done with ``interrupted`` set instead of raising.

    Returns
    -------
    BenchRun
        One row per entry: its ratio or the error that denies it one.

    Raises
    ------
    InputError
        On an unknown tier, name or policy, or a preemptive policy asked to score entries
        of problem A (non-preemptive), naming it.
    """

    rigid_names, elastic_names = _split_names(policy, names, path)
    elastic_only = is_elastic_policy(policy) and not _is_rigid_policy(policy)
    chosen = None if elastic_only else choose_policy(policy)
    selected: list[Entry | ElasticEntry] = []
    if chosen is not None and (names is None or rigid_names):
        rigid = entries(tiers, rigid_names, path)
        _refuse_unfit(chosen, rigid)
        selected += rigid
    if is_elastic_policy(policy) and (names is None or elastic_names):
        selected += elastic_entries(tiers, elastic_names, path)
    if not selected and elastic_only:
        raise InputError(
            f"policy {policy!r} is elastic: the chosen tiers hold no elastic entry (the Pollux "
            "workloads are in tier T)"
        )
    selected.sort(key=lambda item: (TIERS.index(item.tier), item.name))
    rows: list[ScoreRow] = []
    if progress is not None:
        progress(0, len(selected))
    try:
        for entry in selected:
            if isinstance(entry, Entry) and chosen is not None:
                rows.append(score_entry(entry, chosen, seed))
            elif isinstance(entry, ElasticEntry):
                rows.append(score_elastic_entry(entry, policy))
            if progress is not None:
                progress(len(rows), len(selected))
    except KeyboardInterrupt:
        if not partial:
            raise
        return BenchRun(policy, tuple(rows), interrupted=True)
    return BenchRun(policy, tuple(rows))


def is_elastic_policy(policy: str) -> bool:
    """Whether ``policy`` names an elastic policy (:func:`ddlsched.elastic.policy_names`),
    scored on the elastic entries."""
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES

    return policy in ELASTIC_POLICIES


def _is_rigid_policy(policy: str) -> bool:
    from ddlsched.algorithms.registry import POLICIES

    return policy in POLICIES or ":" in policy


def _split_names(
    policy: str, names: Iterable[str] | None, path: Path | None
) -> tuple[list[str] | None, list[str] | None]:
    """``names`` split into entries of problem A and elastic entries (``None`` for both
    when no names are given); a name of the kind ``policy`` cannot run is refused, naming
    it and its problem.

    Raises
    ------
    InputError
        On an elastic entry named with a rigid policy, or an entry of problem A with an
        elastic-only policy.
    """
    if names is None:
        return None, None
    problems = entry_problems(path)
    chosen = list(names)
    elastic = [name for name in chosen if problems.get(name) == "elastic"]
    rigid = [name for name in chosen if name not in elastic]
    if elastic and not is_elastic_policy(policy):
        raise InputError(
            f"entry {elastic[0]}: problem 'elastic' (a Pollux workload); policy {policy!r} is "
            "not an elastic policy (ddlsched.elastic.policy_names())"
        )
    if rigid and not _is_rigid_policy(policy):
        raise InputError(
            f"entry {rigid[0]}: problem {problems.get(rigid[0], 'A')!r}; policy {policy!r} is "
            "an elastic policy, scored on the elastic entries only"
        )
    return rigid, elastic


def score_elastic_entry(entry: ElasticEntry, policy: str) -> ScoreRow:
    """The elastic ``policy`` on an elastic entry: its run through the independent elastic
    check (:func:`ddlsched.elastic.simulate`), its total JCT over the certificate's optimum
    or lower bound (an error row when the check refuses the run, or the total lies below
    the certified lower bound)."""
    from ddlsched import elastic

    instance = entry.instance
    run = elastic.simulate(
        instance.fitted(), policy, cluster=instance.cluster, params=instance.params()
    )
    certificate = entry.certificate
    optimum = certificate.optimum
    reference_jct = certificate.lower_bound if optimum is None else optimum
    kind = LOWER_BOUND if optimum is None else OPTIMUM
    releases = math.fsum(job.submit_time for job in instance.workload.jobs)
    total = math.fsum(row["jct"] for row in run.jobs)
    completion = total + releases
    error = ""
    if not run.verified:
        error = f"the run fails the elastic check: {run.violations[0]}"
    elif total < certificate.lower_bound * (1 - TOLERANCE):
        error = (
            f"ratio below 1: the checked run's total JCT {total:.10g} is below the certified "
            f"lower bound {certificate.lower_bound:.10g} (the certificate or the check is wrong)"
        )
    return ScoreRow(
        policy=policy,
        tier=entry.tier,
        name=entry.name,
        jobs=instance.num_jobs,
        reference=kind,
        total_completion_time=math.nan if error else completion,
        total_jct=math.nan if error else total,
        reference_jct=reference_jct,
        ratio=math.nan if error else _ratio(total, reference_jct),
        completion_ratio=math.nan if error else _ratio(completion, reference_jct + releases),
        error=error,
    )


def _refuse_unfit(chosen: ChosenPolicy, selected: Sequence[Entry]) -> None:
    """Refuse a preemptive policy on entries of problem A, and entries of a problem other
    than A (whose scores this module does not define), naming the policy and an entry."""
    for entry in selected:
        problem = entry.certificate.problem
        if problem != RIGID_PROBLEM:
            raise InputError(
                f"entry {entry.name}: problem {problem!r}; bench run scores problem "
                f"{RIGID_PROBLEM} entries (choose --tier or --names without it)"
            )
        if chosen.preemptive:
            raise InputError(
                f"policy {chosen.name!r} preempts: entry {entry.name} is of problem "
                f"{RIGID_PROBLEM}, whose optimum is non-preemptive (a preemptive schedule "
                "may beat it); choose a non-preemptive policy"
            )


def score_entry(entry: Entry, chosen: ChosenPolicy, seed: int = 0) -> ScoreRow:
    """``chosen`` on ``entry``: its schedule through the verifier, its flow time over the
    certificate's optimal flow (or flow lower bound).

    A user's policy that raises, or any policy whose schedule the verifier refuses or
    that preempts a job, gets a row with :attr:`ScoreRow.error`, as does a ratio below 1
    against a proven optimum or bound (a wrong certificate or verifier: never a score).
    """
    from ddlsched.api import simulate

    instance = entry.instance
    try:
        result = simulate(instance, chosen.build(instance), seed=seed, bound=False)
    except KeyboardInterrupt:
        raise
    except Exception as error:
        if chosen.builtin:
            raise
        return _error_row(entry, chosen.name, f"the policy failed: {error!r}")
    if result.schedule is None:
        return _error_row(entry, chosen.name, "the policy returned no schedule")
    return score_schedule(entry, chosen.name, result.schedule)


def score_schedule(entry: Entry, policy: str, schedule: Schedule) -> ScoreRow:
    """The row of ``schedule`` (made by ``policy``) on ``entry``: verified as a schedule
    of problem A, its objective and flow recomputed by the verifier, its ratio to the
    certificate's reference."""
    from ddlsched.formulations.admission import violations
    from ddlsched.proofs_checks.verifier import verify

    instance = entry.instance
    refused = violations(instance, Problem.A, schedule)
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        return _error_row(entry, policy, f"not a schedule of problem A: {refused[0]}{more}")
    report = verify(instance, schedule)
    reference, reference_objective, reference_jct = _reference(entry)
    error = _contradiction(entry, report.total_jct, report.total_completion_time)
    return ScoreRow(
        policy=policy,
        tier=entry.tier,
        name=entry.name,
        jobs=instance.num_jobs,
        reference=reference,
        total_completion_time=report.total_completion_time,
        total_jct=report.total_jct,
        reference_jct=reference_jct,
        ratio=math.nan if error else _ratio(report.total_jct, reference_jct),
        completion_ratio=math.nan
        if error
        else _ratio(report.total_completion_time, reference_objective),
        error=error,
    )


def _reference(entry: Entry) -> tuple[str, float, float]:
    """What a ratio divides by: the optimum when proven, else the lower bound; as
    ``(kind, sum w C, sum w (C - r))``."""
    certificate = entry.certificate
    if certificate.optimum is not None:
        return OPTIMUM, certificate.optimum, entry.flow_upper_bound
    return LOWER_BOUND, certificate.lower_bound, entry.flow_lower_bound


def _contradiction(entry: Entry, flow: float, objective: float) -> str:
    """Why a verified schedule of flow time ``flow`` (objective ``objective``) cannot be
    scored on ``entry``: it lies below the certified flow lower bound beyond rounding (the
    certificate or the verifier is wrong), or the reference is no positive flow time;
    else ``""``.

    An optimum is proven to within the closed gap
    (:data:`~ddlsched.core.result.CLOSED_GAP` of its flow), so a schedule between the
    lower bound and the optimum's schedule is no contradiction; its ratio is 1.
    """
    kind, _, reference = _reference(entry)
    if not math.isfinite(flow):
        return "the verifier gives the schedule no objective"
    if not reference > 0:
        return f"the certificate's {kind} gives no positive total JCT ({reference:.10g})"
    floor = entry.flow_lower_bound
    if flow < floor - TOLERANCE * max(1.0, abs(objective)):
        return (
            f"ratio below 1: the verified schedule's total JCT {flow:.10g} is below the "
            f"certified {kind}'s lower bound {floor:.10g} (the certificate or the verifier "
            "is wrong)"
        )
    return ""


def _ratio(value: float, reference: float) -> float:
    """``value / reference``, at least 1: a value below the reference by rounding, or
    within an optimum's closed gap, is the reference (:func:`_contradiction` refused any
    further below)."""
    return max(1.0, value / reference)


def _error_row(entry: Entry, policy: str, error: str) -> ScoreRow:
    reference, _, _ = _reference(entry)
    return ScoreRow(
        policy=policy,
        tier=entry.tier,
        name=entry.name,
        jobs=entry.instance.num_jobs,
        reference=reference,
        total_completion_time=math.nan,
        total_jct=math.nan,
        reference_jct=math.nan,
        ratio=math.nan,
        completion_ratio=math.nan,
        error=error,
    )


# The leaderboard -------------------------------------------------------------------------


def leaderboard_policies() -> tuple[str, ...]:
    """The built-in policies the leaderboard scores by default: every policy of
    :data:`~ddlsched.algorithms.registry.POLICIES` that never preempts (the library's
    entries are of problem A, non-preemptive), in the registry's order."""
    from ddlsched.algorithms.registry import POLICIES, PREEMPTIVE_POLICIES

    return tuple(name for name in POLICIES.names() if name not in PREEMPTIVE_POLICIES)


def leaderboard(
    policies: Sequence[str] | None = None,
    tiers: Iterable[str] | None = None,
    *,
    path: Path | None = None,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> tuple[TierScore, ...]:
    """Every policy scored on every chosen tier (``ddlsched bench leaderboard``).

    Parameters
    ----------
    policies
        Policies as :func:`run` takes them; default :func:`leaderboard_policies`.
    tiers
        Tiers of the library; default every tier.
    path, seed
        As :func:`run`.
    progress
        Called as ``progress(done, total)`` before the first run and after each (policy,
        entry) pair.

    Returns
    -------
    tuple[TierScore, ...]
        One per policy per tier, by tier (the library's order), then mean ratio (a policy
        without a scored row last), then name.

    Raises
    ------
    InputError
        As :func:`run`; a policy named twice.
    """

    names = leaderboard_policies() if policies is None else tuple(policies)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InputError(f"policies: {', '.join(repeated)} named more than once")
    chosen = [choose_policy(name) for name in names]
    selected = entries(tiers, None, path)
    for policy in chosen:
        _refuse_unfit(policy, selected)
    rows: list[ScoreRow] = []
    if progress is not None:
        progress(0, len(chosen) * len(selected))
    for policy in chosen:
        for entry in selected:
            rows.append(score_entry(entry, policy, seed))
            if progress is not None:
                progress(len(rows), len(chosen) * len(selected))
    return tuple(
        sorted(
            tier_scores(rows),
            key=lambda score: (
                TIERS.index(score.tier),
                math.isnan(score.mean_ratio),
                score.mean_ratio if not math.isnan(score.mean_ratio) else 0.0,
                score.policy,
            ),
        )
    )


# Improving the library -------------------------------------------------------------------


@dataclass(frozen=True)
class Improvement:
    """What :func:`improve` did to one entry's certificate.

    Attributes
    ----------
    name, tier
        The entry.
    written
        Whether a new certificate replaced the old one.
    status_before, status_after
        The certificate's status (``"optimal"`` or ``"interval"``) before and after.
    lower_before, lower_after, upper_before, upper_after
        Its proven lower bound and verified upper bound on ``sum_i w_i C_i``, before and
        after (the same when nothing was written).
    lower_bound_name
        The name of the bound after.
    note
        Why nothing was written, or what the solve said that a reader must know.
    """

    name: str
    tier: str
    written: bool
    status_before: str
    status_after: str
    lower_before: float
    lower_after: float
    upper_before: float
    upper_after: float
    lower_bound_name: str
    note: str = ""

    def to_dict(self) -> JsonObject:
        """The record as ``bench improve --json`` writes it."""
        return {
            "name": self.name,
            "tier": self.tier,
            "written": self.written,
            "status_before": self.status_before,
            "status_after": self.status_after,
            "lower_before": self.lower_before,
            "lower_after": self.lower_after,
            "upper_before": self.upper_before,
            "upper_after": self.upper_after,
            "lower_bound_name": self.lower_bound_name,
            "note": self.note,
        }

    def describe(self) -> str:
        """One line: what of the certificate changed, or why it stayed."""
        if not self.written:
            return f"{self.name}: unchanged ({self.note})"
        changes = []
        if self.lower_after != self.lower_before:
            changes.append(
                f"lower bound {self.lower_before:.10g} -> {self.lower_after:.10g} "
                f"({self.lower_bound_name})"
            )
        if self.upper_after != self.upper_before:
            changes.append(f"upper bound {self.upper_before:.10g} -> {self.upper_after:.10g}")
        if self.status_after != self.status_before:
            changes.append(f"{self.status_before} -> {self.status_after}")
        note = f" ({self.note})" if self.note else ""
        return f"{self.name}: {', '.join(changes)}{note}"


@dataclass(frozen=True)
class ImproveRun:
    """:func:`improve`'s answer.

    Attributes
    ----------
    improvements
        One per entry tried, in the library's order.
    interrupted
        Whether Ctrl-C stopped it (``partial``): the entries after the last are untried.
    """

    improvements: tuple[Improvement, ...]
    interrupted: bool = False

    @property
    def written(self) -> tuple[Improvement, ...]:
        """The entries whose certificate was replaced."""
        return tuple(item for item in self.improvements if item.written)

    def to_dict(self) -> JsonObject:
        """``bench improve --json``."""
        return {
            "interrupted": self.interrupted,
            "improvements": [item.to_dict() for item in self.improvements],
        }


@dataclass(frozen=True)
class _Bound:
    """A proven lower bound on ``sum_i w_i C_i`` with what recomputes it."""

    value: float
    name: str
    settings: JsonObject


@dataclass(frozen=True)
class _Upper:
    """A schedule the verifier accepts as one of problem A, with its objective."""

    value: float
    schedule: Schedule


def improve(
    path: Path,
    tiers: Iterable[str] | None = None,
    names: Iterable[str] | None = None,
    *,
    params: ExactParams | None = None,
    progress: ProgressCallback | None = None,
    partial: bool = False,
) -> ImproveRun:
    """Try to narrow the certificates of the library at ``path`` (``ddlsched bench improve``).

    Each entry is solved again (:func:`ddlsched.api.solve`, method ``exact``, warm-started
    from its stored schedule) and its fast lower bounds recomputed; a new certificate is
    written (:func:`ddlsched.bench.library.save_certificate`, atomic) only when it is
    strictly better, a higher proven lower bound or a lower upper bound whose schedule the
    verifier accepts as one of problem A, with the old certificate's summary appended to
    its history. Nothing else is written.

    Parameters
    ----------
    path
        The library folder to improve: always named (a copy, or the shipped package data
        by its path when that is meant).
    tiers, names
        The entries (:func:`ddlsched.bench.library.entries`); default: every entry.
    params
        The exact solve's limits (default :class:`~ddlsched.core.params.ExactParams`'s).
    progress
        Called as ``progress(done, total)`` before the first entry and after each.
    partial
        On Ctrl-C, return the entries done with ``interrupted`` set instead of raising
        (either way the certificates written so far stay).

    Returns
    -------
    ImproveRun
        One :class:`Improvement` per entry, written or not.

    Raises
    ------
    InputError
        On an unknown tier or name.
    """

    params = params or ExactParams()
    selected = entries(tiers, names, path)
    done: list[Improvement] = []
    if progress is not None:
        progress(0, len(selected))
    try:
        for entry in selected:
            done.append(improve_entry(entry, params, path))
            if progress is not None:
                progress(len(done), len(selected))
    except KeyboardInterrupt:
        if not partial:
            raise
        return ImproveRun(tuple(done), interrupted=True)
    return ImproveRun(tuple(done))


def improve_entry(entry: Entry, params: ExactParams, path: Path) -> Improvement:
    """One entry of :func:`improve`: solved, compared, written when strictly better."""

    old = entry.certificate
    if old.problem != RIGID_PROBLEM:
        return _unchanged(entry, f"problem {old.problem!r}: improve solves problem A only")
    notes: list[str] = []
    bounds, upper = _solved(entry, params, notes)
    # The fast bound first: of equal values the one any reader recomputes in milliseconds.
    candidates = [_fast_bound(entry.instance), *bounds]
    as_bounds = [LowerBound(c.value, c.name, True) for c in candidates]
    best = best_lower_bound(as_bounds)  # the project's one picker of the best bound
    if best is None:
        return _unchanged(entry, "; ".join([*notes, "no finite lower bound"]))
    bound = candidates[next(k for k, b in enumerate(as_bounds) if b is best)]
    slack = TOLERANCE * max(1.0, abs(old.upper_bound))
    least_upper = old.upper_bound if upper is None else min(upper.value, old.upper_bound)
    if bound.value > least_upper + slack:
        notes.append(
            f"a lower bound {bound.value:.10g} ({bound.name}) above the upper bound "
            f"{least_upper:.10g}: a contradiction, nothing written"
        )
        return _unchanged(entry, "; ".join(notes))
    higher = bound if bound.value > old.lower_bound + slack else None
    lower_upper = upper if upper is not None and upper.value < old.upper_bound - slack else None
    if higher is None and lower_upper is None:
        return _unchanged(entry, "; ".join(notes) or "no strictly better bound or schedule")
    new = _certificate(entry, higher, lower_upper, _command(entry.name, params, path))
    save_certificate(entry, new, path)
    return Improvement(
        name=entry.name,
        tier=entry.tier,
        written=True,
        status_before=old.status,
        status_after=new.status,
        lower_before=old.lower_bound,
        lower_after=new.lower_bound,
        upper_before=old.upper_bound,
        upper_after=new.upper_bound,
        lower_bound_name=new.lower_bound_name,
        note="; ".join(notes),
    )


def _solved(
    entry: Entry, params: ExactParams, notes: list[str]
) -> tuple[list[_Bound], _Upper | None]:
    """The exact solve's proof of optimality if it has one (:func:`_proof`), and its
    schedule when the verifier accepts it (:func:`_accepted`)."""
    from ddlsched.api import solve

    instance = entry.instance
    try:
        result = solve(instance, "exact", params=params, warm_start=entry.certificate.schedule)
    except InputError as error:  # a model refused for its size, a stored schedule refused
        notes.append(f"the exact solve refused the entry: {error}")
        return [], None
    upper = _accepted(instance, result, notes)
    return _proof(entry, result, upper, params, notes), upper


def _accepted(instance: Instance, result: Result, notes: list[str]) -> _Upper | None:
    """The solve's schedule with its objective recomputed, when the verifier accepts it as
    a schedule of problem A; else ``None``, noted."""
    from ddlsched.formulations.admission import violations
    from ddlsched.proofs_checks.verifier import verify

    schedule = result.schedule
    if schedule is None:
        notes.append(f"the solve found no schedule ({result.status.value})")
        return None
    refused = violations(instance, Problem.A, schedule)
    if refused:
        notes.append(f"the solve's schedule is refused by the verifier: {refused[0]}")
        return None
    return _Upper(verify(instance, schedule).total_completion_time, schedule)


def _proof(
    entry: Entry, result: Result, upper: _Upper | None, params: ExactParams, notes: list[str]
) -> list[_Bound]:
    """The solve's lower bound as a certificate may hold it: a proof of optimality, named
    ``exact`` and capped at its verified schedule's objective (``bench verify --full``
    solves again with the same limits and compares the optimum). A fast bound is
    :func:`_fast_bound`'s; any other bound short of a proof (the solver's dual, an LP) is
    left out, noted when higher than the certificate's: nothing in its settings would
    recompute it."""
    found = result.lower_bound
    if found is None or not found.valid or not math.isfinite(found.value):
        return []
    if result.proven_optimal:
        if upper is None:  # a proof of a schedule the verifier refuses proves nothing here
            return []
        settings: JsonObject = {"method": "exact", **_limits(params)}
        return [_Bound(min(found.value, upper.value), EXACT_BOUND, settings)]
    if found.name not in fast_bound_names() and found.value > entry.certificate.lower_bound:
        notes.append(
            f"the solve's {found.name} bound {found.value:.10g} is not kept (no proof of "
            "optimality: bench verify could not recompute it)"
        )
    return []


def fast_bound_names() -> tuple[str, ...]:
    """The names of the fast lower bounds (:data:`ddlsched.formulations.lower_bounds.BOUNDS`)."""
    from ddlsched.formulations.lower_bounds import BOUNDS

    return BOUNDS.names()


def _fast_bound(instance: Instance) -> _Bound:
    """The best of the fast lower bounds (the home of proofs' set of them,
    :meth:`ddlsched.formulations.certify.BoundSet.of`)."""
    from ddlsched.formulations.certify import BoundSet

    best = BoundSet.of(instance).best()
    if best is None:  # every fast bound is valid on problem A: never, but say it plainly
        raise RuntimeError("no valid fast lower bound")
    return _Bound(best.value, best.name, {"bounds": [best.name]})


def _limits(params: ExactParams) -> JsonObject:
    """The solve's limits as a certificate's settings record them."""
    return {
        "time_limit": params.time_limit,
        "work_limit": params.deterministic_limit,
        "node_limit": params.node_limit,
    }


def _command(name: str, params: ExactParams, path: Path) -> str:
    """The command that improves entry ``name`` the same way."""
    limits = [
        f"--{option.replace('_', '-')} {value:g}"
        for option, value in _limits(params).items()
        if isinstance(value, int | float)
    ]
    return " ".join(["ddlsched bench improve --names", name, *limits, "--library", str(path)])


def _certificate(
    entry: Entry, lower: _Bound | None, upper: _Upper | None, command: str
) -> Certificate:
    """``entry``'s certificate with a higher lower bound and/or a lower upper bound (and
    its schedule), the status they prove (decided by the home of proofs,
    :meth:`~ddlsched.formulations.certify.BoundSet.proof`, as for the library's optima),
    ``command``, this version and today's date, and the old certificate's summary last in
    its history."""
    import datetime

    from ddlsched.formulations.certify import BoundSet
    from ddlsched.provenance import package_version

    old = entry.certificate
    lower = lower or _Bound(old.lower_bound, old.lower_bound_name, old.lower_bound_settings)
    upper = upper or _Upper(old.upper_bound, old.schedule)
    stored = LowerBound(lower.value, lower.name, True)
    proof = BoundSet.empty(entry.instance).added(stored).proof(upper.value)
    return Certificate(
        problem=old.problem,
        status="interval" if proof is None else OPTIMAL,
        lower_bound=lower.value,
        lower_bound_name=lower.name,
        lower_bound_settings=lower.settings,
        upper_bound=upper.value,
        schedule=upper.schedule,
        command=command,
        version=package_version(),
        produced=datetime.datetime.now(datetime.UTC).date().isoformat(),
        history=(*old.history, old.summary()),
    )


def _unchanged(entry: Entry, note: str) -> Improvement:
    old = entry.certificate
    return Improvement(
        name=entry.name,
        tier=entry.tier,
        written=False,
        status_before=old.status,
        status_after=old.status,
        lower_before=old.lower_bound,
        lower_after=old.lower_bound,
        upper_before=old.upper_bound,
        upper_after=old.upper_bound,
        lower_bound_name=old.lower_bound_name,
        note=note,
    )


def copy_library(destination: Path, path: Path | None = None) -> int:
    """Copy the library at ``path`` (default: the shipped one) to the new folder
    ``destination``, for :func:`improve` to write into (``ddlsched bench copy``).

    Returns
    -------
    int
        The number of entries copied.

    Raises
    ------
    InputError
        When ``destination`` exists (nothing is overwritten), or the library cannot be
        read (naming the file).
    """
    import shutil

    source = default_library_path() if path is None else Path(path)
    copied = library(source)  # refuses a corrupt library before anything is copied
    if destination.exists():
        raise InputError(f"{destination}: exists; copy the library to a new folder")
    shutil.copytree(source, destination)
    return len(copied)
