"""Limits are limits, checked without reading how fast the machine is.

Each test builds the situation directly: a mapping MILP that stopped without a mapping, a
deadline already spent by start-up, a child that starts late. Wall-clock figures live in
``benchmarks/bench_limits.py``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from ddlsched.formulations import modes
from ddlsched.formulations.mapping import MappingResult

from ddlsched import zoo_job
from ddlsched.core.alpha import alpha
from ddlsched.core.model import Cluster, Instance
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus


def _stopped_empty(*args: object, **kwargs: object) -> MappingResult:
    """A mapping MILP whose time limit came before its first mapping (a 64-node graph
    under a short limit)."""
    return MappingResult(SolveStatus.TIME_LIMIT, math.nan, None, math.nan, 1.0)


def test_a_mapping_milp_stopped_without_a_mapping_gives_an_unproven_in_order_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The servers filled in order, marked unproven, so the job's duration is never called
    the fastest. Catches: the internal error 'no mapping found' (exit 3 on ``solve
    --time-limit 2`` of one 64-GPU job on 16 x 4), and the fallback marked proven."""
    job = zoo_job("megatron_8b", dp=2, pp=2, tp=2, iterations=3)
    cluster = Cluster.uniform(4, 2, 20.0, 1.0)
    monkeypatch.setattr(modes, "extreme_cut", lambda *a, **k: None)  # no branch and bound
    monkeypatch.setattr(modes, "solve_mapping", _stopped_empty)
    counts = (2, 2, 2, 2)
    mapping, proven = modes.best_mapping_for_counts(
        job, cluster, counts, ExactParams(time_limit=5.0), deadline=None
    )
    assert mapping == (0, 0, 1, 1, 2, 2, 3, 3) and not proven
    slotted = modes.problem_a(
        Instance(cluster, (job,)), ExactParams(time_limit=5.0), deadline=None
    )
    assert slotted.unproven_modes == (job.id,)
    assert slotted.jobs[0].modes[0].duration == pytest.approx(3 * alpha(job, cluster, mapping))


def test_a_mapping_milp_that_proves_infeasibility_is_still_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a time limit falls back: a mapping MILP calling counts infeasible is a bug in
    the counts, reported, never hidden behind a made-up mapping."""
    job = zoo_job("resnet50", dp=4, iterations=3)
    cluster = Cluster.uniform(2, 2, 20.0, 1.0)
    monkeypatch.setattr(modes, "extreme_cut", lambda *a, **k: None)
    monkeypatch.setattr(
        modes,
        "solve_mapping",
        lambda *a, **k: MappingResult(SolveStatus.INFEASIBLE, math.nan, None, math.nan, 0.0),
    )
    with pytest.raises(RuntimeError, match="no mapping found"):
        modes.best_mapping_for_counts(job, cluster, (2, 2), ExactParams(), None)


class _Parameters(SimpleNamespace):
    pass


@pytest.mark.parametrize("left", [5.0, 0.3, -2.0])
def test_cpsat_searches_only_for_what_is_left_when_its_child_begins(
    left: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CP-SAT's limit is the time left at the deadline when the child sets its parameters,
    not the limit the parent computed before the child started (start-up and model build
    took 0.6-0.8 s of a 2 s limit, which the search then overran); a deadline already
    passed still gives a positive limit. Catches: a relative limit passed to the child."""
    from ddlsched.formulations.cpsat_runtime import set_parameters

    now = 1000.0
    monkeypatch.setattr(time, "monotonic", lambda: now)  # no clock: the sums are exact
    solver = SimpleNamespace(parameters=_Parameters())
    set_parameters(solver, ExactParams(time_limit=60.0), 0, now + left)
    assert solver.parameters.max_time_in_seconds == pytest.approx(max(0.01, left))


def test_the_commands_time_limit_counts_its_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """``solve --time-limit T``: the solver gets T minus the start-up already spent and the
    method's reserve for answering, never less than a positive floor. Catches: the
    start-up (about a second with Pyomo) added on top of the limit, and a negative limit
    handed to a solver."""
    import ddlsched.formulations.milp
    import ddlsched.formulations.portfolio  # noqa: F401 - imported by solver_budget; here, outside it

    from ddlsched.cli.solve import ANSWER_RESERVE, LEAST_BUDGET, solver_budget

    now = 1000.0
    monkeypatch.setattr(time, "monotonic", lambda: now)  # no clock: the sums are exact
    for method, reserve in ANSWER_RESERVE.items():
        args = argparse.Namespace(time_limit=10.0, started=now - 3.0, method=method)
        assert solver_budget(args) == pytest.approx(10.0 - 3.0 - reserve)
    late = argparse.Namespace(time_limit=1.0, started=now - 30.0, method="exact")
    assert solver_budget(late) == LEAST_BUDGET
    unlimited = argparse.Namespace(time_limit=None, started=now, method="exact")
    assert solver_budget(unlimited) is None


def test_a_command_run_from_the_shell_counts_from_the_process_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``main()`` as the console script calls it (no argv): the limit counts from the
    process's start, and the answer says what the solver was given. A process 100 s old
    leaves the solver the floor. Catches ``main`` starting the clock at its own call."""
    import json
    import sys

    import ddlsched.cli as cli
    from ddlsched.cli.solve import LEAST_BUDGET
    from ddlsched.core.generators import generate
    from ddlsched.core.io import write_instance
    from tests.strategies import TINY_INTEGRAL

    path = tmp_path / "tiny.json"
    write_instance(generate(TINY_INTEGRAL.replace(num_jobs=2), 0), path)
    monkeypatch.setattr(cli, "process_age", lambda: 100.0)
    argv = ["ddlsched", "solve", str(path), "--method", "milp", "--time-limit", "30", "--json"]
    monkeypatch.setattr(sys, "argv", argv)
    assert cli.main() == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert f"the solver was given {LEAST_BUDGET:.2f} s after the start-up" in notes[-1]


def test_cpsat_counts_its_model_build_inside_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """CP-SAT's deadline is fixed when the call begins, so preparing the modes and the
    model eats into the search's time. Catches a deadline taken after the build (a slow
    mode enumeration then came on top of the limit)."""
    from ddlsched.formulations import cpsat
    from ddlsched.formulations.cpsat_runtime import Answer

    from ddlsched.core.generators import generate
    from tests.strategies import TINY_INTEGRAL

    tasks = []

    def captured(task: object, cancel: object, on_report: object = None) -> object:
        tasks.append(task)
        return Answer("ERROR (captured)", None, math.nan)

    monkeypatch.setattr(cpsat, "_run_child", captured)
    from ddlsched.formulations import prepared

    ticks = iter(range(10**6))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(ticks)))  # 1 s per reading
    prepared_at = []
    prepare = prepared.prepare_slotted

    def timed_prepare(*args: object, **kwargs: object) -> object:
        prepared_at.append(time.monotonic())
        return prepare(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(prepared, "prepare_slotted", timed_prepare)
    limit, instance, params = 30.0, generate(TINY_INTEGRAL, 1), ExactParams(time_limit=30.0)
    began = time.monotonic()
    cpsat.solve_cpsat(instance, "A", params)
    (task,), (start,) = tasks, prepared_at
    assert began + limit < task.ends < start + limit  # fixed before the modes are prepared


@pytest.mark.parametrize(
    ("boot_clock", "expected"),
    [(1012.5, 12.5), (1000.0, 0.0), (999.0, 0.0), (1061.0, 0.0), (1059.0, 59.0)],
)
def test_the_process_age_is_read_from_the_start_field(
    boot_clock: float, expected: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Catches reading the wrong field of ``/proc/self/stat`` (the age then came out 0, and
    start-up was again added on top of the limit) and believing a clock mismatch. A made-up
    line for a process whose name has a space and a parenthesis, every field after it
    numbered 3, 4, ... except field 22, the start: 100,000 ticks at 100 per second, 1000 s
    after boot. With the boot clock at 1012.5 s the age is 12.5; before the start (a clock
    of another namespace) or past the believed ceiling of 60 s it is 0; an unreadable
    table gives 0."""
    import io
    import os

    from ddlsched.cli import clock

    fields = [str(n) for n in range(3, 53)]
    fields[22 - 3] = "100000"
    line = "4242 (odd) name) " + " ".join(fields)
    monkeypatch.setattr(clock, "open", lambda *a, **k: io.StringIO(line), raising=False)
    monkeypatch.setattr(os, "sysconf", lambda name: 100)
    monkeypatch.setattr(time, "clock_gettime", lambda which: boot_clock)
    assert clock.process_age() == pytest.approx(expected)

    def unreadable(*args: object, **kwargs: object) -> None:
        raise OSError("no /proc here")

    monkeypatch.setattr(clock, "open", unreadable, raising=False)
    assert clock.process_age() == 0.0


def test_modes_cut_short_never_break_the_symmetry_relabelling() -> None:
    """With modes cut short (`solve --time-limit 1` of 24 jobs on 4 x 4 GPUs, or
    ``mode_limit`` 7 to 11 on 4 jobs on 2 x 4 GPUs, the deterministic case here), every
    limit gives a prepared problem without symmetry anchors, and the MILP and CP-SAT return
    a verified schedule, never called optimal. Catches anchors that rename a plan onto a
    mode never enumerated (an internal StopIteration)."""
    from ddlsched.formulations.cpsat import solve_cpsat
    from ddlsched.formulations.milp import solve_milp
    from ddlsched.formulations.prepared import prepare_slotted
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched import GeneratorConfig, generate

    config = GeneratorConfig(
        num_jobs=4, servers=2, gpus_per_server=4, integral=True, bandwidth_intra=20.0
    )
    instance = generate(config, 0)
    for limit in range(1, 30):
        prepared = prepare_slotted(instance, "A", None, ExactParams(mode_limit=limit))
        assert not prepared.slotted.unenumerated or prepared.anchors == ()
    params = ExactParams(mode_limit=8, threads=1)
    for solver in (solve_milp, solve_cpsat):
        result = solver(instance, "A", params)
        assert result.schedule is not None and verify(instance, result.schedule).feasible
        assert not result.proven_optimal and result.facts["modes_complete"] is False
