"""A native crash in the child ends the child, not the caller."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from ddlsched.formulations.isolation import SolverCrashed, run_isolated

from ddlsched.core.params import ExactParams


def _square(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def _raise(message: str) -> None:
    raise ValueError(message)


def _segfault() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def test_value_comes_back_from_another_process() -> None:
    value, pid = run_isolated(_square, 7)
    assert value == 49 and pid != os.getpid()


def test_exception_is_reraised_in_the_caller() -> None:
    with pytest.raises(ValueError, match="bad field"):
        run_isolated(_raise, "bad field")


def test_crash_becomes_an_error_naming_the_signal() -> None:
    with pytest.raises(SolverCrashed, match="SIGSEGV"):
        run_isolated(_segfault)
    assert run_isolated(_square, 3)[0] == 9  # and the next call works


def test_crashed_milp_is_an_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """solve_milp turns a crashed child into status ``error`` with the reason, no schedule."""
    import ddlsched.formulations.milp as exact

    from tests.examples import ring_instance

    def crashing(function: object, *args: object, **options: object) -> object:
        return run_isolated(_segfault)

    monkeypatch.setattr(exact, "run_isolated", crashing)
    result = exact.solve_milp(ring_instance(), "A", ExactParams(time_limit=None))
    assert result.status == "error" and result.schedule is None
    assert "SIGSEGV" in result.notes[0]


def test_same_optimum_in_process_and_isolated() -> None:
    from ddlsched.formulations.milp import solve_milp

    from tests.examples import ring_instance

    instance = ring_instance()
    isolated = solve_milp(instance, "A", ExactParams(time_limit=None))
    local = solve_milp(instance, "A", ExactParams(time_limit=None, isolate=False))
    assert isolated.status == local.status == "optimal"
    assert isolated.objective == local.objective


def test_a_script_without_a_main_guard_can_solve(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The child must not re-run the caller's script, which has no ``__main__`` guard."""
    import subprocess
    import sys

    script = tmp_path / "plain.py"
    script.write_text(
        "from ddlsched import ExactParams, GeneratorConfig, generate, solve\n"
        "instance = generate(GeneratorConfig.exact_friendly(4, 2, 4, 1.0), 0)\n"
        "print(solve(instance, 'milp', params=ExactParams(time_limit=None)).status.value)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "optimal", done.stderr[-2000:]


def test_fresh_interpreter_children() -> None:
    """``fresh=True`` (CP-SAT's children): the same answers and the same crash report."""
    assert run_isolated(_square, 5, fresh=True)[0] == 25
    with pytest.raises(SolverCrashed, match="SIGSEGV"):
        run_isolated(_segfault, fresh=True)


def test_crashed_cpsat_returns_the_list_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CP-SAT child that dies: status error, and still a verified schedule (the list one)."""
    import ddlsched.formulations.cpsat as cpsat
    import ddlsched.formulations.cpsat_runtime as cpsat_runtime
    from ddlsched.proofs_checks.verifier import verify

    from tests.examples import ring_instance

    def crashing(function: object, *args: object, **options: object) -> object:
        return run_isolated(_segfault, fresh=True)

    monkeypatch.setattr(cpsat_runtime, "run_isolated", crashing)
    instance = ring_instance()
    result = cpsat.solve_cpsat(instance, "A", ExactParams(time_limit=None))
    assert result.status == "error" and "SIGSEGV" in " ".join(result.notes)
    assert result.schedule is not None and verify(instance, result.schedule).feasible


def _die_holding_pyomos_capture_lock() -> None:
    """Take the lock Pyomo's ``capture_output`` takes around every APPSI solve, and be
    killed before releasing it (as a stopped MILP child can be)."""
    import pyomo.environ  # noqa: F401 (what the MILP children have loaded)
    from pyomo.common import dependencies

    dependencies.capture_output_lock.acquire()
    os.kill(os.getpid(), signal.SIGKILL)


def _pyomos_capture_lock_is_free() -> bool:
    import pyomo.environ  # noqa: F401
    from pyomo.common import dependencies

    lock = dependencies.capture_output_lock
    taken = lock.acquire(blocking=False)  # no clock: free now, or held by the dead child
    if taken:
        lock.release()
    return bool(taken)


def test_a_child_killed_inside_pyomos_capture_does_not_block_the_next() -> None:
    """Pyomo 6.10 makes its capture lock one semaphore shared by every child of the fork
    server; a child killed while holding it made each later MILP child wait 200 s and
    fail ("Deadlock starting capture_output"). Children now take a lock of their own.
    Without that, the second call below finds the lock taken."""
    from ddlsched.formulations.isolation import SolverCrashed

    with pytest.raises(SolverCrashed):
        run_isolated(_die_holding_pyomos_capture_lock)
    assert run_isolated(_pyomos_capture_lock_is_free) is True


def _echo_inbox(count: int) -> int:
    """Report every message received until ``count`` have come, then return how many."""
    import time

    from ddlsched.formulations.isolation import received, report

    seen = 0
    while seen < count:
        for item in received():
            report(("echo", item))
            seen += 1
        time.sleep(0.01)  # a poll: how long it takes never changes what is echoed
    return seen


def _block() -> None:
    """Never return by itself (no clock: an event nobody sets); only a stop ends it."""
    import threading

    threading.Event().wait()


def test_messages_cross_both_ways_in_order() -> None:
    """What the caller puts in the inbox reaches the child's received(); what the child
    reports reaches on_report, in order (the portfolio's incumbents crossing)."""
    import queue

    inbox: queue.Queue[int] = queue.Queue()
    for k in range(5):
        inbox.put(k)
    reports: list[object] = []
    assert run_isolated(_echo_inbox, 5, inbox=inbox, on_report=reports.append) == 5
    assert reports == [("echo", k) for k in range(5)]


def test_report_and_received_do_nothing_outside_a_child() -> None:
    from ddlsched.formulations.isolation import received, report

    report("nobody listens")
    assert received() == []


def test_deadline_stops_an_overrunning_child() -> None:
    """A child still running at its deadline is stopped. The deadline is always past, so
    this holds on any machine; waited for, the child would never answer."""
    from ddlsched.formulations.isolation import DeadlineExceeded

    with pytest.raises(DeadlineExceeded):
        run_isolated(_block, deadline=-math.inf)
    assert run_isolated(_square, 4)[0] == 16  # and the next call works


def test_a_reused_interpreter_serves_call_after_call() -> None:
    """reuse=True keeps the fresh interpreter (CP-SAT's: its start and OR-Tools' import are
    paid once); an exception raised by the function does not discard it."""
    first = run_isolated(_square, 2, reuse=True)
    with pytest.raises(ValueError, match="still reusable"):
        run_isolated(_raise, "still reusable", reuse=True)
    second = run_isolated(_square, 3, reuse=True)
    assert (first[0], second[0]) == (4, 9)
    assert first[1] == second[1] != os.getpid()


def test_a_crashed_or_stopped_reused_interpreter_is_replaced() -> None:
    import threading

    from ddlsched.formulations.isolation import Cancelled

    before = run_isolated(_square, 1, reuse=True)[1]
    with pytest.raises(SolverCrashed, match="SIGSEGV"):
        run_isolated(_segfault, reuse=True)
    after_crash = run_isolated(_square, 1, reuse=True)[1]
    assert after_crash != before
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        run_isolated(_block, reuse=True, cancel=stop)
    after_cancel = run_isolated(_square, 1, reuse=True)[1]
    assert after_cancel not in (before, after_crash)


_FORKED_CHILD_OF_A_VANISHED_CALLER = """
import os, sys
{setup}
from multiprocessing import spawn

def _serve_one(fd):
    return spawn._main(fd, os.dup(fd))

read, write = os.pipe()
os.close(write)  # the caller is gone before sending the process object
try:
    _serve_one(read)  # as multiprocessing.forkserver's child does
except Exception:
    sys.excepthook(*sys.exc_info())
try:
    raise ValueError("a real failure")
except Exception:
    sys.excepthook(*sys.exc_info())
"""


@pytest.mark.parametrize("hooked", [True, False])
def test_a_forked_child_whose_caller_vanished_ends_silently(hooked: bool) -> None:
    """The fork server's child reads its task from the caller; after a Ctrl-C the caller
    may be gone first, and Python's fork server printed that EOFError's traceback on the
    caller's terminal. With the hook the fork server preloads it is silent; any other
    exception is still shown (and without the hook the EOFError is, which is what makes
    this test able to fail)."""
    from ddlsched.formulations.isolation import _PRELOAD

    assert _PRELOAD[0] == "ddlsched.formulations.forkserver_hook"
    setup = "import ddlsched.formulations.forkserver_hook" if hooked else ""
    done = subprocess.run(
        [sys.executable, "-c", _FORKED_CHILD_OF_A_VANISHED_CALLER.format(setup=setup)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert "ValueError: a real failure" in done.stderr
    assert ("EOFError" in done.stderr) is not hooked, done.stderr


def _signal_state() -> tuple[set[int], dict[int, object]]:
    """The signals this process has blocked and its handlers (run in a child)."""
    blocked = {int(number) for number in signal.pthread_sigmask(signal.SIG_BLOCK, set())}
    numbers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    return blocked, {int(n): signal.getsignal(n) for n in numbers}


@pytest.mark.parametrize("how", ["forked", "fresh", "reused"])
def test_a_child_can_be_terminated_but_ignores_ctrl_c(how: str) -> None:
    """Every kind of child takes SIGTERM and SIGHUP by default (``terminate()`` stops it, a
    closed terminal ends it) and ignores Ctrl-C (the caller answers it). Catches a start
    that holds the caller's signals back and leaves them so in children: a loser of the
    race or a child past its deadline would then never stop."""
    options = {"forked": {}, "fresh": {"fresh": True}, "reused": {"reuse": True}}[how]
    blocked, handlers = run_isolated(_signal_state, **options)
    for number in (signal.SIGTERM, signal.SIGHUP):
        assert number not in blocked and handlers[number] == signal.SIG_DFL
    assert handlers[signal.SIGINT] == signal.SIG_IGN


class _StartSendsSigterm:
    """A process whose start is interrupted by SIGTERM half-way: what a caller killed while
    it starts a child sees."""

    def __init__(self) -> None:
        self.started = False

    def start(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # bytecodes at which a pending Python handler would run
            pass
        self.started = True


def test_a_signal_during_a_start_is_taken_once_the_child_is_started() -> None:
    """SIGTERM arriving while a child starts is answered after the start returns, never in
    the middle: a spawned interpreter whose caller unwound before writing its start-up data
    printed an EOFError traceback under the caller's one line. Catches a start that holds
    back Ctrl-C only."""
    from ddlsched.formulations.isolation import _start

    process = _StartSendsSigterm()
    seen: list[bool] = []
    previous = signal.signal(signal.SIGTERM, lambda *_: seen.append(process.started))
    try:
        _start(process)
        for _ in range(1000):
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [True]
