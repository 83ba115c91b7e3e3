"""The main job: online methods against proven optima on generated instances.

Every schedule (the optimum's and each method's) is checked by the
independent verifier; ratios are taken against proven optima only.

The optimum is that of problem A, which is non-preemptive. A preemptive policy
(:data:`~ddlsched.algorithms.registry.PREEMPTIVE_POLICIES`) solves a relaxation of it and
may beat ``OPT(A)``: its ``C/OPT`` is still the ratio to ``OPT(A)`` (below 1 is no
contradiction), and its certified ratios ``C/LB`` and ``JCT/LB`` divide by the best
of the bounds proved for the preemptive model
(:data:`~ddlsched.formulations.lower_bounds.PREEMPTIVE_BOUNDS`), never by the exact
method's dual bound or ``OPT(A)`` (``docs/guide/preemptive.md``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ddlsched.api import solve
from ddlsched.core.alpha import rho as rho_of_instance
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance, Problem
from ddlsched.core.params import ExactParams, OnlineParams
from ddlsched.core.result import LowerBound, Result, SolveStatus
from ddlsched.formulations.certify import BoundSet
from ddlsched.formulations.lower_bounds import PREEMPTIVE_BOUNDS

MAX_SEED = 2**63 - 1
"""The largest seed (NumPy's generators take any whole number; the CLI and result files
keep seeds in a signed 64-bit integer)."""


@dataclass(frozen=True)
class CompareConfig:
    """What ``ddlsched compare`` runs.

    The default size, 20 jobs on 4 x 4 GPUs, is the largest the portfolio
    (``exact``) proves in a few seconds per instance on a 2-core machine
    (mean 2.25 s over the 20 default instances; 24 jobs took 5.2 s and the
    whole command 106 s against 47 s), so the main command stays under a minute.

    Attributes
    ----------
    jobs, servers, gpus_per_server
        Instance size and cluster shape (integral instances, ratio 2).
    instances
        How many instances, seeds ``seed .. seed + instances - 1``.
    seed
        First seed.
    methods
        Online methods compared with the optimum (default: every policy).
    work_limit, node_limit
        The exact solve's deterministic limits: CP-SAT's deterministic time (its work
        units, about seconds of one core; one worker) and the MILP's branch-and-bound
        nodes. Without ``time_limit`` the portfolio runs its backends in turn to these
        limits, so the same command gives the same table on an idle or a loaded machine.
    time_limit
        Seconds of wall-clock time per instance, or ``None`` (the default): a budget that
        the online methods, ``rho``, the lower bounds and the exact solve share
        (:class:`InstanceBudget`; the exact solve gets what the others left). With a time
        limit whether an instance is proven, and so which ratios are printed, depends on
        the machine's speed and load.
    load
        Poisson arrivals at this load, or all released at 0 (``None``); with
        ``from_trace``, each sample's recorded arrivals scaled to this offered load, or
        kept as recorded (``None``).
    predictor
        Iteration predictor of the online methods.
    exact
        The exact method giving the optimum (``"exact"``, the portfolio;
        ``"milp"``; ``"cpsat"``).
    gpu_types
        ``(type, servers)`` pairs for a mixed cluster (their total must be
        ``servers``); empty: one GPU type.
    from_trace
        A trace (a path or a shipped name): each instance is ``jobs`` real jobs of it
        (:func:`~ddlsched.core.generators.sample_trace`, seeded by the instance's seed) on
        the same cluster (``gpu_types`` included), instead of generated integral jobs.
    arrivals
        How the trace's jobs are taken (:data:`~ddlsched.core.traces.ARRIVALS`).
    """

    jobs: int = 20
    servers: int = 4
    gpus_per_server: int = 4
    instances: int = 20
    seed: int = 0
    methods: tuple[str, ...] = ()
    time_limit: float | None = None
    work_limit: float = 60.0
    node_limit: int = 20_000
    load: float | None = 1.0
    predictor: str = "oracle"
    exact: str = "exact"
    gpu_types: tuple[tuple[str, int], ...] = ()
    from_trace: str | None = None
    arrivals: str = "consecutive"

    def __post_init__(self) -> None:
        from ddlsched.algorithms.registry import POLICIES, PREDICTORS
        from ddlsched.formulations.registry import EXACT_METHODS

        POLICIES.check(self.methods, "methods")
        EXACT_METHODS.check([self.exact], "exact")
        PREDICTORS.check([self.predictor], "predictor")
        if not self.methods:
            object.__setattr__(self, "methods", POLICIES.names())
        if self.instances < 1:
            raise ValueError(f"instances: must be >= 1, got {self.instances}")
        self.exact_params()  # a bad limit fails here, naming it
        if self.seed + self.instances - 1 > MAX_SEED:
            raise ValueError(
                f"instances: seeds {self.seed}..{self.seed + self.instances - 1} pass "
                f"2^63 - 1, the largest seed; give a smaller seed or fewer instances"
            )
        self.generator()  # bad sizes or GPU types fail here, before any solve

    def exact_params(self) -> ExactParams:
        """The exact solve's settings: the deterministic limits, and the time limit if any."""
        return ExactParams(
            time_limit=self.time_limit,
            deterministic_limit=self.work_limit,
            node_limit=self.node_limit,
        )

    def limits(self) -> str:
        """What stops an exact solve, in words (the output says which kind was used)."""
        kind = "deterministic limits" if self.time_limit is None else "limits"
        return f"{kind}: {self.exact_params().limits_text()}"

    def instance(self, seed: int) -> Instance:
        """The compared instance of ``seed``: ``generate(self.generator(), seed)``."""
        return generate(self.generator(), seed)

    def generator(self) -> GeneratorConfig:
        """The generator settings of the compared instances: the ``exact-friendly`` preset,
        or samples of :attr:`from_trace` on the same cluster."""
        config = GeneratorConfig.exact_friendly(
            self.jobs, self.servers, self.gpus_per_server, self.load
        ).replace(gpu_types=self.gpu_types)
        if self.from_trace is None:
            return config
        return config.replace(integral=False, from_trace=self.from_trace, arrivals=self.arrivals)

    def command(self, seed: int) -> str:
        """The ``ddlsched generate`` command writing the instance of ``seed``."""
        return self.generator().command(seed, f"seed{seed}.json")


@dataclass
class InstanceComparison:
    """One instance: its optimum and every method's result, all verified."""

    seed: int
    instance: Instance
    optimum: Result
    results: dict[str, Result]
    rho: float
    theorem1_factor: float
    verified: dict[str, bool]
    fast_bound: float = math.nan
    preemptive_bound: LowerBound | None = None
    skipped: tuple[str, ...] = ()

    def lower_bound(self, method: str) -> float:
        """The lower bound ``method``'s certified ratio divides by (``nan`` without one): for
        a preemptive method the best bound valid for the preemptive model
        (:attr:`preemptive_bound`), else the exact result's bound on ``OPT(A)``."""
        if is_preemptive(method):
            return _bound_value(self.preemptive_bound)
        return _bound_value(self.optimum.lower_bound)

    def flow_lower_bound(self, method: str) -> float:
        """The lower bound on the optimal flow time of ``method``'s model: the
        :attr:`preemptive_bound`'s for a preemptive method, else the exact result's (its
        proof, its bound or the lower bounds, whichever is largest)."""
        if is_preemptive(method):
            bound = self.preemptive_bound
            return bound.flow_value if bound is not None and bound.valid else math.nan
        return self.optimum.flow_lower_bound

    def certified_ratio(self, method: str) -> float:
        """``sum C / LB``: an upper bound on the ratio to the optimum of ``method``'s model
        (``OPT(A)``, or the preemptive optimum for a preemptive method; :meth:`lower_bound`),
        even without the optimum."""
        return _ratio(self.results[method].objective, self.lower_bound(method))

    def certified_flow_ratio(self, method: str) -> float:
        """``sum w (C - r) / flow LB``: an upper bound on the ratio of the method's total JCT
        (flow time) to the optimal one of its model (:meth:`flow_lower_bound`; ``nan``
        without one)."""
        return _ratio(_flow(self.results[method]), self.flow_lower_bound(method))

    def why_unproven(self, config: CompareConfig) -> str:
        """Why this instance has no proven optimum, in one line (``""`` when it has one),
        in words shared by every instance stopped the same way (its own runtime and gap
        are in :meth:`CompareReport.summary`'s ``unproven`` entries)."""
        optimum = self.optimum
        if optimum.proven_optimal:
            return ""
        limit = config.limits()
        if config.exact in self.skipped:
            return f"{config.exact} not run: the instance's time budget was spent first ({limit})"
        if optimum.schedule is None:
            reason = optimum.notes[0] if optimum.notes else "no schedule found"
            return f"{config.exact} found no schedule ({limit}): {reason}"
        return f"{config.exact} ended unproven ({limit})"


@dataclass
class CompareReport:
    """Everything ``compare`` measured, instance by instance."""

    config: CompareConfig
    rows: list[InstanceComparison]
    interrupted: bool = False

    def flag(self, method: str, above: list[float]) -> str:
        """Why ratios lie above what Theorem 1 allows (``above``), or ``""`` when none does.

        Theorem 1 bounds guided A-SRPT with exact iteration counts by ``(2 +
        M/(M - g_max + 1)) rho`` times OPT; a ratio above it is no violation
        when the predictions were not exact (and no baseline has the bound).
        """
        if not above:
            return ""
        worst = max(above)
        head = f"{len(above)} instance(s) above the Theorem 1 bound (worst C/OPT {worst:.4g})"
        if self.config.predictor != "oracle" and method.startswith("asrpt"):
            return (
                f"{head}: predictions from {self.config.predictor!r} are not exact; with only "
                f"{self.config.jobs} jobs the predictor has little or no history and falls back "
                "to running means or the zoo's typical iteration counts"
            )
        if method != "asrpt":
            return f"{head}: {method} has no such guarantee"
        return f"{head}: Theorem 1 VIOLATED (exact predictions): report it with the seeds"

    def summary(self) -> dict[str, object]:
        """The whole comparison: per method a row keyed by :data:`METHOD_HEADERS` (mean and
        worst ratios, the worst instance's seed, verification, runtimes) with its note, the
        instances whose optimum is not proven and why, and every instance's rows
        (:meth:`records`)."""
        import numpy as np

        proven = [row for row in self.rows if row.optimum.proven_optimal]
        tightness = [
            r.optimum.lower_bound.value / r.optimum.objective
            for r in proven
            if r.optimum.lower_bound is not None
        ]
        fast = [r.fast_bound / r.optimum.objective for r in proven]
        found = [r for r in self.rows if r.optimum.objective > 0]
        return {
            "instances": len(self.rows),
            "optima_proven": len(proven),
            "lower_bound_over_opt_min": _min(tightness),
            "fast_bound_over_opt_median": float(np.median(fast)) if fast else math.nan,
            "fast_bound_over_opt_min": _min(fast),
            "lower_bound_over_incumbent_min": _min(
                [_bound_value(r.optimum.lower_bound) / r.optimum.objective for r in found]
            ),
            "fast_bound_over_incumbent_min": _min(
                [r.fast_bound / r.optimum.objective for r in found]
            ),
            "interrupted": self.interrupted,
            "exact_limits": self.config.limits(),
            "budget_cuts": [
                {"seed": r.seed, "phases": list(r.skipped)} for r in self.rows if r.skipped
            ],
            "exact_mean_runtime_s": _mean([r.optimum.runtime_s for r in self.rows]),
            "rho_mean": _mean([r.rho for r in self.rows]),
            "rho_max": _max([r.rho for r in self.rows]),
            "theorem1_factor_max": _max([r.theorem1_factor for r in self.rows]),
            "unproven": [
                {
                    "seed": r.seed,
                    "why": r.why_unproven(self.config),
                    "runtime s": r.optimum.runtime_s,
                    "gap": r.optimum.gap,
                }
                for r in self.rows
                if not r.optimum.proven_optimal
            ],
            "methods": {method: self._method_row(method) for method in self.config.methods},
            "preemptive_note": preemptive_note(self.config.methods),
            "rows": self.records(),
        }

    def _method_row(self, method: str) -> dict[str, object]:
        """One method's row of the table, keyed by :data:`METHOD_HEADERS`, with its note."""
        proven = [row for row in self.rows if row.optimum.proven_optimal]
        ratios = [r.results[method].objective / r.optimum.objective for r in proven]
        above = [x for x, r in zip(ratios, proven, strict=True) if x > r.theorem1_factor]
        jct = [
            r.results[method].total_jct / r.optimum.total_jct
            for r in proven
            if r.optimum.total_jct > 0
        ]
        certified = [r.certified_ratio(method) for r in self.rows]
        worst = _worst_seed(proven, ratios) if ratios else _worst_seed(self.rows, certified)
        return {
            "method": method,
            "model": model_of(method),
            "mean C/OPT": _mean(ratios),
            "worst C/OPT": _max(ratios),
            "worst seed": worst,
            "mean JCT/OPT": _mean(jct),
            "worst JCT/OPT": _max(jct),
            "mean C/LB": _mean(certified),
            "worst C/LB": _max(certified),
            "mean C/LB_fast": _mean(
                [r.results[method].objective / r.fast_bound for r in self.rows]
            ),
            "mean JCT/LB": _mean([r.certified_flow_ratio(method) for r in self.rows]),
            "verified": sum(r.verified[method] for r in self.rows),
            "mean runtime s": _mean([r.results[method].runtime_s for r in self.rows]),
            "above Theorem 1": len(above),
            "note": self.flag(method, above),
        }

    def records(self) -> list[dict[str, object]]:
        """One row per instance and method (the exact method's first), keyed by
        :data:`RECORD_HEADERS`: what a researcher loads with ``pandas.DataFrame(rows)`` or
        ``pandas.read_csv`` of ``compare --out``. ``OPT`` (always ``OPT(A)``) and the ratios
        to it are ``nan`` where the optimum is not proven; ``model`` is the row's model
        (``A`` or ``preemptive``, :func:`model_of`); ``LB`` is the best proven lower bound on
        the optimum of that model (:meth:`InstanceComparison.lower_bound`), and ``C/LB``
        an upper bound on the ratio to it even then. A preemptive row's ``C/OPT`` may be
        below 1 (:func:`preemptive_note`)."""
        out = []
        for row in self.rows:
            opt = row.optimum.objective if row.optimum.proven_optimal else math.nan
            command = self.config.command(row.seed)
            for method, result in {self.config.exact: row.optimum, **row.results}.items():
                exact = method == self.config.exact
                lower = _bound_value(row.optimum.lower_bound) if exact else row.lower_bound(method)
                flow = row.optimum.flow_lower_bound if exact else row.flow_lower_bound(method)
                out.append(
                    {
                        "seed": row.seed,
                        "method": method,
                        "model": "A" if exact else model_of(method),
                        "status": result.status.value,
                        "sum C": result.objective,
                        "OPT": opt,
                        "LB": lower,
                        "C/OPT": result.objective / opt,
                        "C/LB": _ratio(result.objective, lower),
                        "sum JCT": result.total_jct,
                        "JCT/OPT": result.total_jct / row.optimum.total_jct
                        if row.optimum.proven_optimal and row.optimum.total_jct > 0
                        else math.nan,
                        "JCT/LB": _ratio(_flow(result), flow),
                        "runtime s": result.runtime_s,
                        "verified": row.verified[method],
                        "command": command,
                    }
                )
        return out


METHOD_HEADERS = (
    "method",
    "mean C/OPT",
    "worst C/OPT",
    "worst seed",
    "mean JCT/OPT",
    "worst JCT/OPT",
    "mean C/LB",
    "mean C/LB_fast",
    "mean JCT/LB",
    "verified",
    "mean runtime s",
)
"""The columns of ``compare``'s table, and the keys of each method's row of
:meth:`CompareReport.summary` (which adds ``worst C/LB``, ``above Theorem 1`` and ``note``)."""

RECORD_HEADERS = (
    "seed",
    "method",
    "model",
    "status",
    "sum C",
    "OPT",
    "LB",
    "C/OPT",
    "C/LB",
    "sum JCT",
    "JCT/OPT",
    "JCT/LB",
    "runtime s",
    "verified",
    "command",
)
"""The keys of :meth:`CompareReport.records`, the columns of ``compare --out rows.csv``."""


def _worst_seed(rows: list[InstanceComparison], ratios: list[float]) -> int | None:
    """The seed of the row with the largest finite ratio (``None`` without one)."""
    finite = [(x, r.seed) for x, r in zip(ratios, rows, strict=True) if math.isfinite(x)]
    return max(finite, key=lambda pair: (pair[0], -pair[1]))[1] if finite else None


def is_preemptive(method: str) -> bool:
    """Whether ``method`` is a preemptive policy (its schedules are not problem A's)."""
    from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES

    return method in PREEMPTIVE_POLICIES


def model_of(method: str) -> str:
    """The model of ``method``'s schedules: ``"preemptive"`` or ``"A"``."""
    return "preemptive" if is_preemptive(method) else "A"


def preemptive_note(methods: tuple[str, ...]) -> str:
    """What the ratios of the preemptive ones among ``methods`` mean, in one line (``""``
    when none is preemptive)."""
    chosen = [m for m in methods if is_preemptive(m)]
    if not chosen:
        return ""
    return (
        f"preemptive: {', '.join(chosen)}; their C/OPT and JCT/OPT are ratios to OPT(A), the "
        "non-preemptive optimum, which a preemptive schedule may beat (values below 1 are "
        "legitimate, not a certificate); their C/LB and JCT/LB divide by the best bound "
        f"proved for the preemptive model ({', '.join(PREEMPTIVE_BOUNDS)})"
    )


def preemptive_lower_bound(known: BoundSet) -> LowerBound | None:
    """The best of the bounds proved for the preemptive model
    (:data:`~ddlsched.formulations.lower_bounds.PREEMPTIVE_BOUNDS`) among ``known``."""
    return known.best(among=PREEMPTIVE_BOUNDS)


def _bound_value(bound: LowerBound | None) -> float:
    """The value of a valid lower bound, or ``nan``."""
    return bound.value if bound is not None and bound.valid else math.nan


def _ratio(value: float, bound: float) -> float:
    """``value / bound`` where the bound is finite and positive (a certified ratio),
    else ``nan``."""
    return value / bound if math.isfinite(bound) and bound > 0 else math.nan


def _flow(result: Result) -> float:
    """``result``'s weighted flow time, ``nan`` where it is not finite."""
    flow = result.total_flow_time
    return flow if math.isfinite(flow) else math.nan


@dataclass
class InstanceBudget:
    """The wall-clock seconds every phase of one instance shares (``compare --time-limit``),
    and the phases it cut.

    :func:`compare_instance` runs the phases in turn and each asks the budget first
    (:meth:`allows`): the online methods (always: they are what is compared), ``rho``
    (whose ``alpha_min`` searches stop when the budget is spent, :meth:`give_up`), the
    fast lower bounds, then the exact solve, whose time limit is what is left
    (:meth:`exact_params`; its modes, mapping proofs, warm start and bounds count against
    that limit). A phase that finds the budget spent is skipped and named in
    :attr:`skipped`, and the row stands on what was proven: no ``C/OPT`` without a proven
    optimum, ``C/LB`` only against a bound that was computed. Without ``seconds`` nothing
    is skipped and the clock is never read: the deterministic limits alone decide.

    Attributes
    ----------
    seconds
        The budget, or ``None`` for none.
    clock
        Seconds from any origin (``time.monotonic``; a test passes its own).
    skipped
        The phases skipped or cut short, in order.
    """

    seconds: float | None
    # A factory, not a default: a function as the class's default would be documented
    # a second time, as a method.
    clock: Callable[[], float] = field(default_factory=lambda: time.monotonic)
    skipped: list[str] = field(default_factory=list)
    began: float = field(init=False, default=math.nan)

    def __post_init__(self) -> None:
        if self.seconds is not None:
            self.began = self.clock()

    def left(self) -> float:
        """Seconds left (``inf`` without a budget, never below 0)."""
        if self.seconds is None:
            return math.inf
        return max(0.0, self.began + self.seconds - self.clock())

    def allows(self, phase: str) -> bool:
        """Whether ``phase`` may start: time is left; if not, it is named as skipped."""
        if self.left() > 0:
            return True
        self.skipped.append(phase)
        return False

    def give_up(self, phase: str) -> Callable[[], bool] | None:
        """A callable a search asks whether to stop: ``True`` once the budget is spent
        (``phase`` is then named as cut short); ``None`` without a budget."""
        if self.seconds is None:
            return None

        def spent() -> bool:
            if self.left() > 0:
                return False
            if phase not in self.skipped:
                self.skipped.append(phase)
            return True

        return spent

    def exact_params(self, params: ExactParams) -> ExactParams:
        """``params`` with the time left as its time limit, at least
        :data:`LEAST_EXACT_SECONDS` (the solve was allowed to start); unchanged without a
        budget."""
        if self.seconds is None:
            return params
        return params.replace(time_limit=max(LEAST_EXACT_SECONDS, self.left()))


LEAST_EXACT_SECONDS = 1e-3
"""The least time limit of an exact solve the budget allowed to start: the time left is
read again when its limit is set, and may have run out in between."""


RHO_CUT = "rho's alpha_min searches (rho is an upper bound)"
"""How a row names the ``rho`` whose searches the budget cut short."""
BOUNDS_PHASE = "lower bounds"
"""How a row names the fast lower bounds when the budget left no time for them."""


def compare(
    config: CompareConfig,
    progress: Callable[[int, int], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> CompareReport:
    """Solve each generated instance exactly and with every method; verify everything.

    Ratios are taken only against proven optima. With ``config.time_limit`` each
    instance's phases share that many seconds of ``clock`` once the instance is built
    (:class:`InstanceBudget`). Ctrl-C stops cleanly: the report holds the instances
    finished so far and says it was interrupted.
    """
    report = CompareReport(config, [])
    try:
        for k in range(config.instances):
            seed = config.seed + k
            instance = config.instance(seed)
            budget = InstanceBudget(config.time_limit, clock)
            report.rows.append(compare_instance(config, seed, instance, budget))
            if progress is not None:
                progress(k + 1, config.instances)
    except KeyboardInterrupt:
        report.interrupted = True
    return report


def compare_instance(
    config: CompareConfig, seed: int, instance: Instance, budget: InstanceBudget
) -> InstanceComparison:
    """One instance's row: every phase within ``budget`` (:class:`InstanceBudget`), every
    schedule checked by the independent verifier (outside the budget: a row is never
    left unchecked).

    Raises
    ------
    RuntimeError
        When a schedule fails verification.
    """
    from ddlsched.proofs_checks.bounds import theorem1_constant

    online = OnlineParams(predictor=config.predictor)
    results = {
        method: solve(instance, method, params=online, seed=seed, bound=False)
        for method in config.methods
    }
    rho_value = math.nan
    if budget.allows("rho"):
        rho_value = rho_of_instance(instance, give_up=budget.give_up(RHO_CUT)).rho.value
    fast, preemptive = _fast_bounds(instance, budget)
    if budget.allows(config.exact):
        optimum = solve(instance, config.exact, params=budget.exact_params(config.exact_params()))
    else:
        optimum = _not_run(config.exact, budget, fast)
    verified = _verified(seed, instance, {config.exact: optimum, **results})
    factor = theorem1_constant(instance.cluster.num_gpus, instance.max_job_gpus)
    return InstanceComparison(
        seed,
        instance,
        optimum,
        results,
        rho_value,
        factor * rho_value,
        verified,
        _bound_value(fast),
        preemptive,
        tuple(budget.skipped),
    )


def _fast_bounds(
    instance: Instance, budget: InstanceBudget
) -> tuple[LowerBound | None, LowerBound | None]:
    """The best fast bound on ``OPT(A)`` and the best for the preemptive model, or
    ``(None, None)`` when the budget left no time for them."""
    if not budget.allows(BOUNDS_PHASE):
        return None, None
    known = BoundSet.of(instance)
    return known.best(), preemptive_lower_bound(known)


def _not_run(exact: str, budget: InstanceBudget, bound: LowerBound | None) -> Result:
    """The exact method's result when the budget was spent before it could start: no
    schedule, no optimum, and ``bound`` (a proven bound on ``OPT(A)``, if one was computed)
    for the certified ratios."""
    return Result(
        exact,
        Problem.A,
        SolveStatus.TIME_LIMIT,
        math.nan,
        math.nan,
        notes=(f"not run: the instance's time budget of {budget.seconds:g} s was spent first",),
        lower_bound=bound,
    )


def _verified(seed: int, instance: Instance, results: dict[str, Result]) -> dict[str, bool]:
    """Per method, whether its schedule passes the independent verifier (``False`` for a
    result without a schedule).

    Raises
    ------
    RuntimeError
        When a schedule fails verification.
    """
    from ddlsched.proofs_checks.verifier import verify

    verified = {}
    for method, result in results.items():
        if result.schedule is None:
            verified[method] = False
            continue
        verified[method] = verify(instance, result.schedule).feasible
        if not verified[method]:
            raise RuntimeError(f"seed {seed}: the {method} schedule failed verification")
    return verified


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def _mean(values: list[float]) -> float:
    finite = _finite(values)
    return math.fsum(finite) / len(finite) if finite else math.nan


def _max(values: list[float]) -> float:
    return max(_finite(values), default=math.nan)


def _min(values: list[float]) -> float:
    return min(_finite(values), default=math.nan)
