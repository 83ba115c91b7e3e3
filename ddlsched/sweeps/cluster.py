"""The Dask side of a sweep: a local cluster or a remote scheduler, started with Ctrl-C held
back from the workers, torn down at once when tasks are cut off, its loggers kept quiet."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

DASK_LOGGERS = ("distributed", "tornado", "asyncio")
"""The loggers a sweep keeps quiet while it runs (see :func:`ddlsched.sweeps.run_sweep`)."""


def local_cluster(workers: int) -> LocalCluster:
    """A Dask ``LocalCluster`` of ``workers`` single-threaded worker processes, its Dask
    logs at error level only."""
    from dask.distributed import LocalCluster

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        # A free port of the system's choosing: Dask's default (8787, which None
        # also means) warns on stderr when another cluster holds it.
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )


def connect(scheduler: str) -> Client:
    """A client of the scheduler at ``scheduler``; an address that does not work is an
    :class:`InputError` naming it (not a traceback from Dask)."""
    from dask.distributed import Client

    try:
        return Client(scheduler, timeout=30)
    except (ValueError, TypeError, OSError) as error:
        raise InputError(
            f"scheduler {scheduler!r}: cannot connect ({' '.join(str(error).split())}); "
            "expected an address such as tcp://host:8786"
        ) from None


def shut_down(client: Client | None, cluster: LocalCluster | None, kill: bool = True) -> None:
    """Close the client and the local cluster; with ``kill`` (tasks cut off), at once:
    workers still running a task are killed (a MILP may have minutes left; its solver
    children follow their worker)."""
    if client is not None:
        with contextlib.suppress(Exception):
            client.close(timeout=2)
    if cluster is None:
        return
    for nanny in list(cluster.workers.values()) if kill else ():
        # Nanny -> WorkerProcess -> AsyncProcess: the worker's pid (None once it ended).
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        cluster.close(timeout=5)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """SIGINT blocked while the local cluster starts (in the main thread, else nothing).

    Threads and processes started meanwhile inherit the blocked signal, so a Ctrl-C
    reaches this process alone; one pressed meanwhile waits, and is raised here as
    :class:`KeyboardInterrupt` when the block is lifted.
    """
    from multiprocessing import resource_tracker

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # Starting multiprocessing's resource tracker unblocks SIGINT in the thread that starts
    # it (Dask's loop thread, whose threads then start the workers): start it first. It
    # warns when it unlinks the semaphores of workers killed on an interrupt (the cleanup
    # it exists for): that warning is silenced in its process only.
    quiet = "ignore::UserWarning:multiprocessing.resource_tracker"
    sys.warnoptions.append(quiet)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(quiet)
    with sigint_blocked():
        yield


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread (the main one, else nothing) for the block: a Ctrl-C
    pressed meanwhile is raised as :class:`KeyboardInterrupt` when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def quiet_loggers(names: Sequence[str]) -> Callable[[], None]:
    """Only critical records from the loggers ``names`` and their descendants from now on;
    returns the call that gives them their levels back.

    A descendant with a level of its own is set too: Dask gives ``tornado.application``
    (where tornado logs a failed callback) and ``distributed.client`` levels of their own,
    so quieting their parents alone leaves them speaking.
    """
    known = logging.Logger.manager.loggerDict
    family = [
        name
        for name, logger in list(known.items())
        if isinstance(logger, logging.Logger) and name.startswith(tuple(f"{n}." for n in names))
    ]
    loggers = [logging.getLogger(name) for name in (*names, *family)]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)

    def restore() -> None:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)

    return restore
