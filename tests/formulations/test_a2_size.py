"""Problem A2's memory guard and its answers when stopped: a model whose (job, slot) pairs
need more memory than the limit is refused before either backend builds it, and a stopped
solve still answers with a verified schedule of A2."""

from __future__ import annotations

import threading

import pytest
from ddlsched.formulations import cpsat, milp, portfolio
from ddlsched.formulations.certify import BoundSet
from ddlsched.formulations.memory import A2_MILP
from ddlsched.formulations.prepared import ModelTooLarge, guard_a2
from ddlsched.formulations.problem_a2 import single_machine, srpt_schedule
from ddlsched.proofs_checks.verifier import verify

from ddlsched import ExactParams, Problem, SolveStatus, solve
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job


def _two_jobs_one_gpu() -> Instance:
    """One 1-GPU server, 1 s slots: a (3 s, released at 0) and b (2 s, released at 1).

    By hand: ``delta = Delta / M = 1`` s and the sizes and releases 3, 2, 0, 1 have no
    common divisor above 1, so the covering horizon is the last release plus all work,
    1 + 5 = 6 slots: job a indexes slots 0-5 (6 pairs), job b slots 1-5 (5 pairs), 11 in
    all.
    """
    jobs = (Job("a", 0.0, 3, 1.0, 1), Job("b", 1.0, 2, 1.0, 1))
    return Instance(Cluster((1,), 1.0, 1.0), jobs, slot=1.0)


def _realistic_four() -> Instance:
    """Four realistic generated jobs on 2 x 4 GPUs: 1,054,924 pairs of 0.125 s (CP-SAT's
    model of it reached about 10 GB before its time limit)."""
    return generate(GeneratorConfig(num_jobs=4), 0)


def test_the_pair_count_is_the_hand_count() -> None:
    """The guard prices the 11 pairs worked out by hand: a limit of exactly their estimate
    admits the model, a byte less refuses it (an off-by-one horizon, or a count that
    ignores releases, moves the edge)."""
    data = single_machine(_two_jobs_one_gpu())
    guard_a2(data, A2_MILP.estimate(11))
    with pytest.raises(ModelTooLarge, match=r"\(11 \(job, slot\) pairs\)"):
        guard_a2(data, A2_MILP.estimate(11) - 1)


class _Built(Exception):
    """Raised by a stand-in for a model build the guard should have prevented."""


def _no_build(*args: object, **kwargs: object) -> None:
    raise _Built


@pytest.mark.parametrize("method", ["milp", "cpsat", "exact"])
def test_a_large_a2_model_is_refused_before_it_is_built(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every exact method refuses four realistic jobs on A2 with one clear error naming
    the estimate, the default limit and the ways out, before a model is built or a child
    started (the builds are replaced by stand-ins that fail)."""
    monkeypatch.setattr(milp, "build_a2_model", _no_build)
    monkeypatch.setattr(cpsat, "_run_child", _no_build)
    monkeypatch.setattr(portfolio, "_Race", _no_build)
    with pytest.raises(ModelTooLarge) as refused:
        solve(_realistic_four(), method, problem=Problem.A2, bound=False)
    message = str(refused.value)
    assert "1,054,924 (job, slot) pairs" in message
    assert "memory limit of 2,048 MiB" in message and '"slot"' in message
    assert "--memory-limit" in message
    assert "\n" not in message


def test_the_command_refuses_a_large_a2_model_in_one_line(tmp_path, capsys) -> None:
    """``ddlsched solve --problem A2`` on four realistic jobs exits 2 with the guard's one
    line, no traceback."""
    from ddlsched.cli import main
    from ddlsched.core.io import write_instance

    path = tmp_path / "four.json"
    write_instance(_realistic_four(), path)
    code = main(["solve", str(path), "--problem", "A2", "--method", "cpsat"])
    err = capsys.readouterr().err
    assert code == 2
    assert "over the memory limit" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_milp_stopped_without_an_incumbent_returns_preemptive_srpt() -> None:
    """A MILP of A2 stopped past its deadline before reporting anything answers with
    preemptive SRPT (never without a schedule), which the verifier accepts for A2."""
    instance = generate(GeneratorConfig(num_jobs=4, integral=True), 3)
    result = milp._stopped_at_deadline(instance, Problem.A2, None, [], began=0.0)
    assert result.status is SolveStatus.FEASIBLE
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    assert "preemptive SRPT" in result.notes[0]


def test_the_a2_race_watches_preemptive_srpt_from_the_start() -> None:
    """The portfolio's watch on A2 holds preemptive SRPT before either backend runs, so a
    race stopped early still answers with a schedule of A2."""
    instance = generate(GeneratorConfig(num_jobs=4, integral=True), 3)
    watch = portfolio._Watch.started(
        BoundSet.empty(instance), Problem.A2, threading.Event(), False, None
    )
    assert watch.best is not None
    schedule, source = watch.best
    assert source == "preemptive SRPT"
    assert verify(instance, schedule).feasible


def test_cpsat_starts_a2_from_its_complete_hint() -> None:
    """Four weighted jobs on one GPU (5,073 pairs; releases 0, 7, 13, 31 keep the grid at
    1 s): with a deterministic limit of a thousandth, CP-SAT still answers with its own
    solution and a bound, at most preemptive SRPT's objective. Its presolve, or a hint
    without the completions, leaves it without a solution there."""
    rows = [(0.0, 300, 1.0), (7.0, 400, 2.0), (13.0, 200, 1.0), (31.0, 350, 3.0)]
    jobs = tuple(
        Job(f"j{k}", release, size, 1.0, 1, weight=weight)
        for k, (release, size, weight) in enumerate(rows)
    )
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs, slot=1.0)
    params = ExactParams(time_limit=None, deterministic_limit=0.001)
    result = cpsat.solve_cpsat(instance, Problem.A2, params)
    assert result.notes[0] in ("CP-SAT: FEASIBLE", "CP-SAT: OPTIMAL"), result.notes
    assert result.best_bound > 0
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    srpt = srpt_schedule(single_machine(instance))
    assert result.objective <= sum(
        job.weight * entry.end for job, entry in zip(jobs, srpt.jobs, strict=True)
    )
