"""Lower bounds on OPT(A) (ddlsched.formulations.lower_bounds): below every proven optimum."""

from __future__ import annotations

import pytest
from ddlsched.formulations.lower_bounds import (
    SAFETY,
    BoundInputs,
    LpSettings,
    lower_bounds,
    lp_bound,
    preemptive_wspt_mean_busy_times,
    proven_grid,
)
from ddlsched.formulations.milp import solve_milp
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams
from ddlsched.core.result import LowerBound, best_lower_bound
from tests.oracles import brute_force_a
from tests.strategies import TINY_INTEGRAL, hand_instances, typed_instances, weighted_instances

LP = LpSettings(max_variables=5_000, time_limit=1e7)
"""The LP as the tests solve it: a limit no run reaches, so no test depends on speed."""

POOLED = LpSettings(max_variables=600, time_limit=1e7, node_limit=500)
"""The pooled integral bound as the tests solve it: coarser, and stopped by a node count
(its dual bound is then what is checked), never by the clock."""


def _all_bounds_valid(instance: Instance, optimum: float) -> None:
    """Every bound, and the LP and the pooled integral bound with the tightest windows
    (UB = OPT itself; on the instance's grid when it has one), is <= OPT, and
    its flow value is <= OPT's flow time ``OPT - sum w r`` (the same schedule is optimal
    for both)."""
    found = lower_bounds(instance, lp=LP, pooled=POOLED)
    found += lower_bounds(instance, names=[], lp=LP, upper_bound=optimum, pooled=POOLED)
    slot = proven_grid(instance)
    if slot is not None:  # on the instance's own grid: no rounding, values rounded up
        found += lower_bounds(instance, [], lp=LP, upper_bound=optimum, pooled=POOLED, slot=slot)
    assert {bound.name for bound in found} >= {"lp", "pooled"}
    flow = optimum - sum(job.weight * job.release for job in instance.jobs)
    for bound in found:
        assert bound.valid, bound
        assert bound.value <= optimum * (1 + 1e-9), (bound, optimum, instance)
        assert bound.flow_value <= flow + 1e-9 * optimum, (bound, flow, instance)


@settings(max_examples=30)
@given(hand_instances(max_jobs=3))
def test_bounds_below_the_brute_force_optimum(instance: Instance) -> None:
    """Uneven servers, arbitrary graphs, weights 1 and 2, non-integral releases: every
    bound (the LP included) is at most the continuous optimum found by enumeration."""
    _all_bounds_valid(instance, brute_force_a(instance))


@settings(max_examples=20)
@given(typed_instances())
def test_bounds_below_the_optimum_on_mixed_clusters(instance: Instance) -> None:
    """GPU types: every bound uses the typed alpha_min and alpha_max and stays at most
    the optimum the oracle enumerates (every map timed by its own typed formula)."""
    _all_bounds_valid(instance, brute_force_a(instance))


@settings(max_examples=12)
@given(
    st.integers(0, 10_000),
    st.sampled_from([(1, 4), (2, 2), (2, 4), (3, 2)]),
    st.sampled_from([None, 1.0, 3.0]),
)
def test_bounds_below_the_proven_milp_optimum(
    seed: int, shape: tuple[int, int], load: float | None
) -> None:
    """On integral generated instances of several shapes and loads, below OPT(A) from the MILP."""
    config = TINY_INTEGRAL.replace(
        num_jobs=5, servers=shape[0], gpus_per_server=shape[1], load=load, max_job_gpus=None
    )
    instance = generate(config, seed)
    optimum = solve_milp(instance, "A", ExactParams(time_limit=None))
    assert optimum.proven_optimal
    _all_bounds_valid(instance, optimum.objective)


def _unit(name: str, release: float, iterations: int, gpus: int = 1, weight: float = 1.0) -> Job:
    return Job(
        id=name,
        release=release,
        iterations=iterations,
        compute_time=1.0,
        gpus=gpus,
        weight=weight,
    )


def test_hand_worked_values() -> None:
    """Two 1 s jobs on one GPU: OPT = 1 + 2 = 3. Job bound 2; SRPT on the squashed machine
    (M = 1: no squashing) 3; mean busy times 0.5 and 1.5, plus 0.5 each: 3."""
    instance = Instance(Cluster((1,), 1.0, 1.0), (_unit("a", 0, 1), _unit("b", 0, 1)))
    values = {b.name: b.value for b in lower_bounds(instance, lp=LP)}
    assert values["job"] == pytest.approx(2 * SAFETY)
    assert values["squashed-area"] == pytest.approx(3 * SAFETY)
    assert values["mean-busy-time"] == pytest.approx(3 * SAFETY)
    assert values["lp"] == pytest.approx(3.0, rel=1e-3)  # durations rounded down to the grid


def test_weighted_wspt_mean_busy_times_by_hand() -> None:
    """Sizes 2 and 1, released at 0 and 1, weights 1 and 4: job 1 (density 4) preempts job 0
    at 1. Job 0 runs [0, 1] and [2, 3]: M = (0.5 + 2.5) / 2 = 1.5; job 1 runs [1, 2]: M = 1.5."""
    busy = preemptive_wspt_mean_busy_times([2.0, 1.0], [0.0, 1.0], [1.0, 4.0])
    assert busy.tolist() == pytest.approx([1.5, 1.5])


def test_squashing_and_congestion() -> None:
    """Four 2-GPU jobs of 4 s on 4 GPUs, all at 0: two run at a time, OPT = 4+4+8+8 = 24.
    The job bound sees no congestion (16); the squashed machine (sizes 2) gives SRPT
    2+4+6+8 = 20; ranks, floors 4 against those, 4+4+6+8 = 22; mean busy time gives
    (1+3+5+7) + 4 * 2 = 24, tight."""
    jobs = tuple(_unit(f"j{k}", 0, 4, gpus=2) for k in range(4))
    instance = Instance(Cluster((4,), 1.0, 1.0), jobs)
    values = {b.name: b.value / SAFETY for b in lower_bounds(instance)}
    assert values == pytest.approx(
        {
            "job": 16.0,
            "squashed-area": 20.0,
            "mean-busy-time": 24.0,
            "lagrangian": 24.0,
            "rank": 22.0,
        }
    )
    best = best_lower_bound(lower_bounds(instance))
    assert best is not None and best.name == "mean-busy-time"


def test_negative_control_invalid_bound_is_caught(ring_instance: Instance) -> None:
    """A plausible bug, K * alpha_max in place of K * alpha_min, is caught by the same check:
    on a lone 4-ring (alpha_min 4, alpha_max 5, K = 2) OPT is 8, the wrong 'bound' 10."""
    ring = Instance(ring_instance.cluster, ring_instance.jobs[:1])
    optimum = brute_force_a(ring)
    wrong = sum(j.release + j.iterations * 5.0 for j in ring.jobs)
    with pytest.raises(AssertionError):
        assert wrong <= optimum * (1 + 1e-9)
    _all_bounds_valid(ring, optimum)
    assert optimum == pytest.approx(8.0)


def test_inexact_alpha_min_is_said() -> None:
    """A job whose alpha_min is only bounded makes every bound say so (still valid)."""
    edges = tuple((u, v, 1.0) for u in range(12) for v in range(u + 1, 12))
    job = Job(id="big", release=0, iterations=1, compute_time=1.0, gpus=12, edges=edges)
    instance = Instance(Cluster((4, 4, 4), 2.0, 1.0), (job,))
    inputs = BoundInputs.of(instance, search_budget=10)
    assert inputs.inexact == 1
    bound = lower_bounds(instance, inputs=inputs)[0]
    assert bound.valid and "lower bound of alpha_min" in bound.notes[0]


# Each test below names the one-line slip it catches; every one was
# planted by hand in formulations/lower_bounds.py (or ddlsched/core/alpha.py) and seen to
# fail the test.


@settings(max_examples=25)
@given(weighted_instances())
def test_bounds_below_optimum_with_fractional_weights(instance: Instance) -> None:
    """Catches a bound that drops or misplaces a weight (unweighted sums, WSPT by
    ``v / w``, equal weights taken for unit ones): weights 1/2, 2/3, 1.5, releases 0.3
    and 2.5, multi-GPU jobs; every bound and the LP stay at most the brute-force optimum."""
    _all_bounds_valid(instance, brute_force_a(instance))


@settings(max_examples=20)
@given(weighted_instances(typed=True))
def test_bounds_below_optimum_with_fractional_weights_on_mixed_clusters(
    instance: Instance,
) -> None:
    """Catches the same weight slips, and typed alpha_min slips, on clusters of several GPU
    types: fractional weights, non-integral releases; every bound at most the optimum."""
    _all_bounds_valid(instance, brute_force_a(instance))


def _weighted_pair() -> Instance:
    """One GPU; a: K = 2, w = 1/2, r = 0; b: K = 1, w = 3/2, r = 1/2 (1 s per iteration).
    OPT = 4 (hand, and the oracle): idle until 0.5, b on [0.5, 1.5], a on [1.5, 3.5]:
    1.5 * 1.5 + 0.5 * 3.5 (a first costs 0.5 * 2 + 1.5 * 3 = 5.5)."""
    return Instance(
        Cluster((1,), 1.0, 1.0),
        (_unit("a", 0.0, 2, weight=0.5), _unit("b", 0.5, 1, weight=1.5)),
    )


def test_fractional_weights_hand_worked() -> None:
    """Catches a dropped weight or an inverted WSPT density in any fast bound. On
    :func:`_weighted_pair`: job bound 0.5 * 2 + 1.5 * 1.5 = 3.25; preemptive WSPT (density
    0.25 vs 1.5) runs a on [0, 0.5], b on [0.5, 1.5], a on [1.5, 3]: M_a = 3.5 / 2 = 1.75,
    M_b = 1; squashed area and mean busy time (M = 1: v = p) both 0.5 * (1.75 + 1) +
    1.5 * (1 + 0.5) = 3.625. Unweighted they would give 4.25 > OPT; by ``v / w`` 5.5.
    Ranks by layer of weight: both jobs at 1/2 (floors 2 and 1.5 against SRPT's 1.5 and
    3: 1.5 + 3), b alone at 3/2 - 1/2 (1.5): 0.5 * 4.5 + 1 * 1.5 = 3.75."""
    instance = _weighted_pair()
    assert brute_force_a(instance) == pytest.approx(4.0)
    values = {b.name: b.value / SAFETY for b in lower_bounds(instance)}
    lagrangian = values.pop("lagrangian")
    assert values == pytest.approx(
        {"job": 3.25, "squashed-area": 3.625, "mean-busy-time": 3.625, "rank": 3.75}
    )
    assert 3.625 * (1 - 1e-12) <= lagrangian <= 4.0
    _all_bounds_valid(instance, 4.0)


def test_equal_fractional_weights_are_not_unit_weights() -> None:
    """Catches SRPT's unweighted total used whenever all weights are *equal* (not 1): two
    1 s jobs on one GPU, both of weight 1/2: OPT = 0.5 * 1 + 0.5 * 2 = 1.5; unweighted
    SRPT would claim 3. Every bound must stay at most 1.5, the squashed one equal to it."""
    instance = Instance(
        Cluster((1,), 1.0, 1.0), (_unit("a", 0, 1, weight=0.5), _unit("b", 0, 1, weight=0.5))
    )
    assert brute_force_a(instance) == pytest.approx(1.5)
    _all_bounds_valid(instance, 1.5)
    squashed = lower_bounds(instance, names=["squashed-area"])[0]
    assert squashed.value == pytest.approx(1.5 * SAFETY)


def test_typed_jobs_of_one_shape_bounds_below_optimum() -> None:
    """Catches alpha_min's cache keyed without per-type compute times, seen through the
    bounds: a slow server and a fast one, 1 GPU each; two 1-GPU jobs, K = 1, compute 1 s
    unless listed; b computes 0.25 s on the fast type. OPT (oracle) = 1 + 0.25 = 1.25
    (each on its own server, b on the fast one). The slip gives b a's alpha_min 1, and
    the job bound 2 > OPT."""
    cluster = Cluster((1, 1), 1.0, 1.0, server_types=("slow", "fast"))
    a = _unit("a", 0.0, 1)
    b = _unit("b", 0.0, 1).replace(compute_times={"fast": 0.25})
    instance = Instance(cluster, (a, b))
    optimum = brute_force_a(instance)
    assert optimum == pytest.approx(1.25)
    _all_bounds_valid(instance, optimum)
    assert BoundInputs.of(instance).processing.tolist() == pytest.approx([1.0, 0.25])


@settings(max_examples=15)
@given(weighted_instances(typed=True))
def test_bounds_valid_when_every_alpha_min_search_gives_up(instance: Instance) -> None:
    """Catches a typed fallback above the true alpha_min (slowest B_intra, smallest server)
    reaching the bounds: with a search budget of 1 every alpha_min with an edge is its
    fallback, each bound is still at most the optimum, and the inexact count says so."""
    inputs = BoundInputs.of(instance, search_budget=1)
    optimum = brute_force_a(instance)
    for bound in lower_bounds(instance, inputs=inputs):
        assert bound.valid
        assert bound.value <= optimum * (1 + 1e-9)
    assert inputs.inexact == sum(1 for job in instance.jobs if job.edges)


def _lp_instance() -> Instance:
    """Four jobs of 1-2 GPUs on two GPUs, releases 0, 0.5, 1, 1.5: an LP that needs
    several simplex iterations."""
    return Instance(
        Cluster((2,), 1.0, 1.0),
        tuple(_unit(f"j{k}", 0.5 * k, k + 1, gpus=1 + k % 2) for k in range(4)),
    )


def test_iteration_limited_lp_is_not_a_valid_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches an LP stopped early whose objective is reported as a valid bound. HiGHS is
    stopped deterministically (presolve off, simplex, one iteration, no clock): the LP's
    bound must be invalid, and ``best_lower_bound`` must pass over it."""
    import highspy

    class StopsAfterOneIteration(highspy.Highs):
        def run(self) -> highspy.HighsStatus:
            self.setOptionValue("presolve", "off")
            self.setOptionValue("solver", "simplex")
            self.setOptionValue("simplex_iteration_limit", 1)
            return super().run()

    instance = _lp_instance()
    assert lower_bounds(instance, names=[], lp=LP)[0].valid  # solved, it is valid
    monkeypatch.setattr(highspy, "Highs", StopsAfterOneIteration)
    found = lower_bounds(instance, lp=LP)
    lp = next(b for b in found if b.name == "lp")
    assert not lp.valid
    assert "Iteration limit" in lp.notes[-1]
    best = best_lower_bound(found)
    assert best is not None and best.name != "lp"


def test_time_limited_lp_is_not_a_valid_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches a time limit counted as a finished LP (``status in (optimal, time limit)``).
    No clock is involved: HiGHS solves to the end, then reports the status a time limit
    gives; the bound must be invalid even though its number would be fine."""
    import highspy

    class ReportsTimeLimit(highspy.Highs):
        def getModelStatus(self) -> highspy.HighsModelStatus:
            return highspy.HighsModelStatus.kTimeLimit

    monkeypatch.setattr(highspy, "Highs", ReportsTimeLimit)
    lp = lower_bounds(_lp_instance(), names=[], lp=LP)[0]
    assert not lp.valid
    assert best_lower_bound([lp]) is None


def test_lp_on_a_coarse_grid_by_hand() -> None:
    """Catches a capacity row that counts a job in ``d - 1`` slots instead of ``d`` (a
    valid but weaker LP). Two 2.5 s jobs on one GPU at 0, OPT 2.5 + 5 = 7.5. At most 10
    variables give 1 s slots; durations round down to 2 slots; the LP's best is a at slot
    0 and b at slot 2 (or both halves of each): 2.5 + (2 + 2.5) = 7. The slip lets b
    start at slot 1: 6."""
    jobs = tuple(
        Job(id=name, release=0.0, iterations=1, compute_time=2.5, gpus=1) for name in "ab"
    )
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs)
    found = lower_bounds(instance, names=[], lp=LpSettings(max_variables=10, time_limit=1e7))
    assert found[0].valid and "slot 1 s" in found[0].notes[-1]
    assert found[0].value == pytest.approx(7.0 * SAFETY, rel=1e-12)


def test_lp_horizon_covers_a_serial_schedule() -> None:
    """Catches a horizon shorter than ``max r + sum K alpha_max`` (which every optimal
    schedule starts within): three 1 s jobs on one GPU at 0 must run one after another
    (OPT 1 + 2 + 3 = 6); without an upper bound the LP must be feasible, valid and at
    most 6 (an LP whose windows end early is infeasible)."""
    jobs = tuple(_unit(name, 0.0, 1) for name in "abc")
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs)
    assert brute_force_a(instance) == pytest.approx(6.0)
    lp = lower_bounds(instance, names=[], lp=LP)[0]
    assert lp.valid and 5.9 <= lp.value <= 6.0


def test_upper_bound_below_the_optimum_gives_no_valid_lp() -> None:
    """Catches the fixed-start LP (every window closed by the upper bound) reported valid
    without its capacity check: with a (wrong) upper bound of 2 for three 1 s jobs on one
    GPU, each must start at 0, which does not fit: no valid bound."""
    jobs = tuple(_unit(name, 0.0, 1) for name in "abc")
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs)
    lp = lower_bounds(instance, names=[], lp=LP, upper_bound=2.0)[0]
    assert not lp.valid


def test_best_lower_bound_skips_invalid_ones() -> None:
    """Catches ``best_lower_bound`` choosing by value alone: an invalid bound with a large
    finite value (100) is passed over for the largest valid one (7)."""
    bounds = [
        LowerBound(5.0, "job", True, 0.0, ()),
        LowerBound(100.0, "lp", False, 0.0, ("HiGHS stopped: Time limit reached",)),
        LowerBound(7.0, "mean-busy-time", True, 0.0, ()),
    ]
    best = best_lower_bound(bounds)
    assert best is not None and best.value == 7.0


def test_jobs_of_one_graph_with_other_traffic_bounds_below_optimum() -> None:
    """Catches alpha_min's cache keyed on the edge pairs without traffic, seen through the
    bounds: two 4-node paths on 2 + 2 GPUs (B_intra 2, B_inter 1), traffic (1, 4, 1) then
    (4, 1, 4), alpha_min 5 and 6 (the first cuts its two light end edges, the second its
    light middle one). The second is released at 100, after the first ends: OPT = 5 + 106
    = 111, which the job bound meets. Reusing the first job's cut fraction gives the
    second 7 and a 'bound' of 112 > OPT."""
    first = Job(
        id="a",
        release=0.0,
        iterations=1,
        compute_time=1.0,
        gpus=4,
        edges=((0, 1, 1.0), (1, 2, 4.0), (2, 3, 1.0)),
    )
    second = first.replace(id="b", release=100.0, edges=((0, 1, 4.0), (1, 2, 1.0), (2, 3, 4.0)))
    instance = Instance(Cluster((2, 2), 2.0, 1.0), (first, second))
    optimum = brute_force_a(instance)
    assert optimum == pytest.approx(111.0)
    _all_bounds_valid(instance, optimum)
    job = lower_bounds(instance, names=["job"])[0]
    assert job.value == pytest.approx(111.0 * SAFETY)


def _variables(bound: LowerBound) -> int:
    """The LP's column count, from its note (``slot 1 s, 6 slots, 20 variables``)."""
    note = next(n for n in bound.notes if n.endswith(" variables"))
    return int(note.split(", ")[-1].split()[0])


def test_integral_four_job_lp_is_small_and_below_the_optimum() -> None:
    """The LP's slot comes from the instance, 1 s here, so on a 4-job 2 x 2 integral
    instance the LP has a few dozen variables, is solved, and stays below the brute-force
    optimum. Catches a finer slot (400,000 variables, out of time in ``ddlsched bound
    --lp``)."""
    instance = generate(TINY_INTEGRAL, 0)
    assert proven_grid(instance) == 1.0
    lp = lower_bounds(instance, names=[], lp=LpSettings())[0]
    assert lp.valid and "slot 1 s" in lp.notes[-1]
    assert _variables(lp) <= 100
    assert lp.value <= brute_force_a(instance) * (1 + 1e-9)


def _two_slot_job(name: str, release: float, compute: float, gpus: int = 1) -> Job:
    """A job whose every term is a multiple of 2 s: compute ``2 x compute``, ring edges of
    2 GB on bandwidths 1 and 2 (1 s or 2 s per edge per iteration, 2 iterations)."""
    edges = tuple((u, (u + 1) % gpus, 2.0) for u in range(gpus)) if gpus > 2 else ()
    return Job(
        id=name, release=release, iterations=2, compute_time=compute, gpus=gpus, edges=edges
    )


def test_proven_grid_by_hand() -> None:
    """Terms all multiples of 2 s (releases 0 and 4, ``K c`` 2 and 6, ``K q / B`` 2 and 4):
    the grid is 2 s; a release of 1 s makes it 1 s; a compute term of 2.5 s leaves no grid."""
    cluster = Cluster((3, 3), 2.0, 1.0)
    jobs = (_two_slot_job("a", 0.0, 1.0, gpus=3), _two_slot_job("b", 4.0, 3.0))
    assert proven_grid(Instance(cluster, jobs)) == 2.0
    assert proven_grid(Instance(cluster, (*jobs, _two_slot_job("c", 1.0, 1.0)))) == 1.0
    assert proven_grid(Instance(cluster, (*jobs, _two_slot_job("d", 0.0, 1.25)))) is None


@settings(max_examples=15)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(1, 3), st.integers(1, 3)), min_size=1, max_size=4
    ),
    st.sampled_from([(2,), (1, 2), (3, 1)]),
)
def test_lp_on_a_coarse_proven_grid_is_valid_and_no_weaker(
    specs: list[tuple[int, int, int]], servers: tuple[int, ...]
) -> None:
    """Jobs whose releases and durations are multiples of 2 s: the LP is set on that grid
    or a coarser one (not the instance's 1 s slot), stays below the brute-force optimum, and is
    at least the LP on the finer 1 s grid (every coarse solution is a fine one), with
    either upper bound (none, or the optimum itself)."""
    jobs = tuple(
        _two_slot_job(f"j{k}", 2.0 * release, float(compute), gpus=min(gpus, sum(servers)))
        for k, (release, compute, gpus) in enumerate(specs)
    )
    instance = Instance(Cluster(servers, 2.0, 1.0), jobs)
    grid = proven_grid(instance)
    assert grid is not None and grid % 2.0 == 0.0
    optimum = brute_force_a(instance)
    inputs = BoundInputs.of(instance)
    for upper in (None, optimum):
        coarse = lp_bound(instance, inputs, LP, upper)
        fine = lp_bound(instance, inputs, LP, upper, slot=1.0)
        assert coarse.valid and fine.valid and any(f"slot {grid:g} s" in n for n in coarse.notes)
        assert coarse.value <= optimum * (1 + 1e-9)
        assert coarse.value >= fine.value * (1 - 1e-9)


def test_variable_budget_caps_the_grid() -> None:
    """A budget smaller than the instance's grid needs coarsens the slot (rounding down,
    valid) instead of exceeding the budget."""
    instance = generate(TINY_INTEGRAL.replace(num_jobs=6), 1)
    lp = lower_bounds(instance, names=[], lp=LpSettings(max_variables=4, time_limit=1e7))[0]
    assert lp.valid and _variables(lp) <= 4 * 6
    assert "slot 1 s" not in lp.notes[-1]
    assert lp.value <= brute_force_a(instance) * (1 + 1e-9)
