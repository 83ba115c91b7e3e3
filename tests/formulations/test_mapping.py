"""The mapping MILP against brute force over all mappings."""

from __future__ import annotations

import pytest
from ddlsched.formulations.mapping import solve_mapping
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha
from ddlsched.core.model import Cluster, Job
from ddlsched.core.result import SolveStatus
from tests.oracles import all_alphas
from tests.strategies import clusters, jobs


@settings(max_examples=25)
@given(clusters(max_servers=3, max_gpus=3), st.data())
def test_min_and_max_match_brute_force(cluster: Cluster, data: st.DataObject) -> None:
    """Minimising and maximising alpha over free GPUs agree with enumeration."""
    free = [data.draw(st.integers(0, g)) for g in cluster.gpus_per_server]
    if sum(free) == 0:
        free[0] = cluster.gpus_per_server[0]
    job = data.draw(jobs(min(sum(free), 5)))
    values = all_alphas(job, cluster, free)
    for maximize, expected in ((False, min(values)), (True, max(values))):
        result = solve_mapping(job, cluster, free, maximize=maximize)
        assert result.status == SolveStatus.OPTIMAL
        assert result.alpha == pytest.approx(expected)
        assert result.mapping is not None
        assert result.alpha == pytest.approx(alpha(job, cluster, result.mapping))


def test_fixed_counts() -> None:
    """With counts (3, 1) on a 4-cycle the best mapping cuts exactly 2 edges."""
    ring = Job(
        id="r",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=4,
        edges=((0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (0, 3, 1.0)),
    )
    cluster = Cluster((4, 4), 2.0, 1.0)
    result = solve_mapping(ring, cluster, counts=(3, 1))
    assert result.alpha == pytest.approx(min(all_alphas(ring, cluster, [4, 4], (3, 1))))
    assert result.mapping is not None and sorted(result.mapping).count(0) == 3


def test_too_wide_job_is_a_clear_error() -> None:
    """A job wider than the free GPUs is rejected with both numbers."""
    job = Job(id="w", release=0, iterations=1, compute_time=1.0, gpus=3)
    with pytest.raises(ValueError, match="needs 3 GPUs, only 2 are free"):
        solve_mapping(job, Cluster((2, 2), 1.0, 1.0), [1, 1])
