"""Offline upper bounds (ddlsched.algorithms.offline): verified, never below a proven
optimum or a lower bound, and the interval simulate reports."""

from __future__ import annotations

import json
import math

import pytest
from ddlsched.algorithms.offline import best_upper_bound, flow_interval
from ddlsched.algorithms.registry import POLICIES, PREEMPTIVE_POLICIES, build_policy
from ddlsched.algorithms.simulator import simulate
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.api import solve
from ddlsched.cli import main
from ddlsched.core.alpha import alpha_min
from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.virtual import srpt
from tests.strategies import (
    FRACTIONAL_WEIGHTS,
    TINY_INTEGRAL,
    fragmenting_instances,
    generated_instances,
    weighted_instances,
)


def _pooled_srpt_bound(instance: Instance) -> float:
    """A lower bound on sum w C valid in the preemptive model, sharing no code with the
    upper bounds: jobs on one machine of speed M with sizes g K alpha_min / M (any
    schedule of the cluster runs on it, job by job no later), scheduled by SRPT, which is
    optimal there for unit weights; with weights, sum w_i (r_i + K_i alpha_i^min) instead."""
    cluster = instance.cluster
    fastest = [alpha_min(job, cluster).value for job in instance.jobs]
    floor = sum(
        job.weight * (job.release + job.iterations * a)
        for job, a in zip(instance.jobs, fastest, strict=True)
    )
    if any(job.weight != 1 for job in instance.jobs):
        return floor
    sizes = [
        job.gpus * job.iterations * a / cluster.num_gpus
        for job, a in zip(instance.jobs, fastest, strict=True)
    ]
    completions, _ = srpt(sizes, [job.release for job in instance.jobs])
    return max(floor, sum(completions.values()))


def _checked(instance: Instance, preemptive: bool, evaluations: int = 10) -> float:
    """The upper bound, checked against the verifier; its objective."""
    found = best_upper_bound(instance, preemptive=preemptive, evaluations=evaluations)
    assert found.schedule is not None
    report = verify(instance, found.schedule)
    assert report.feasible, report.violations
    assert found.objective == pytest.approx(report.total_completion_time, rel=1e-9)
    assert found.total_jct == pytest.approx(report.total_jct, rel=1e-9)
    if not preemptive:
        assert all(entry.pieces is None for entry in found.schedule.jobs)
    return found.objective


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_upper_bound_of_problem_a_is_at_least_the_proven_optimum(seed: int) -> None:
    """On tiny integral instances with fractional weights and multi-GPU jobs, the best
    verified schedule is never below the exact optimum of problem A."""
    base = generate(TINY_INTEGRAL.replace(num_jobs=4), seed)
    weights = (FRACTIONAL_WEIGHTS * 4)[: base.num_jobs]
    instance = base.replace(
        jobs=tuple(job.replace(weight=w) for job, w in zip(base.jobs, weights, strict=True))
    )
    optimum = solve(instance, method="exact")
    assert optimum.proven_optimal
    assert _checked(instance, preemptive=False) >= optimum.objective * (1 - 1e-9)


@given(
    instance=st.one_of(
        fragmenting_instances(),
        weighted_instances(max_jobs=4, typed=True),
        generated_instances(mixed=True),
    ),
    preemptive=st.booleans(),
)
@settings(max_examples=25)
def test_upper_bounds_are_verified_and_above_a_lower_bound(
    instance: Instance, preemptive: bool
) -> None:
    """Uneven, typed and weighted instances, batch and spread arrivals: the upper bound of
    either model passes the verifier, equals its recomputed objective, and lies above an
    independent lower bound valid for both models."""
    assert _checked(instance, preemptive, evaluations=5) >= _pooled_srpt_bound(instance) * (
        1 - 1e-9
    )


def test_the_preemptive_bound_beats_every_non_preemptive_schedule_when_preemption_pays() -> None:
    """A long job holding the only server when a short one arrives: preempting it (restart
    cost 0.5) gives 2 + 11.5 = 13.5, every non-preemptive schedule 10 + 10 = 20 at best."""
    cluster = Cluster((2,), 1.0, 1.0)
    instance = Instance(
        cluster,
        (
            Job(id="long", release=0.0, iterations=10, compute_time=1.0, gpus=2),
            Job(id="short", release=1.0, iterations=1, compute_time=1.0, gpus=2),
        ),
    )
    assert _checked(instance, preemptive=False) == pytest.approx(21.0)
    found = best_upper_bound(instance, preemptive=True, restart_cost=0.5, evaluations=0)
    assert found.objective == pytest.approx(13.5)
    assert found.method in ("srpt-area", "asrpt-preemptive")


def test_the_upper_bound_is_at_most_each_candidate_and_seeded() -> None:
    """The bound is the least of its candidates (each named in the metrics) and never above
    sjf's run; the same seed gives the same schedule, and more search never does worse."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=8, servers=2), 3)
    first = best_upper_bound(instance, preemptive=False, evaluations=20, seed=4)
    again = best_upper_bound(instance, preemptive=False, evaluations=20, seed=4)
    none = best_upper_bound(instance, preemptive=False, evaluations=0)
    assert first.schedule == again.schedule
    assert first.total_jct <= none.total_jct
    assert first.total_jct == min(first.metrics.values())
    sjf = simulate(instance, build_policy("sjf", instance))
    assert first.objective <= sjf.objective


@pytest.mark.parametrize(("argument", "value"), [("evaluations", -1), ("restart_cost", -0.5)])
def test_bad_arguments_are_named(argument: str, value: float) -> None:
    """A negative evaluation count or restart cost is refused, naming the argument."""
    instance = generate(TINY_INTEGRAL, 0)
    with pytest.raises(ValueError, match=argument):
        best_upper_bound(instance, preemptive=True, **{argument: value})


def test_preemptive_policies_are_those_that_preempt() -> None:
    """PREEMPTIVE_POLICIES names exactly the registered policies with their own preempt()."""
    from ddlsched.algorithms.protocol import Policy

    instance = generate(TINY_INTEGRAL, 0)
    own = {
        name
        for name in POLICIES.names()
        if type(build_policy(name, instance)).preempt is not Policy.preempt
    }
    assert own == set(PREEMPTIVE_POLICIES)


def test_the_interval_holds_the_policy_and_a_search_only_lowers_its_top() -> None:
    """The policy's own verified run is the top of its interval; an offline schedule may
    lower it but never below the lower bound; a weaker extra bound changes nothing;
    problem A refuses a schedule with preempted jobs."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=6), 5)
    from ddlsched.api import simulate as simulate_named

    run = simulate_named(instance, "las")
    own = flow_interval(instance, run, preemptive=True)
    assert own.upper == pytest.approx(run.total_jct) and own.upper_method == "las"
    offline = best_upper_bound(instance, preemptive=True, evaluations=5)
    searched = flow_interval(instance, run, preemptive=True, offline=offline)
    assert own.lower <= searched.upper <= own.upper
    assert searched.upper == min(own.upper, offline.total_jct)
    assert flow_interval(instance, run, preemptive=True, lower=-1.0).lower == own.lower
    if any(entry.pieces for entry in run.schedule.jobs):
        assert flow_interval(instance, run, preemptive=False).upper_method == "none"


def test_simulate_json_carries_the_lower_end_and_no_upper_end_of_its_own(tmp_path, capsys) -> None:
    """simulate --json on a trace prints the model and its lower bound; without an offline
    schedule it claims no upper end (the run itself is none) and says why; a preemptive
    policy is measured against the preemptive model."""
    code = main(
        [
            "simulate",
            "--trace",
            "philly_jobs.csv",
            "--limit",
            "40",
            "--servers",
            "2",
            "--gpus-per-server",
            "8",
            "--policy",
            "asrpt-preemptive",
            "--json",
        ]
    )
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert document["flow_model"] == "preemptive"
    assert document["flow_lower_bound"] <= document["total_jct"]
    assert document["flow_ratio"] == pytest.approx(
        document["total_jct"] / document["flow_lower_bound"]
    )
    for key in ("flow_upper_bound", "flow_upper_bound_method", "flow_policy_over_upper"):
        assert document[key] is None
    assert "no offline schedule computed" in document["flow_upper_bound_note"]


def test_a_candidate_the_verifier_rejects_never_counts() -> None:
    """A schedule scoring better than every other but infeasible (its job ends before its
    work is done) is passed over for the best feasible one, whose figures are the
    verifier's."""
    from ddlsched.algorithms.offline import Candidate, _best_verified

    from ddlsched.core.model import Schedule, ScheduledJob

    instance = generate(TINY_INTEGRAL, 0)
    honest = best_upper_bound(instance, preemptive=False, evaluations=0)
    assert honest.schedule is not None
    cheat = Schedule(
        tuple(ScheduledJob(e.id, e.start, e.start + 1e-3, e.mapping) for e in honest.schedule.jobs)
    )
    chosen = _best_verified(
        instance,
        [
            Candidate("cheat", cheat, 0.0, 0.0),
            Candidate("honest", honest.schedule, honest.objective + 1.0, honest.total_jct + 1.0),
        ],
    )
    assert chosen is not None and chosen.name == "honest"
    assert chosen.objective == pytest.approx(honest.objective)


def test_a_whole_list_schedule_waits_for_one_server_and_backfills_behind() -> None:
    """Two 2-GPU servers, each with one GPU held until 10 by a long 1-GPU job (two short
    ones leave at 1): a 2-GPU job arriving at 1 placed whole waits for one server and
    starts at 10; on any free GPUs it starts at 1, split over both servers."""
    from ddlsched.algorithms.offline import list_policy

    cluster = Cluster((2, 2), 2.0, 1.0)
    instance = Instance(
        cluster,
        (
            Job(id="a", release=0.0, iterations=10, compute_time=1.0, gpus=1),
            Job(id="b", release=0.0, iterations=10, compute_time=1.0, gpus=1),
            Job(id="c", release=0.0, iterations=10, compute_time=1.0, gpus=1),
            Job(id="d", release=0.0, iterations=10, compute_time=1.0, gpus=1),
            Job(id="pair", release=1.0, iterations=1, compute_time=1.0, gpus=2,
                edges=((0, 1, 1.0),)),
        ),
    )  # fmt: skip
    short = instance.replace(
        jobs=tuple(
            job.replace(iterations=1) if job.id in ("b", "d") else job for job in instance.jobs
        )
    )
    rank = {"a": 0, "b": 1, "c": 2, "d": 3, "pair": 4}
    for whole, start, servers in ((True, 10.0, 1), (False, 1.0, 2)):
        policy = list_policy(short, "order", lambda v: rank[v.id], whole)
        schedule = simulate(short, policy).schedule
        assert schedule is not None and verify(short, schedule).feasible
        pair = schedule.by_id()["pair"]
        assert pair.start == pytest.approx(start)
        assert len(set(pair.mapping)) == servers


def _faked_offline(instance: Instance):
    """Problem A's offline schedule of ``instance`` with its totals replaced by 18.5."""
    import dataclasses

    offline = best_upper_bound(instance, preemptive=False, evaluations=0)
    return dataclasses.replace(offline, total_jct=18.5, objective=18.5, method="fake")


def test_an_offline_total_is_recomputed_from_its_schedule() -> None:
    """An offline result whose total was altered (below the proven optimum) does not lower
    the interval: its total is the verifier's recomputation from its schedule, so the
    upper end stays at or above the exact optimum's total JCT."""
    from ddlsched.core.generators import GeneratorConfig

    instance = generate(GeneratorConfig.exact_friendly(4, 2, 2), 0)
    run = simulate(instance, build_policy("sjf", instance))
    optimum = solve(instance, method="exact")
    assert optimum.proven_optimal
    interval = flow_interval(instance, run, preemptive=False, offline=_faked_offline(instance))
    assert interval.upper >= optimum.total_jct * (1 - 1e-9)
    assert interval.upper == pytest.approx(
        min(verify(instance, run.schedule).total_jct, _checked_total(instance))
    )


def _checked_total(instance: Instance) -> float:
    offline = best_upper_bound(instance, preemptive=False, evaluations=0)
    return verify(instance, offline.schedule).total_jct


def test_an_offline_schedule_the_model_does_not_allow_is_refused() -> None:
    """flow_interval refuses an offline result without schedule, one the verifier
    rejects, and a preemptive one offered as problem A's, naming ``offline``."""
    import dataclasses

    from ddlsched.core.model import Schedule, ScheduledJob

    instance = generate(TINY_INTEGRAL.replace(num_jobs=6), 5)
    run = simulate(instance, build_policy("sjf", instance))
    offline = best_upper_bound(instance, preemptive=False, evaluations=0)
    cheat = Schedule(
        tuple(
            ScheduledJob(e.id, e.start, e.start + 1e-3, e.mapping) for e in offline.schedule.jobs
        )
    )
    for bad in (
        dataclasses.replace(offline, schedule=None),
        dataclasses.replace(offline, schedule=cheat),
    ):
        with pytest.raises(ValueError, match=r"^offline: "):
            flow_interval(instance, run, preemptive=False, offline=bad)
    preempted, preempting = _preempting_run()
    with pytest.raises(ValueError, match=r"^offline: .* preempts"):
        flow_interval(preempted, preempting, preemptive=False, offline=preempting)


def _preempting_run():
    """An instance and a ``srpt-area`` run of it that preempts a job (asserted): the long
    job is stopped when the short one arrives."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0),
        (
            Job(id="long", release=0.0, iterations=500, compute_time=1.0, gpus=1),
            Job(id="short", release=5.0, iterations=2, compute_time=1.0, gpus=1),
        ),
    )
    from ddlsched.api import simulate as simulate_named

    run = simulate_named(instance, "srpt-area")
    assert any(e.pieces is not None and len(e.pieces) > 1 for e in run.schedule.jobs)
    return instance, run


def test_a_preempted_run_is_never_problem_as_upper_end() -> None:
    """A run that preempts a job is a schedule of the preemptive model only: problem A's
    interval has no upper end from it, the preemptive model's has it."""
    instance, run = _preempting_run()
    assert flow_interval(instance, run, preemptive=False).upper_method == "none"
    assert math.isinf(flow_interval(instance, run, preemptive=False).upper)
    assert flow_interval(instance, run, preemptive=True).upper_method == "srpt-area"


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("evaluations", 1.5),
        ("evaluations", math.nan),
        ("evaluations", math.inf),
        ("evaluations", "3"),
        ("evaluations", 10**12),
        ("evaluations", True),
        ("seed", -1),
        ("seed", 0.5),
        ("restart_cost", math.inf),
        ("restart_cost", math.nan),
        ("restart_cost", "1"),
    ],
)
def test_arguments_of_the_wrong_kind_are_refused_by_name(argument: str, value: object) -> None:
    """best_upper_bound refuses a non-integer, huge or negative evaluation count or seed
    and a non-finite or non-numeric restart cost with a one-line ValueError naming it,
    before any simulation."""
    instance = generate(TINY_INTEGRAL, 0)
    with pytest.raises(ValueError, match=f"^{argument}: ") as caught:
        best_upper_bound(instance, preemptive=False, **{argument: value})
    assert "\n" not in str(caught.value)


def test_list_keys_divide_by_the_weight() -> None:
    """Smith's rule: of two jobs alike but for the weight, the heavier comes first in both
    list orders (processing time and GPU-area over the weight)."""
    from ddlsched.algorithms.offline import list_keys
    from ddlsched.algorithms.prediction.view import JobView

    light = Job(id="light", release=0.0, iterations=10, compute_time=1.0, gpus=2, weight=1.0)
    heavy = light.replace(id="heavy", weight=3.0)
    instance = Instance(Cluster((4,), 2.0, 1.0), (light, heavy))
    for name, key in list_keys(instance).items():
        assert key(JobView.of(heavy)) < key(JobView.of(light)), name


def _reversed_start(instance: Instance):
    """The list:time schedule of ``instance`` in the reverse of its key order, verified."""
    from ddlsched.algorithms.offline import _run, _verified, list_variants, order_of, rank_key

    variant = list_variants(instance)["list:time"]
    order = order_of(instance, variant.key)[::-1]
    rank = {job_id: k for k, job_id in enumerate(order)}
    start = _verified(
        instance, _run(instance, variant.policy(instance, "list:time", rank_key(rank)), 1.0)
    )
    assert start is not None
    return start, order, variant


REVERSED = Instance(
    Cluster((2,), 2.0, 1.0),
    tuple(
        Job(id=f"j{k}", release=0.0, iterations=it, compute_time=1.0, gpus=1)
        for k, it in enumerate((1, 2, 4, 8, 16, 32))
    ),
)
"""Six 1-GPU jobs released together on 2 GPUs: the longest-first order is far from the
shortest-first optimum, so any improving move is found within a few evaluations."""


def test_the_search_leaves_a_bad_order_for_a_better_verified_one() -> None:
    """From the longest-first order the local search finds a schedule of lower verified
    total (it moves), whose figures are the verifier's."""
    import numpy as np
    from ddlsched.algorithms.offline import local_search

    start, order, variant = _reversed_start(REVERSED)
    found = local_search(REVERSED, start, order, variant, 40, np.random.default_rng(0), 1.0)
    assert found.objective < start.objective
    assert found.objective == pytest.approx(verify(REVERSED, found.schedule).total_completion_time)


def test_the_search_keeps_no_move_the_verifier_rejects(monkeypatch) -> None:
    """With a verifier that rejects every schedule, the local search keeps its start,
    however much better the simulator scores a move."""
    import types

    import numpy as np
    from ddlsched.algorithms import offline

    start, order, variant = _reversed_start(REVERSED)
    monkeypatch.setattr(
        offline, "verify", lambda *a, **k: types.SimpleNamespace(feasible=False, violations=["x"])
    )
    found = offline.local_search(
        REVERSED, start, order, variant, 40, np.random.default_rng(0), 1.0
    )
    assert found is start


def test_the_grid_keys_interpolate_between_time_and_area_by_hand() -> None:
    """Three jobs on one 16-GPU server without communication (alpha_min is the compute
    time): A 1 GPU x 16 s, B 4 GPUs x 6 s, C 16 GPUs x 2 s. By time (beta 0): C 2, B 6,
    A 16. By area (beta 1): A 16, B 24, C 32. At beta 0.5: C 8, B 12, A 16. At beta
    0.75: A 16, C 16, B 16.97; A and C tie, the earlier release (A) first."""
    from ddlsched.algorithms.offline import list_keys, order_of

    jobs = (
        Job(id="A", release=0.0, iterations=16, compute_time=1.0, gpus=1),
        Job(id="B", release=1.0, iterations=6, compute_time=1.0, gpus=4),
        Job(id="C", release=2.0, iterations=2, compute_time=1.0, gpus=16),
    )
    instance = Instance(Cluster((16,), 1e9, 1.0), jobs)
    assert [alpha_min(job, instance.cluster).value for job in jobs] == [1.0, 1.0, 1.0]
    keys = list_keys(instance, (0.0, 1.0, 0.5, 0.75))
    assert set(keys) == {"list:time", "list:area", "list:g0.5", "list:g0.75"}
    assert order_of(instance, keys["list:time"]) == ["C", "B", "A"]
    assert order_of(instance, keys["list:area"]) == ["A", "B", "C"]
    assert order_of(instance, keys["list:g0.5"]) == ["C", "B", "A"]
    assert order_of(instance, keys["list:g0.75"]) == ["A", "C", "B"]


@pytest.mark.parametrize("servers", [1, 2, 3, 8, 16, 32])
def test_the_grid_tries_each_key_and_holder_count_once_past_the_defaults(servers: int) -> None:
    """Names unique, holder counts from the shares (at least one; counts that repeat on
    small clusters tried once), the default count first, and the two default reserving
    schedules of list_variants never repeated."""
    from ddlsched.algorithms.offline import GRID_EXPONENTS, GRID_SHARES, grid_variants
    from ddlsched.algorithms.reservation import default_reservations

    cluster = Cluster((4,) * servers, 2.0, 1.0)
    job = Job(id="a", release=0.0, iterations=3, compute_time=1.0, gpus=2)
    instance = Instance(cluster, (job,))
    grid = grid_variants(instance)
    counts = list(dict.fromkeys(max(1, int(servers * share)) for share in GRID_SHARES))
    assert counts[0] == default_reservations(cluster)
    assert len(grid) == len(counts) * len(GRID_EXPONENTS) - 2
    assert next(v.reservations for v in grid.values()) == counts[0]
    assert {v.reservations for v in grid.values()} == set(counts)
    assert all(v.whole for v in grid.values())
    default = f":reserve{counts[0]}"
    assert f"list:time{default}" not in grid and f"list:area{default}" not in grid


@pytest.mark.parametrize("evaluations", [0, 1, 5, 40])
def test_the_grid_comes_first_and_shares_the_evaluations(
    evaluations: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``evaluations`` simulations, the first ``min(evaluations, grid size)`` points of
    the grid run (each reported among the candidates) and no later one, and the local
    search gets the rest; the result is verified and never above the best of them."""
    from ddlsched.algorithms import offline
    from ddlsched.algorithms.offline import grid_variants

    searched: list[int] = []
    original = offline.local_search

    def counting(instance, start, order, variant, rounds, rng, cost, **options):  # type: ignore[no-untyped-def]
        searched.append(rounds)
        return original(instance, start, order, variant, rounds, rng, cost, **options)

    monkeypatch.setattr(offline, "local_search", counting)
    instance = generate(TINY_INTEGRAL.replace(num_jobs=10, servers=4), 3)
    names = list(grid_variants(instance))
    found = best_upper_bound(instance, preemptive=False, evaluations=evaluations)
    ran = [name for name in names if f"total_jct:{name}" in found.metrics]
    assert ran == names[: min(evaluations, len(names))]
    rest = evaluations - len(ran)
    assert searched == ([rest] if rest else [])
    assert all(found.total_jct <= found.metrics[f"total_jct:{n}"] * (1 + 1e-9) for n in ran)
    report = verify(instance, found.schedule)
    assert report.feasible and found.total_jct == pytest.approx(report.total_jct, rel=1e-9)
