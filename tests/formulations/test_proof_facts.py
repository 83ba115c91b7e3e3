"""What an ``optimal`` result says of its proof is true whichever path proved it.

The paths: a fast bound meeting the warm start (the race's watch, before either backend
answers), the slotted MILP, slotted CP-SAT, and CP-SAT in continuous time. On integral
instances whose modes are all exact (the ``exact-friendly`` preset, batch and spread
arrivals, weighted), an ``optimal`` result's facts say ``integral``, ``modes_proven`` and
``modes_complete``; the bound its notes name as the proof is its ``lower_bound``; and its
objective is the brute-force optimum.
"""

from __future__ import annotations

import re

import pytest

from ddlsched import solve
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus
from tests.oracles import brute_force_a

LIMITS = ExactParams(time_limit=600, threads=1, deterministic_limit=20.0, node_limit=20_000)


def _weighted(instance: Instance) -> Instance:
    return instance.replace(
        jobs=tuple(j.replace(weight=(1.0, 2.0, 0.5)[k % 3]) for k, j in enumerate(instance.jobs))
    )


FAMILIES = {
    "batch, proven by a fast bound": lambda: generate(
        GeneratorConfig.exact_friendly(6, 2, 4, None), 3
    ),
    "spread": lambda: generate(GeneratorConfig.exact_friendly(5, 2, 2, 1.0), 1),
    "weighted spread": lambda: _weighted(
        generate(GeneratorConfig.exact_friendly(5, 2, 2, 1.0), 2)
    ),
}


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("method", ["exact", "milp", "cpsat", "cpsat-continuous"])
def test_an_optimal_result_names_its_proof_and_its_inputs_truly(family: str, method: str) -> None:
    """Catches: facts left at their defaults (all false) on a proof by a bound; a note
    naming one bound while ``lower_bound`` names another (a tie kept the solver's name);
    the solver's bound named two ways (``milp-dual`` and ``solver-dual``)."""
    instance = FAMILIES[family]()
    result = solve(instance, method, params=LIMITS)
    assert result.status is SolveStatus.OPTIMAL, result.notes
    assert result.objective == pytest.approx(brute_force_a(instance), rel=1e-9)
    facts = result.facts
    assert facts["integral"] and facts["modes_proven"] and facts["modes_complete"], facts
    assert result.lower_bound is not None and result.lower_bound.valid
    assert result.lower_bound.name != "milp-dual"
    named = [
        re.search(r"the ([\w-]+) lower bound", note)
        for note in result.notes
        if note.startswith("optimal:")
    ]
    for match in named:
        if match is not None:
            assert match.group(1) == result.lower_bound.name, (result.notes, result.lower_bound)


def test_the_fast_bound_proof_is_one_such_path() -> None:
    """The first family is proven by the job bound meeting the warm start (so the test
    above covers that path, not only the backends')."""
    result = solve(FAMILIES["batch, proven by a fast bound"](), "exact", params=LIMITS)
    assert result.metrics["proof_by_bound"] == 1
    assert result.lower_bound is not None and result.lower_bound.name == "job"
