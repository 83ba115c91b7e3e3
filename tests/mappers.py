"""Mappers the tests plug into policies."""

from __future__ import annotations

from ddlsched.algorithms.mapping import FirstFitMapper


class RefusesEvery:
    """First fit that refuses every ``k``-th request, whatever is free (a custom mapper may
    find no placement while enough GPUs are free: types, fragmentation, its own state)."""

    def __init__(self, k: int) -> None:
        self.k, self.calls = k, 0
        self.inner = FirstFitMapper()

    def __call__(self, job, cluster, free):  # type: ignore[no-untyped-def]
        self.calls += 1
        return None if self.calls % self.k == 0 else self.inner(job, cluster, free)
