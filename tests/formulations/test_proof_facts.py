"""What a result says of its proof is true whichever path produced it.

The paths: a fast bound meeting the warm start (the race's watch, before either backend
answers), the slotted MILP, slotted CP-SAT, and CP-SAT in continuous time (alone, or where
the portfolio continues off the slot grid), each forced by the method and deterministic
limits. Over integral instances (the ``exact-friendly`` preset, batch and spread
arrivals, weighted) and a non-integral one with multi-GPU jobs, every result's facts say
``integral`` exactly when :func:`~ddlsched.formulations.lower_bounds.proven_grid` proves
the instance integral, and ``modes_proven`` and ``modes_complete`` (every mode of these
small instances is enumerated and proven); its bound is valid (at most the brute-force
optimum); an ``optimal`` result's objective is that optimum, its ``lower_bound`` closes
the gap and is the bound its notes name as the proof.
"""

from __future__ import annotations

import functools
import re

import pytest
from ddlsched.formulations.lower_bounds import proven_grid

from ddlsched import solve
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams
from ddlsched.core.result import fixed_part, gap_closed
from tests.oracles import brute_force_a

LIMITS = ExactParams(time_limit=600, threads=1, deterministic_limit=20.0, node_limit=20_000)


def _weighted(instance: Instance) -> Instance:
    return instance.replace(
        jobs=tuple(j.replace(weight=(1.0, 2.0, 0.5)[k % 3]) for k, j in enumerate(instance.jobs))
    )


def _off_the_grid() -> Instance:
    """Four jobs on two servers of two GPUs whose releases and compute times are not whole
    seconds (the instance's slot), one of them on three GPUs across both servers and one
    weighted: the slotted models round them up, so only a bound or continuous time proves
    the optimum."""
    jobs = (
        Job("a", 0.0, 3, 0.5, 2),
        Job("b", 0.3, 2, 0.7, 1),
        Job("c", 0.5, 1, 1.25, 3),
        Job("d", 1.1, 1, 2.3, 1, weight=2.0),
    )
    return Instance(Cluster((2, 2), 2.0, 1.0), jobs)


FAMILIES = {
    "batch, proven by a fast bound": lambda: generate(
        GeneratorConfig.exact_friendly(6, 2, 4, None), 3
    ),
    "spread": lambda: generate(GeneratorConfig.exact_friendly(5, 2, 2, 1.0), 1),
    "weighted spread": lambda: _weighted(
        generate(GeneratorConfig.exact_friendly(5, 2, 2, 1.0), 2)
    ),
    "off the grid, multi-GPU, weighted": _off_the_grid,
}
SLOTTED = ("milp", "cpsat")


@functools.cache
def _optimum(family: str) -> float:
    """The brute-force optimum of ``family``'s instance (once per family: 6 jobs take
    seconds)."""
    return brute_force_a(FAMILIES[family]())


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("method", ["exact", "milp", "cpsat", "cpsat-continuous"])
def test_a_result_names_its_proof_and_its_inputs_truly(family: str, method: str) -> None:
    """Catches: facts left at their defaults (all false) on a proof by a bound, or
    ``integral`` claimed off the grid; a note naming one bound while ``lower_bound`` names
    another (a tie kept the solver's name); the solver's bound named two ways
    (``milp-dual`` and ``solver-dual``); an ``optimal`` whose bound leaves the gap open."""
    instance = FAMILIES[family]()
    integral = proven_grid(instance) is not None
    optimum = _optimum(family)
    result = solve(instance, method, params=LIMITS)
    facts = result.facts
    assert facts["integral"] is integral, facts
    assert facts["modes_proven"] and facts["modes_complete"], facts
    bound = result.lower_bound
    assert bound is not None and bound.valid and bound.name != "milp-dual"
    assert bound.value <= optimum * (1 + 1e-9)
    if not result.proven_optimal:  # only a slotted model off the grid may stop unproven
        assert method in SLOTTED and not integral, result.notes
        assert result.objective >= optimum * (1 - 1e-9)
        return
    assert result.objective == pytest.approx(optimum, rel=1e-9)
    assert gap_closed(result.objective, bound.value, fixed_part(instance))
    named = [
        re.search(r"the ([\w-]+) lower bound", note)
        for note in result.notes
        if note.startswith("optimal:")
    ]
    for match in named:
        if match is not None:
            assert match.group(1) == bound.name, (result.notes, bound)


def test_the_paths_are_the_ones_named() -> None:
    """The first family is proven by the job bound meeting the warm start before the race
    (so the test above covers that path, not only the backends'), and the portfolio proves
    the instance off the grid in continuous time (the bracket closed, or a bound meeting
    its schedule)."""
    result = solve(FAMILIES["batch, proven by a fast bound"](), "exact", params=LIMITS)
    assert result.metrics["proof_by_bound"] == 1
    assert result.lower_bound is not None and result.lower_bound.name == "job"
    off = solve(_off_the_grid(), "exact", params=LIMITS)
    assert off.proven_optimal and "bracket_closed" in off.facts, off.notes
