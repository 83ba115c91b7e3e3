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
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")

_PRELOAD = ["formulations.exact"]
_forkserver: Any = None


class SolverCrashed(RuntimeError):
    """The child process running a solver died without an answer."""


class Cancelled(RuntimeError):
    """The caller's ``cancel`` event was set: the child was stopped."""


def _get_context(fresh: bool) -> Any:
    global _forkserver
    if fresh or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    if _forkserver is None:
        _forkserver = multiprocessing.get_context("forkserver")
        _forkserver.set_forkserver_preload(_PRELOAD)
    return _forkserver


def _child(connection: Connection, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
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
) -> T:
    """``function(*args)`` computed in a child process.

    ``function`` and ``args`` must be picklable (a module-level function and
    plain data). Setting ``cancel`` (from another thread) stops the child and
    raises :class:`Cancelled` here. ``fresh`` starts a new interpreter that
    has imported nothing but ``function``'s module, instead of forking one
    from the fork server.

    Raises
    ------
    SolverCrashed
        If the child died without an answer (a native crash, an
        out-of-memory kill), naming how it died.
    BaseException
        Whatever ``function`` raised, re-raised here.
    """
    context = _get_context(fresh)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, function, args), daemon=True)
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
    try:
        while cancel is not None and not receiver.poll(0.05):
            if cancel.is_set():
                raise Cancelled("stopped: another method finished first")
        try:
            kind, payload = receiver.recv()
        except EOFError:
            process.join()
            raise SolverCrashed(
                f"the solver process died without an answer ({_describe(process.exitcode)})"
            ) from None
    except BaseException:  # cancelled, Ctrl-C, SystemExit (a SIGTERM handler)
        process.terminate()
        raise
    finally:
        process.join()
        receiver.close()
    if kind == "error":
        raise payload
    result: T = payload
    return result
