"""The local search of the offline upper bound skips, without simulating, the moves that
provably leave the list schedule as it is (algorithms.offline.unchanged_by_move)."""

from __future__ import annotations

import numpy as np
import pytest
from ddlsched.algorithms import offline

from ddlsched import GeneratorConfig, generate
from ddlsched.core.model import Instance

COST = 30.0


def instances() -> list[Instance]:
    """Spread arrivals (load 0.9, so jobs wait and meet in the queue) and a batch, 12
    jobs of 1 to 4 GPUs on 2 x 4 GPUs, one of them with fractional weights."""
    spread = generate(GeneratorConfig.exact_friendly(12, 2, 4, load=0.9), 11)
    batch = generate(GeneratorConfig.exact_friendly(12, 2, 4), 12)
    weights = np.random.default_rng(0).choice([0.5, 1.5, 4.0], size=12)
    weighted = spread.replace(
        jobs=tuple(
            job.replace(weight=float(w)) for job, w in zip(spread.jobs, weights, strict=True)
        )
    )
    return [spread, batch, weighted]


def _times(candidate: offline.Candidate) -> dict[str, tuple[float, float | None]]:
    return {entry.id: (entry.start, entry.end) for entry in candidate.schedule.jobs}


@pytest.mark.parametrize("name", ["list:time", "list:area:whole", "list:area:reserve"])
def test_a_move_judged_unchanged_leaves_the_schedule_as_it_is(name: str) -> None:
    """Every move the rule calls unchanged gives, simulated, the very same start and end
    of every job; the rule is not vacuous (some moves are judged each way)."""
    judged = {True: 0, False: 0}
    for instance in instances():
        variant = offline.list_variants(instance)[name]
        order = offline.order_of(instance, variant.key)
        rank = {job_id: k for k, job_id in enumerate(order)}
        current = offline._run(
            instance, variant.policy(instance, name, offline.rank_key(rank)), COST
        )
        assert current is not None
        releases = {job.id: job.release for job in instance.jobs}
        waits = {e.id: (releases[e.id], e.start) for e in current.schedule.jobs}
        for origin in range(len(order)):
            for target in range(len(order)):
                if origin == target:
                    continue
                unchanged = offline.unchanged_by_move(order, origin, target, waits)
                judged[unchanged] += 1
                if not unchanged:
                    continue
                trial = list(order)
                trial.insert(target, trial.pop(origin))
                moved = {job_id: k for k, job_id in enumerate(trial)}
                ran = offline._run(
                    instance, variant.policy(instance, name, offline.rank_key(moved)), COST
                )
                assert ran is not None
                assert _times(ran) == _times(current), (origin, target)
    assert judged[True] > 0 and judged[False] > 0


@pytest.mark.parametrize("seed", [0, 1])
def test_skipping_unchanged_moves_finds_the_same_schedule(seed: int) -> None:
    """The search that skips provably unchanged moves ends with the schedule and objective
    of the search that simulates every move, and simulates fewer."""
    for instance in instances():
        variant = offline.list_variants(instance)["list:area:reserve"]
        order = offline.order_of(instance, variant.key)
        start = offline._verified(
            instance, offline._run(instance, variant.policy(instance, "list:area:reserve"), COST)
        )
        assert start is not None
        found = {}
        for skip in (False, True):
            rng = np.random.default_rng(seed)
            found[skip] = offline.local_search(
                instance, start, order, variant, 60, rng, COST, start_is_order=skip
            )
        assert found[True].objective == found[False].objective
        assert _times(found[True]) == _times(found[False])
