"""Run a native solver in a child process, so that its crash cannot end the caller.

HiGHS is C++; on some models it dies with a segmentation fault (seen on a
2-job instance's problem A2 model with 266,508 binaries, in presolve), which
would end the Python process that called it, a notebook kernel or a sweep
worker with it. :func:`run_isolated` runs a function in a child process and
returns its value, re-raises its exception, or raises :class:`SolverCrashed`
naming the signal when the child died.

Children are forked from a *fork server* that has imported the solver stack
once (``forkserver`` start method, preloading :mod:`formulations.exact`), so
a call costs about 10 ms rather than a fresh interpreter's 0.4 s (medians on
a 2-core machine), and no child inherits threads of the caller (HiGHS's
thread pool would not survive a plain ``fork``). With ``fresh=True``
(CP-SAT, whose bundled HiGHS breaks ``highspy`` in the same process, and
where the platform has no fork server) each child is a fresh interpreter.
Ctrl-C in the caller (or any exception there, such as the ``SystemExit`` the
command line raises on SIGTERM) stops the child and is re-raised.

**Messages while the child runs** (the portfolio's incumbents crossing): the
child calls :func:`report` to hand a value to the caller's ``on_report``
(called in the caller's thread as the value arrives), and :func:`received`
to collect what the caller put in its ``inbox`` queue. Outside a child both
do nothing. A ``deadline`` (``time.monotonic()``) stops the child there and
raises :class:`DeadlineExceeded`: the hard end of a time limit that the
native solver overran.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")

_PRELOAD = ["formulations.exact"]
_forkserver: Any = None
_reports: Connection | None = None  # in a child: the answer pipe, which carries reports too
_messages: Connection | None = None  # in a child: what the caller sends


def report(payload: Any) -> None:
    """Hand ``payload`` (picklable) to the caller's ``on_report``; nothing outside a child.

    Advisory: a report that cannot be sent is dropped, never an error.
    """
    if _reports is not None:
        with contextlib.suppress(Exception):
            _reports.send(("report", payload))


def received() -> list[Any]:
    """What the caller put in this child's ``inbox`` since the last call, oldest first
    (always empty outside a child, or without an inbox)."""
    items: list[Any] = []
    if _messages is not None:
        with contextlib.suppress(EOFError, OSError):
            while _messages.poll():
                items.append(_messages.recv())
    return items


class SolverCrashed(RuntimeError):
    """The child process running a solver died without an answer."""


class Cancelled(RuntimeError):
    """The caller's ``cancel`` event was set: the child was stopped."""


class DeadlineExceeded(RuntimeError):
    """The child was still running at the caller's ``deadline`` and was stopped."""


def _get_context(fresh: bool) -> Any:
    global _forkserver
    if fresh or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    if _forkserver is None:
        _forkserver = multiprocessing.get_context("forkserver")
        _forkserver.set_forkserver_preload(_PRELOAD)
    return _forkserver


def _child(
    connection: Connection,
    function: Callable[..., Any],
    args: tuple[Any, ...],
    messages: Connection | None = None,
) -> None:
    global _reports, _messages
    _reports, _messages = connection, messages
    try:
        answer: tuple[str, Any] = ("ok", function(*args))
    except BaseException as error:  # sent back and re-raised in the caller
        answer = ("error", error)
    try:
        connection.send(answer)
    except Exception as error:  # an unpicklable value or exception
        connection.send(("error", RuntimeError(f"{type(error).__name__}: {error}")))
    connection.close()


def _describe(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Keep the child from re-running the caller's ``__main__``.

    multiprocessing tells a child to import the parent's main script (to
    find functions defined there); a researcher's script without an ``if
    __name__ == "__main__":`` guard would then run again in the child and
    fail. Everything the child runs here lives in importable modules, so the
    main module's file and spec are hidden while the child starts.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    names: tuple[str, ...] = ("__file__", "__spec__")
    saved: dict[str, Any] = {name: main.__dict__[name] for name in names if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def run_isolated(
    function: Callable[..., T],
    *args: Any,
    cancel: threading.Event | None = None,
    fresh: bool = False,
    on_report: Callable[[Any], None] | None = None,
    inbox: queue.Queue[Any] | None = None,
    deadline: float | None = None,
) -> T:
    """``function(*args)`` computed in a child process.

    ``function`` and ``args`` must be picklable (a module-level function and
    plain data). Setting ``cancel`` (from another thread) stops the child and
    raises :class:`Cancelled` here. ``fresh`` starts a new interpreter that
    has imported nothing but ``function``'s module, instead of forking one
    from the fork server. ``on_report`` receives what the child passes to
    :func:`report`; what is put in ``inbox`` reaches the child's
    :func:`received` (both within 50 ms). At ``deadline`` (a
    ``time.monotonic()`` value) the child is stopped.

    Raises
    ------
    SolverCrashed
        If the child died without an answer (a native crash, an
        out-of-memory kill), naming how it died.
    DeadlineExceeded
        If the child had not answered by ``deadline``.
    BaseException
        Whatever ``function`` raised, re-raised here.
    """
    context = _get_context(fresh)
    receiver, sender = context.Pipe(duplex=False)
    child_inbox, to_child = context.Pipe(duplex=False) if inbox is not None else (None, None)
    process = context.Process(
        target=_child, args=(sender, function, args, child_inbox), daemon=True
    )
    # A daemonic caller (a Dask or multiprocessing worker) may not start
    # children; the rule guards against orphans, and this child is joined
    # below and ends with its time limit, so the flag is lifted for start().
    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]
    daemonic = config.pop("daemon", None)
    try:
        with _main_module_hidden():
            process.start()
    finally:
        if daemonic is not None:
            config["daemon"] = daemonic
    sender.close()
    if child_inbox is not None:
        child_inbox.close()
    try:
        while True:
            _forward(inbox, to_child)
            if receiver.poll(0.05):
                try:
                    kind, payload = receiver.recv()
                except EOFError:
                    process.join()
                    raise SolverCrashed(
                        "the solver process died without an answer "
                        f"({_describe(process.exitcode)})"
                    ) from None
                if kind != "report":
                    break
                if on_report is not None:
                    on_report(payload)
                continue
            if cancel is not None and cancel.is_set():
                raise Cancelled("stopped: another method finished first")
            if deadline is not None and time.monotonic() > deadline:
                raise DeadlineExceeded("stopped at the deadline: the solver overran its limit")
    except BaseException:  # cancelled, deadline, Ctrl-C, SystemExit (a SIGTERM handler)
        process.terminate()
        raise
    finally:
        process.join()
        receiver.close()
        if to_child is not None:
            to_child.close()
    if kind == "error":
        raise payload
    result: T = payload
    return result


def _forward(inbox: queue.Queue[Any] | None, to_child: Connection | None) -> None:
    """Send what waits in ``inbox`` to the child (dropped if the child has gone)."""
    if inbox is None or to_child is None:
        return
    while True:
        try:
            item = inbox.get_nowait()
        except queue.Empty:
            return
        with contextlib.suppress(OSError):
            to_child.send(item)
