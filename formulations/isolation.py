"""Run a native solver in a child process, so that its crash cannot end the caller.

HiGHS is C++; on some models it dies with a segmentation fault (seen on a
2-job instance's problem A2 model with 266,508 binaries, in presolve), which
would end the Python process that called it, a notebook kernel or a sweep
worker with it. :func:`run_isolated` runs a function in a child process and
returns its value, re-raises its exception, or raises :class:`SolverCrashed`
naming the signal when the child died.

Children are forked from a *fork server* that has imported the solver stack
once (``forkserver`` start method, preloading :mod:`ddlsched.formulations.milp`), so
a call costs about 10 ms rather than a fresh interpreter's 0.4 s (medians on
a 2-core machine), and no child inherits threads of the caller (HiGHS's
thread pool would not survive a plain ``fork``). With ``fresh=True``
(CP-SAT, whose bundled HiGHS breaks ``highspy`` in the same process, and
where the platform has no fork server) each child is a fresh interpreter;
with ``reuse=True`` (CP-SAT) such an interpreter is kept for the next call,
which saves its start and OR-Tools' import (0.61 s, median of 5), and is
discarded when a call is stopped or crashes.
Ctrl-C in the caller (or any exception there, such as the ``SystemExit`` the
command line raises on SIGTERM) stops the child and is re-raised. **No
orphans**: every child watches its caller (:func:`_watch_caller`) and ends
itself within :data:`WATCH_INTERVAL` of the caller's death, however it died
(SIGKILL, a signal that arrived while the child was starting, a crash); the
fork server ends with its last child.

**Messages while the child runs** (the portfolio's incumbents crossing): the
child calls :func:`report` to hand a value to the caller's ``on_report``
(called in the caller's thread as the value arrives), and :func:`received`
to collect what the caller put in its ``inbox`` queue. Outside a child both
do nothing. A ``deadline`` (``time.monotonic()``) stops the child there and
raises :class:`DeadlineExceeded`: the hard end of a time limit that the
native solver overran.

**Output**: a child's file descriptor 1 is its caller's stderr
(:func:`_logs_to_stderr`), so a solver's banner and log never mix with what
the caller prints on stdout.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, cast

if TYPE_CHECKING:
    from multiprocessing.context import ForkServerContext, SpawnContext
    from multiprocessing.process import BaseProcess

T = TypeVar("T")
Report = TypeVar("Report")

ReportHandler: TypeAlias = Callable[[Report], None]
"""The caller's ``on_report``: it receives what the child passed to :func:`report`,
unpickled; ``Report`` is what the caller and the child agree the child sends."""


class Inbox(Protocol):
    """Where the caller puts messages for the child (a :class:`queue.Queue` of them)."""

    def get_nowait(self) -> object:
        """The oldest message; raises :class:`queue.Empty` if there is none."""
        ...


_PRELOAD = ["ddlsched.formulations.forkserver_hook", "ddlsched.formulations.milp"]
_forkserver: ForkServerContext | None = None
HELD_WHILE_STARTING = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""Signals whose handlers wait while a child starts (:func:`_signals_held`)."""
_reports: Connection | None = None  # in a child: the pipe to the caller (answer and reports)
_messages: Connection | None = None  # in a child: the same pipe, read for the caller's messages


def report(payload: object) -> None:
    """Hand ``payload`` (picklable) to the caller's ``on_report``; nothing outside a child.

    Advisory: a report that cannot be sent is dropped, never an error.
    """
    if _reports is not None:
        with contextlib.suppress(Exception):
            _reports.send(("report", payload))


def received() -> list[Any]:
    """What the caller put in this child's ``inbox`` since the last call, oldest first
    (always empty outside a child, or without an inbox). Anything else on the pipe (a
    reused worker's next call cannot arrive while it runs one) is dropped."""
    items: list[object] = []
    if _messages is not None:
        with contextlib.suppress(EOFError, OSError):
            while _messages.poll():
                kind, item = _messages.recv()
                if kind == "message":
                    items.append(item)
    return items


class SolverCrashed(RuntimeError):
    """The child process running a solver died without an answer."""


class Cancelled(RuntimeError):
    """The caller's ``cancel`` event was set: the child was stopped."""


class DeadlineExceeded(RuntimeError):
    """The child was still running at the caller's ``deadline`` and was stopped."""


def _get_context(fresh: bool) -> SpawnContext | ForkServerContext:
    global _forkserver
    if fresh or "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    if _forkserver is None:
        _forkserver = multiprocessing.get_context("forkserver")
        _forkserver.set_forkserver_preload(_PRELOAD)
    return _forkserver


def _answer(
    connection: Connection, function: Callable[..., object], args: tuple[object, ...]
) -> None:
    """Run ``function(*args)`` and send its value or exception to the caller."""
    try:
        answer: tuple[str, object] = ("ok", function(*args))
    except BaseException as error:  # sent back and re-raised in the caller
        answer = ("error", error)
    try:
        connection.send(answer)
    except OSError:  # the caller is gone (killed, or a Dask worker shut down): nobody reads
        return
    except Exception as error:  # an unpicklable value or exception
        with contextlib.suppress(OSError):
            connection.send(("error", RuntimeError(f"{type(error).__name__}: {error}")))


WATCH_INTERVAL = 0.2
"""Seconds between a child's checks that its caller is still alive."""


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie, exited but not yet reaped
    by its own parent, counts as gone: it will never read an answer)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): existence only
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def _ignore_ctrl_c() -> None:
    """In a child: Ctrl-C (sent by a terminal to the whole process group) is the caller's to
    answer; it stops its children. multiprocessing gives a fork server's child Python's
    KeyboardInterrupt handler again, and a child that took the interrupt would print
    "Process ForkServerProcess-1:" and a traceback on the caller's stderr, depending on
    which process the signal reaches first (``test_ctrl_c_stops_the_lp_bound``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _watch_caller(caller: int) -> None:
    """In a child: a daemon thread that ends this process at once when ``caller`` is gone.

    The caller stops its children when it unwinds, but not when it is killed outright
    (SIGKILL, a crash) or when a signal lands while a child is still starting (the child is
    not yet known to the code that would stop it). A native solver does not notice on its
    own; this thread does, within :data:`WATCH_INTERVAL`. Polling the caller's pid, not the
    parent's: a fork server's children have the fork server as their parent.
    """

    def watch() -> None:
        while _alive(caller):
            time.sleep(WATCH_INTERVAL)
        os._exit(1)

    threading.Thread(target=watch, name="ddlsched-watch-caller", daemon=True).start()


def _logs_to_stderr() -> None:
    """In a child: what it prints goes to the caller's stderr. HiGHS writes its banner and
    log from C++ straight to file descriptor 1; the caller's stdout carries only the
    caller's own output (``--json``: one document), the solver's log goes with the others."""
    if sys.stdout is not None:
        sys.stdout.flush()
    highspy = sys.modules.get("highspy")  # preloaded in the fork server's children
    if highspy is not None:
        # HiGHS prints a two-line banner at the first Highs() of a process, whatever its
        # options: absorb it here, so that stderr carries only what a solve was asked to
        # log (--verbose) and a command's one-line messages stay one line.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
        from ddlsched.core.highs import flush_c_stdio

        highspy.Highs()
        flush_c_stdio()
    os.dup2(2, 1)
    if sys.stdout is None:  # the caller's standard output was closed when Python started
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115


def _private_capture_lock() -> None:
    """In a child: Pyomo's output-capture lock is this process's own.

    Pyomo 6.10 turns the lock its ``capture_output`` takes (around every APPSI HiGHS
    ``set_instance`` and solve) into a ``multiprocessing.Lock`` once multiprocessing is
    imported: one semaphore, made in the fork server when it preloads Pyomo, that every
    child forked from it shares. A child stopped while holding it (the portfolio's loser,
    a deadline, Ctrl-C: each is killed) never releases it, and every later MILP child of
    that fork server then waited 200 s in ``capture_output.__enter__`` and failed with
    Pyomo's "Deadlock starting capture_output" (seen as a 20-minute test in a suite run
    under load). A child's file descriptors are its own, so a per-process lock is all
    the capture needs.
    """
    dependencies = sys.modules.get("pyomo.common.dependencies")
    if dependencies is not None:
        setattr(dependencies, "capture_output_lock", threading.Lock())  # noqa: B010


def _no_tracked_locks() -> None:
    """In a child: locks it makes are not registered with the caller's resource tracker.

    A spawned child's default start method is "spawn", under which every
    ``multiprocessing.Lock()`` registers a named semaphore with the caller's resource
    tracker, to be unregistered when the lock is collected. Pyomo makes one such lock when
    it first imports multiprocessing; a child stopped from outside (the portfolio's loser,
    a deadline, Ctrl-C) never unregisters it, and the caller then printed "resource_tracker:
    There appear to be 1 leaked semaphore objects" at exit. Under "fork" a lock's semaphore
    is unlinked at once and never tracked. Children start no processes of their own.
    """
    if "fork" in multiprocessing.get_all_start_methods():
        multiprocessing.set_start_method("fork", force=True)


def _child(
    connection: Connection, function: Callable[..., object], args: tuple[object, ...], caller: int
) -> None:
    """A one-call child: the answer, the reports and the caller's messages share one pipe."""
    global _reports, _messages
    _ignore_ctrl_c()
    _private_capture_lock()
    _watch_caller(caller)
    _logs_to_stderr()
    _no_tracked_locks()
    _reports = _messages = connection
    _answer(connection, function, args)
    connection.close()


def _serve(connection: Connection, caller: int) -> None:
    """A reusable worker's loop: one call at a time, over one two-way pipe, until it closes."""
    global _reports, _messages
    _ignore_ctrl_c()
    _watch_caller(caller)
    _logs_to_stderr()
    _no_tracked_locks()
    _reports = _messages = connection
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request[0] == "call":  # else a message left over from a finished call
            _answer(connection, request[1], request[2])


class _Worker:
    """A long-lived fresh interpreter serving calls (``run_isolated(reuse=True)``): the
    interpreter start and the solver's import (0.6 s for OR-Tools) are paid once."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child_end = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child_end, os.getpid()), daemon=True)
        _start(self.process)
        child_end.close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.join()
        self.connection.close()


_idle_workers: list[_Worker] = []
_idle_lock = threading.Lock()


def _close_idle_workers() -> None:
    """At exit: let idle workers end by themselves (their pipe closes), so that they clean
    up what they hold; terminate any that does not within 5 s."""
    with _idle_lock:
        workers, _idle_workers[:] = list(_idle_workers), []
    for worker in workers:
        worker.connection.close()
    for worker in workers:
        worker.process.join(5)
        if worker.process.is_alive():
            worker.process.terminate()
            worker.process.join()


atexit.register(_close_idle_workers)  # runs before multiprocessing's own (registered earlier)


def _start(process: BaseProcess) -> None:
    """Start a child process, also from a daemonic caller (a Dask or multiprocessing worker:
    the rule guards against orphans; these children are joined, or end with the caller).

    A start is never cut in half (:func:`_signals_held`): a spawned interpreter whose
    caller unwound after starting it but before writing its start-up data would read an
    end of file and print an ``EOFError`` traceback under the caller's one line.

    SIGINT is also blocked, and a blocked signal stays blocked in what is started: in the
    fork server (started by the first call), in every child it forks and in spawned
    interpreters. A terminal's Ctrl-C reaches the whole process group; the caller, not the
    children, answers it, stopping them (a child that took it would print a
    ``KeyboardInterrupt`` traceback from its start-up: multiprocessing restores Python's
    handler in a forked child before any code of ours runs).
    """
    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]
    daemonic = config.pop("daemon", None)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with _main_module_hidden(), _signals_held():
            process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if daemonic is not None:
            config["daemon"] = daemonic


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Within: a signal of :data:`HELD_WHILE_STARTING` is noted, and handled as usual once
    the block ends (raised again, so its own handler, Ctrl-C's ``KeyboardInterrupt`` or
    the command's clean exit, runs then).

    Python runs signal handlers in the main thread only, between two bytecodes, so a start
    made there could be cut anywhere by the handler's exception. Blocking the signals at
    the OS level would not do: a signal sent to the process goes to any thread that does
    not block it, and the handler then runs in the main thread all the same. A start made
    in another thread is never cut: the handler's exception unwinds the main thread only.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    previous = {}
    for number in HELD_WHILE_STARTING:
        handler = signal.getsignal(number)
        if handler is not None:  # None: set outside Python, and could not be put back
            previous[number] = signal.signal(number, lambda n, _frame: noted.append(n))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(noted):
            signal.raise_signal(number)


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
    saved: dict[str, object] = {
        name: main.__dict__[name] for name in names if name in main.__dict__
    }
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def run_isolated(
    function: Callable[..., T],
    *args: object,
    cancel: threading.Event | None = None,
    fresh: bool = False,
    reuse: bool = False,
    on_report: ReportHandler[Report] | None = None,
    inbox: Inbox | None = None,
    deadline: float | None = None,
) -> T:
    """``function(*args)`` computed in a child process.

    ``function`` and ``args`` must be picklable (a module-level function and
    plain data). Setting ``cancel`` (from another thread) stops the child and
    raises :class:`Cancelled` here. ``fresh`` starts a new interpreter that
    has imported nothing but ``function``'s module, instead of forking one
    from the fork server; ``reuse`` runs it in such a fresh interpreter kept
    for the next call once this one has answered (a call stopped, crashed or
    interrupted discards it; calls at the same time get one each).
    ``on_report`` receives what the child passes to :func:`report`; what is
    put in ``inbox`` reaches the child's :func:`received` (both within 50
    ms). At ``deadline`` (a ``time.monotonic()`` value) the child is stopped.

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
    if reuse:
        return _run_on_worker(function, args, cancel, on_report, inbox, deadline)
    context = _get_context(fresh)
    connection, child_end = context.Pipe(duplex=True)
    process = context.Process(
        target=_child, args=(child_end, function, args, os.getpid()), daemon=True
    )
    _start(process)
    child_end.close()
    try:
        kind, payload = _await(connection, process, cancel, on_report, inbox, deadline)
    except BaseException:  # cancelled, deadline, Ctrl-C, SystemExit (a SIGTERM handler)
        process.terminate()
        raise
    finally:
        process.join()
        connection.close()
    if kind == "error":
        raise cast(BaseException, payload)
    return cast(T, payload)  # function's value


def _run_on_worker(
    function: Callable[..., T],
    args: tuple[object, ...],
    cancel: threading.Event | None,
    on_report: ReportHandler[Report] | None,
    inbox: Inbox | None,
    deadline: float | None,
) -> T:
    """:func:`run_isolated` on an idle reusable worker (a new one if none is idle)."""
    with _idle_lock:
        worker = _idle_workers.pop() if _idle_workers else None
    if worker is not None and not worker.process.is_alive():
        worker.connection.close()
        worker = None
    worker = worker or _Worker()
    try:
        worker.connection.send(("call", function, args))
        kind, payload = _await(
            worker.connection, worker.process, cancel, on_report, inbox, deadline
        )
    except BaseException:  # cancelled, deadline, crash, Ctrl-C: this worker is not reused
        worker.stop()
        raise
    with _idle_lock:
        _idle_workers.append(worker)
    if kind == "error":
        raise cast(BaseException, payload)
    return cast(T, payload)  # function's value


def _await(
    connection: Connection,
    process: BaseProcess,
    cancel: threading.Event | None,
    on_report: ReportHandler[Report] | None,
    inbox: Inbox | None,
    deadline: float | None,
) -> tuple[str, object]:
    """The child's answer, passing reports and the inbox on while waiting for it."""
    while True:
        _forward(inbox, connection)
        if connection.poll(0.05):
            try:
                kind, payload = connection.recv()
            except EOFError:
                process.join()
                raise SolverCrashed(
                    f"the solver process died without an answer ({_describe(process.exitcode)})"
                ) from None
            if kind != "report":
                return kind, payload
            if on_report is not None:
                on_report(payload)
            continue
        if cancel is not None and cancel.is_set():
            raise Cancelled("stopped: another method finished first")
        if deadline is not None and time.monotonic() > deadline:
            raise DeadlineExceeded("stopped at the deadline: the solver overran its limit")


def _forward(inbox: Inbox | None, to_child: Connection) -> None:
    """Send what waits in ``inbox`` to the child (dropped if the child has gone)."""
    if inbox is None:
        return
    while True:
        try:
            item = inbox.get_nowait()
        except queue.Empty:
            return
        with contextlib.suppress(OSError):
            to_child.send(("message", item))
