"""One exact solve computes the fast bounds once and admits its warm start once.

The fast bounds (:func:`ddlsched.formulations.lower_bounds.lower_bounds`, with the search
for every ``alpha_min`` they rest on) are computed in one
:class:`~ddlsched.formulations.certify.BoundSet` that every stage of the solve certifies
with: the portfolio, its watch, each backend, the continuous-time fallback and the front
door. The warm start is checked by the verifier once, by that set, however many stages
take it (the watch, CP-SAT, the MILP). Counted with wrappers around the functions, on
every path an exact solve may take (a proof by a bound before the race, a backend's proof,
each backend alone).
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable

import pytest

from ddlsched import simulate, solve
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance, Schedule
from ddlsched.core.params import ExactParams

LIMITS = ExactParams(time_limit=None, threads=1, deterministic_limit=20.0, node_limit=20_000)
"""Deterministic limits only: each path below ends the same way on any machine."""

FAMILIES = {
    "batch, proven by a fast bound before the race": lambda: generate(
        GeneratorConfig.exact_friendly(6, 2, 4, None), 3
    ),
    "spread, proven by a backend": lambda: generate(
        GeneratorConfig.exact_friendly(5, 2, 2, 1.0), 1
    ),
}


def _counting(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], warm_start: Schedule) -> None:
    """Count the fast bounds computed, the ``alpha_min`` searches for them, and the
    verifier's checks of ``warm_start`` (wherever each is imported from)."""
    bounds_module = importlib.import_module("ddlsched.formulations.lower_bounds")
    certify_module = importlib.import_module("ddlsched.formulations.certify")
    admission = importlib.import_module("ddlsched.formulations.admission")

    def counted(name: str, function: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*args: object, **kwargs: object) -> object:
            counts[name] += 1
            return function(*args, **kwargs)

        return wrapper

    fast = counted("fast bounds", bounds_module.lower_bounds)
    monkeypatch.setattr(bounds_module, "lower_bounds", fast)
    monkeypatch.setattr(certify_module, "lower_bounds", fast)
    monkeypatch.setattr(
        bounds_module,
        "fastest_processing",
        counted("alpha_min searches", bounds_module.fastest_processing),
    )
    refusal = admission.refusal

    def admitting(
        instance: Instance, problem: object, schedule: Schedule, *rest: object
    ) -> object:
        if schedule is warm_start:
            counts["warm start checked"] += 1
        return refusal(instance, problem, schedule, *rest)

    monkeypatch.setattr(admission, "refusal", admitting)


PATHS = [
    pytest.param("exact", "batch, proven by a fast bound before the race", id="exact-watch"),
    pytest.param("exact", "spread, proven by a backend", id="exact-race"),
    pytest.param("milp", "spread, proven by a backend", id="milp"),
    pytest.param("cpsat", "spread, proven by a backend", id="cpsat"),
    pytest.param(
        "cpsat-continuous",
        "batch, proven by a fast bound before the race",
        id="cpsat-continuous",
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.parametrize(("method", "family"), PATHS)
def test_one_exact_solve_computes_the_fast_bounds_once_and_admits_its_warm_start_once(
    monkeypatch: pytest.MonkeyPatch, family: str, method: str
) -> None:
    """Catches a stage that computes the fast bounds again (the portfolio's backends, the
    front door after the method, the facts of a proof by a bound) or verifies a warm
    start another stage admitted already."""
    instance = FAMILIES[family]()
    warm_start = simulate(instance, "fifo", bound=False).schedule
    assert warm_start is not None
    counts: Counter[str] = Counter()
    _counting(monkeypatch, counts, warm_start)
    result = solve(instance, method, params=LIMITS, warm_start=warm_start)
    assert result.proven_optimal, result.notes
    assert counts == {"fast bounds": 1, "alpha_min searches": 1, "warm start checked": 1}


def test_the_path_of_a_proof_by_a_fast_bound_is_taken() -> None:
    """The first family is proven before the race by the job bound meeting the warm start
    (so the test above counts that path, not only the backends')."""
    instance = FAMILIES["batch, proven by a fast bound before the race"]()
    warm_start = simulate(instance, "fifo", bound=False).schedule
    result = solve(instance, "exact", params=LIMITS, warm_start=warm_start)
    assert result.metrics["proof_by_bound"] == 1
