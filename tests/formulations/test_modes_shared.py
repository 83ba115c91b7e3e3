"""Modes of problem A shared across identical jobs and across vectors of one shape
(ddlsched.formulations.modes.problem_a): every mode's duration is the oracle's fastest map
with those counts (tests/oracles.py, every node-to-server map), for jobs of one GPU count
and edge set that differ in traffic or compute times, on plain and typed clusters.
"""

from __future__ import annotations

import pytest
from ddlsched.formulations.modes import problem_a
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha
from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import modes_a
from tests.strategies import clusters, same_shape_jobs, typed_clusters


@settings(max_examples=30, deadline=None)
@given(st.one_of(clusters(max_servers=3, max_gpus=3), typed_clusters()), st.data())
def test_every_mode_is_the_fastest_map_with_its_counts(
    cluster: Cluster, data: st.DataObject
) -> None:
    """Jobs of one shape but different traffic or compute times each get, per vector of
    counts, the oracle's least duration, and a mapping with exactly those counts that runs
    that long: a cache shared by jobs or shapes never hands one job another's mapping time."""
    jobs = data.draw(same_shape_jobs(cluster, max_jobs=3, max_gpus=4))
    instance = Instance(cluster, tuple(jobs))
    slotted = problem_a(instance)
    assert not slotted.unproven_modes and not slotted.unenumerated
    for job, slotted_job in zip(instance.jobs, slotted.jobs, strict=True):
        oracle = dict(modes_a(job, instance))
        found = {mode.usage: mode for mode in slotted_job.modes}
        assert set(found) == set(oracle)
        for counts, mode in found.items():
            assert mode.duration == pytest.approx(oracle[counts], rel=1e-9)
            assert mode.mapping is not None
            assert tuple(mode.mapping.count(h) for h in range(cluster.num_servers)) == counts
            assert job.iterations * alpha(job, cluster, mode.mapping) == pytest.approx(
                mode.duration, rel=1e-12
            )


def test_jobs_differing_only_in_per_type_compute_times_get_their_own_durations() -> None:
    """Two 2-GPU jobs alike but for their compute time on type ``b``: on a cluster of one
    ``a`` and one ``b`` server the job slow on ``b`` has its one-server mode on ``b`` slower
    (``K (c_b + q / B)``), hand-worked, and equal to the oracle's."""
    cluster = Cluster((2, 2), 2.0, 1.0, server_types=("a", "b"))
    base = Job(
        id="fast", release=0.0, iterations=2, compute_time=1.0, gpus=2, edges=((0, 1, 2.0),)
    )
    slow = base.replace(id="slow", compute_times={"b": 3.0})
    instance = Instance(cluster, (base, slow))
    slotted = problem_a(instance)
    durations = [{m.usage: m.duration for m in job.modes} for job in slotted.jobs]
    assert durations[0][(0, 2)] == pytest.approx(2 * (1.0 + 2.0 / 2.0))
    assert durations[1][(0, 2)] == pytest.approx(2 * (3.0 + 2.0 / 2.0))
    for job, found in zip(instance.jobs, durations, strict=True):
        assert found == pytest.approx(dict(modes_a(job, instance)))
