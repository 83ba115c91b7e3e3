"""Elastic jobs: the front door of the elastic product.

Every other part of ddlsched schedules *rigid* jobs (a job holds a fixed set of GPUs from
start to end). Here a job's GPU count and batch size change over time, as in Pollux (Qiao et
al., *Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning*, OSDI 2021):
each job trains one of six models for an epoch budget, and progresses at its *goodput*, the
throughput of its placement (a fitted step-time model) times the statistical efficiency of its
batch size (the gradient noise scale), both fitted to the measurements of the Pollux artifact
that ship with the package (:mod:`ddlsched.core.elastic`). A round-based simulator
(:mod:`ddlsched.algorithms.elastic`; 60 s rounds and a 30 s restart after every placement
change by default, the Pollux study's settings) asks a policy each round for every job's GPUs,
nodes and batch size.

The policies (:func:`policy_names`, from the registry
:data:`ddlsched.algorithms.elastic.ELASTIC_POLICIES`): ``pollux`` (the harmonic mean of
speedups, solved exactly per round), ``sia`` (the ILP over GPU types and counts of Sia,
Jayaram Subramanya et al., *Sia: Heterogeneity-aware, goodput-optimized ML-cluster
scheduling*, SOSP 2023), ``asrpt-elastic`` (Pollux's round weighted by SRPT on the predicted
remaining time), ``las-pollux`` (Tiresias as the Pollux study ran it), ``typed-greedy`` and
``fifo``.

The entry points:

- :func:`load_workload`: a workload in Pollux's CSV format (header
  ``name,time,application,num_replicas,batch_size``), a path or the name of one of the eight
  shipped workloads (``"workload-6.csv"``); a bad line is refused naming the file, line and
  column;
- :func:`simulate`: one policy on a workload, every run checked by the independent verifier
  :func:`ddlsched.proofs_checks.elastic.check_elastic` and its total JCT bounded from below;
- :func:`compare`: several policies side by side on the same workload and cluster;
- :func:`sandwich`: the optimal total JCT pinned from both sides, a proven lower bound
  (:mod:`ddlsched.formulations.elastic_bounds`, :mod:`ddlsched.formulations.elastic_lagrangian`)
  and the best checked run among the policies and the offline schedules of
  :mod:`ddlsched.algorithms.elastic.offline`.

The types a caller meets are here too: :class:`ElasticWorkload`, :class:`ElasticJob`,
:class:`ElasticCluster` (the model), :class:`ElasticSimParams` and :class:`ElasticPolicy` (the
simulation), :class:`ElasticRun`, :class:`ElasticComparison` and :class:`ElasticSandwich` (the
answers), each documented where it is defined. The model is imported with this module; the
simulator, policies and answers on first use, so ``import ddlsched.elastic`` stays light.
``docs/elastic.rst`` has the model's derivation, the fitted models' errors and the results on
the Pollux workloads.

Examples
--------
>>> from ddlsched import elastic
>>> run = elastic.simulate("workload-6.csv", "pollux", limit=4)
>>> run.verified, len(run.jobs)
(True, 4)
>>> elastic.policy_names()[:3]
('pollux', 'sia', 'asrpt-elastic')
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING

from ddlsched.core.elastic import ElasticCluster, ElasticJob, ElasticWorkload
from ddlsched.core.model import is_whole
from ddlsched.core.registry import Registry

if TYPE_CHECKING:
    from ddlsched.algorithms.elastic import ElasticPolicy, ElasticResult, ElasticSimParams
    from ddlsched.experiments.elastic import ElasticComparison, ElasticRun, ElasticSandwich

__all__ = [
    "ElasticCluster",
    "ElasticComparison",
    "ElasticJob",
    "ElasticPolicy",
    "ElasticResult",
    "ElasticRun",
    "ElasticSandwich",
    "ElasticSimParams",
    "ElasticWorkload",
    "compare",
    "load_workload",
    "policy_names",
    "sandwich",
    "simulate",
]

_LAZY = {
    "ElasticPolicy": "ddlsched.algorithms.elastic",
    "ElasticResult": "ddlsched.algorithms.elastic",
    "ElasticSimParams": "ddlsched.algorithms.elastic",
    "ElasticComparison": "ddlsched.experiments.elastic",
    "ElasticRun": "ddlsched.experiments.elastic",
    "ElasticSandwich": "ddlsched.experiments.elastic",
}
"""Types imported on first use, from the module that defines each (their modules load the
policies and the solvers behind them)."""

Workload = ElasticWorkload | str | os.PathLike[str]
"""A workload as the entry points take it: the jobs, or a Pollux workload CSV (a path or a
shipped name)."""

RunProgress = Callable[[int, int], None]
"""Called as ``progress(done, total)``."""


def __getattr__(name: str) -> object:
    """The types of ``_LAZY``, imported on first use."""
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ddlsched.elastic' has no attribute {name!r}")


def load_workload(path: str | os.PathLike[str], limit: int | None = None) -> ElasticWorkload:
    """The jobs of a Pollux workload CSV, in submission order.

    Parameters
    ----------
    path
        A file, or a name looked up in the working folder then in the shipped data
        (``"workload-6.csv"``, ``".csv"`` optional: :func:`~ddlsched.core.data.resolve_trace`).
    limit
        Only the first ``limit`` jobs.

    Raises
    ------
    InputError
        On a file that cannot be found or read, or a bad value: one line naming the file,
        the line and the column (:func:`~ddlsched.core.elastic.load_pollux_workload`).
    ValueError
        On a ``limit`` that is not a whole number >= 1.
    """
    from ddlsched.core.elastic import load_pollux_workload

    return _first(load_pollux_workload(path), limit)


def policy_names(policies: Sequence[str] | None = None) -> tuple[str, ...]:
    """The policies :func:`compare` runs for ``policies``: each name once, every one in
    :data:`ddlsched.algorithms.elastic.ELASTIC_POLICIES` (``None``: all of them, in the
    registry's order).

    Raises
    ------
    ValueError
        On no policies, a single string, or an unknown or repeated name (naming it, and the
        known names).
    """
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES

    return _checked_names("policies", policies, ELASTIC_POLICIES)


def simulate(
    workload: Workload,
    policy: str | ElasticPolicy = "pollux",
    *,
    cluster: ElasticCluster | None = None,
    params: ElasticSimParams | None = None,
    limit: int | None = None,
    progress: RunProgress | None = None,
) -> ElasticRun:
    """Run an elastic policy on a workload, round by round, and check the run.

    Parameters
    ----------
    workload
        The jobs, or a Pollux workload CSV (:func:`load_workload`).
    policy
        A name of :func:`policy_names` ``()``, or a fresh object implementing
        :class:`~ddlsched.algorithms.elastic.simulator.ElasticPolicy` (a ``name`` and
        ``allocate(state)``).
    cluster
        Default :class:`ElasticCluster` ``()``: 16 nodes x 4 GPUs, the Pollux study's.
    params
        Round length, restart delay, safety stop (default :class:`ElasticSimParams` ``()``:
        60 s rounds, 30 s restarts).
    limit
        Only the first ``limit`` jobs by submission.
    progress
        Called as ``progress(completed jobs, jobs)`` after every round.

    Returns
    -------
    ElasticRun
        ``jobs`` (one record per job: arrival, completion, JCT, restarts, GPU-seconds),
        ``rounds`` (each round's allocations), ``summary()`` (mean and percentile JCTs,
        makespan, restarts, GPU-seconds, the flow ratio, ``verified``) and ``write(path)``.

    Raises
    ------
    InputError
        On a workload file that cannot be read (naming the line and column).
    ValueError
        On an unknown policy name, a ``limit`` that is not a whole number >= 1, or a policy
        object that allocates beyond a node.
    TypeError
        On arguments of the wrong type.

    Examples
    --------
    >>> from ddlsched import elastic
    >>> run = elastic.simulate("workload-6.csv", "fifo", limit=3)
    >>> run.verified, run.summary()["jobs"]
    (True, 3)
    """
    from ddlsched.experiments.elastic import run_elastic

    chosen = _policy(policy)
    _check_progress(progress)
    jobs, cluster, params, source = _inputs(workload, cluster, params, limit)
    return run_elastic(jobs, chosen, cluster, params, source, progress)


def compare(
    workload: Workload,
    policies: Sequence[str] | None = None,
    *,
    cluster: ElasticCluster | None = None,
    params: ElasticSimParams | None = None,
    limit: int | None = None,
    progress: RunProgress | None = None,
) -> ElasticComparison:
    """Elastic policies side by side: each run as by :func:`simulate` on the same workload,
    cluster and settings.

    Parameters
    ----------
    policies
        Names of :func:`policy_names` ``()`` (default: all of them, in the registry's order).
    workload, cluster, params, limit
        As for :func:`simulate`.
    progress
        Called as ``progress(policies done, policies)`` after each policy.

    Returns
    -------
    ElasticComparison
        One checked run per policy; ``rows()`` gives one row per policy (mean, p50, p95, p99
        JCT, makespan, restarts, GPU-seconds, flow ratio, verified). Ctrl-C stops cleanly:
        it holds the runs finished so far and says it was interrupted.

    Raises
    ------
    ValueError
        On no policies, an unknown or repeated name, or a bad ``limit``.

    Examples
    --------
    >>> from ddlsched import elastic
    >>> report = elastic.compare("workload-6.csv", ["fifo", "pollux"], limit=3)
    >>> [(row["policy"], row["verified"]) for row in report.rows()]
    [('fifo', True), ('pollux', True)]
    """
    from ddlsched.experiments.elastic import compare_elastic

    names = policy_names(policies)
    _check_progress(progress)
    jobs, cluster, params, source = _inputs(workload, cluster, params, limit)
    return compare_elastic(jobs, names, cluster, params, source, progress)


def sandwich(
    workload: Workload,
    policies: Sequence[str] | None = None,
    *,
    offline: Sequence[str] | None = None,
    cluster: ElasticCluster | None = None,
    params: ElasticSimParams | None = None,
    limit: int | None = None,
    lagrangian_steps: int = 100,
    progress: RunProgress | None = None,
) -> ElasticSandwich:
    """The least total JCT of any run of the simulator on ``workload``, pinned from both sides.

    Below: the larger of the fast bound
    (:func:`~ddlsched.formulations.elastic_bounds.elastic_flow_bound`: per-job floors and SRPT
    on the squashed machine) and the Lagrangian bound
    (:func:`~ddlsched.formulations.elastic_lagrangian.elastic_lagrangian_bound`), valid for
    any GPU count, placement and batch size, resized at any round. Above: the least total JCT
    among the runs the independent check accepts, of the online ``policies`` and of the
    ``offline`` clairvoyant schedules of :mod:`ddlsched.algorithms.elastic.offline`.

    Parameters
    ----------
    policies
        Names of :func:`policy_names` ``()`` (default: all of them; ``()``: none).
    offline
        Names of :data:`~ddlsched.algorithms.elastic.offline.OFFLINE_ELASTIC_SCHEDULES`
        (default: all of them; ``()``: none).
    workload, cluster, params, limit
        As for :func:`simulate`; the cluster must have one GPU type.
    lagrangian_steps
        Supergradient steps of the Lagrangian bound (0: not computed); a fixed count, so the
        bound does not depend on the machine's speed.
    progress
        Called as ``progress(runs done, runs)`` after each run.

    Returns
    -------
    ElasticSandwich
        ``lower`` and ``upper`` (s), ``upper_method``, ``best_online``, every checked run's
        total (``totals``), the runs the check refused (``failed``) and ``to_dict()``.
        Ctrl-C once a run has passed the check stops cleanly: the sandwich holds the runs
        finished (``interrupted``) and the fast bound alone.

    Raises
    ------
    ValueError
        On a typed cluster, an unknown or repeated name, no schedule at all (both lists
        empty), a bad ``limit``
        or ``lagrangian_steps``, or when no run passes the check.

    Examples
    --------
    >>> from ddlsched import elastic
    >>> pinned = elastic.sandwich("workload-6.csv", ["fifo", "pollux"], offline=(), limit=3)
    >>> pinned.upper_method, pinned.lower <= pinned.totals["fifo"]
    ('pollux', True)
    """
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES
    from ddlsched.algorithms.elastic.offline import OFFLINE_ELASTIC_SCHEDULES
    from ddlsched.experiments.elastic import elastic_sandwich

    online = _checked_names("policies", policies, ELASTIC_POLICIES, empty=True)
    extra = _checked_names("offline", offline, OFFLINE_ELASTIC_SCHEDULES, empty=True)
    if not online and not extra:
        raise ValueError("policies, offline: both empty, so no schedule gives an upper bound")
    if not is_whole(lagrangian_steps) or lagrangian_steps < 0:
        raise ValueError(
            f"lagrangian_steps: expected a whole number >= 0, got {lagrangian_steps!r}"
        )
    _check_progress(progress)
    jobs, cluster, params, _ = _inputs(workload, cluster, params, limit)
    return elastic_sandwich(jobs, cluster, params, online, extra, progress, int(lagrangian_steps))


def _checked_names(
    field: str,
    asked: Sequence[str] | None,
    registry: Registry[Callable[[], ElasticPolicy]],
    empty: bool = False,
) -> tuple[str, ...]:
    """``asked`` (``None``: every name of ``registry``) once each, every one registered;
    an empty list only if ``empty``.

    Raises
    ------
    ValueError
        Naming ``field``: on no names (unless ``empty``), a single string (it would be read
        letter by letter), or an unknown or repeated name.
    """
    names = registry.names() if asked is None else tuple(asked)
    if isinstance(asked, str) or not (names or empty):
        raise ValueError(f"{field}: expected a non-empty list of names, got {asked!r}")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{field}: {', '.join(repeated)} named twice")
    unknown = [name for name in names if name not in registry]
    if unknown:
        raise ValueError(
            f"{field}: unknown {unknown[0]!r} (the {registry.kind} names are "
            f"{', '.join(registry.names())})"
        )
    return names


def _first(workload: ElasticWorkload, limit: int | None) -> ElasticWorkload:
    """The first ``limit`` jobs of ``workload`` (all of them for ``None``).

    Raises
    ------
    ValueError
        On a ``limit`` that is not a whole number >= 1.
    """
    if limit is None:
        return workload
    if not is_whole(limit) or limit < 1:
        raise ValueError(f"limit: expected a whole number >= 1, got {limit!r}")
    return workload.replace(jobs=workload.jobs[: int(limit)])


def _inputs(
    workload: Workload,
    cluster: ElasticCluster | None,
    params: ElasticSimParams | None,
    limit: int | None,
) -> tuple[ElasticWorkload, ElasticCluster, ElasticSimParams, str | None]:
    """The jobs (read from their file if a path, cut to the first ``limit``), the cluster
    and the settings a run takes (the defaults for ``None``), and the file read, if any.

    Raises
    ------
    TypeError, ValueError
        On an argument of the wrong type, or a ``limit`` that is not a whole number >= 1.
    """
    from ddlsched.algorithms.elastic import ElasticSimParams
    from ddlsched.core.data import resolve_trace

    source = None
    if isinstance(workload, str | os.PathLike):
        source = str(resolve_trace(workload))
        workload = load_workload(source)
    elif not isinstance(workload, ElasticWorkload):
        raise TypeError(
            f"workload: expected an ElasticWorkload or a Pollux workload CSV path, got "
            f"{type(workload).__name__}"
        )
    cluster = ElasticCluster() if cluster is None else cluster
    params = ElasticSimParams() if params is None else params
    expected = (("cluster", cluster, ElasticCluster), ("params", params, ElasticSimParams))
    for name, value, kind in expected:
        if not isinstance(value, kind):
            raise TypeError(f"{name}: expected {kind.__name__}, got {type(value).__name__}")
    return _first(workload, limit), cluster, params, source


def _policy(policy: str | ElasticPolicy) -> ElasticPolicy:
    """A fresh policy of the registry by name, or the object given once it is seen to have
    the ``name`` and ``allocate`` the simulator reads.

    Raises
    ------
    ValueError
        On an unknown name.
    TypeError
        On an object without them.
    """
    if isinstance(policy, str):
        from ddlsched.algorithms.elastic import ELASTIC_POLICIES

        (name,) = _checked_names("policy", [policy], ELASTIC_POLICIES)
        return ELASTIC_POLICIES[name]()
    if not callable(getattr(policy, "allocate", None)) or not hasattr(policy, "name"):
        raise TypeError(
            f"policy: expected a name or an object with a name and allocate(state), got "
            f"{type(policy).__name__}"
        )
    return policy


def _check_progress(progress: RunProgress | None) -> None:
    """Refuse a ``progress`` that cannot be called (it would fail only after the first
    round or run)."""
    if progress is not None and not callable(progress):
        raise TypeError(
            f"progress: expected a callable progress(done, total), got {type(progress).__name__}"
        )
