"""The data model validates itself, names what is wrong, and round-trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from ddlsched.core.io import dumps, instance_from_dict, schedule_from_dict
from ddlsched.core.model import (
    Cluster,
    InputError,
    Instance,
    Job,
    Parallelism,
    Schedule,
    ScheduledJob,
)
from tests.strategies import generated_instances, hand_instances

ISSUE_EXAMPLE = {
    "format": "ddlsched.instance/1",
    "cluster": {"gpus_per_server": [4, 4], "bandwidth_intra": 4.0, "bandwidth_inter": 1.0},
    "slot": 1.0,
    "jobs": [
        {
            "id": "j0",
            "release": 0.0,
            "weight": 1.0,
            "iterations": 3,
            "compute_time": 1.0,
            "gpus": 2,
            "parallelism": {"dp": 2, "pp": 1, "tp": 1},
            "edges": [[0, 1, 4.0]],
            "features": {"model": "resnet50", "user": "u3"},
        }
    ],
}


def test_issue_example_reads() -> None:
    """The example document of the format's specification reads as written."""
    instance = instance_from_dict(ISSUE_EXAMPLE)
    job = instance.jobs[0]
    assert job.gpus == 2 and job.parallelism == Parallelism(dp=2)
    assert job.edges == ((0, 1, 4.0),)
    assert job.features["model"] == "resnet50"
    assert instance.cluster.num_gpus == 8


def test_defaults_apply() -> None:
    """weight defaults to 1, slot to 1.0, features to {}, gpus to dp*pp*tp."""
    doc = json.loads(json.dumps(ISSUE_EXAMPLE))
    del doc["slot"]
    job = doc["jobs"][0]
    for key in ("weight", "features", "gpus"):
        del job[key]
    instance = instance_from_dict(doc)
    assert instance.slot == 1.0
    assert instance.jobs[0].weight == 1.0
    assert dict(instance.jobs[0].features) == {}
    assert instance.jobs[0].gpus == 2


def _mutated(path: list[object], value: object) -> dict[str, object]:
    doc = json.loads(json.dumps(ISSUE_EXAMPLE))
    target = doc
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    if value is _DELETE:
        del target[path[-1]]  # type: ignore[arg-type]
    else:
        target[path[-1]] = value  # type: ignore[index]
    return doc


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (["format"], "ddlsched.instance/2", "format"),
        (["format"], _DELETE, "format: missing"),
        (["cluster", "bandwidth_inter"], 0.0, "cluster.bandwidth_inter"),
        (["cluster", "bandwidth_inter"], 8.0, "must be <= bandwidth_intra"),
        (["cluster", "gpus_per_server"], [], "needs at least one server"),
        (["cluster", "gpus_per_server", 0], 0, "cluster.gpus_per_server[0]"),
        (["jobs", 0, "release"], -1.0, "release: must be >= 0"),
        (["jobs", 0, "release"], "0", "release: expected a number"),
        (["jobs", 0, "iterations"], 0, "iterations: must be >= 1"),
        (["jobs", 0, "iterations"], 2.5, "iterations: expected an integer"),
        (["jobs", 0, "compute_time"], 0.0, "compute_time: must be > 0"),
        (["jobs", 0, "gpus"], 3, "does not match parallelism"),
        (["jobs", 0, "gpus"], True, "gpus: expected an integer"),
        (
            ["jobs", 0],
            {"id": "w", "release": 0, "iterations": 1, "compute_time": 1.0, "gpus": 9},
            "cluster has only 8",
        ),
        (["jobs", 0, "edges", 0], [0, 2, 1.0], "node 2 does not exist"),
        (["jobs", 0, "edges", 0], [0, 0, 1.0], "self-loop"),
        (["jobs", 0, "edges", 0], [0, 1, -1.0], "must be > 0"),
        (["jobs", 0, "edges", 0], [0, 1], "expected [u, v, traffic]"),
        (["jobs", 0, "relase"], 1.0, "relase: unknown field"),
        (["jobs", 0, "id"], _DELETE, "id: missing"),
        (["jobs", 0, "weight"], 0, "weight: must be > 0"),
        (["slot"], 0, "slot: must be > 0"),
        (["jobs"], [], "needs at least one job"),
    ],
)
def test_bad_fields_are_named(path: list[object], value: object, expected: str) -> None:
    """Each kind of bad input raises InputError whose message names the field."""
    with pytest.raises(InputError) as caught:
        instance_from_dict(_mutated(path, value))
    assert expected in str(caught.value)


def test_duplicate_ids_rejected() -> None:
    """Two jobs with one id are an error naming the id."""
    doc = _mutated(["jobs"], ISSUE_EXAMPLE["jobs"] * 2)
    with pytest.raises(InputError, match="duplicate job id 'j0'"):
        instance_from_dict(doc)


def test_repeated_edge_rejected() -> None:
    """An edge given twice (in either direction) is an error, not silently merged."""
    doc = _mutated(["jobs", 0, "edges"], [[0, 1, 1.0], [1, 0, 2.0]])
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


@given(generated_instances())
def test_generated_instances_round_trip(instance: Instance) -> None:
    """JSON round-trip is exact for every generated instance."""
    text = dumps(instance.to_dict())
    again = instance_from_dict(json.loads(text))
    assert again == instance
    assert dumps(again.to_dict()) == text


@given(hand_instances())
def test_hand_instances_round_trip(instance: Instance) -> None:
    """JSON round-trip is exact for arbitrary job graphs too."""
    assert instance_from_dict(json.loads(dumps(instance.to_dict()))) == instance


def test_schedule_round_trip_and_problem() -> None:
    """Schedules round-trip, A2 pieces included; an unknown problem is named."""
    schedule = Schedule(
        jobs=(ScheduledJob("a", 0.0, 2.0, pieces=((0.0, 1.0), (1.5, 2.0))),), problem="A2"
    )
    again = schedule_from_dict(json.loads(dumps(schedule.to_dict())))
    assert again == schedule
    with pytest.raises(InputError, match=r"schedule\.problem"):
        schedule_from_dict({"format": "ddlsched.schedule/1", "problem": "B", "jobs": []})
    with pytest.raises(InputError, match=r"mapping\[1\]"):
        schedule_from_dict(
            {
                "format": "ddlsched.schedule/1",
                "jobs": [{"id": "a", "start": 0, "mapping": [0, -1]}],
            }
        )
