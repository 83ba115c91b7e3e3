"""Modes of a job (formulations.modes): GPU count vectors per server."""

from __future__ import annotations

from formulations.modes import count_vectors


def test_count_vectors() -> None:
    """Count vectors: every split of g over servers within capacity, nothing else."""
    vectors = set(count_vectors(3, (2, 2)))
    assert vectors == {(2, 1), (1, 2)}
    assert len(set(count_vectors(4, (4, 4, 4, 4)))) == 35
