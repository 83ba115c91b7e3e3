"""The data model (ddlsched.core.model): validation on construction, immutability, replace()."""

from __future__ import annotations

import pytest

from ddlsched.core.io import instance_from_dict
from ddlsched.core.model import (
    Cluster,
    InputError,
    Job,
)
from tests.examples import ISSUE_EXAMPLE, mutated


def test_duplicate_ids_rejected() -> None:
    """Two jobs with one id are an error naming the id."""
    doc = mutated(["jobs"], ISSUE_EXAMPLE["jobs"] * 2)
    with pytest.raises(InputError, match="duplicate job id 'j0'"):
        instance_from_dict(doc)


def test_repeated_edge_rejected() -> None:
    """An edge given twice (in either direction) is an error, not silently merged."""
    doc = mutated(["jobs", 0, "edges"], [[0, 1, 1.0], [1, 0, 2.0]])
    with pytest.raises(InputError, match="repeated edge"):
        instance_from_dict(doc)


def test_objects_are_immutable() -> None:
    """Solvers cannot mutate an instance: assignment raises."""
    instance = instance_from_dict(ISSUE_EXAMPLE)
    with pytest.raises(AttributeError):
        instance.jobs[0].release = 5.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        instance.jobs[0].features["model"] = "x"  # type: ignore[index]


def test_replace_revalidates() -> None:
    """replace() returns a validated copy and leaves the original alone."""
    cluster = Cluster((4, 4), 4.0, 1.0)
    assert cluster.replace(bandwidth_inter=2.0).bandwidth_inter == 2.0
    assert cluster.bandwidth_inter == 1.0
    with pytest.raises(InputError, match="bandwidth_inter"):
        cluster.replace(bandwidth_inter=-1.0)
    job = Job(id="a", release=0, iterations=1, compute_time=1.0, gpus=1)
    with pytest.raises(InputError, match="release"):
        job.replace(release=-2.0)
