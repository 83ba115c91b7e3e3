"""Modes of a job (formulations.modes): GPU count vectors per server."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from formulations.modes import count_vectors


def test_count_vectors() -> None:
    """Count vectors: every split of g over servers within capacity, nothing else."""
    vectors = set(count_vectors(3, (2, 2)))
    assert vectors == {(2, 1), (1, 2)}
    assert len(set(count_vectors(4, (4, 4, 4, 4)))) == 35


def test_time_limited_mapping_is_never_called_optimal() -> None:
    """Regression (an "optimal" that was not): one 16-GPU job with random traffic on 4 x 4.

    Its only mode (4, 4, 4, 4) needs the mapping MILP, which a limit of one
    branch-and-bound node (deterministic: the same work on every machine) stops
    before it proves the best mapping; the mode's duration may then be too long,
    so the A model's optimum must not be reported optimal, nor its bound used.
    Catches: a time-limited mapping counted as proven (``modes_proven`` kept).
    """
    import numpy as np

    from ddlsched.core.model import Cluster, Instance, Job
    from ddlsched.core.params import ExactParams
    from ddlsched.core.result import SolveStatus
    from formulations.exact import solve_milp

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
    # for the instance whatever the modes (formulations.certify), and below the schedule.
    from formulations.certify import combinatorial_bound

    fast = combinatorial_bound(instance)
    assert fast is not None and result.best_bound == fast.value < result.objective
    assert any("did not prove fastest" in note for note in result.notes)


@given(
    st.integers(min_value=0, max_value=12),
    st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=5),
)
def test_count_vectors_total_counts_what_is_listed(gpus: int, capacities: list[int]) -> None:
    """The counting DP agrees with listing the vectors (brute force)."""
    from formulations.modes import count_vectors, count_vectors_total

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
    from ddlsched.core.model import Cluster, Instance, Job
    from formulations.modes import problem_a

    cluster = Cluster((2, 2), 1.0, 1.0, server_types=("k80", "v100"), type_bandwidth={"v100": 4.0})
    job = Job("j", 0.0, 2, 1.0, 4, ((0, 1, 8.0), (1, 2, 4.0), (2, 3, 4.0)))
    (slotted,) = problem_a(Instance(cluster, (job,))).jobs
    (mode,) = [m for m in slotted.modes if m.usage == (2, 2)]
    assert mode.duration == 22.0
    assert mode.mapping is not None and mode.mapping[0] == mode.mapping[1] == 1
