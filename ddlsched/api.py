"""The façades: one ``solve`` for every method, one ``simulate`` for every policy.

After PyJobShop's ``solve`` and PyVRP's ``solve``: whatever runs (an exact
model of :mod:`formulations`, an online policy of :mod:`algorithms` in the
simulator, or your own policy object), the call looks the same and returns
one :class:`~ddlsched.core.result.Result`. Names are looked up in the
registries (:data:`ddlsched.formulations.registry.EXACT_METHODS`,
:data:`ddlsched.algorithms.registry.POLICIES`); settings come as typed parameter
objects (:class:`~ddlsched.core.params.ExactParams`,
:class:`~ddlsched.core.params.OnlineParams`).

Elastic jobs (Pollux's model) have their own façade, :mod:`ddlsched.elastic`;
:func:`simulate_elastic` and :func:`compare_elastic` here call it.

This module sits on the top floor: it imports ``formulations`` and
``algorithms`` inside the calls that need them, so ``import ddlsched`` stays
light and the lower floors can import the core without a cycle.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ddlsched.core.model import InputError, Instance, Problem, Schedule, as_instance, is_whole
from ddlsched.core.params import ExactParams, OnlineParams, bind_part_names
from ddlsched.core.result import LowerBound, Result, SolveStatus

if TYPE_CHECKING:
    from ddlsched.algorithms.elastic import ElasticPolicy, ElasticSimParams
    from ddlsched.algorithms.mapping import Mapper
    from ddlsched.algorithms.prediction.view import Predictor
    from ddlsched.algorithms.protocol import Policy
    from ddlsched.core.elastic import ElasticCluster, ElasticWorkload
    from ddlsched.core.generators import GeneratorConfig
    from ddlsched.core.traces import LoadedTrace
    from ddlsched.experiments.elastic import ElasticComparison, ElasticRun
    from ddlsched.experiments.trace_study import TraceReplay, TraceRun, TraceStudy
    from ddlsched.formulations.lower_bounds import LpSettings

ProgressCallback = Callable[[int, int], None]


def exact_method_names() -> tuple[str, ...]:
    """The names of the exact methods (``ddlsched.formulations.registry.EXACT_METHODS``)."""
    from ddlsched.formulations.registry import EXACT_METHODS

    return EXACT_METHODS.names()


def policy_names() -> tuple[str, ...]:
    """The names of the online policies (``ddlsched.algorithms.registry.POLICIES``)."""
    from ddlsched.algorithms.registry import POLICIES

    return POLICIES.names()


def method_names() -> tuple[str, ...]:
    """Every name :func:`solve` accepts: the exact methods, then the policies.

    Examples
    --------
    >>> from ddlsched import method_names
    >>> method_names()[:3]
    ('exact', 'milp', 'cpsat')
    >>> "asrpt" in method_names()
    True
    """
    return exact_method_names() + policy_names()


def _registered(kind: str) -> Callable[[], tuple[str, ...]]:
    """The names of the registry of ``kind`` (imported when first asked: 0.3 s)."""

    def names() -> tuple[str, ...]:
        from ddlsched.algorithms.registry import MAPPERS, PREDICTORS

        return PREDICTORS.names() if kind == "predictor" else MAPPERS.names()

    return names


for _kind in ("predictor", "mapper"):  # OnlineParams checks its names on construction
    bind_part_names(_kind, _registered(_kind))


def _seed(seed: object) -> int:
    if not is_whole(seed) or not 0 <= seed < 2**63:
        raise ValueError(f"seed: expected a whole number >= 0, got {seed!r}")
    return int(seed)


def _switches_and_progress(progress: object, **switches: object) -> None:
    """Refuse a ``progress`` that cannot be called and a switch that is not a bool (a
    string such as ``"no"`` would read as true)."""
    if progress is not None and not callable(progress):
        raise TypeError(
            f"progress: expected a callable progress(completed, total), got "
            f"{type(progress).__name__}"
        )
    for name, value in switches.items():
        if not isinstance(value, bool):
            raise TypeError(f"{name}: expected True or False, got {value!r}")


def solve(
    instance: Instance | LoadedTrace,
    method: str = "exact",
    *,
    problem: Problem | str = Problem.A,
    params: ExactParams | OnlineParams | None = None,
    seed: int = 0,
    warm_start: Schedule | None = None,
    progress: ProgressCallback | None = None,
    bound: bool = True,
) -> Result:
    """Schedule ``instance`` with the method called ``method``.

    Parameters
    ----------
    instance
        The instance (or a loaded trace: its instance).
    method
        An exact method (``"exact"``, the default: the MILP and CP-SAT raced;
        ``"milp"``; ``"cpsat"``) or an online policy (``"asrpt"``,
        ``"asrpt-greedy"``, ``"fifo"``, ``"sjf"``, ``"srpt-naive"``, ``"las"``,
        ``"las-tiresias"``): see :func:`method_names`.
    problem
        For exact methods: ``"A"``, ``"A1"`` or ``"A2"``. Policies solve A.
    params
        :class:`ExactParams` for an exact method, :class:`OnlineParams` for
        a policy (defaults when ``None``).
    seed
        Randomness of policies (random mappings, noisy predictors).
    warm_start
        A feasible schedule of ``problem`` an exact method starts from; for
        problem A the default is :func:`online_start`'s (the exact methods also
        try their own list schedules and keep the better). Checked by the
        independent verifier first (:mod:`ddlsched.formulations.admission`).
    progress
        For policies: called as ``progress(completed, total)``.
    bound
        For policies: fill :attr:`Result.lower_bound` with the best fast bound. An exact
        method's result on problem A always holds the best bound known
        (:func:`ddlsched.formulations.certify.certify`).

    Raises
    ------
    ValueError
        On an unknown method or problem, or parameters of the wrong kind.
    InputError
        For a warm start that is not a feasible schedule of ``problem`` (one
        line: the first violation and the problem it does fit).
    ContradictionError
        Should a method's result contradict its own bound (an internal error:
        :meth:`Result.contradiction`).
    TypeError
        When ``instance`` is not an instance, ``method`` not a name or
        ``warm_start`` not a schedule.
    KeyboardInterrupt
        On Ctrl-C, whatever runs (solver children are stopped first).

    Examples
    --------
    >>> from ddlsched import GeneratorConfig, generate
    >>> instance = generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0)
    >>> from ddlsched import ExactParams, solve
    >>> optimum = solve(instance, "milp", params=ExactParams(time_limit=60))
    >>> optimum.status.value, optimum.objective
    ('optimal', 19.0)
    """
    from ddlsched.formulations.registry import EXACT_METHODS

    instance = as_instance(instance)
    seed, problem = _solve_arguments(method, problem, seed, warm_start, progress, bound)
    if method in EXACT_METHODS:
        if params is not None and not isinstance(params, ExactParams):
            raise ValueError(f"params: method {method!r} takes ExactParams, got {params!r}")
        return _solve_exact(instance, method, problem, params or ExactParams(), warm_start)
    if method in policy_names():
        if problem is not Problem.A:
            raise ValueError(f"problem: online methods solve problem A, not {problem.value!r}")
        if params is not None and not isinstance(params, OnlineParams):
            raise ValueError(f"params: method {method!r} takes OnlineParams, got {params!r}")
        return simulate(instance, method, params=params, seed=seed, progress=progress, bound=bound)
    raise ValueError(f"method: expected one of {', '.join(method_names())}, got {method!r}")


def _solve_arguments(
    method: object,
    problem: Problem | str,
    seed: object,
    warm_start: object,
    progress: object,
    bound: object,
) -> tuple[int, Problem]:
    """The seed and the problem of a :func:`solve` call, once its arguments are checked:
    a method that is not a name, a warm start that is not a schedule, a bad seed, switch,
    progress or problem is refused before anything runs.

    Raises
    ------
    TypeError
        On an argument of the wrong type.
    ValueError
        On a seed out of range or an unknown problem.
    """
    if not isinstance(method, str):
        raise TypeError(
            f"method: expected a name ({', '.join(method_names())}), got "
            f"{type(method).__name__}; an own policy object goes to simulate()"
        )
    if warm_start is not None and not isinstance(warm_start, Schedule):
        raise TypeError(f"warm_start: expected a Schedule, got {type(warm_start).__name__}")
    checked = _seed(seed)
    _switches_and_progress(progress, bound=bound)
    if problem not in tuple(Problem):
        raise ValueError(f"problem: expected one of {', '.join(Problem)}, got {problem!r}")
    return checked, Problem(problem)


def _solve_exact(
    instance: Instance,
    method: str,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
) -> Result:
    """The exact method ``method`` on ``instance``; for problem A it starts from
    :func:`online_start`'s schedule unless given one. The method certifies its result with
    the fast bounds it computes once (:class:`ddlsched.formulations.certify.BoundSet`).
    """
    from ddlsched.formulations.registry import EXACT_METHODS

    if warm_start is None and problem is Problem.A:
        warm_start, params = _online_start_within(instance, params)
    return EXACT_METHODS[method](instance, problem, params, warm_start)


ONLINE_SHARE = 0.1
"""Share of an exact method's time limit after which :func:`online_start` tries no further
policy (it keeps the first schedule it has): the three took 3.9 s of a 10 s limit on 3,000
jobs on a loaded machine."""
LEAST_LIMIT = 0.05
"""The exact method's least time limit once the warm start took its part: the list
schedule and the quick modes are still returned."""


def _online_start_within(
    instance: Instance, params: ExactParams
) -> tuple[Schedule | None, ExactParams]:
    """:func:`online_start`'s schedule found within :data:`ONLINE_SHARE` of the time limit,
    and ``params`` with the time it took taken off the limit: the limit covers the call."""
    import time

    began = time.monotonic()
    limit = params.time_limit
    stop_at = None if limit is None else began + ONLINE_SHARE * limit
    warm_start = online_start(instance, stop_at)
    if limit is not None:
        params = params.replace(time_limit=max(LEAST_LIMIT, limit - (time.monotonic() - began)))
    return warm_start, params


def online_start(instance: Instance, stop_at: float | None = None) -> Schedule | None:
    """The best schedule of the :data:`~ddlsched.algorithms.registry.UPPER_BOUND_POLICIES`
    (milliseconds each), as an
    exact method's warm start: a smaller incumbent shortens every job's horizon, hence the
    model. On the three 16-job 4 x 4 instances of ``bench_exact`` it was 168, 232 and 209
    against the list schedules' 170, 247 and 207 (the optima: 168, 232, 204). Only
    schedules the verifier accepts for problem A (non-preemptive) are candidates
    (:func:`ddlsched.formulations.admission.refusal`), so the caller never sees a warm start of
    its own refused. Past ``stop_at`` (a ``time.monotonic()`` value) no further policy is
    tried once one gave a schedule."""
    import time

    from ddlsched.algorithms.registry import UPPER_BOUND_POLICIES
    from ddlsched.formulations.admission import refusal

    best: Result | None = None
    for name in UPPER_BOUND_POLICIES:
        if best is not None and stop_at is not None and time.monotonic() >= stop_at:
            break
        result = simulate(instance, name, bound=False)
        if result.schedule is None or refusal(instance, Problem.A, result.schedule):
            continue
        if best is None or result.objective < best.objective:
            best = result
    return None if best is None else best.schedule


def simulate(
    instance: Instance | LoadedTrace,
    policy: str | Policy = "asrpt",
    *,
    params: OnlineParams | None = None,
    seed: int = 0,
    predictor: Predictor | str | None = None,
    mapper: Mapper | str | None = None,
    progress: ProgressCallback | None = None,
    bound: bool = True,
    partial: bool = False,
) -> Result:
    """Run an online policy on ``instance`` in the event-driven simulator.

    Parameters
    ----------
    instance
        The instance: a generated or read one, or a loaded trace
        (:func:`ddlsched.core.traces.load_trace`'s answer: its instance).
    policy
        A name of :data:`ddlsched.algorithms.registry.POLICIES`, or your own object
        implementing :class:`ddlsched.algorithms.protocol.Policy` (subclass it for
        no-op defaults).
    params
        Predictor and mapper names, restart cost, adaptive rule.
    seed
        Seeds the predictor and the policy (named policies only).
    predictor, mapper
        Your own objects, replacing the ones ``params`` names, or names of
        :data:`ddlsched.algorithms.registry.PREDICTORS` and
        :data:`~ddlsched.algorithms.registry.MAPPERS` (named policies only; an
        object policy brings its own).
    progress
        Called as ``progress(completed, total)`` now and then.
    bound
        Fill :attr:`Result.lower_bound` with the best fast lower bound on ``OPT(A)``
        (:meth:`ddlsched.formulations.certify.BoundSet.best`; about 1.5 s for 82,000 jobs), so that
        ``objective / lower_bound.value`` bounds the ratio to the optimum.
    partial
        On Ctrl-C, return what completed (status ERROR, no schedule, a note)
        instead of raising :class:`KeyboardInterrupt` (the command line
        prints such partial metrics; code that goes on with the result, such
        as a warm start or an upper bound, must not take it for a schedule).

    Returns
    -------
    Result
        Status ``feasible`` when the independent verifier accepts the schedule, else
        ``error`` with the schedule and a note naming the first violation.

    Raises
    ------
    ValueError
        On an unknown policy, predictor or mapper name; a run past its limits
        (:class:`~ddlsched.algorithms.simulator.RunawaySimulation`: more preemptions than
        ``params.max_preemptions``, or a restart cost no job outlasts).
    TypeError
        If ``instance`` is not an instance, ``params`` not
        :class:`OnlineParams`, or a policy, predictor or mapper object lacks
        a method of its protocol.
    KeyboardInterrupt
        On Ctrl-C (unless ``partial``).

    Examples
    --------
    >>> from ddlsched import GeneratorConfig, generate
    >>> instance = generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0)
    >>> from ddlsched import simulate
    >>> online = simulate(instance, "asrpt")
    >>> online.method, online.objective
    ('asrpt', 32.5)
    """
    from ddlsched.algorithms.simulator import simulate as run

    instance = as_instance(instance)
    params, predictor, mapper = _online_parts(params, predictor, mapper)
    seed = _seed(seed)
    _switches_and_progress(progress, bound=bound, partial=partial)
    chosen = _chosen_policy(policy, instance, params, seed, predictor, mapper)
    result = run(
        instance,
        chosen,
        progress,
        restart_cost=params.restart_cost,
        max_preemptions=params.max_preemptions,
    )
    if result.schedule is None and not partial:
        # The simulator keeps what completed when Ctrl-C arrives; a caller that goes on
        # (a warm start, an upper bound, a comparison) would go on without it.
        raise KeyboardInterrupt
    if not bound or result.status is not SolveStatus.FEASIBLE:
        return result  # a schedule the verifier rejects gets no certified ratio
    from ddlsched.formulations.certify import BoundSet

    return dataclasses.replace(result, lower_bound=BoundSet.of(instance).best())


def _online_parts(
    params: OnlineParams | None,
    predictor: Predictor | str | None,
    mapper: Mapper | str | None,
) -> tuple[OnlineParams, Predictor | None, Mapper | None]:
    """The parameters, predictor and mapper :func:`simulate` runs with: a predictor or
    mapper given by name goes into the parameters (which check it), an object stays as
    given once it is seen to have the methods the simulator calls.

    Raises
    ------
    TypeError
        When ``params`` is not :class:`OnlineParams`, or the predictor or mapper object
        lacks a method of its protocol.
    ValueError
        On an unknown predictor or mapper name.
    """
    if params is not None and not isinstance(params, OnlineParams):
        raise TypeError(f"params: expected OnlineParams, got {type(params).__name__}")
    params = params or OnlineParams()
    if isinstance(predictor, str):
        params, predictor = params.replace(predictor=predictor), None
    if isinstance(mapper, str):
        params, mapper = params.replace(mapper=mapper), None
    if predictor is not None and not all(
        callable(getattr(predictor, name, None)) for name in ("predict", "observe")
    ):
        raise TypeError(
            f"predictor: expected a name or an object with predict() and observe(), got "
            f"{type(predictor).__name__}"
        )
    if mapper is not None and not callable(mapper):
        raise TypeError(
            "mapper: expected a name or a callable mapper(job, cluster, free) -> servers, "
            f"got {type(mapper).__name__}"
        )
    return params, predictor, mapper


def _chosen_policy(
    policy: str | Policy,
    instance: Instance,
    params: OnlineParams,
    seed: int,
    predictor: Predictor | None,
    mapper: Mapper | None,
) -> Policy:
    """The policy :func:`simulate` runs: built from the registry when named, else the
    object given, which brings its own predictor and mapper.

    Raises
    ------
    ValueError
        On an unknown policy name, or a predictor or mapper object given with a policy
        object.
    """
    from ddlsched.algorithms.registry import build_policy

    if isinstance(policy, str):
        return build_policy(policy, instance, params, seed, predictor=predictor, mapper=mapper)
    if predictor is not None or mapper is not None:
        raise ValueError("predictor, mapper: only for a policy given by name")
    return policy


def simulate_elastic(
    workload: ElasticWorkload | str | os.PathLike[str],
    policy: str | ElasticPolicy = "pollux",
    *,
    cluster: ElasticCluster | None = None,
    params: ElasticSimParams | None = None,
    limit: int | None = None,
    progress: ProgressCallback | None = None,
) -> ElasticRun:
    """:func:`ddlsched.elastic.simulate`, the elastic product's own entry, under the name it
    has in this namespace: the same arguments, the same checked run."""
    from ddlsched import elastic

    return elastic.simulate(
        workload, policy, cluster=cluster, params=params, limit=limit, progress=progress
    )


def compare_elastic(
    workload: ElasticWorkload | str | os.PathLike[str],
    policies: Sequence[str] | None = None,
    *,
    cluster: ElasticCluster | None = None,
    params: ElasticSimParams | None = None,
    limit: int | None = None,
    progress: ProgressCallback | None = None,
) -> ElasticComparison:
    """:func:`ddlsched.elastic.compare`, the elastic product's own entry, under the name it
    has in this namespace: the same arguments, the same checked runs side by side."""
    from ddlsched import elastic

    return elastic.compare(
        workload, policies, cluster=cluster, params=params, limit=limit, progress=progress
    )


def elastic_policy_names(policies: Sequence[str] | None = None) -> tuple[str, ...]:
    """:func:`ddlsched.elastic.policy_names` under the name it has in this namespace."""
    from ddlsched import elastic

    return elastic.policy_names(policies)


def best_policy_objective(instance: Instance, policies: tuple[str, ...] | None = None) -> float:
    """The least ``sum w C`` of ``policies`` (default
    :data:`~ddlsched.algorithms.registry.UPPER_BOUND_POLICIES`) on ``instance``: a feasible
    schedule's objective, hence an upper bound on ``OPT(A)`` (it narrows the LP bound's
    job windows)."""
    from ddlsched.algorithms.registry import UPPER_BOUND_POLICIES

    chosen = UPPER_BOUND_POLICIES if policies is None else policies
    return min(simulate(instance, policy, bound=False).objective for policy in chosen)


def lower_bounds(
    instance: Instance | LoadedTrace,
    lp: LpSettings | None = None,
    pooled: LpSettings | None = None,
) -> list[LowerBound]:
    """Every lower bound on ``OPT(A)`` of ``instance`` (``ddlsched bound``): the fast ones,
    with ``lp`` the LP relaxation too, and with ``pooled`` the pooled integral relaxation
    (bound 7 of :mod:`ddlsched.formulations.lower_bounds`, the strongest on batch arrivals), both
    with job windows narrowed by :func:`best_policy_objective`, and on a provably integral
    instance on its own grid (:func:`ddlsched.formulations.lower_bounds.proven_grid`).

    The LP and pooled models run in a child process
    (:func:`ddlsched.formulations.isolation.run_isolated`): HiGHS answers Ctrl-C only when it
    returns, which may be minutes, while the child is stopped at once; and whatever
    HiGHS prints goes to stderr, never to this process's stdout.

    Returns
    -------
    list[LowerBound]
        One per bound, each with its validity.

    Examples
    --------
    >>> from ddlsched import GeneratorConfig, generate
    >>> instance = generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0)
    >>> from ddlsched import lower_bounds
    >>> from ddlsched.core.result import best_lower_bound
    >>> best = best_lower_bound(lower_bounds(instance))
    >>> best.name, round(best.value, 3)  # the optimum (solve's example) is 19
    ('rank', 18.0)
    """
    from ddlsched.formulations import lower_bounds as bounds

    instance = as_instance(instance)
    if lp is None and pooled is None:
        return bounds.lower_bounds(instance)
    from ddlsched.formulations.isolation import run_isolated

    upper = best_policy_objective(instance)
    found: list[LowerBound] = run_isolated(
        bounds.lower_bounds, instance, None, lp, None, upper, pooled
    )
    return found


def generate_checked(config: GeneratorConfig, seed: int = 0) -> Instance:
    """:func:`ddlsched.core.generators.generate`, with a ``ValueError`` that names no setting
    (NumPy's ``sigma < 0`` for a negative ``iteration_sigma``, which the configuration
    does not check) turned into an :class:`InputError` naming the setting that causes it.

    Raises
    ------
    InputError
        Naming the setting (``iteration_sigma = -1: sigma < 0``) when one is found.
    """
    from ddlsched.core.generators import generate

    try:
        return generate(config, seed)
    except InputError:
        raise
    except ValueError as error:
        raise InputError(f"{_culprit(config, seed)}: {' '.join(str(error).split())}") from None


def _culprit(config: GeneratorConfig, seed: int) -> str:
    """The settings of ``config`` whose default makes the generation work (or "generator")."""
    from ddlsched.core.generators import GeneratorConfig, generate

    default = GeneratorConfig()
    small = config.replace(num_jobs=min(config.num_jobs, 4))  # each try costs milliseconds
    found = []
    for field in dataclasses.fields(GeneratorConfig):
        value = getattr(config, field.name)
        if field.name == "num_jobs" or value == getattr(default, field.name):
            continue
        try:
            generate(small.replace(**{field.name: getattr(default, field.name)}), seed)
        except Exception:  # still failing, or the default does not fit the other settings
            continue
        found.append(f"{field.name} = {value!r}")
    return ", ".join(found) or "generator settings"


def replay_trace(trace: str | os.PathLike[str], **options: Any) -> TraceReplay:
    """A CSV trace read on a cluster and scaled to a load, as ``ddlsched simulate --trace``
    and ``compare --trace`` read it: :func:`ddlsched.experiments.trace_study.replay_trace`
    (its parameters: the cluster, ``limit``, ``columns``, ``time_unit``, ``unnamed``,
    ``target_load`` or ``load_factor``)."""
    from ddlsched.experiments.trace_study import replay_trace as read

    return read(trace, **options)


def simulate_trace(replay: TraceReplay, policy: str, **options: Any) -> TraceRun:
    """One policy on a replayed trace with its model's bounds (``ddlsched simulate --trace``):
    :func:`ddlsched.experiments.trace_study.simulate_trace`; its
    :meth:`~ddlsched.experiments.trace_study.TraceRun.summary` holds every figure the
    command prints."""
    from ddlsched.experiments.trace_study import simulate_trace as run

    return run(replay, policy, **options)


def trace_study(trace: str | os.PathLike[str], **options: Any) -> TraceStudy:
    """Every rigid policy side by side on one trace at one or more loads, each run verified
    and measured against its model's lower bound (``ddlsched compare --trace``):
    :func:`ddlsched.experiments.trace_study.trace_study` (its parameters, returns and
    errors), imported on first call so that ``import ddlsched`` stays light.

    Examples
    --------
    >>> from ddlsched import trace_study
    >>> study = trace_study("tiresias_60_job.csv", servers=2, policies=["fifo", "las"],
    ...                     bounds="fast", workers=1)
    >>> list(study.table()["policy"])
    ['fifo', 'las']
    """
    from ddlsched.experiments.trace_study import trace_study as study

    return study(trace, **options)
