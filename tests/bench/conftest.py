"""Tiny libraries of the benchmark's format, built in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlsched.bench.library import Certificate, Entry, write_library
from ddlsched.core.model import Cluster, Instance, Job, Schedule, ScheduledJob


def two_job_entry(name: str = "S-hand-1x2-j2") -> Entry:
    """Two jobs released at 0 on one server of 2 GPUs: ``wide`` (2 GPUs, 2 s, weight 1) and
    ``narrow`` (1 GPU, 1 s, weight 2). Worked by hand: ``narrow`` first ends at 1, ``wide``
    then at 3, ``sum w C = 2 * 1 + 3 = 5``; the other order gives ``2 + 2 * 3 = 8``; so the
    optimum is 5, and since both start as early as their order allows, no schedule is
    better."""
    instance = Instance(
        Cluster.uniform(1, 2, 2.0, 1.0),
        (
            Job("wide", 0.0, 1, 2.0, 2, weight=1.0),
            Job("narrow", 0.0, 1, 1.0, 1, weight=2.0),
        ),
    )
    schedule = Schedule(
        (ScheduledJob("narrow", 0.0, 1.0, (0,)), ScheduledJob("wide", 1.0, 3.0, (0, 0)))
    )
    certificate = Certificate(
        problem="A",
        status="optimal",
        lower_bound=5.0,
        lower_bound_name="exact",
        lower_bound_settings={"method": "hand"},
        upper_bound=5.0,
        schedule=schedule,
        command="worked by hand",
        version="0.1.0",
        produced="2026-11-29",
    )
    return Entry(name, "S", {"hand": "two jobs"}, instance, certificate)


def released_entry(name: str = "M-hand-1x2-j2-r") -> Entry:
    """The two jobs of :func:`two_job_entry`, ``narrow`` released at 4 and weight 2: run
    ``wide`` at once [0, 2) and ``narrow`` at [4, 5): ``sum w C = 2 + 2 * 5 = 12``, each at
    its release, so optimal; the flow is ``12 - 2 * 4 = 4``. Stored as an interval
    ``[10, 12]`` to give a library an entry with an open gap."""
    base = two_job_entry()
    instance = base.instance.replace(
        jobs=(base.instance.jobs[0], base.instance.jobs[1].replace(release=4.0))
    )
    schedule = Schedule(
        (ScheduledJob("wide", 0.0, 2.0, (0, 0)), ScheduledJob("narrow", 4.0, 5.0, (0,)))
    )
    certificate = Certificate(
        problem="A",
        status="interval",
        lower_bound=10.0,
        lower_bound_name="job",
        lower_bound_settings={},
        upper_bound=12.0,
        schedule=schedule,
        command="worked by hand",
        version="0.1.0",
        produced="2026-11-29",
    )
    return Entry(name, "M", {"hand": "released"}, instance, certificate)


@pytest.fixture
def tiny_library(tmp_path: Path) -> Path:
    """A library of the two hand-worked entries in a temporary folder."""
    folder = tmp_path / "library"
    write_library([released_entry(), two_job_entry()], folder)
    return folder
