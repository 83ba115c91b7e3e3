"""Signals at the edge of a process: every command ends cleanly, and no child outlives it.

A solve runs its solvers in child processes (a fork server's children, fresh interpreters for
CP-SAT, multiprocessing's resource tracker). Whatever ends the command (Ctrl-C, ``kill``, a
closed terminal or ssh session, ``kill -9``), none of them may keep running: an orphaned
HiGHS burns a core until someone finds it by hand.

No test here sleeps a fixed time: each waits for an observable state (the solver children
exist, then none is left), with a generous cap that only a broken build reaches.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ddlsched.cli import main
from tests.messages import messages
from tests.waiting import wait_until

CAP = 120.0
"""Seconds after which a command that was told to stop counts as hung (a safety net of
``communicate``/``wait``; only a broken build gets near it)."""


def _live(session: int) -> list[str]:
    """The processes of ``session`` that have not exited (zombies, already dead and waiting
    for their parent to read their status, are not running anything)."""
    listing = subprocess.run(
        ["ps", "-ww", "-o", "pid=,stat=,args=", "-s", str(session)],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line for line in listing.stdout.splitlines() if line.split()[1][0] not in "ZX"]


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 jobs released together on 4 x 4 GPUs: no backend proves them within its default
    minute (about 6% open after a minute of CP-SAT), so the solve is surely still running
    when the signal arrives."""
    path = tmp_path_factory.mktemp("signals") / "batch.json"
    command = ["generate", "--jobs", "24", "--servers", "4", "--gpus-per-server", "4"]
    command += ["--preset", "exact-friendly", "--seed", "0", "--out", str(path)]
    assert main(command) == 0
    return path


def _solving(path: Path, method: str) -> subprocess.Popen[str]:
    """``ddlsched solve`` in its own session, returned once two of its children run."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ddlsched.cli", "solve", str(path), "--method", method],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    wait_until(
        lambda: len(_live(process.pid)) >= 3 or process.poll() is not None, "solver children"
    )
    assert process.poll() is None, "the solve ended before its children were seen"
    return process


@pytest.mark.parametrize(
    ("number", "method", "line"),
    [
        (signal.SIGINT, "milp", "ddlsched: interrupted"),
        (signal.SIGTERM, "milp", "ddlsched: terminated"),
        (signal.SIGHUP, "exact", "ddlsched: terminated"),
        (signal.SIGTERM, "cpsat", "ddlsched: terminated"),
    ],
    ids=["ctrl-c-milp", "sigterm-milp", "sighup-portfolio", "sigterm-cpsat"],
)
def test_a_signal_ends_the_solve_with_one_line_and_no_orphan(
    batch: Path, number: signal.Signals, method: str, line: str
) -> None:
    """Ctrl-C, SIGTERM and SIGHUP end a running exact solve with exit 128 + signal, one
    line on stderr, and every child gone.

    Catches: a signal that kills the main process by default (SIGHUP did: three children
    went on running), a handler that swallows the signal (HiGHS catches SIGINT), a child
    left behind because the signal arrived while it was starting.
    """
    process = _solving(batch, method)
    process.send_signal(number)
    _, err = process.communicate(timeout=CAP)
    assert process.returncode == 128 + number, err
    assert messages(err) == [line], err
    wait_until(lambda: not _live(process.pid), "every child of the killed solve to end")


def test_children_end_when_the_command_is_killed_outright(batch: Path) -> None:
    """``kill -9`` gives the command no chance to stop anything: its children notice that
    it is gone by themselves (within a fraction of a second) and end.

    Catches: a child that only stops when told to (it would solve on, an orphan, for the
    rest of its time limit), and a fork server kept alive by such a child.
    """
    process = _solving(batch, "exact")
    process.kill()
    process.wait(timeout=CAP)
    wait_until(lambda: not _live(process.pid), "every child of the killed solve to end")


def _started(argv: list[str], ready: object, what: str) -> subprocess.Popen[str]:
    """``ddlsched argv`` in its own session, returned once ``ready(process)`` holds."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ddlsched.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    wait_until(lambda: ready(process) or process.poll() is not None, what)  # type: ignore[operator]
    assert process.poll() is None, f"ended before {what}: {process.communicate()}"
    return process


def _solver_child_runs(session: int) -> bool:
    """Whether a child of a fork server runs in ``session``: the fork server has booted (a
    signal reaching an interpreter as it starts ends it with "Fatal Python error").

    ``ps -ww``: without a terminal ps cuts each line at 80 columns, and from a virtual
    environment in a long folder (CI's) "forkserver" fell beyond the cut, so no child was
    ever seen and both tests below failed there."""
    listing = subprocess.run(
        ["ps", "-ww", "-o", "pid=,ppid=,args=", "-s", str(session)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    servers = {line.split()[0] for line in listing if "forkserver" in line}
    return any(line.split()[1] in servers for line in listing)


def _ctrl_c(process: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C as a terminal sends it (to the whole process group); the outputs."""
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=CAP)
    wait_until(lambda: not _live(process.pid), "every process of the command to end")
    return out, err


def test_ctrl_c_stops_compare_with_the_milp(tmp_path: Path) -> None:
    """Ctrl-C during ``compare --exact milp``: exit 130 with the (partial) table, no child
    left. Catches: the interrupt swallowed by a policy run (the simulator keeps partial
    results), after which the MILP ran its whole time limit, instance after instance."""
    process = _started(
        ["compare", "--exact", "milp", "--jobs", "20", "--load", "0", "--instances", "3"],
        lambda p: _solver_child_runs(p.pid),
        "the MILP's children",
    )
    out, err = _ctrl_c(process)
    assert process.returncode == 130, err
    assert "interrupted" in out and "Traceback" not in err and "Warning" not in err, err


def test_ctrl_c_stops_the_lp_bound(tmp_path: Path) -> None:
    """Ctrl-C while ``bound --lp`` solves its LP: exit 130 and one line, at once (the LP runs
    in a child that is stopped; in this process HiGHS answered only when it returned)."""
    path = tmp_path / "big.json"
    assert subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", "generate", "--jobs", "300", "--servers", "8",
         "--out", str(path)], capture_output=True, check=False,
    ).returncode == 0  # fmt: skip
    process = _started(
        ["bound", str(path), "--lp"], lambda p: _solver_child_runs(p.pid), "the LP's child"
    )
    out, err = _ctrl_c(process)
    assert process.returncode == 130, err
    assert messages(err) == ["ddlsched: interrupted"] and out == "", (out, err)


def test_an_interrupted_policy_run_stops_its_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C landing in a policy run that another computation builds on (the exact
    solve's online start, the LP's upper bound) stops that computation: ``solve`` raises
    KeyboardInterrupt and ``bound --lp`` exits 130 in one line.

    Catches: "upper bound of nan" and exit 0 (the simulator keeps what completed on
    Ctrl-C; taken for a schedule, the run went on), and an exact solve that went on for its
    whole time limit without a warm start.
    """
    from ddlsched.algorithms import simulator

    from ddlsched.api import best_policy_objective, solve
    from ddlsched.core.io import read_instance

    path = tmp_path / "in.json"
    assert main(["generate", "--jobs", "4", "--preset", "exact-friendly", "--out", str(path)]) == 0
    instance = read_instance(path)

    def pressed(self: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(simulator._Simulation, "run", pressed)
    with pytest.raises(KeyboardInterrupt):
        solve(instance, "milp")
    with pytest.raises(KeyboardInterrupt):
        best_policy_objective(instance)
    capsys.readouterr()
    assert main(["bound", str(path), "--lp"]) == 130
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "ddlsched: interrupted\n"
    # The command that shows partial metrics still does.
    trace = tmp_path / "t.csv"
    trace.write_text("submit_time,duration,num_gpus\n0,50,1\n")
    assert main(["simulate", "--trace", str(trace), "--servers", "1"]) == 130


SWEEP = """[sweep]
methods = ["milp", "asrpt"]
seeds = 40
time_limit = 60
[sweep.grid]
num_jobs = [16]
servers = [4]
gpus_per_server = [4]
[generator]
integral = true
bandwidth_intra = 2.0
load = 1.0
"""


def _rows(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(db) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_ctrl_c_stops_a_sweep_in_one_line_and_keeps_its_rows(tmp_path: Path) -> None:
    """Ctrl-C during a sweep: one line (the summary, saying it was interrupted), nothing on
    stderr, exit 130, the finished rows kept, every worker and solver child gone.

    Catches: the workers receiving the Ctrl-C themselves (a traceback each and dozens of
    Dask log lines), and a shutdown that waited for the running MILPs.
    """
    config, db = tmp_path / "s.toml", tmp_path / "r.sqlite"
    config.write_text(SWEEP)
    process = _started(
        ["sweep", str(config), "--results", str(db)], lambda p: _rows(db) >= 1, "a first row"
    )
    out, err = _ctrl_c(process)
    assert process.returncode == 130, err
    assert messages(err) == [] and len(out.splitlines()) == 1 and "interrupted" in out, (out, err)
    assert _rows(db) >= 1


def test_sweep_workers_end_when_the_driver_is_killed(tmp_path: Path) -> None:
    """``kill -9`` of the sweep's driver alone: its Dask workers and their solver children
    end by themselves (no orphan burning a core)."""
    config, db = tmp_path / "s.toml", tmp_path / "r.sqlite"
    config.write_text(SWEEP)
    process = _started(
        ["sweep", str(config), "--results", str(db)], lambda p: _rows(db) >= 1, "a first row"
    )
    process.kill()
    process.wait(timeout=CAP)
    wait_until(lambda: not _live(process.pid), "every worker of the killed sweep to end")


def _marked(tmp_path: Path, target: str, argv: list[str]) -> subprocess.Popen[str]:
    """``ddlsched argv`` in its own session (:mod:`tests.signal_target`), returned once it
    has entered ``target``."""
    marker = tmp_path / "entered"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.signal_target", str(marker), target, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    wait_until(lambda: marker.exists() or process.poll() is not None, f"{target} entered")
    assert process.poll() is None, f"ended before {target}: {process.communicate()}"
    return process


def _long_trace(path: Path, rows: int = 400_000) -> Path:
    """A minimal-format trace of ``rows`` one- to four-GPU jobs, one a second: a simulation
    of it runs for minutes, so it is surely running when the signal comes."""
    lines = ["submit_time,duration,num_gpus"]
    lines += [f"{k},{50 + k % 977},{1 << (k % 3)}" for k in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_ctrl_c_stops_simulate_on_a_long_trace_and_keeps_its_metrics(tmp_path: Path) -> None:
    """Ctrl-C in the event loop of ``simulate`` on a long trace: exit 130, one line on
    stderr, no traceback, the metrics of the jobs completed so far printed (partial
    results), and no process left in its session."""
    trace = _long_trace(tmp_path / "long.csv")
    process = _marked(
        tmp_path,
        "ddlsched.algorithms.simulator:_Simulation.run",
        ["simulate", "--trace", str(trace), "--servers", "8"],
    )
    out, err = _ctrl_c(process)
    assert process.returncode == 130, err
    assert messages(err) == ["ddlsched: interrupted"], err
    assert "jobs_completed" in out, out


def test_ctrl_c_stops_check_and_keeps_the_instances_done(tmp_path: Path) -> None:
    """Ctrl-C during ``check --random`` while its MILP children run: exit 130, at most one
    line on stderr, no traceback, the claims of the instances finished printed, and no
    child left."""
    process = _started(
        ["check", "--random", "50", "--jobs", "8", "--time-limit", "60"],
        lambda p: _solver_child_runs(p.pid),
        "the check's solver children",
    )
    out, err = _ctrl_c(process)
    assert process.returncode == 130, (out, err)
    assert "Traceback" not in err and len(messages(err)) <= 1, err
    assert "interrupted" in out, out


def test_ctrl_c_stops_predict_while_the_forest_learns(tmp_path: Path) -> None:
    """Ctrl-C during ``predict evaluate`` on a long generated history, once the random
    forest is being fitted (scikit-learn's native code): exit 130, one line on stderr, no
    traceback, no process left."""
    process = _marked(
        tmp_path,
        "ddlsched.algorithms.prediction.forest:_forest",
        ["predict", "evaluate", "--jobs", "200000"],
    )
    out, err = _ctrl_c(process)
    assert process.returncode == 130, (out, err)
    assert messages(err) == ["ddlsched: interrupted"], err


def test_ctrl_c_while_the_parser_is_built_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C in the first half second of a command, while argparse measures the terminal
    for each option (seen: a traceback from ``shutil.get_terminal_size``, exit by SIGINT):
    one line and exit 130. The key press is simulated where it landed."""
    import shutil

    def pressed(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(shutil, "get_terminal_size", pressed)
    assert main(["generate", "--jobs", "2"]) == 130
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "ddlsched: interrupted\n"
