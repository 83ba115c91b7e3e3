"""The online policy protocol: what the simulator asks of a scheduler.

A policy is told of arrivals, starts, completions and preemptions, asked at
every event which running jobs to preempt (none, by default) and which
waiting jobs to start now with their mappings, and may ask to be woken at a
future instant (a virtual completion, a prediction check). It sees jobs as
:class:`~ddlsched.algorithms.prediction.view.JobView` s: no true iteration counts.

Only :attr:`Policy.name`, :meth:`Policy.on_arrival` and
:meth:`Policy.dispatch` must be written; a class that subclasses
:class:`Policy` explicitly inherits no-op defaults for the rest (a
non-preemptive policy never preempts, a policy without timers never asks
to be woken). After SimPy's processes and PyVRP's small protocols.

Example: a first-come first-served policy that starts whatever fits::

    class Greedy(Policy):
        name = "greedy-fcfs"

        def __init__(self, cluster):
            self.cluster, self.waiting = cluster, []

        def on_arrival(self, job, now):
            self.waiting.append(job)

        def dispatch(self, now, free):
            for job in list(self.waiting):
                mapping = FirstFitMapper()(job, self.cluster, free)
                if mapping is not None:
                    self.waiting.remove(job)
                    yield job, mapping

    ddlsched.simulate(instance, Greedy(instance.cluster))
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from ddlsched.algorithms.mapping import FreeGPUs
from ddlsched.algorithms.prediction.view import JobView

REQUIRED = ("name", "on_arrival", "dispatch")
"""What every policy must define itself."""
OPTIONAL = ("on_start", "on_completion", "preempt", "on_preempt", "next_wakeup")
"""What :class:`Policy` gives no-op defaults for."""


class Policy(Protocol):
    """An online scheduler driven by :func:`ddlsched.algorithms.simulator.simulate`."""

    name: str

    def on_arrival(self, job: JobView, now: float) -> None:
        """``job`` is released at ``now``."""
        ...

    def dispatch(self, now: float, free: FreeGPUs) -> Iterable[tuple[JobView, tuple[int, ...]]]:
        """Jobs to start (or resume) now with their mappings, one at a time.

        The caller takes each job's GPUs from ``free`` before asking for
        the next, so every mapping must fit what is left.
        """
        ...

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        """``job`` started at ``now`` with ``mapping`` (``alpha`` s per iteration)."""
        return None

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        """``job`` completed at ``now`` after ``iterations`` (now known)."""
        return None

    def preempt(self, now: float, running: Collection[str]) -> Sequence[str]:
        """Ids of running jobs to preempt now, before any start (default: none)."""
        return ()

    def on_preempt(self, job: JobView, now: float) -> None:
        """``job`` was preempted at ``now``; it waits again with its work left."""
        return None

    def next_wakeup(self) -> float | None:
        """The next instant the policy wants to act at, if any (default: none)."""
        return None


def check_policy(policy: object) -> None:
    """Raise a ``TypeError`` naming what ``policy`` lacks to be a :class:`Policy`."""
    missing = [name for name in (*REQUIRED, *OPTIONAL) if not hasattr(policy, name)]
    if missing:
        raise TypeError(
            f"policy {type(policy).__name__!r} lacks {', '.join(missing)}; subclass "
            "ddlsched.algorithms.Policy to get no-op defaults for on_start, on_completion, "
            "preempt, "
            "on_preempt and next_wakeup"
        )
