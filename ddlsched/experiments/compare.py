"""The main job: online methods against proven optima on generated instances.

Every schedule (the optimum's and each method's) is checked by the
independent verifier; ratios are taken against proven optima only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ddlsched.api import solve
from ddlsched.core.alpha import rho as rho_of_instance
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance
from ddlsched.core.params import ExactParams, OnlineParams
from ddlsched.core.result import Result
from ddlsched.formulations.certify import combinatorial_bound


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
    time_limit
        Seconds per MILP.
    load
        Poisson arrivals at this load, or all released at 0 (``None``).
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
        (:func:`~ddlsched.core.traces.trace_sample`, seeded by the instance's seed) on a
        uniform cluster, instead of generated integral jobs; ``load`` and ``gpu_types``
        do not apply.
    arrivals
        How the trace's jobs are taken (:data:`~ddlsched.core.traces.ARRIVALS`).
    """

    jobs: int = 20
    servers: int = 4
    gpus_per_server: int = 4
    instances: int = 20
    seed: int = 0
    methods: tuple[str, ...] = ()
    time_limit: float = 60.0
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
        if self.from_trace is not None and self.gpu_types:
            raise ValueError("gpu_types: not with from_trace (a trace's jobs run on one type)")
        self.generator()  # bad sizes or GPU types fail here, before any solve

    def instance(self, seed: int) -> Instance:
        """The compared instance of ``seed``: generated, or sampled from :attr:`from_trace`."""
        if self.from_trace is None:
            return generate(self.generator(), seed)
        from ddlsched.core.data import resolve_trace
        from ddlsched.core.traces import trace_sample

        cluster = self.generator().cluster()
        trace = resolve_trace(self.from_trace)
        return trace_sample(trace, cluster, self.jobs, seed=seed, arrivals=self.arrivals)

    def generator(self) -> GeneratorConfig:
        """The generator settings of the compared instances."""
        return GeneratorConfig.exact_friendly(
            self.jobs, self.servers, self.gpus_per_server, self.load
        ).replace(gpu_types=self.gpu_types)


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

    def certified_ratio(self, method: str) -> float:
        """``sum C / LB``: an upper bound on the ratio to ``OPT(A)`` even without the optimum."""
        bound = self.optimum.lower_bound
        return bound.ratio(self.results[method].objective) if bound is not None else math.nan

    def certified_flow_ratio(self, method: str) -> float:
        """``sum w (C - r) / flow LB``: an upper bound on the ratio of the method's total JCT
        (flow time) to the optimal one, from the exact result's flow bound (its proof, its
        bound or the lower bounds, whichever is largest; ``nan`` without one)."""
        bound = self.optimum.flow_lower_bound
        flow = self.results[method].total_flow_time
        if not (math.isfinite(bound) and bound > 0 and math.isfinite(flow)):
            return math.nan
        return flow / bound


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
        """Per method: mean and worst ratios to the optimum, verification, runtimes."""
        import numpy as np

        proven = [row for row in self.rows if row.optimum.proven_optimal]
        methods: dict[str, dict[str, float | str]] = {}
        for method in self.config.methods:
            ratios = [r.results[method].objective / r.optimum.objective for r in proven]
            above = [x for x, r in zip(ratios, proven, strict=True) if x > r.theorem1_factor]
            jct = [
                r.results[method].total_jct / r.optimum.total_jct
                for r in proven
                if r.optimum.total_jct > 0
            ]
            methods[method] = {
                "mean_ratio": float(np.mean(ratios)) if ratios else float("nan"),
                "worst_ratio": float(np.max(ratios)) if ratios else float("nan"),
                "mean_jct_ratio": float(np.mean(jct)) if jct else float("nan"),
                "worst_jct_ratio": float(np.max(jct)) if jct else float("nan"),
                "mean_certified_ratio": _mean([r.certified_ratio(method) for r in self.rows]),
                "mean_flow_ratio": _mean([r.certified_flow_ratio(method) for r in self.rows]),
                "worst_certified_ratio": _max([r.certified_ratio(method) for r in self.rows]),
                "mean_fast_certified_ratio": _mean(
                    [r.results[method].objective / r.fast_bound for r in self.rows]
                ),
                "verified": sum(r.verified[method] for r in self.rows),
                "above_theorem1": len(above),
                "flag": self.flag(method, above),
                "mean_runtime_s": _mean([r.results[method].runtime_s for r in self.rows]),
            }
        tightness = [
            r.optimum.lower_bound.value / r.optimum.objective
            for r in proven
            if r.optimum.lower_bound is not None
        ]
        fast = [r.fast_bound / r.optimum.objective for r in proven]
        return {
            "instances": len(self.rows),
            "optima_proven": len(proven),
            "lower_bound_over_opt_min": _min(tightness),
            "fast_bound_over_opt_median": float(np.median(fast)) if fast else math.nan,
            "fast_bound_over_opt_min": _min(fast),
            "interrupted": self.interrupted,
            "exact_mean_runtime_s": float(np.mean([r.optimum.runtime_s for r in self.rows]))
            if self.rows
            else float("nan"),
            "rho_mean": float(np.mean([r.rho for r in self.rows])) if self.rows else float("nan"),
            "rho_max": max((r.rho for r in self.rows), default=float("nan")),
            "theorem1_factor_max": max(
                (r.theorem1_factor for r in self.rows), default=float("nan")
            ),
            "methods": methods,
        }


def compare(
    config: CompareConfig,
    progress: Callable[[int, int], None] | None = None,
) -> CompareReport:
    """Solve each generated instance exactly and with every method; verify everything.

    Ratios are taken only against proven optima. Ctrl-C stops cleanly: the
    report holds the instances finished so far and says it was interrupted.
    """
    from ddlsched.proofs_checks.bounds import theorem1_constant
    from ddlsched.proofs_checks.verifier import verify

    exact = ExactParams(time_limit=config.time_limit)
    online = OnlineParams(predictor=config.predictor)

    report = CompareReport(config, [])
    try:
        for k in range(config.instances):
            seed = config.seed + k
            instance = config.instance(seed)
            optimum = solve(instance, config.exact, params=exact)
            results = {
                method: solve(instance, method, params=online, seed=seed, bound=False)
                for method in config.methods
            }
            verified = {}
            for method, result in {config.exact: optimum, **results}.items():
                ok = result.schedule is not None and verify(instance, result.schedule).feasible
                verified[method] = ok
                if not ok:
                    raise RuntimeError(f"seed {seed}: the {method} schedule failed verification")
            rho_value = rho_of_instance(instance).rho.value
            factor = theorem1_constant(instance.cluster.num_gpus, instance.max_job_gpus)
            report.rows.append(
                InstanceComparison(
                    seed,
                    instance,
                    optimum,
                    results,
                    rho_value,
                    factor * rho_value,
                    verified,
                    fast.value
                    if (fast := combinatorial_bound(instance)) is not None
                    else math.nan,
                )
            )
            if progress is not None:
                progress(k + 1, config.instances)
    except KeyboardInterrupt:
        report.interrupted = True
    return report


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def _mean(values: list[float]) -> float:
    finite = _finite(values)
    return math.fsum(finite) / len(finite) if finite else math.nan


def _max(values: list[float]) -> float:
    return max(_finite(values), default=math.nan)


def _min(values: list[float]) -> float:
    return min(_finite(values), default=math.nan)
