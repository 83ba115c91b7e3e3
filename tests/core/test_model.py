"""The data model (ddlsched.core.model): validation on construction, immutability, replace()."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ddlsched.core.io import instance_from_dict
from ddlsched.core.model import (
    MAX_SCHEDULE_TIME,
    MAX_TIME,
    Cluster,
    InputError,
    Job,
    Piece,
    ScheduledJob,
)
from tests.examples import FORMAT_EXAMPLE, mutated


def test_duplicate_ids_rejected() -> None:
    """Two jobs with one id are an error naming the id."""
    doc = mutated(["jobs"], FORMAT_EXAMPLE["jobs"] * 2)
    with pytest.raises(InputError, match="duplicate job id 'j0'"):
        instance_from_dict(doc)


def test_repeated_edge_rejected() -> None:
    """An edge given twice (in either direction) is an error, not silently merged."""
    doc = mutated(["jobs", 0, "edges"], [[0, 1, 1.0], [1, 0, 2.0]])
    with pytest.raises(InputError, match="repeated edge"):
        instance_from_dict(doc)


def test_objects_are_immutable() -> None:
    """Solvers cannot mutate an instance: assignment raises."""
    instance = instance_from_dict(FORMAT_EXAMPLE)
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


_PIECE_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [0.0, 1.5, -0.0, -1.0, MAX_TIME, MAX_SCHEDULE_TIME, MAX_SCHEDULE_TIME * 2, True, 3, 2.0]
    ).map(lambda value: np.float64(value) if value == 2.0 else value),
)
_MAPPINGS = st.one_of(
    st.none(),
    st.lists(st.sampled_from([0, 1, 2, -1, True, np.int64(1), 1.0]), max_size=3).map(tuple),
    st.sampled_from(["01", [0, 1], b"\x00"]),
)


@settings(max_examples=300)
@given(start=_PIECE_VALUES, end=_PIECE_VALUES, mapping=_MAPPINGS)
@example(start=math.nan, end=2.0, mapping=(0, 1))  # NaN passes `not (x < 0 or x > MAX)`
@example(start=1.0, end=math.nan, mapping=None)
@example(start=1.0, end=2.0, mapping=(0, True))
@example(start=1.0, end=2.0, mapping=(np.int64(1),))
@example(start=np.float64(1.0), end=2.0, mapping=(0,))
@example(start=-1.0, end=2.0, mapping=(0,))
@example(start=1.0, end=MAX_SCHEDULE_TIME * 2, mapping=(0,))
def test_a_piece_is_judged_alike_on_the_fast_path_and_the_full_check(
    start: object, end: object, mapping: object
) -> None:
    """A :class:`Piece` (the simulator's pieces take a fast path) and the same values as a
    plain list or tuple (the full check): all refused, or all accepted as the same piece. Catches
    a fast path that lets through NaN, a negative or too late time, a bool, a numpy number
    or a negative server that the full check refuses or converts."""
    outcomes = []
    forms = (Piece(start, end, mapping), [start, end, mapping], (start, end, mapping))  # type: ignore[arg-type]
    for given_piece in forms:
        try:
            entry = ScheduledJob("a", 0.0, None, None, (given_piece,))  # type: ignore[arg-type]
        except InputError:
            outcomes.append("refused")
        else:
            (piece,) = entry.pieces or ()
            outcomes.append(
                (type(piece).__name__, piece.start, piece.end, piece.mapping,
                 tuple(type(s) for s in piece.mapping or ()), type(piece.start))
            )  # fmt: skip
    assert outcomes[0] == outcomes[1] == outcomes[2]


@pytest.mark.parametrize("servers", [0, -1, 2.5, True])
def test_a_uniform_cluster_of_no_servers_names_the_argument(servers: object) -> None:
    """``Cluster.uniform`` refuses a server count that is not a positive integer, naming the
    argument (not a count of 0 GPUs per server further down)."""
    with pytest.raises(InputError, match=r"^servers: "):
        Cluster.uniform(servers, 4, 2.0, 1.0)  # type: ignore[arg-type]
