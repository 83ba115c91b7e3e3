"""Tiny hand-made instances and documents shared by the tests, each saying why it matters.

Fixtures in ``tests/conftest.py`` wrap these; tests that need a plain value
(outside pytest's fixtures, e.g. inside a hypothesis test) import them.
"""

from __future__ import annotations

import json

from ddlsched.core.graphs import ring_edges
from ddlsched.core.model import Cluster, Instance, Job, Parallelism

FORMAT_EXAMPLE = {
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
"""The instance format's worked example: one 2-GPU data-parallel job on 2 x 4 GPUs."""

DELETE = object()
"""Marks a field :func:`mutated` removes."""


def mutated(path: list[object], value: object) -> dict[str, object]:
    """A copy of :data:`FORMAT_EXAMPLE` with the field at ``path`` set to ``value`` (or
    deleted)."""
    doc = json.loads(json.dumps(FORMAT_EXAMPLE))
    target = doc
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    if value is DELETE:
        del target[path[-1]]  # type: ignore[arg-type]
    else:
        target[path[-1]] = value  # type: ignore[index]
    return doc


def two_by_two() -> Cluster:
    """Two servers of two GPUs; intra bandwidth twice inter."""
    return Cluster((2, 2), bandwidth_intra=2.0, bandwidth_inter=1.0)


def ring_instance() -> Instance:
    """A 4-worker data-parallel ring that cannot fit one server, and a 1-GPU job released at 1.

    Interesting because the best mapping must cut the ring: any split into
    two pairs cuts 2 of the 4 edges, and a split of adjacent pairs (0,1 |
    2,3) cuts exactly 2 edges, so ``alpha_min = c + 2q/B_intra + 2q/B_inter``
    = 1 + 1 + 2 = 4; all cut gives ``alpha_max = 1 + 4 = 5``.
    """
    ring = Job(
        id="ring",
        release=0.0,
        iterations=2,
        compute_time=1.0,
        gpus=4,
        parallelism=Parallelism(dp=4),
        edges=ring_edges(4, 1.0),
    )
    single = Job(id="solo", release=1.0, iterations=3, compute_time=1.0, gpus=1)
    return Instance(cluster=two_by_two(), jobs=(ring, single))


def triangle_job() -> Job:
    """Three workers all talking to each other (unit traffic, compute 1).

    Interesting because on two servers of two GPUs no mapping cuts all three
    edges, so the all-cut ``alpha_max`` (1 + 3 = 4) is only an upper bound.
    """
    return Job(
        id="t",
        release=0,
        iterations=1,
        compute_time=1.0,
        gpus=3,
        edges=((0, 1, 1.0), (1, 2, 1.0), (0, 2, 1.0)),
    )


MIXED_EXAMPLE = {
    "format": "ddlsched.instance/2",
    "cluster": {
        "gpus_per_server": [2, 2],
        "bandwidth_intra": 4.0,
        "bandwidth_inter": 1.0,
        "server_types": ["v100", "k80"],
        "type_bandwidth": {"v100": 8.0},
    },
    "slot": 1.0,
    "jobs": [
        {
            "id": "j0",
            "release": 0.0,
            "iterations": 2,
            "compute_time": 2.0,
            "gpus": 2,
            "edges": [[0, 1, 8.0]],
            "compute_times": {"v100": 1.0, "k80": 3.0},
        }
    ],
}
"""A version-2 document: one 2-GPU job with 8 GB per iteration on a V100 server
(B_intra 8) and a K80 server (B_intra 4), B_inter 1. By hand: both workers on the
V100 server 1 + 8/8 = 2 s per iteration; on the K80 server 3 + 8/4 = 5; split,
the slower type's 3 + 8/1 = 11. So alpha_min = 2, alpha_max = 11, rho = 5.5."""


def two_blockers() -> Instance:
    """Two 2-GPU jobs of 4 s on one 2-GPU server, both at 0: one waits for the other.
    OPT = 4 + 8 = 12; the job bound counts no waiting (8)."""
    jobs = tuple(
        Job(id=f"j{k}", release=0.0, iterations=4, compute_time=1.0, gpus=2) for k in (0, 1)
    )
    return Instance(cluster=Cluster((2,), bandwidth_intra=1.0, bandwidth_inter=1.0), jobs=jobs)
