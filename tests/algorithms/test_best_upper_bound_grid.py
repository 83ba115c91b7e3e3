"""best_upper_bound with its grid, seen from outside: never below the exact optimum on the
hard tiny families, the same schedule for the same seed, and no more simulations than the
fixed candidates and the evaluations allow.

Truths: the exact optimum of problem A (:func:`ddlsched.api.solve`, proven optimal), the
independent verifier, and a count of the simulator's calls.
"""

from __future__ import annotations

import pytest
from ddlsched.algorithms import offline
from ddlsched.algorithms.offline import best_upper_bound, list_variants
from ddlsched.proofs_checks.verifier import verify
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.api import solve
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from tests.strategies import FRACTIONAL_WEIGHTS, TINY_INTEGRAL, exact_family_instances


@st.composite
def one_server_instances(draw: st.DrawFn) -> Instance:
    """One server of 1-6 GPUs (every holder count of the grid is 1), 1-3 jobs of integral
    durations, fractional or whole weights, batch or spread releases."""
    gpus = draw(st.integers(1, 6))
    jobs = tuple(
        Job(
            id=f"j{k}",
            release=draw(st.sampled_from((0.0, 0.0, 1.0, 2.0))),
            iterations=draw(st.integers(1, 4)),
            compute_time=1.0,
            gpus=draw(st.integers(1, gpus)),
            weight=draw(st.sampled_from((1.0, 3.0, *FRACTIONAL_WEIGHTS))),
        )
        for k in range(draw(st.integers(1, 3)))
    )
    return Instance(Cluster((gpus,), 2.0, 1.0), jobs)


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    instance=st.one_of(exact_family_instances(), one_server_instances()),
    evaluations=st.sampled_from((0, 1, 7, 40)),
    seed=st.integers(0, 3),
)
def test_the_best_schedule_is_verified_seeded_and_never_below_the_optimum(
    instance: Instance, evaluations: int, seed: int
) -> None:
    """Typed clusters, fractional weights, multi-GPU jobs and one-server clusters, with
    no evaluations, one (the grid's first point), some and more than the grid holds: the
    answer passes the verifier with the objective it reports, the same seed gives the
    same schedule, and it is never below the proven optimum of problem A."""
    found = best_upper_bound(instance, preemptive=False, evaluations=evaluations, seed=seed)
    report = verify(instance, found.schedule)
    assert report.feasible, report.violations
    assert found.objective == pytest.approx(report.total_completion_time, rel=1e-9)
    again = best_upper_bound(instance, preemptive=False, evaluations=evaluations, seed=seed)
    assert again.schedule == found.schedule
    optimum = solve(instance, method="exact")
    assert optimum.proven_optimal
    assert found.objective >= optimum.objective * (1 - 1e-9)


@pytest.mark.parametrize("evaluations", [0, 1, 3, 30])
@pytest.mark.parametrize("preemptive", [False, True])
def test_no_more_simulations_than_the_candidates_and_the_evaluations(
    evaluations: int, preemptive: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each simulation is counted: the fixed candidates (every list variant, sjf and
    asrpt-greedy, and in the preemptive model srpt-area and asrpt-preemptive) plus at most
    ``evaluations`` more, the grid's and the search's together."""
    calls: list[str] = []
    original = offline.simulate

    def counting(instance, policy, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(policy.name)
        return original(instance, policy, **kwargs)

    monkeypatch.setattr(offline, "simulate", counting)
    instance = generate(TINY_INTEGRAL.replace(num_jobs=6, servers=3), 5)
    best_upper_bound(instance, preemptive=preemptive, evaluations=evaluations)
    fixed = len(list_variants(instance)) + 2 + (2 if preemptive else 0)
    assert fixed <= len(calls) <= fixed + evaluations


def test_the_search_starts_from_a_grid_point_that_beats_every_list_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the list schedules cut to one poor order (longest job first), a point of the
    grid is the best list-like schedule, and the local search starts from it: the grid's
    points are list schedules the search may reorder, not bystanders."""
    from ddlsched.algorithms.offline import ListVariant, grid_variants

    instance = generate(TINY_INTEGRAL.replace(num_jobs=8, servers=2), 3)
    longest = {job.id: -job.iterations * job.compute_time for job in instance.jobs}
    poor = {"list:longest": ListVariant(lambda view: (longest[view.id], view.release))}
    monkeypatch.setattr(offline, "list_variants", lambda _: dict(poor))
    starts: list[str] = []
    original = offline.local_search

    def recording(instance, start, order, variant, rounds, rng, cost, **options):  # type: ignore[no-untyped-def]
        starts.append(start.name)
        return original(instance, start, order, variant, rounds, rng, cost, **options)

    monkeypatch.setattr(offline, "local_search", recording)
    grid = grid_variants(instance)
    found = best_upper_bound(instance, preemptive=False, evaluations=len(grid) + 2)
    totals = {name: found.metrics[f"total_jct:{name}"] for name in [*poor, *grid]}
    assert all(job.weight == 1 for job in instance.jobs)
    assert min(totals, key=totals.__getitem__) in grid
    assert starts == [min(totals, key=totals.__getitem__)]
