"""The façades: one ``solve`` for every method, one ``simulate`` for traces.

Like :mod:`ddlsched.cli`, this module sits on top of every layer and imports
``formulations`` and ``algorithms`` lazily, inside the call that needs them,
so that importing :mod:`ddlsched` never pays for Pyomo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ddlsched.generators import GeneratorConfig, generate
from ddlsched.model import Cluster, Instance, Job, Piece, Schedule, ScheduledJob
from ddlsched.result import Result

if TYPE_CHECKING:
    from proofs_checks.claims import ClaimRecord

EXACT_METHODS = ("milp",)
ONLINE_METHODS = ("asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive", "las")
METHODS = EXACT_METHODS + ONLINE_METHODS


def solve(
    instance: Instance,
    method: str = "milp",
    *,
    problem: str = "A",
    time_limit: float | None = 60.0,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    warm_start: Schedule | None = None,
    seed: int = 0,
    predictor: str = "oracle",
    verbose: bool = False,
) -> Result:
    """Schedule ``instance`` with ``method``.

    Parameters
    ----------
    instance
        The instance.
    method
        ``"milp"`` (exact, :mod:`formulations`) or an online policy:
        ``"asrpt"`` (guided A-SRPT), ``"asrpt-greedy"``, ``"fifo"``,
        ``"sjf"``, ``"srpt-naive"``, ``"las"`` (:mod:`algorithms`).
    problem
        For ``milp``: ``"A"``, ``"A1"`` or ``"A2"``. Online policies solve A.
    time_limit, mip_gap, threads, warm_start, verbose
        For ``milp`` (see :func:`formulations.exact.solve_milp`).
    seed
        Randomness of online policies (random mappings, noisy predictors).
    predictor
        Iteration predictor of online policies: ``"oracle"``, ``"noisy"``.

    Raises
    ------
    ValueError
        On an unknown method or problem.
    """
    if method == "milp":
        from formulations.exact import solve_milp

        return solve_milp(
            instance,
            problem,
            time_limit=time_limit,
            mip_gap=mip_gap,
            threads=threads,
            warm_start=warm_start,
            verbose=verbose,
        )
    if method in ONLINE_METHODS:
        if problem != "A":
            raise ValueError(f"problem: online methods solve problem A, not {problem!r}")
        from algorithms.simulator import simulate_policy

        return simulate_policy(instance, method, seed=seed, predictor=predictor)
    raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")


@dataclass(frozen=True)
class CheckReport:
    """Every claim of SPEC checked on one instance.

    Attributes
    ----------
    values
        ``opt_A``, ``opt_A1``, ``opt_A2``, ``srpt_A2``, ``rho`` (and
        ``rho_exact``, ``integral``).
    alpha_min, alpha_max
        Per job, recomputed by :mod:`proofs_checks.bounds`.
    claims
        One :class:`proofs_checks.claims.ClaimRecord` per claim (claim 6 once
        per method).
    """

    values: dict[str, float | bool]
    alpha_min: tuple[tuple[float, bool], ...]
    alpha_max: tuple[float, ...]
    claims: tuple[ClaimRecord, ...]

    def to_dict(self) -> dict[str, object]:
        """The ``check --json`` document."""
        return {
            "values": self.values,
            "alpha_min": [{"value": v, "exact": e} for v, e in self.alpha_min],
            "alpha_max": list(self.alpha_max),
            "claims": [claim.to_dict() for claim in self.claims],
        }


def check_instance(instance: Instance, time_limit: float | None = 60.0) -> CheckReport:
    """Compute ``opt_A``, ``opt_A1``, ``opt_A2``, ``srpt_A2``, ``rho`` and check every claim.

    The methods (MILPs, SRPT, guided and greedy A-SRPT) run here; the checks
    in :mod:`proofs_checks` recompute independently what they can and mark
    a claim inconclusive when a value is not exact (a time limit, a bounded
    ``alpha_min``, a non-integral instance).
    """
    from algorithms.simulator import simulate_policy
    from algorithms.virtual import srpt
    from ddlsched.alpha import all_cut_alpha
    from formulations.exact import solve_milp
    from proofs_checks import claims as c
    from proofs_checks.bounds import rho_of

    optima = {p: solve_milp(instance, p, time_limit=time_limit) for p in ("A", "A1", "A2")}
    integral = all(r.metrics.get("integral", 0.0) == 1.0 for r in optima.values())

    def value(problem: str, slotted: bool = False) -> c.Value:
        result = optima[problem]
        if slotted:
            return c.Value(
                result.metrics["milp_objective"], result.metrics["slotted_optimal"] == 1
            )
        return c.Value(result.objective, result.status.value == "optimal")

    machine = instance.cluster.num_gpus
    sizes = [
        job.gpus * job.iterations * all_cut_alpha(job, instance.cluster) / machine
        for job in instance.jobs
    ]
    ids = [job.id for job in instance.jobs]
    completions, pieces = srpt(sizes, [job.release for job in instance.jobs], ids)
    srpt_schedule = Schedule(
        tuple(
            ScheduledJob(
                i, pieces[i][0][0], completions[i], pieces=tuple(Piece(*p) for p in pieces[i])
            )
            for i in ids
        ),
        problem="A2",
    )
    rho = rho_of(instance)
    guided = simulate_policy(instance, "asrpt", predictor="oracle")
    greedy = simulate_policy(instance, "asrpt-greedy", predictor="oracle")
    assert guided.schedule is not None and greedy.schedule is not None

    records = [
        c.srpt_optimal_a2(instance, srpt_schedule, value("A2")),
        c.relaxation(value("A2"), value("A1")),
        c.lemma1(value("A1", not integral), value("A", not integral), rho, integral),
        c.mapping_bounds(instance, guided.schedule),
        c.theorem1(instance, guided.schedule, value("A"), rho),
    ]
    schedules = {f"milp-{p}": r.schedule for p, r in optima.items()}
    schedules.update(
        {"srpt-A2": srpt_schedule, "asrpt": guided.schedule, "asrpt-greedy": greedy.schedule}
    )
    for method, schedule in schedules.items():
        if schedule is not None:
            records.append(c.verifier(instance, schedule, method))
    values: dict[str, float | bool] = {
        "opt_A": optima["A"].objective,
        "opt_A1": optima["A1"].objective,
        "opt_A2": optima["A2"].objective,
        "srpt_A2": float(sum(completions.values())),
        "rho": rho.rho,
        "rho_exact": rho.exact,
        "integral": integral,
    }
    return CheckReport(
        values,
        tuple((low.value, low.exact) for low in rho.alpha_min),
        rho.alpha_max,
        tuple(records),
    )


def claim_family(name: str) -> str:
    """``verifier[asrpt]`` -> ``verifier``: one table row per claim."""
    return name.split("[", 1)[0]


@dataclass
class ClaimTally:
    """Counts over many instances for one claim (the worst ratio over conclusive ones)."""

    name: str
    checked: int = 0
    held: int = 0
    inconclusive: int = 0
    violated: int = 0
    worst_ratio: float = float("-inf")
    worst_seed: int | None = None

    def add(self, record: ClaimRecord, seed: int) -> None:
        """Count ``record`` found on the instance of ``seed``."""
        self.checked += 1
        if record.status == "holds":
            self.held += 1
        elif record.status == "violated":
            self.violated += 1
        else:
            self.inconclusive += 1
        if record.status == "inconclusive":
            return  # an inexact value says nothing about tightness
        ratio = record.ratio if record.rhs else -record.margin
        if ratio > self.worst_ratio:
            self.worst_ratio, self.worst_seed = ratio, seed


def adversarial_theorem1(
    servers: int, gpus_per_server: int, jobs: int, examples: int
) -> tuple[float, float, Instance | None]:
    """Search for instances where guided A-SRPT is far from OPT(A).

    Hypothesis draws integral instances (data-parallel ring jobs with
    drawn sizes, iteration counts, compute and traffic on the slot grid,
    and releases) and is steered by ``hypothesis.target`` towards a high
    ``sum C(asrpt) / OPT(A)``. Returns ``(worst ratio, Theorem 1 factor
    (2 + M/(M - g_max + 1)) * rho on that instance, the instance)``.
    """
    from hypothesis import HealthCheck, given, settings, target
    from hypothesis import strategies as st

    from algorithms.simulator import simulate_policy
    from formulations.exact import solve_milp
    from proofs_checks.bounds import rho_of, theorem1_constant

    cluster = Cluster.uniform(servers, gpus_per_server, 2.0, 1.0)
    best: dict[str, object] = {"ratio": 0.0, "factor": 0.0, "instance": None}

    @st.composite
    def instances(draw: st.DrawFn) -> Instance:
        made = []
        for k in range(jobs):
            gpus = draw(st.integers(1, cluster.num_gpus))
            iterations = draw(st.integers(1, 3))
            unit = 1.0 / iterations
            compute = draw(st.integers(1, 4)) * unit
            traffic = draw(st.integers(1, 3)) * unit * cluster.bandwidth_intra
            ring = (
                []
                if gpus == 1
                else [(0, 1)]
                if gpus == 2
                else [(d, (d + 1) % gpus) for d in range(gpus)]
            )
            made.append(
                Job(
                    id=f"j{k}",
                    release=float(draw(st.integers(0, 6))),
                    iterations=iterations,
                    compute_time=compute,
                    gpus=gpus,
                    edges=tuple((min(u, v), max(u, v), traffic) for u, v in ring),
                )
            )
        return Instance(cluster, tuple(made))

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(instances())
    def search(instance: Instance) -> None:
        optimum = solve_milp(instance, "A", time_limit=30)
        if optimum.status.value != "optimal":
            return
        online = simulate_policy(instance, "asrpt", predictor="oracle")
        ratio = online.objective / optimum.objective
        target(ratio, label="asrpt / OPT(A)")
        if ratio > best["ratio"]:  # type: ignore[operator]
            constant = theorem1_constant(cluster.num_gpus, instance.max_job_gpus)
            best.update(ratio=ratio, factor=constant * rho_of(instance).rho, instance=instance)

    search()
    return best["ratio"], best["factor"], best["instance"]  # type: ignore[return-value]


@dataclass(frozen=True)
class CompareConfig:
    """What ``ddlsched compare`` runs (defaults finish in about a minute).

    Attributes
    ----------
    jobs, servers, gpus_per_server
        Instance size and cluster shape (integral instances, ratio 2).
    instances
        How many instances, seeds ``seed .. seed + instances - 1``.
    seed
        First seed.
    methods
        Online methods compared with the optimum.
    time_limit
        Seconds per MILP.
    load
        Poisson arrivals at this load, or all released at 0 (``None``).
    predictor
        Iteration predictor of the online methods.
    """

    jobs: int = 8
    servers: int = 2
    gpus_per_server: int = 4
    instances: int = 20
    seed: int = 0
    methods: tuple[str, ...] = ("asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive", "las")
    time_limit: float = 60.0
    load: float | None = 1.0
    predictor: str = "oracle"

    def __post_init__(self) -> None:
        for method in self.methods:
            if method not in ONLINE_METHODS:
                raise ValueError(
                    f"methods: unknown method {method!r}; expected some of "
                    f"{', '.join(ONLINE_METHODS)}"
                )
        if self.instances < 1:
            raise ValueError(f"instances: must be >= 1, got {self.instances}")

    def generator(self) -> GeneratorConfig:
        """The generator settings of the compared instances."""
        return GeneratorConfig(
            num_jobs=self.jobs,
            servers=self.servers,
            gpus_per_server=self.gpus_per_server,
            integral=True,
            bandwidth_intra=2.0,
            bandwidth_inter=1.0,
            load=self.load,
        )


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


@dataclass
class CompareReport:
    """Everything ``compare`` measured, instance by instance."""

    config: CompareConfig
    rows: list[InstanceComparison]
    interrupted: bool = False

    def summary(self) -> dict[str, object]:
        """Per method: mean and worst ratios to the optimum, verification, runtimes."""
        import numpy as np

        proven = [row for row in self.rows if row.optimum.status.value == "optimal"]
        methods: dict[str, dict[str, float]] = {}
        for method in self.config.methods:
            ratios = [r.results[method].objective / r.optimum.objective for r in proven]
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
                "verified": float(sum(r.verified[method] for r in self.rows)),
                "mean_runtime_s": float(np.mean([r.results[method].runtime_s for r in self.rows])),
            }
        return {
            "instances": len(self.rows),
            "optima_proven": len(proven),
            "interrupted": self.interrupted,
            "milp_mean_runtime_s": float(np.mean([r.optimum.runtime_s for r in self.rows]))
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
    from ddlsched.alpha import rho as rho_of_instance
    from proofs_checks.bounds import theorem1_constant
    from proofs_checks.verifier import verify

    report = CompareReport(config, [])
    try:
        for k in range(config.instances):
            seed = config.seed + k
            instance = generate(config.generator(), seed)
            optimum = solve(instance, "milp", time_limit=config.time_limit)
            results = {
                method: solve(instance, method, seed=seed, predictor=config.predictor)
                for method in config.methods
            }
            verified = {}
            for method, result in {"milp": optimum, **results}.items():
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
                )
            )
            if progress is not None:
                progress(k + 1, config.instances)
    except KeyboardInterrupt:
        report.interrupted = True
    return report
