"""The memory guards: every model's memory is estimated from its size and checked against
the limit before it is built; a bound that stays valid on a coarser grid coarsens instead,
with a note. Nothing here depends on the machine's speed or memory: the limits are set
so low that any model is over them, and the builds are replaced by stand-ins that fail."""

from __future__ import annotations

import dataclasses
import math

import pytest
from ddlsched.formulations import (
    continuous,
    cpsat,
    elastic_lagrangian,
    lower_bounds,
    milp,
    portfolio,
    start_lagrangian,
)
from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, lp_bound
from ddlsched.formulations.memory import (
    A2_MILP,
    CPSAT_INTERVALS,
    LP_BOUND,
    SLOTTED_MILP,
    START_LAGRANGIAN,
    Footprint,
    ModelTooLarge,
)
from ddlsched.formulations.start_lagrangian import (
    StartLagrangianSettings,
    start_lagrangian_bound,
)

from ddlsched import ExactParams, Problem
from ddlsched.core.elastic import ElasticJob
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job

TINY = 1
"""A limit of one byte: below every model's fixed part."""


def _two_jobs() -> Instance:
    """Two 1-GPU jobs on one server of two GPUs, integral: every model of it is small
    enough to solve in a moment, so only the limit can refuse it."""
    jobs = (Job("a", 0.0, 3, 1.0, 1), Job("b", 1.0, 2, 1.0, 1))
    return Instance(Cluster((2,), 1.0, 1.0), jobs, slot=1.0)


class _Built(Exception):
    """Raised by a stand-in for a build the guard should have prevented."""


def _no_build(*args: object, **kwargs: object) -> None:
    raise _Built


def _assert_one_clear_line(refused: pytest.ExceptionInfo[ModelTooLarge]) -> None:
    message = str(refused.value)
    assert "\n" not in message
    assert "over the memory limit of 0 MiB" in message and "raise the limit" in message


@pytest.mark.parametrize("problem", [Problem.A1, Problem.A2])
def test_the_milp_is_refused_before_it_is_built(
    problem: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MILP of A1 (time-indexed) and of A2 is refused under a tiny limit before Pyomo
    builds it."""
    monkeypatch.setattr(milp, "build_model", _no_build)
    monkeypatch.setattr(milp, "build_a2_model", _no_build)
    with pytest.raises(ModelTooLarge) as refused:
        milp.build(_two_jobs(), problem, options=ExactParams(memory_limit=TINY))
    _assert_one_clear_line(refused)


@pytest.mark.parametrize("problem", [Problem.A1, Problem.A2])
def test_the_cpsat_models_are_refused_before_the_child_starts(
    problem: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CP-SAT's slotted model of A1 and its model of A2 are refused under a tiny limit
    before the child that would build them starts."""
    monkeypatch.setattr(cpsat, "_run_child", _no_build)
    with pytest.raises(ModelTooLarge) as refused:
        cpsat.solve_cpsat(_two_jobs(), problem, ExactParams(memory_limit=TINY))
    _assert_one_clear_line(refused)


def test_the_continuous_model_is_refused_before_the_child_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The continuous-time CP-SAT model is refused under a tiny limit before its child
    starts."""
    monkeypatch.setattr(continuous, "_run_child", _no_build)
    with pytest.raises(ModelTooLarge) as refused:
        continuous.solve_continuous(_two_jobs(), Problem.A1, ExactParams(memory_limit=TINY))
    _assert_one_clear_line(refused)


def test_the_a2_race_is_refused_before_either_backend_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The portfolio refuses A2 under a tiny limit, naming both models, before its race
    starts."""
    monkeypatch.setattr(portfolio, "_Race", _no_build)
    with pytest.raises(ModelTooLarge, match="MILP and CP-SAT") as refused:
        portfolio.solve_exact(_two_jobs(), Problem.A2, ExactParams(memory_limit=TINY))
    _assert_one_clear_line(refused)


@pytest.mark.parametrize("problem", [Problem.A1, Problem.A2])
@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_small_instances_still_solve_under_the_default_limit(
    method: str, problem: Problem
) -> None:
    """The default limit (2 GiB) admits the small models: the backends solve them."""
    from ddlsched import solve

    result = solve(_two_jobs(), method, problem=problem, bound=False)
    assert result.proven_optimal


def test_the_lp_bound_is_coarsened_then_skipped_under_a_low_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under a limit that affords fewer variables than ``max_variables`` the LP is built on
    a coarser slot, within what the limit affords, with a note, and still bounds the
    optimum from below; under one below the model's fixed part it is not built at all
    (reported invalid, with a note)."""
    instance = generate(GeneratorConfig(num_jobs=12), 0)
    inputs = BoundInputs.of(instance)
    fine = lp_bound(instance, inputs, LpSettings(memory_limit=None))
    affords = 200
    limit = LP_BOUND.estimate(affords)
    coarse = lp_bound(instance, inputs, LpSettings(memory_limit=limit))
    assert any("by the memory limit" in note for note in coarse.notes)
    assert coarse.valid and coarse.value <= fine.value * (1 + 1e-9)
    columns = int(next(n for n in coarse.notes if " variables" in n).split(", ")[-1].split()[0])
    assert columns <= affords + 2 * instance.num_jobs  # each job's window rounds up once
    monkeypatch.setattr(lower_bounds, "_model", _no_build)
    skipped = lp_bound(instance, inputs, LpSettings(memory_limit=TINY))
    assert not skipped.valid and math.isnan(skipped.value)
    assert any(note.startswith("not built") for note in skipped.notes)


def test_the_start_lagrangian_coarsens_then_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a limit its tables exceed, the start-time Lagrangian takes fewer slots, with a
    note; under one no grid fits (or with its slot given) it is refused before its ascent."""
    inputs = BoundInputs.of(generate(GeneratorConfig(num_jobs=200), 0))
    settings = StartLagrangianSettings(rounds=2, memory_limit=None)
    full = start_lagrangian_bound(inputs, settings)
    limited = dataclasses.replace(settings, memory_limit=START_LAGRANGIAN.base + 8 * 2**20)
    coarse = start_lagrangian_bound(inputs, limited)
    assert any("the memory limit" in note for note in coarse.notes)
    assert coarse.valid and coarse.value > 0
    assert full.valid
    monkeypatch.setattr(start_lagrangian, "_ascend", _no_build)
    with pytest.raises(ModelTooLarge, match="start-time Lagrangian"):
        start_lagrangian_bound(inputs, dataclasses.replace(settings, memory_limit=TINY))
    with pytest.raises(ModelTooLarge, match="larger slot"):
        start_lagrangian_bound(inputs, dataclasses.replace(settings, slot=1e6, memory_limit=TINY))


def test_the_elastic_lagrangian_is_refused_before_its_pricing_problems(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The elastic Lagrangian bound is refused under a tiny limit before any pricing
    problem is built, and a ``ValueError`` as its other refusals."""
    monkeypatch.setattr(elastic_lagrangian, "_pricing", _no_build)
    jobs = [ElasticJob("a", "bert", 0.0, 1, 12, 1)]
    with pytest.raises(ValueError, match="elastic Lagrangian bound: about"):
        elastic_lagrangian.elastic_lagrangian_bound(jobs, 4, steps=1, memory_limit=TINY)


@pytest.mark.parametrize(
    "footprint", [A2_MILP, SLOTTED_MILP, CPSAT_INTERVALS, LP_BOUND, START_LAGRANGIAN]
)
def test_the_estimate_grows_with_every_kind_of_item(footprint: Footprint) -> None:
    """Each model's estimate is its fixed part with no items and grows with each kind of
    item, so a larger model is never estimated smaller."""
    kinds = len(footprint.per_item)
    assert footprint.estimate(*([0] * kinds)) == footprint.base
    for kind in range(kinds):
        more = [10] * kinds
        more[kind] = 11
        assert footprint.estimate(*more) > footprint.estimate(*([10] * kinds))


def test_the_a2_estimate_grows_with_the_instance() -> None:
    """A third job adds (job, slot) pairs, and the guard refuses the larger instance at the
    limit that admits the smaller (exactly its estimate)."""
    from ddlsched.formulations.prepared import guard_a2
    from ddlsched.formulations.problem_a2 import single_machine

    small = _two_jobs()
    large = small.replace(jobs=(*small.jobs, Job("c", 0.0, 4, 1.0, 1)))
    pairs = [
        sum(d.covering_horizon() - r for r in d.release_slots)
        for d in (single_machine(small), single_machine(large))
    ]
    assert pairs[1] > pairs[0]
    guard_a2(single_machine(small), A2_MILP.estimate(pairs[0]))
    with pytest.raises(ModelTooLarge):
        guard_a2(single_machine(large), A2_MILP.estimate(pairs[0]))


def test_the_command_takes_the_limit_in_gib(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``ddlsched solve --memory-limit`` sets the limit in GiB: a tiny one refuses A2 in
    one line (exit 2) naming it."""
    from ddlsched.cli import main
    from ddlsched.core.io import write_instance

    path = tmp_path / "two.json"
    write_instance(_two_jobs(), path)
    code = main(["solve", str(path), "--problem", "A2", "--memory-limit", "0.0001"])
    err = capsys.readouterr().err
    assert code == 2
    assert "memory limit of 0 MiB" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
