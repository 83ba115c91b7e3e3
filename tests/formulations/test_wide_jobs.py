"""Jobs and clusters far wider than the hand-sized ones: the count vectors of a mode and
the cut search must not recurse once per server or per GPU, and a mapping MILP too large
to build within a time limit is not built."""

from __future__ import annotations

import itertools

from ddlsched.formulations.modes import (
    MAX_MAPPING_CELLS,
    best_mapping_for_counts,
    count_vectors,
    count_vectors_total,
)
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import simulate
from ddlsched.core.alpha import MAX_SEARCH_DEPTH, extreme_cut
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams


def _ring(job_id: str, gpus: int) -> Job:
    """A ``gpus``-node ring (each node sends 1 GB to the next), 10 iterations of 1 s."""
    edges = tuple((k, (k + 1) % gpus, 1.0) for k in range(gpus))
    return Job(job_id, 0.0, 10, 1.0, gpus, edges)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(1, 4), min_size=0, max_size=5),
    st.integers(0, 12),
)
def test_count_vectors_are_every_vector_in_decreasing_order(
    capacities: list[int], gpus: int
) -> None:
    """The vectors are exactly those a product over every server's counts keeps (sum
    ``gpus``, each at most its capacity), in decreasing lexicographic order, and as many as
    the dynamic program counts."""
    expected = sorted(
        (
            vector
            for vector in itertools.product(*(range(c + 1) for c in capacities))
            if sum(vector) == gpus
        ),
        reverse=True,
    )
    assert list(count_vectors(gpus, capacities)) == expected
    assert count_vectors_total(gpus, capacities) == len(expected)


def test_count_vectors_on_five_thousand_servers() -> None:
    """Five thousand 1-GPU servers (a recursion per server stopped at a thousand): the
    first vector fills the first servers, the last the last ones."""
    vectors = count_vectors(3, [1] * 5000)
    assert next(vectors) == (1, 1, 1) + (0,) * 4997
    *_, last = count_vectors(1, [1] * 1500)
    assert last == (0,) * 1499 + (1,)


def test_the_cut_search_declines_a_job_wider_than_its_depth() -> None:
    """A ring one GPU wider than :data:`MAX_SEARCH_DEPTH` is declined (``None``, as an
    exhausted budget), and one at the depth is still searched to its end without running
    out of stack: on one server that holds it whole its least cut is 0."""
    assert extreme_cut(_ring("w", MAX_SEARCH_DEPTH + 1), [8] * 60, maximize=False) is None
    found = extreme_cut(_ring("w", MAX_SEARCH_DEPTH), [MAX_SEARCH_DEPTH], maximize=False)
    assert found is not None and found[0] == 0.0


def test_a_500_gpu_job_on_a_thousand_servers_is_scheduled() -> None:
    """A 500-GPU ring beside two 1-GPU jobs on 1,000 x 8 GPUs: A-SRPT answers with a
    schedule the verifier accepts (its metrics searched the ring's least cut)."""
    jobs = (_ring("wide", 500), Job("a", 0.0, 5, 1.0, 1), Job("b", 1.0, 5, 1.0, 1))
    instance = Instance(Cluster((8,) * 1000, 20.0, 1.0), jobs)
    result = simulate(instance, "asrpt", bound=False)
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible


def test_a_mapping_milp_too_large_to_build_is_not_built() -> None:
    """The 500-GPU ring on 1,000 servers (far past :data:`MAX_MAPPING_CELLS` node or edge x
    server pairs) gets its nodes in server order, unproven, without a MILP even with no
    deadline."""
    job = _ring("wide", 500)
    cluster = Cluster((8,) * 1000, 20.0, 1.0)
    assert (job.gpus + len(job.edges)) * cluster.num_servers > MAX_MAPPING_CELLS
    counts = (8,) * 62 + (4,) + (0,) * 937
    mapping, proven = best_mapping_for_counts(job, cluster, counts, ExactParams())
    assert not proven
    assert [mapping.count(h) for h in range(cluster.num_servers)] == list(counts)
