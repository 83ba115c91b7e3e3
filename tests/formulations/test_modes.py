"""Modes of a job (ddlsched.formulations.modes): GPU count vectors per server."""

from __future__ import annotations

import pytest
from ddlsched.formulations.modes import count_vectors, problem_a
from hypothesis import given
from hypothesis import strategies as st

from ddlsched.core.generators import generate
from ddlsched.core.model import Cluster, Instance
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus
from tests.strategies import TINY_INTEGRAL


def test_count_vectors() -> None:
    """Count vectors: every split of g over servers within capacity, nothing else."""
    vectors = set(count_vectors(3, (2, 2)))
    assert vectors == {(2, 1), (1, 2)}
    assert len(set(count_vectors(4, (4, 4, 4, 4)))) == 35


def test_time_limited_mapping_is_never_called_optimal() -> None:
    """One 16-GPU job with random traffic on 4 x 4: no unproven "optimal".

    Its only mode (4, 4, 4, 4) needs the mapping MILP, which a limit of one
    branch-and-bound node (deterministic: the same work on every machine) stops
    before it proves the best mapping; the mode's duration may then be too long,
    so the A model's optimum must not be reported optimal, nor its bound used.
    Catches: a time-limited mapping counted as proven (``modes_proven`` kept).
    """
    import numpy as np
    from ddlsched.formulations.milp import solve_milp

    from ddlsched.core.model import Cluster, Instance, Job
    from ddlsched.core.params import ExactParams
    from ddlsched.core.result import SolveStatus

    rng = np.random.default_rng(7)
    edges = tuple(
        (u, v, float(rng.integers(1, 10)))
        for u in range(16)
        for v in range(u + 1, 16)
        if rng.random() < 0.5
    )
    job = Job(id="wide", release=0, iterations=1, compute_time=1.0, gpus=16, edges=edges)
    instance = Instance(Cluster.uniform(4, 4, 4.0, 1.0), (job,))
    result = solve_milp(instance, "A", ExactParams(time_limit=600, threads=1, node_limit=1))
    assert not result.facts["modes_proven"]
    assert result.status is SolveStatus.FEASIBLE
    # The solver's bound is not claimed; the only bound is the combinatorial one, valid
    # for the instance whatever the modes (ddlsched.formulations.certify), and below the schedule.
    from ddlsched.formulations.certify import combinatorial_bound

    fast = combinatorial_bound(instance)
    assert fast is not None and result.best_bound == fast.value < result.objective
    assert any("did not prove fastest" in note for note in result.notes)


@given(
    st.integers(min_value=0, max_value=12),
    st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=5),
)
def test_count_vectors_total_counts_what_is_listed(gpus: int, capacities: list[int]) -> None:
    """The counting DP agrees with listing the vectors (brute force)."""
    from ddlsched.formulations.modes import count_vectors, count_vectors_total

    assert count_vectors_total(gpus, capacities) == sum(1 for _ in count_vectors(gpus, capacities))


def test_typed_modes_put_heavy_pairs_on_fast_links() -> None:
    """GPU types: with counts (2, 2) on a K80 server (B_intra 1 = B_inter) and a V100
    server (B_intra 4), the pair joined by 8 GB belongs on the V100 server (server 1,
    the second one a search would try).

    By hand, compute 1 s everywhere: pairs {0,1} on V100 and {2,3} on K80 give
    1 + 8/4 + 4/1 + 4/1 = 11 s per iteration; swapped, 1 + 4/4 + 8/1 + 4/1 = 14;
    any other split cuts more. Two iterations: the mode lasts 22. A plain least
    cut cannot tell the two pairings apart.
    """
    from ddlsched.formulations.modes import problem_a

    from ddlsched.core.model import Cluster, Instance, Job

    cluster = Cluster((2, 2), 1.0, 1.0, server_types=("k80", "v100"), type_bandwidth={"v100": 4.0})
    job = Job("j", 0.0, 2, 1.0, 4, ((0, 1, 8.0), (1, 2, 4.0), (2, 3, 4.0)))
    (slotted,) = problem_a(Instance(cluster, (job,))).jobs
    (mode,) = [m for m in slotted.modes if m.usage == (2, 2)]
    assert mode.duration == 22.0
    assert mode.mapping is not None and mode.mapping[0] == mode.mapping[1] == 1


def _wide_and_narrow() -> Instance:
    """TINY_INTEGRAL seed 1: a 4-GPU job on 2 x 2 (one mode) and two 1-GPU jobs (two modes
    each); its optimum 13 is proven by the MILP, while the combinatorial bounds stay
    below it (11.9), so no proof can come from a bound."""
    return generate(TINY_INTEGRAL.replace(num_jobs=3), 1)


def test_mode_limit_stops_enumeration_and_every_job_keeps_a_mode() -> None:
    """``mode_limit`` 2 of 5 modes: the first job's one mode and one of the second's are
    enumerated; the second and third are listed as cut short; every job still has a mode
    (the third one's in-order mapping, unproven), and no count vector is invented."""
    instance = _wide_and_narrow()
    full = problem_a(instance)
    cut = problem_a(instance, ExactParams(mode_limit=2))
    assert [len(job.modes) for job in full.jobs] == [1, 2, 2]
    assert [len(job.modes) for job in cut.jobs] == [1, 1, 1]
    assert cut.unenumerated == ("j1", "j2") and full.unenumerated == ()
    assert "j2" in cut.unproven_modes
    for job in cut.jobs:
        assert {m.usage for m in job.modes} <= {m.usage for j in full.jobs for m in j.modes}


def test_deadline_stops_enumeration_on_an_injected_clock() -> None:
    """The deadline is read from the clock given (here a counter, one tick per reading, so
    no machine speed matters): with the deadline at tick 3 enumeration stops before the
    last modes, and those jobs are listed; with none, all five modes are enumerated."""
    ticks = iter(range(1_000))
    cut = problem_a(_wide_and_narrow(), deadline=3, clock=lambda: next(ticks))
    assert sum(len(job.modes) for job in cut.jobs) < 5
    assert cut.unenumerated != ()


def test_mapping_milp_is_skipped_past_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the deadline a mode the branch and bound cannot settle gets the in-order
    mapping, unproven, without starting a mapping MILP (which took the whole limit)."""
    import ddlsched.formulations.modes as modes

    def no_milp(*args: object, **kwargs: object) -> object:
        raise AssertionError("a mapping MILP was started past the deadline")

    monkeypatch.setattr(modes, "solve_mapping", no_milp)
    monkeypatch.setattr(modes, "extreme_cut", lambda *args, **kwargs: None)
    job = _wide_and_narrow().jobs[0]
    cluster = Cluster.uniform(2, 2, 2.0, 1.0)
    mapping, proven = modes.best_mapping_for_counts(
        job, cluster, (2, 2), ExactParams(), deadline=0.0, clock=lambda: 1.0
    )
    assert not proven and sorted(mapping) == [0, 0, 1, 1]


@pytest.mark.parametrize("method", ["milp", "cpsat", "exact"])
def test_unfinished_enumeration_is_never_optimal(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status honesty: with ``mode_limit`` 1 every method finds the true optimum's value
    (13) among the modes tried, yet reports ``feasible``, no solver bound, and says why;
    with all modes enumerated the same method proves 13 ``optimal`` (the control)."""
    from ddlsched.api import solve

    # The solvers' own statuses: the portfolio's bound child would prove 13 with the pooled
    # bound and a schedule of its own (a proof that needs no enumeration of the modes).
    monkeypatch.setattr("ddlsched.formulations.portfolio.RACE_BOUNDS", False)
    instance = _wide_and_narrow()
    params = ExactParams(time_limit=None, threads=1)
    full = solve(instance, method, params=params)
    assert full.status is SolveStatus.OPTIMAL and full.objective == pytest.approx(13.0)
    cut = solve(instance, method, params=params.replace(mode_limit=1))
    assert cut.objective == pytest.approx(13.0)
    assert cut.status is SolveStatus.FEASIBLE
    assert cut.best_bound < 13.0 - 1e-6
    assert any("not all enumerated" in note for note in cut.notes)
