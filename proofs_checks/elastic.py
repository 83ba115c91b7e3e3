"""An independent check of an elastic run, recomputed from its record and the model.

:func:`check_elastic` shares no code with the simulator: it imports only the
data model (:mod:`ddlsched.core.elastic`), takes the per-round allocations a
run recorded and recomputes, with its own integration, everything the run
claims: no node holds more GPUs than it has in any round, nor any GPU type
more than its nodes hold; every job runs on nodes of one GPU type; no job runs
before its arrival or after its completion; a restart delay follows every
placement change (a move to another type included); each job's progress at
every round's end, at its type's speed; that it reaches exactly its target at
its reported completion time; and the mean JCT.

A type's speed is recomputed here from the shipped Gavel throughputs: the
geometric mean over the matched Gavel model's one-GPU rows of
``steps_per_second(v100) / steps_per_second(type)``, over the least of those
means among the types, is the slowdown, and the goodput is divided by it. Only
the model-to-Gavel mapping and the list of types (data, not code) are read from
the data model.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from typing import Protocol

from ddlsched.core.data import data_path
from ddlsched.core.elastic import (
    ELASTIC_GPU_TYPES,
    GAVEL_MATCH,
    Application,
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    load_application,
)

__all__ = ["check_elastic"]

TOLERANCE = 1e-6
"""Relative tolerance of recomputed times and progress."""


class _Allocation(Protocol):
    """One job's allocation in a round, as the check reads it."""

    @property
    def placement(self) -> tuple[tuple[int, int], ...]: ...

    @property
    def atomic_bsz(self) -> int: ...

    @property
    def accum_steps(self) -> int: ...

    @property
    def replicas(self) -> int: ...

    @property
    def num_nodes(self) -> int: ...


class _Record(Protocol):
    """One round of a run: its start, the allocations and the progress it claims."""

    @property
    def time(self) -> float: ...

    @property
    def allocations(self) -> Mapping[str, _Allocation]: ...

    @property
    def progress(self) -> Mapping[str, float]: ...


class _Settings(Protocol):
    """The simulation's settings the check reads (s)."""

    @property
    def round_length(self) -> float: ...

    @property
    def restart_time(self) -> float: ...


class _Run(Protocol):
    """What the check reads (read-only, so a frozen result matches). The simulator's own
    types are not imported: the check shares no code with what it checks."""

    @property
    def workload(self) -> ElasticWorkload: ...

    @property
    def cluster(self) -> ElasticCluster: ...

    @property
    def params(self) -> _Settings: ...

    @property
    def completion(self) -> Mapping[str, float]: ...

    @property
    def records(self) -> tuple[_Record, ...]: ...

    @property
    def mean_jct(self) -> float: ...


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def _speed(model: str, gpu_type: str | None) -> float:
    """Goodput factor of ``model`` on ``gpu_type``, from Gavel's file (1 when untyped)."""
    if gpu_type is None:
        return 1.0
    gavel = GAVEL_MATCH[model][0]
    speeds: dict[str, dict[str, float]] = {}
    with data_path("profiles", "gavel_throughputs.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["model"] == gavel and float(row["scale_factor"]) == 1.0:
                speeds.setdefault(row["batch_size"], {})[row["gpu_type"]] = float(
                    row["steps_per_second"]
                )

    def mean_log_slowdown(kind: str) -> float:
        logs = [
            math.log(s["v100"] / s[kind]) for s in speeds.values() if "v100" in s and kind in s
        ]
        return sum(logs) / len(logs)

    fastest = min(mean_log_slowdown(kind) for kind in ELASTIC_GPU_TYPES)
    return math.exp(fastest - mean_log_slowdown(gpu_type))


def _run_round(
    app: Application,
    progress: float,
    alloc: _Allocation,
    start: float,
    length: float,
    delay: float,
    speed: float = 1.0,
) -> tuple[float, float | None]:
    """Progress after one round and the completion instant if reached (own integration)."""
    target = app.target_progress
    t = start + min(delay, length)
    end = start + length
    while t < end:
        done_epochs = sum(1 for e in app.epoch_ends if e <= progress)
        stop = min(app.epoch_ends[done_epochs], target)
        batch = alloc.replicas * alloc.atomic_bsz * (alloc.accum_steps + 1)
        sqr, var = app.grad_stats(batch, done_epochs)
        scale = batch / app.init_batch_size
        per_iteration = (var + sqr) / (var / scale + sqr)
        perf = app.perf
        grad = perf.alpha_grad + perf.beta_grad * alloc.atomic_bsz
        if alloc.replicas == 1:
            sync = 0.0
        elif alloc.num_nodes == 1:
            sync = perf.alpha_local + perf.beta_local * max(alloc.replicas - 2, 0)
        else:
            sync = perf.alpha_node + perf.beta_node * max(alloc.replicas - 2, 0)
        step = (grad**perf.gamma + sync**perf.gamma) ** (1 / perf.gamma)
        rate = speed * float(per_iteration) / (alloc.accum_steps * grad + step)
        if t + (stop - progress) / rate <= end:
            t += (stop - progress) / rate
            progress = stop
            if stop >= target:
                return progress, t
        else:
            progress += rate * (end - t)
            t = end
    return progress, None


def check_elastic(result: _Run) -> list[str]:
    """Every violation found in a run (empty: the run is valid and its figures are right).

    Parameters
    ----------
    result
        An :class:`~ddlsched.algorithms.elastic.simulator.ElasticResult` (or anything
        with the same fields).

    Returns
    -------
    list of str
        One message per violation.
    """
    problems: list[str] = []
    cluster, params = result.cluster, result.params
    node_types = tuple(getattr(cluster, "node_types", ()) or ())
    jobs = {job.name: job for job in result.workload.jobs}
    apps = {name: load_application(job.model, job.epochs) for name, job in jobs.items()}
    speeds: dict[tuple[str, str | None], float] = {}
    progress = dict.fromkeys(jobs, 0.0)
    finished: dict[str, float] = {}
    last: dict[str, _Allocation] = {}
    pending_delay = dict.fromkeys(jobs, 0.0)
    length = params.round_length
    for number, record in enumerate(result.records):
        start = record.time
        if number and start <= result.records[number - 1].time:
            problems.append(f"round {number}: time {start} not after the previous round")
        used = [0] * cluster.num_nodes
        for name, alloc in record.allocations.items():
            if name not in jobs:
                problems.append(f"round at {start}: unknown job {name!r}")
                continue
            if jobs[name].submit_time > start:
                problems.append(f"round at {start}: {name} runs before its arrival")
            if name in finished:
                problems.append(f"round at {start}: {name} runs after completing")
                continue
            types = set()
            for node, gpus in alloc.placement:
                if not 0 <= node < cluster.num_nodes or gpus < 1:
                    problems.append(f"round at {start}: {name} on bad node/GPUs {node}/{gpus}")
                    continue
                used[node] += gpus
                types.add(node_types[node] if node_types else None)
            if len(types) > 1:
                problems.append(
                    f"round at {start}: {name} spans GPU types {sorted(map(str, types))}"
                )
            gpu_type = min(types, key=str) if types else None
            key = (jobs[name].model, gpu_type)
            if key not in speeds:
                speeds[key] = _speed(*key)
            previous = last.get(name)
            if previous is None or previous.placement != alloc.placement:
                pending_delay[name] = params.restart_time
            delay = pending_delay[name]
            pending_delay[name] = max(delay - length, 0.0)
            progress[name], done = _run_round(
                apps[name], progress[name], alloc, start, length, delay, speeds[key]
            )
            if done is not None:
                finished[name] = done
        problems.extend(_capacity_problems(used, node_types, cluster.gpus_per_node, start))
        for name, claimed in record.progress.items():
            if name in jobs and not _close(claimed, progress[name]):
                problems.append(
                    f"round at {start}: {name} progress {claimed} recorded, {progress[name]} "
                    "recomputed"
                )
        last = {name: alloc for name, alloc in record.allocations.items()}
    problems.extend(_completion_problems(result, jobs, apps, progress, finished))
    return problems


def _capacity_problems(
    used: list[int], node_types: tuple[str, ...], gpus_per_node: int, start: float
) -> list[str]:
    """GPUs held beyond a node's, or beyond a GPU type's nodes', in the round at ``start``."""
    problems = [
        f"round at {start}: node {node} holds {count} GPUs > {gpus_per_node}"
        for node, count in enumerate(used)
        if count > gpus_per_node
    ]
    for gpu_type in sorted(set(node_types)):
        nodes = [n for n, t in enumerate(node_types) if t == gpu_type]
        held = sum(used[n] for n in nodes)
        if held > len(nodes) * gpus_per_node:
            problems.append(
                f"round at {start}: type {gpu_type} holds {held} GPUs > "
                f"{len(nodes) * gpus_per_node}"
            )
    return problems


def _completion_problems(
    result: _Run,
    jobs: Mapping[str, ElasticJob],
    apps: Mapping[str, Application],
    progress: Mapping[str, float],
    finished: Mapping[str, float],
) -> list[str]:
    """Targets not reached, completions not as recomputed, and the mean JCT."""
    problems = []
    for name, job in jobs.items():
        target = apps[name].target_progress
        if not _close(progress[name], target):
            problems.append(f"{name}: progress {progress[name]} never reaches target {target}")
        claimed = result.completion.get(name)
        if name not in finished or claimed is None:
            problems.append(
                f"{name}: not completed (recomputed {finished.get(name)}, reported {claimed})"
            )
        elif not _close(claimed, finished[name]):
            problems.append(f"{name}: completion {claimed} reported, {finished[name]} recomputed")
        elif claimed < job.submit_time:
            problems.append(f"{name}: completes before its arrival")
    if not problems:
        mean = sum(finished[n] - j.submit_time for n, j in jobs.items()) / len(jobs)
        if not _close(mean, result.mean_jct):
            problems.append(f"mean JCT {result.mean_jct} reported, {mean} recomputed")
    return problems
