"""The JSON formats (ddlsched.core.io): examples read, errors named, round trips, atomic writes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given

from ddlsched.core.io import (
    dumps,
    instance_from_dict,
    read_instance,
    schedule_from_dict,
    write_instance,
)
from ddlsched.core.model import (
    InputError,
    Instance,
    Parallelism,
    Schedule,
    ScheduledJob,
)
from tests.examples import DELETE, FORMAT_EXAMPLE, mutated
from tests.strategies import generated_instances, hand_instances


def test_the_format_specification_example_reads_as_written() -> None:
    """The example document of the format's specification reads as written."""
    instance = instance_from_dict(FORMAT_EXAMPLE)
    job = instance.jobs[0]
    assert job.gpus == 2 and job.parallelism == Parallelism(dp=2)
    assert job.edges == ((0, 1, 4.0),)
    assert job.features["model"] == "resnet50"
    assert instance.cluster.num_gpus == 8


def test_defaults_apply() -> None:
    """weight defaults to 1, slot to 1.0, features to {}, gpus to dp*pp*tp."""
    doc = json.loads(json.dumps(FORMAT_EXAMPLE))
    del doc["slot"]
    job = doc["jobs"][0]
    for key in ("weight", "features", "gpus"):
        del job[key]
    instance = instance_from_dict(doc)
    assert instance.slot == 1.0
    assert instance.jobs[0].weight == 1.0
    assert dict(instance.jobs[0].features) == {}
    assert instance.jobs[0].gpus == 2


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (["format"], "ddlsched.instance/9", "format"),
        (["format"], DELETE, "format: missing"),
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
        (["jobz"], [], "instance.jobz: unknown field"),
        (["jobs", 0, "id"], DELETE, "id: missing"),
        (["jobs", 0, "weight"], 0, "weight: must be > 0"),
        (["slot"], 0, "slot: must be >= 1e-06"),
        (["slot"], 1e-300, "slot: must be >= 1e-06"),
        (["cluster", "bandwidth_inter"], 5e-324, "cluster.bandwidth_inter: must be >= 1e-06"),
        (["jobs", 0, "compute_time"], 1e308, "compute_time: must be <= 1e+06, got 1e+308"),
        (["jobs", 0, "weight"], 1e308, "weight: must be <= 1e+06, got 1e+308"),
        (
            ["jobs", 0, "iterations"],
            10**400,
            "iterations: must be <= 1,000,000,000,000, got 1000",
        ),
        (["jobs", 0, "release"], 1e200, "release: must be <= 1e+11, got 1e+200"),
        (["jobs"], [], "needs at least one job"),
    ],
)
def test_bad_fields_are_named(path: list[object], value: object, expected: str) -> None:
    """Each kind of bad input raises InputError whose message names the field."""
    with pytest.raises(InputError) as caught:
        instance_from_dict(mutated(path, value))
    assert expected in str(caught.value)


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


def test_written_files_read_back_identically(tmp_path, ring_instance) -> None:  # type: ignore[no-untyped-def]
    """Write, read, write again: the same bytes, and no temporary file left behind."""
    from ddlsched.core.io import read_instance, write_instance

    first, second = tmp_path / "a.json", tmp_path / "b.json"
    write_instance(ring_instance, first)
    again = read_instance(first)
    assert again == ring_instance
    write_instance(again, second)
    assert first.read_bytes() == second.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("{not json", "line 1"),
        ('{"format": "ddlsched.instance/1", "cluster": NaN}', "NaN"),
    ],
)
def test_read_errors_name_the_file(tmp_path, content: str | None, expected: str) -> None:  # type: ignore[no-untyped-def]
    """A missing or malformed file is an InputError naming the file and the problem."""
    from ddlsched.core.io import read_instance

    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError) as error:
        read_instance(path)
    assert str(path) in str(error.value) and expected in str(error.value)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{\n  "x": [1,\n   -Infinity]}', "-Infinity is not a number in JSON at line 3, column 4"),
    ],
)
def test_hostile_json_is_one_clear_error(tmp_path, content: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    """Duplicated keys, absurd nesting and non-finite literals: an InputError naming the
    file (and, for a literal, its line and column), never a crash.

    A duplicated key is refused rather than letting the last one win silently, and deep
    nesting is an InputError rather than a RecursionError.
    """
    from ddlsched.core.io import read_schedule

    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError) as error:
        read_schedule(path)
    assert str(path) in str(error.value) and expected in str(error.value)


def test_written_files_have_normal_permissions(tmp_path, ring_instance) -> None:  # type: ignore[no-untyped-def]
    """A new file gets 0666 minus the umask (not the temporary file's 0600)."""
    old = os.umask(0o022)
    try:
        write_instance(ring_instance, tmp_path / "a.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644


def test_writes_go_through_symlinks(tmp_path, ring_instance) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "real.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_instance(ring_instance, link)
    assert link.is_symlink() and read_instance(target) == ring_instance
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the replaced file's permissions kept


@pytest.mark.parametrize("where", ["folder", "device", "under_file"])
def test_never_replaces_what_is_not_a_file(tmp_path, ring_instance, where: str) -> None:  # type: ignore[no-untyped-def]
    path = {
        "folder": tmp_path,
        "device": Path("/dev/null"),
        "under_file": tmp_path / "plain" / "x.json",
    }[where]
    (tmp_path / "plain").write_text("")
    says = {"folder": "it is a folder", "device": "it is not a regular file"}.get(where, "")
    with pytest.raises(InputError, match=f"cannot write there.*{says}"):
        write_instance(ring_instance, path)
    assert Path("/dev/null").is_char_device()


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_dangling_link_never_creates_the_folders_it_points_to(
    tmp_path: Path, ring_instance: Instance, link: str
) -> None:
    """Writing through a link whose target's folder does not exist (the file is a dangling
    link, or a folder on the way is one) is refused in one line naming the link, and no
    folder is created anywhere; a dangling link whose target's folder exists is written
    through, and folders of a path without links are still created. Guards against
    ``--out`` creating a link target's folders anywhere on disk."""
    elsewhere = tmp_path / "elsewhere"
    if link == "file":
        path = tmp_path / "out.json"
        path.symlink_to(elsewhere / "deep" / "x.json")
    else:
        (tmp_path / "out").symlink_to(elsewhere / "deep")
        path = tmp_path / "out" / "more" / "x.json"
    with pytest.raises(InputError, match=rf"{tmp_path}/out.*: a link to .*elsewhere/deep"):
        write_instance(ring_instance, path)
    assert not elsewhere.exists()
    (elsewhere / "deep").mkdir(parents=True)
    write_instance(ring_instance, path)
    assert read_instance(path) == ring_instance and (elsewhere / "deep").is_dir()
    plain = tmp_path / "new" / "folders" / "x.json"
    write_instance(ring_instance, plain)
    assert read_instance(plain) == ring_instance
