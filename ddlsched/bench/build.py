"""How the library is built: its families, each instance regenerated from its family, and
each certificate made by the project's own solvers and bounds.

One command builds the whole library (``python -m ddlsched.bench.build --out FOLDER``);
``--only NAME`` rebuilds one entry, the command every certificate records. Tiers:

- **S** (4-12 jobs): integral instances (the ``exact-friendly`` preset) on 1-4 small
  servers, batch and spread arrivals, weighted and typed; the exact solve's optimum, kept
  only when proven and equal to :func:`ddlsched.bench.brute.brute_force_optimum`'s.
- **M** (16-64 jobs): integral and realistic (``--load 1.0``), batch and spread, typed
  and weighted, on 4 x 4 and 4 x 8 GPUs; kept only when the exact solve proves its optimum
  within :data:`EXACT_TIME_LIMIT`. The seeds listed are those it proved on a 2-core
  machine (the 32-job batch instances of seeds 0 and 1 on 4 x 4 GPUs, for example, were
  not proven in 30 s and are not in the library).
- **T, elastic** (``T-pollux-workload-N``, :data:`ELASTIC_WORKLOADS`): a Pollux workload on
  the Pollux study's 16 nodes x 4 GPUs, problem ``elastic`` (:mod:`ddlsched.bench.elastic`):
  the elastic sandwich (:func:`ddlsched.elastic.sandwich`, :data:`ELASTIC_POLICIES`,
  both offline schedules, :data:`ELASTIC_LAGRANGIAN_STEPS`), its best checked run stored.
- **L** (100-200 jobs: realistic jobs in a batch or at offered load 2, integral ones in
  a batch or at load 1, weighted, typed) and **T** (the Philly trace's first 500 and 5,000
  jobs on 32 x 8 GPUs, as recorded and at offered load 0.9): problem A's sandwich
  (:func:`ddlsched.sandwich.study_sandwich`, full effort, seed 0): the best lower bound on
  the flow and the best verified schedule.

A family is written in the entry (:attr:`~ddlsched.bench.library.Entry.family`) as
``{"generator": <GeneratorConfig settings>, "seed": s}``, optionally with ``"weights":
[...]`` (each job's weight drawn uniformly from them with ``numpy.random.default_rng(s)``,
the generator drawing unit weights), or as ``{"trace": {...}}`` (the arguments of
:func:`ddlsched.api.replay_trace`); :func:`regenerate` turns it back into the instance.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ddlsched.bench.elastic import (
    ElasticCertificate,
    ElasticEntry,
    ElasticInstance,
    run_document,
    total_jct,
)
from ddlsched.bench.library import (
    TIERS,
    Certificate,
    Entry,
    elastic_entries,
    write_elastic_entry,
    write_entry,
    write_index,
)
from ddlsched.core.jsontypes import JsonObject, JsonValue
from ddlsched.core.model import InputError, Instance

EXACT_TIME_LIMIT: float | None = 30.0
"""Seconds the exact solve gets per instance of tiers S and M; an instance it does not
prove within them is left out of the library."""
SANDWICH_EFFORT, SANDWICH_SEED = "full", 0
"""The settings of the sandwich of tiers L and T (:func:`ddlsched.sandwich.study_sandwich`)."""
WEIGHTS = [1, 2, 3]
"""The weights a weighted family draws from."""

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Family:
    """Instances drawn alike, one per seed.

    Attributes
    ----------
    prefix
        The names' start (``"S-ef"``): tier, then a short name of the settings.
    tier
        One of :data:`~ddlsched.bench.library.TIERS`.
    settings
        :class:`~ddlsched.core.generators.GeneratorConfig` settings (a ``preset`` key
        allowed), or the arguments of :func:`ddlsched.api.replay_trace` for a trace.
    seeds
        One instance per seed.
    weighted
        Draw each job's weight from :data:`WEIGHTS`.
    """

    prefix: str
    tier: str
    settings: JsonObject
    seeds: tuple[int, ...] = (0, 1)
    weighted: bool = False

    def members(self) -> Iterator[tuple[str, JsonObject]]:
        """Each instance's name and family document."""
        for seed in self.seeds:
            if self.tier == "T":
                yield f"{self.prefix}", {"trace": self.settings}
                continue
            family: JsonObject = {"generator": self.settings, "seed": seed}
            if self.weighted:
                family["weights"] = list[JsonValue](WEIGHTS)
            yield f"{self.prefix}-{_shape(self.settings)}-s{seed}", family


def _shape(settings: JsonObject) -> str:
    """``2x4-j8`` (servers x GPUs, jobs), with ``-l1.0`` for a load."""
    text = f"{settings['servers']}x{settings['gpus_per_server']}-j{settings['num_jobs']}"
    return text if settings.get("load") is None else f"{text}-l{settings['load']}"


def _ef(servers: int, gpus: int, jobs: int, load: float | None = None) -> JsonObject:
    settings: JsonObject = {
        "preset": "exact-friendly",
        "num_jobs": jobs,
        "servers": servers,
        "gpus_per_server": gpus,
    }
    if load is not None:
        settings["load"] = load
    return settings


def _realistic(servers: int, gpus: int, jobs: int, load: float | None = 1.0) -> JsonObject:
    settings: JsonObject = {"num_jobs": jobs, "servers": servers, "gpus_per_server": gpus}
    if load is not None:
        settings["load"] = load
    return settings


def _typed(settings: JsonObject, kinds: list[JsonValue]) -> JsonObject:
    return {**settings, "gpu_types": kinds}


def _philly(jobs: int, load: float | None) -> JsonObject:
    settings: JsonObject = {
        "trace": "philly_jobs.csv",
        "servers": 32,
        "gpus_per_server": 8,
        "limit": jobs,
    }
    if load is not None:
        settings["target_load"] = load
    return settings


TYPES_2 = list[JsonValue]([["v100", 1], ["k80", 1]])
TYPES_4 = list[JsonValue]([["v100", 2], ["k80", 2]])
TYPES_8 = list[JsonValue]([["v100", 4], ["k80", 4]])

FAMILIES: tuple[Family, ...] = (
    *(Family("S-ef", "S", _ef(1, 4, n), seeds=(0, 1, 2)) for n in (6, 8, 10, 12)),
    *(Family("S-ef", "S", _ef(1, 8, n, 1.0)) for n in (8, 12)),
    *(Family("S-ef", "S", _ef(2, 2, n), seeds=(0, 1, 2)) for n in (4, 6, 8)),
    *(Family("S-ef", "S", _ef(2, 2, n, 1.0)) for n in (6, 8)),
    *(Family("S-ef", "S", _ef(2, 4, n)) for n in (6, 8)),
    Family("S-ef", "S", _ef(4, 2, 6)),
    Family("S-efw", "S", _ef(2, 2, 6), weighted=True),
    Family("S-efw", "S", _ef(1, 4, 8, 1.0), weighted=True),
    Family("S-eft", "S", _typed(_ef(2, 2, 6), TYPES_2)),
    Family("S-eft", "S", _typed(_ef(2, 4, 6, 1.0), TYPES_2)),
    Family("M-ef", "M", _ef(4, 4, 16), seeds=(0, 1, 2)),
    Family("M-ef", "M", _ef(4, 4, 24), seeds=(0, 1, 2, 3, 4)),
    Family("M-ef", "M", _ef(4, 4, 32), seeds=(2,)),
    *(Family("M-ef", "M", _ef(4, 8, n), seeds=(0, 1, 2, 3, 4)) for n in (24, 32)),
    Family("M-ef", "M", _ef(4, 4, 24, 1.0), seeds=(0, 1, 2)),
    Family("M-ef", "M", _ef(4, 4, 32, 1.0), seeds=(2,)),
    Family("M-ef", "M", _ef(4, 8, 48, 1.0)),
    *(Family("M-re", "M", _realistic(4, 4, n)) for n in (16, 32)),
    Family("M-re", "M", _realistic(4, 8, 64)),
    Family("M-eft", "M", _typed(_ef(4, 4, 16, 1.0), TYPES_4)),
    Family("M-ret", "M", _typed(_realistic(4, 4, 16), TYPES_4)),
    Family("M-ret", "M", _typed(_realistic(4, 8, 24), TYPES_4)),
    Family("M-efw", "M", _ef(4, 4, 16), seeds=(0, 1, 2), weighted=True),
    Family("M-efw", "M", _ef(4, 4, 24), seeds=(1, 2), weighted=True),
    *(Family("L-re", "L", _realistic(8, 8, n, None)) for n in (100, 200)),
    *(Family("L-re", "L", _realistic(16, 8, n, 2.0)) for n in (100, 200)),
    *(Family("L-ef", "L", _ef(8, 4, n)) for n in (100, 200)),
    *(Family("L-ef", "L", _ef(8, 4, n, 1.0)) for n in (100, 200)),
    Family("L-rew", "L", _realistic(8, 8, 150, None), weighted=True),
    Family("L-ret", "L", _typed(_realistic(8, 8, 150, 2.0), TYPES_8)),
    Family("T-philly-32x8-j500", "T", _philly(500, None), seeds=(0,)),
    Family("T-philly-32x8-j500-l0.9", "T", _philly(500, 0.9), seeds=(0,)),
    Family("T-philly-32x8-j5000", "T", _philly(5000, None), seeds=(0,)),
    Family("T-philly-32x8-j5000-l0.9", "T", _philly(5000, 0.9), seeds=(0,)),
)
"""Every family of the library, in tier order."""

ELASTIC_WORKLOADS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
"""The Pollux workloads of tier T (``T-pollux-workload-N``, problem ``elastic``): all eight
(each sandwich about a minute on a 2-core machine, most of it the Lagrangian's steps)."""
ELASTIC_POLICIES: tuple[str, ...] = ()
"""The online policies whose runs may give the elastic sandwich's upper end: none, since
an offline schedule of :mod:`ddlsched.algorithms.elastic.offline` beats every registered
policy on all eight workloads (``docs/elastic.rst``) and each policy run costs a minute."""
ELASTIC_LAGRANGIAN_STEPS = 100
"""Supergradient steps of the elastic Lagrangian bound (a fixed count: the bound does not
depend on the machine's speed)."""
ELASTIC_CLUSTER: JsonObject = {"num_nodes": 16, "gpus_per_node": 4}
"""The Pollux study's cluster, ``ddlsched simulate``'s default for these workloads."""


def elastic_planned(only: set[str] | None = None) -> list[tuple[str, JsonObject]]:
    """``(name, family)`` of every elastic entry to build."""
    chosen = []
    for number in ELASTIC_WORKLOADS:
        name = f"T-pollux-workload-{number}"
        family: JsonObject = {"workload": f"workload-{number}.csv", "cluster": ELASTIC_CLUSTER}
        if only is None or name in only:
            chosen.append((name, family))
    return chosen


def regenerate_elastic(family: JsonObject) -> ElasticInstance:
    """The instance of an elastic entry's family: the shipped workload on the cluster, the
    simulator's default rounds and restarts.

    Raises
    ------
    InputError
        On a family without a workload file or cluster, or a file the loader refuses.
    """
    from ddlsched.core.elastic import ElasticCluster
    from ddlsched.elastic import load_workload

    workload, cluster = family.get("workload"), family.get("cluster")
    if not isinstance(workload, str) or not isinstance(cluster, dict):
        raise InputError("family: expected {'workload': file, 'cluster': {...}}")
    nodes, gpus = cluster.get("num_nodes"), cluster.get("gpus_per_node")
    if not isinstance(nodes, int) or not isinstance(gpus, int):
        raise InputError(f"family.cluster: expected whole num_nodes and gpus_per_node: {cluster}")
    return ElasticInstance(load_workload(workload), ElasticCluster(nodes, gpus))


def elastic_certificate(
    name: str, instance: ElasticInstance, progress: Progress
) -> ElasticCertificate:
    """The elastic sandwich (:func:`ddlsched.elastic.sandwich`) as a certificate: its proven
    lower bound, and its best checked run (run again to keep its rounds: the runs are
    deterministic) as the upper bound."""
    from ddlsched import elastic
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES as ONLINE
    from ddlsched.algorithms.elastic.offline import OFFLINE_ELASTIC_SCHEDULES
    from ddlsched.experiments.elastic import run_elastic

    began = time.monotonic()
    sandwich = elastic.sandwich(
        instance.workload,
        ELASTIC_POLICIES,
        cluster=instance.cluster,
        params=instance.params(),
        lagrangian_steps=ELASTIC_LAGRANGIAN_STEPS,
        progress=lambda done, total: progress(
            f"{name}: run {done}/{total} ({time.monotonic() - began:.0f} s)"
        ),
    )
    if sandwich.interrupted:
        raise KeyboardInterrupt
    method = sandwich.upper_method
    factory = ONLINE[method] if method in ONLINE else OFFLINE_ELASTIC_SCHEDULES[method]
    run = run_elastic(instance.fitted(), factory(), instance.cluster, instance.params())
    upper = total_jct(instance, run.result.completion)
    if not run.verified or not math.isclose(upper, sandwich.upper, rel_tol=1e-9):
        raise RuntimeError(f"{name}: the rerun of {method} is not the sandwich's checked run")
    lower = min(sandwich.lower, upper)
    settings: JsonObject = {
        "method": "elastic_sandwich",
        "policies": list[JsonValue](ELASTIC_POLICIES),
        "offline": list[JsonValue](OFFLINE_ELASTIC_SCHEDULES.names()),
        "lagrangian_steps": ELASTIC_LAGRANGIAN_STEPS,
        "steering_upper_bound": upper,
        "fast_bound": sandwich.bound.value,
        "lagrangian": sandwich.lagrangian,
    }
    version, produced = _producer()
    return ElasticCertificate(
        status="optimal" if math.isclose(lower, upper, rel_tol=1e-6) else "interval",
        lower_bound=lower,
        lower_bound_name=sandwich.lower_method,
        lower_bound_settings=settings,
        upper_bound=upper,
        upper_method=method,
        run=run_document(run.result),
        command=_command(name),
        version=version,
        produced=produced,
    )


def regenerate(family: JsonObject) -> Instance:
    """The instance of an entry's family (module docstring).

    Raises
    ------
    InputError
        On a family of neither form, or settings the generator or reader refuses.
    """
    from ddlsched.core.generators import GeneratorConfig, generate, with_preset, with_tuples

    trace = family.get("trace")
    if isinstance(trace, dict):
        from ddlsched import api

        arguments = dict(trace)
        path = arguments.pop("trace")
        if not isinstance(path, str):
            raise InputError(f"family.trace.trace: expected a file name, got {path!r}")
        return api.replay_trace(path, **arguments).instance
    settings, seed = family.get("generator"), family.get("seed")
    if not isinstance(settings, dict) or not isinstance(seed, int):
        raise InputError("family: expected {'generator': {...}, 'seed': s} or {'trace': {...}}")
    instance = generate(GeneratorConfig(**with_tuples(with_preset(settings))), seed)
    weights = family.get("weights")
    if weights is None:
        return instance
    if not isinstance(weights, list) or not all(isinstance(w, int | float) for w in weights):
        raise InputError(f"family.weights: expected a list of numbers, got {weights!r}")
    drawn = np.random.default_rng(seed).choice(np.array(weights, dtype=float), instance.num_jobs)
    jobs = tuple(job.replace(weight=float(w)) for job, w in zip(instance.jobs, drawn, strict=True))
    return instance.replace(jobs=jobs)


def _command(name: str) -> str:
    return f"python -m ddlsched.bench.build --only {name} --out LIBRARY"


def _producer() -> tuple[str, str]:
    from ddlsched.provenance import package_version

    return package_version(), datetime.date.today().isoformat()


def exact_certificate(name: str, instance: Instance, progress: Progress) -> Certificate | None:
    """The exact solve's certificate (the racing MILP and CP-SAT, :data:`EXACT_TIME_LIMIT`),
    or ``None`` when it does not prove the optimum."""
    from ddlsched import api
    from ddlsched.core.params import ExactParams
    from ddlsched.proofs_checks.verifier import verify

    result = api.solve(instance, "exact", params=ExactParams(time_limit=EXACT_TIME_LIMIT))
    if not result.proven_optimal or result.schedule is None or result.lower_bound is None:
        progress(f"{name}: not proven in {EXACT_TIME_LIMIT} s ({result.status}), left out")
        return None
    report = verify(instance, result.schedule)
    if not report.feasible:
        raise RuntimeError(f"{name}: the exact schedule fails the verifier: {report.violations}")
    version, produced = _producer()
    upper = report.total_completion_time
    return Certificate(
        problem="A",
        status="optimal",
        lower_bound=min(result.lower_bound.value, upper),
        lower_bound_name=result.lower_bound.name,
        lower_bound_settings={"method": "exact", "time_limit": EXACT_TIME_LIMIT},
        upper_bound=upper,
        schedule=result.schedule,
        command=_command(name),
        version=version,
        produced=produced,
    )


def sandwich_certificate(name: str, instance: Instance, progress: Progress) -> Certificate:
    """Problem A's sandwich as a certificate: the lower bound is the sandwich's flow bound
    plus ``sum w r``; ``optimal`` only when the home of proofs finds it meets the schedule
    (:meth:`~ddlsched.formulations.certify.BoundSet.proof`)."""
    from ddlsched.core.result import LowerBound, fixed_part
    from ddlsched.formulations.certify import BoundSet
    from ddlsched.proofs_checks.verifier import verify
    from ddlsched.sandwich import study_sandwich

    sandwich = study_sandwich(
        instance,
        preemptive=False,
        effort=SANDWICH_EFFORT,
        seed=SANDWICH_SEED,
        progress=lambda line: progress(f"{name}: {line}"),
        cache=False,
    )
    schedule = sandwich.upper.schedule
    if schedule is None:
        raise RuntimeError(f"{name}: the sandwich has no schedule")
    report = verify(instance, schedule)
    if not report.feasible:
        raise RuntimeError(f"{name}: the sandwich's schedule fails the verifier")
    fixed = fixed_part(instance)
    upper = report.total_completion_time
    lower = min(sandwich.lower.flow_value + fixed, upper)
    proof = (
        BoundSet.empty(instance).added(LowerBound(lower, sandwich.lower.name, True)).proof(upper)
    )
    settings: JsonObject = {
        "method": "study_sandwich",
        "effort": SANDWICH_EFFORT,
        "seed": SANDWICH_SEED,
        "bound": sandwich.lower.name,
        "steering_upper_bound": sandwich.upper.objective,
    }
    version, produced = _producer()
    return Certificate(
        problem="A",
        status="interval" if proof is None else "optimal",
        lower_bound=lower,
        lower_bound_name=sandwich.lower.name,
        lower_bound_settings=settings,
        upper_bound=upper,
        schedule=schedule,
        command=_command(name),
        version=version,
        produced=produced,
    )


def build_entry(name: str, tier: str, family: JsonObject, progress: Progress) -> Entry | None:
    """One entry, or ``None`` when its optimum is not proven (tiers S and M) or the brute
    force disagrees with the solver (tier S: reported, left out)."""
    from ddlsched.bench.brute import TooBigError, brute_force_optimum

    instance = regenerate(family)
    if tier in ("S", "M"):
        certificate = exact_certificate(name, instance, progress)
        if certificate is None:
            return None
        if tier == "S":
            try:
                brute = brute_force_optimum(instance).optimum
            except TooBigError as error:
                progress(f"{name}: the brute force cannot check it ({error}), left out")
                return None
            if not math.isclose(brute, certificate.upper_bound, rel_tol=1e-9):
                progress(f"{name}: brute force {brute!r} != solver {certificate.upper_bound!r}")
                return None
    else:
        certificate = sandwich_certificate(name, instance, progress)
    return Entry(name, tier, family, instance, certificate)


def planned(
    only: set[str] | None = None, tiers: set[str] | None = None
) -> list[tuple[str, str, JsonObject]]:
    """``(name, tier, family)`` of every entry to build, in tier order."""
    chosen = []
    for family in FAMILIES:
        if tiers is not None and family.tier not in tiers:
            continue
        for name, document in family.members():
            if only is None or name in only:
                chosen.append((name, family.tier, document))
    return chosen


def build(
    out: Path,
    only: set[str] | None = None,
    tiers: set[str] | None = None,
    progress: Progress = print,
) -> list[Entry]:
    """Build the chosen entries and write them, with the entries already in ``out`` that
    were not rebuilt, as the library at ``out``. Ctrl-C writes what is built so far.

    Raises
    ------
    InputError
        On an ``only`` name that is no family's member.
    """
    from ddlsched.bench.library import library

    todo = planned(only, tiers)
    elastic_todo = elastic_planned(only) if tiers is None or "T" in tiers else []
    if only is not None and len(todo) + len(elastic_todo) != len(only):
        made = {name for name, _, _ in todo} | {name for name, _ in elastic_todo}
        missing = sorted(only - made)
        raise InputError(f"--only: no family makes {missing[0]!r}")
    exists = (out / "index.json").exists()
    kept = {e.name: e for e in library(out)} if exists else {}
    kept_elastic = {e.name: e for e in elastic_entries(path=out)} if exists else {}
    began = time.monotonic()
    steps = len(todo) + len(elastic_todo)
    try:
        for k, (name, tier, family) in enumerate(todo, start=1):
            progress(f"[{k}/{steps}] {name} ({time.monotonic() - began:.0f} s)")
            kept.pop(name, None)
            item = build_entry(name, tier, family, progress)
            if item is not None:
                kept[name] = item
                write_entry(item, out)
            write_index(kept.values(), out, kept_elastic.values())
        for k, (name, family) in enumerate(elastic_todo, start=len(todo) + 1):
            progress(f"[{k}/{steps}] {name} ({time.monotonic() - began:.0f} s)")
            instance = regenerate_elastic(family)
            certificate = elastic_certificate(name, instance, progress)
            kept_elastic[name] = ElasticEntry(name, "T", family, instance, certificate)
            write_elastic_entry(kept_elastic[name], out)
            write_index(kept.values(), out, kept_elastic.values())
    except KeyboardInterrupt:
        progress("interrupted: the entries built so far are written")
    total = len(kept) + len(kept_elastic)
    progress(f"{total} entries in {out}, {time.monotonic() - began:.0f} s")
    return list(kept.values())


def main(argv: list[str] | None = None) -> int:
    """``python -m ddlsched.bench.build``: build the library (or ``--only`` some entries)."""
    parser = argparse.ArgumentParser(prog="python -m ddlsched.bench.build")
    parser.add_argument("--out", type=Path, required=True, help="the library folder")
    parser.add_argument("--only", action="append", help="build only this entry (repeatable)")
    parser.add_argument("--tier", action="append", choices=TIERS, help="only this tier")
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        build(
            args.out,
            None if args.only is None else set(args.only),
            None if args.tier is None else set(args.tier),
            say,
        )
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
