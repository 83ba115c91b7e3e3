"""The sandwich of a trace study (ddlsched.sandwich.study_sandwich): the same interval as
flow_sandwich at full effort, a wider one at fast effort, progress lines, Ctrl-C keeping
what finished, and the cache on disk (ddlsched.cache)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from ddlsched.algorithms import offline
from ddlsched.proofs_checks.verifier import verify

from ddlsched import GeneratorConfig, generate
from ddlsched.cache import CacheWarning, cache_dir
from ddlsched.core.model import Instance
from ddlsched.sandwich import (
    SandwichInterrupted,
    flow_sandwich,
    study_sandwich,
    study_sandwiches,
)
from tests.oracles import brute_force_a


def family(kind: str, seed: int, jobs: int = 8) -> Instance:
    """Small generated instances on 2 x 4 GPUs with jobs of 1 to 4 GPUs: ``batch`` (all
    released at 0), ``spread`` (Poisson arrivals at load 0.8), ``weighted`` (spread, with
    fractional weights and releases off the integers)."""
    config = GeneratorConfig.exact_friendly(jobs, 2, 4, load=None if kind == "batch" else 0.8)
    instance = generate(config, seed)
    if kind != "weighted":
        return instance
    rng = np.random.default_rng(seed)
    return instance.replace(
        jobs=tuple(
            job.replace(
                weight=float(rng.choice([0.5, 1.25, 3.0])),
                release=job.release + float(rng.uniform(0.0, 0.7)),
            )
            for job in instance.jobs
        )
    )


KINDS = ("batch", "spread", "weighted")


def entries() -> list[Path]:
    """The cache's entry files (and any temporary file left beside them)."""
    folder = cache_dir()
    return sorted(folder.rglob("*")) if folder.exists() else []


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_full_effort_is_flow_sandwich(kind: str) -> None:
    """At full effort each model's bound and upper value are flow_sandwich's (same bound,
    same verified schedule's total), whether problem A's upper side is computed for the
    preemptive model or shared from problem A's sandwich."""
    instance = family(kind, seed=3)
    for preemptive in (False, True):
        alone = study_sandwich(instance, preemptive=preemptive, cache=False)
        reference = flow_sandwich(instance, preemptive=preemptive)
        assert alone.lower.name == reference.lower.name
        assert alone.lower.flow_value == reference.lower.flow_value
        assert alone.upper.total_jct == reference.upper.total_jct
        assert alone.upper.objective == reference.upper.objective
    shared = study_sandwiches(instance, cache=False)
    for found in shared:
        reference = flow_sandwich(instance, preemptive=found.preemptive)
        assert found.lower.flow_value == reference.lower.flow_value
        assert found.upper.total_jct == reference.upper.total_jct


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", KINDS)
def test_fast_and_full_bounds_pin_the_brute_force_optimum(kind: str, seed: int) -> None:
    """On 3 jobs: fast lower <= full lower <= the optimum of problem A (enumeration) <=
    full upper <= fast upper; the preemptive model's bounds lie below the same optimum
    (a schedule of A is a preemptive one) and below their own upper end, and its upper end
    below problem A's at the same effort; every upper schedule passes the verifier with
    the reported total."""
    instance = family(kind, seed, jobs=3)
    releases = math.fsum(job.weight * job.release for job in instance.jobs)
    optimum = brute_force_a(instance) - releases
    slack = 1e-9 * max(1.0, optimum)
    uppers = {}
    for preemptive in (False, True):
        fast = study_sandwich(instance, preemptive=preemptive, effort="fast", cache=False)
        full = study_sandwich(instance, preemptive=preemptive, cache=False)
        assert fast.lower.flow_value <= full.lower.flow_value + slack
        assert full.lower.flow_value <= optimum + slack
        assert full.upper.total_jct <= fast.upper.total_jct + slack
        if not preemptive:
            assert optimum <= full.upper.total_jct + slack
        uppers[preemptive] = (fast.upper.total_jct, full.upper.total_jct)
        for found in (fast, full):
            assert found.lower.flow_value <= found.upper.total_jct + slack
            report = verify(instance, found.upper.schedule)
            assert report.feasible, report.violations
            assert math.isclose(report.total_jct, found.upper.total_jct, rel_tol=1e-9)
    for effort in (0, 1):  # a schedule of A is a preemptive one
        assert uppers[True][effort] <= uppers[False][effort] + slack


def test_an_unknown_effort_is_refused_by_name() -> None:
    """An effort other than fast or full is refused, naming the value given."""
    with pytest.raises(ValueError, match=r"effort: .*'thorough'"):
        study_sandwich(family("batch", 0, jobs=2), preemptive=False, effort="thorough")


def test_the_cache_gives_the_same_figures_without_computing(monkeypatch) -> None:
    """A second call reads the cache: the same bound and schedule total, and neither side
    runs again (the upper side's function is made to fail)."""
    instance = family("spread", seed=1)
    first = study_sandwich(instance, preemptive=False, effort="fast")
    assert len([p for p in entries() if p.suffix == ".json"]) == 1

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("computed again")

    monkeypatch.setattr(offline, "best_upper_bound", refuse)
    again = study_sandwich(instance, preemptive=False, effort="fast")
    assert again.lower.flow_value == first.lower.flow_value
    assert again.lower.name == first.lower.name
    assert again.upper.total_jct == first.upper.total_jct
    assert again.upper.method == first.upper.method
    assert again.upper.schedule == first.upper.schedule


def _computations(monkeypatch) -> list[bool]:
    """Records each run of the upper side (its model), so a cache miss shows."""
    runs: list[bool] = []
    original = offline.best_upper_bound

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(kwargs["preemptive"])
        return original(*args, **kwargs)

    monkeypatch.setattr(offline, "best_upper_bound", counting)
    return runs


def test_the_cache_is_keyed_by_every_setting(monkeypatch) -> None:
    """A changed seed, effort, restart cost, model or instance misses the cache (the upper
    side runs again); the same settings hit it; cache=False neither reads nor writes."""
    instance = family("spread", seed=2, jobs=5)
    runs = _computations(monkeypatch)
    settings = {"preemptive": True, "effort": "fast", "seed": 0, "restart_cost": 5.0}
    study_sandwich(instance, **settings)
    assert len(runs) == 1
    study_sandwich(instance, **settings)
    assert len(runs) == 1
    changes = [
        {"seed": 1},
        {"effort": "full"},
        {"restart_cost": 6.0},
        {"preemptive": False},
    ]
    for change in changes:
        study_sandwich(instance, **{**settings, **change})
    assert len(runs) == 1 + len(changes)
    heavier = instance.replace(jobs=(instance.jobs[0].replace(weight=2.0), *instance.jobs[1:]))
    study_sandwich(heavier, **settings)
    assert len(runs) == 2 + len(changes)
    stored = entries()
    study_sandwich(heavier, **settings, cache=False)
    assert len(runs) == 3 + len(changes)
    assert entries() == stored


def _tamper(path: Path, change, rehash: bool) -> None:  # type: ignore[no-untyped-def]
    """Edit a cache entry's body; ``rehash``: and write the body's hash to match (a
    deliberate edit, which only the checks of the content can catch)."""
    import hashlib

    document = json.loads(path.read_text())
    change(document["body"])
    if rehash:
        canonical = json.dumps(document["body"], sort_keys=True, separators=(",", ":"))
        document["sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    path.write_text(json.dumps(document))


def _earlier_end(body) -> None:  # type: ignore[no-untyped-def]
    """The first job ends a second sooner, and the totals say so."""
    body["upper"]["schedule"]["jobs"][0]["end"] -= 1.0
    body["upper"]["objective"] -= 1.0
    body["upper"]["total_jct"] -= 1.0


def _higher_bound(body) -> None:  # type: ignore[no-untyped-def]
    body["lower"]["flow_value"] = body["upper"]["total_jct"] * 2


def _not_json(path: Path) -> None:
    path.write_text(path.read_text()[:-40])


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: _tamper(path, _earlier_end, rehash=False),
        lambda path: _tamper(path, _earlier_end, rehash=True),
        lambda path: _tamper(path, _higher_bound, rehash=True),
        _not_json,
    ],
    ids=["edited", "edited-and-rehashed", "bound-above-schedule", "truncated"],
)
@pytest.mark.parametrize("preemptive", [False, True])
def test_a_tampered_entry_is_ignored_and_recomputed(monkeypatch, damage, preemptive) -> None:
    """An entry edited (its hash left or made to match), with a bound above its schedule,
    or cut short is ignored with a CacheWarning and recomputed: the figures are the true
    ones again, and the entry is rewritten."""
    instance = family("batch", seed=4, jobs=5)
    first = study_sandwich(instance, preemptive=preemptive, effort="fast")
    (path,) = [p for p in entries() if p.suffix == ".json"]
    damage(path)
    runs = _computations(monkeypatch)
    with pytest.warns(CacheWarning, match="ignored"):
        again = study_sandwich(instance, preemptive=preemptive, effort="fast")
    assert runs == [preemptive]
    assert again.upper.total_jct == first.upper.total_jct
    assert again.lower.flow_value == first.lower.flow_value
    assert json.loads(path.read_text())["body"]["upper"]["total_jct"] == first.upper.total_jct


def test_the_preemptive_model_reads_problem_as_upper_side_from_the_cache(monkeypatch) -> None:
    """After problem A's sandwich, the preemptive one runs only its own candidates (given
    problem A's answer as base) and still equals the preemptive model's sandwich computed
    alone."""
    instance = family("spread", seed=5)
    alone = flow_sandwich(instance, preemptive=True)
    study_sandwich(instance, preemptive=False)
    bases = []
    original = offline.best_upper_bound

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        bases.append(kwargs.get("base"))
        return original(*args, **kwargs)

    monkeypatch.setattr(offline, "best_upper_bound", recording)
    shared = study_sandwich(instance, preemptive=True)
    assert len(bases) == 1 and bases[0] is not None
    assert shared.upper.total_jct == alone.upper.total_jct
    assert shared.lower.flow_value == alone.lower.flow_value


def test_progress_names_each_phase_of_both_sides() -> None:
    """Progress lines name the model, each fast bound, each candidate, the local search
    and the Lagrangian's rounds, with seconds so far."""
    lines: list[str] = []
    study_sandwich(family("spread", seed=6), preemptive=False, progress=lines.append)
    text = "\n".join(lines)
    for phase in ("lower: job:", "lower: rank:", "upper: list:time:", "upper: search:"):
        assert f"problem A {phase}" in text
    assert "lower: start-lagrangian: round 0/300" in text
    assert all(line.endswith(" s") for line in lines)


def _interrupt_at(marker: str):  # type: ignore[no-untyped-def]
    """A progress callback that presses Ctrl-C at the first line containing ``marker``."""

    def progress(line: str) -> None:
        if marker in line:
            raise KeyboardInterrupt

    return progress


@pytest.mark.parametrize("preemptive", [False, True])
def test_ctrl_c_on_the_upper_side_keeps_the_lower_and_stores_nothing(preemptive) -> None:
    """Ctrl-C as the first candidate starts: the interrupt carries the fast bounds'
    best (valid: at most the true sandwich's) and no upper end, says the upper side was
    cut short, and leaves no cache file (nor a temporary one)."""
    instance = family("spread", seed=7)
    with pytest.raises(SandwichInterrupted) as stop:
        study_sandwich(instance, preemptive=preemptive, progress=_interrupt_at("upper: "))
    assert stop.value.upper is None and stop.value.sandwich is None
    assert stop.value.lower is not None
    assert "upper side cut short" in stop.value.cut
    assert (
        stop.value.lower.flow_value
        <= flow_sandwich(instance, preemptive=preemptive).lower.flow_value
    )
    assert entries() == [] or all(p.is_dir() for p in entries())


def test_ctrl_c_in_the_search_keeps_the_best_verified_schedule_so_far() -> None:
    """Ctrl-C as the local search starts: the sandwich kept has the fast bounds and the best
    schedule verified so far (the verifier accepts it, its total at least the finished
    search's), marked interrupted; nothing is cached."""
    instance = family("spread", seed=8)
    with pytest.raises(SandwichInterrupted) as stop:
        study_sandwich(instance, preemptive=False, progress=_interrupt_at("upper: search:"))
    kept = stop.value.sandwich
    assert kept is not None and "upper side" in kept.interrupted
    assert "interrupted (local search after 0/" in kept.upper.notes[-1]
    report = verify(instance, kept.upper.schedule)
    assert report.feasible and math.isclose(report.total_jct, kept.upper.total_jct)
    finished = flow_sandwich(instance, preemptive=False)
    assert kept.upper.total_jct >= finished.upper.total_jct
    assert not [p for p in entries() if p.is_file()]


@pytest.mark.parametrize("effort", ["fast", pytest.param("full", marks=pytest.mark.slow)])
@pytest.mark.parametrize("restart_cost", [0.0, 1e5])
@pytest.mark.parametrize("kind", KINDS)
def test_the_preemptive_upper_end_is_at_most_problem_as(
    kind: str, restart_cost: float, effort: str
) -> None:
    """A schedule of problem A is one of the preemptive model, so the preemptive model's
    upper end is at most problem A's at the same effort, also when resuming is so dear
    that every preemptive candidate loses to a list schedule."""
    instance = family(kind, seed=9)
    a, preemptive = (
        study_sandwich(
            instance, preemptive=p, effort=effort, restart_cost=restart_cost, cache=False
        )
        for p in (False, True)
    )
    assert preemptive.upper.total_jct <= a.upper.total_jct * (1 + 1e-12)
