"""``ddlsched simulate`` on runs that cannot end well: a schedule the verifier rejects, a
restart cost no job outlasts, more preemptions than the cap; and progress on long runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlsched.cli import main

SMALL = ("--servers", "4", "--gpus-per-server", "4")
"""The 4 x 4 cluster the shipped 60-job Tiresias trace fills (offered load 0.94)."""


def test_a_schedule_the_verifier_rejects_exits_1_without_a_certified_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A restart cost of 1e12 s pushes resumed pieces past 1e12 s, where floats cannot hold
    their work to the verifier's tolerance: the command exits 1 (a negative answer), says
    on stderr that the verifier rejects the schedule and why, prints no certified ratio,
    and ``--json`` reports status ``error`` with no bound."""
    args = ["simulate", "--trace", "tiresias_60_job.csv", *SMALL, "--policy"]
    args += ["asrpt-preemptive", "--restart-cost", "1e12"]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert "the verifier rejects the schedule: job 't15'" in err
    assert "certified" not in out and "feasible" not in out
    assert main([*args, "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "error" and summary["best_bound"] is None
    assert summary["flow_ratio"] is None


def test_a_schedule_the_verifier_accepts_exits_0_with_its_certified_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same run at the default restart cost: exit 0, status ``feasible``, the ratio
    to the lower bound printed as certified."""
    args = ["simulate", "--trace", "tiresias_60_job.csv", *SMALL, "--policy"]
    assert main([*args, "asrpt-preemptive"]) == 0
    assert "certified" in capsys.readouterr().out
    assert main([*args, "asrpt-preemptive", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "feasible"


def _two_jobs_on_one_gpu(tmp_path: Path) -> str:
    """A trace of two 100,000-second one-GPU jobs submitted together."""
    path = tmp_path / "two.csv"
    path.write_text("submit_time,duration,num_gpus\n0,100000,1\n0,100000,1\n")
    return str(path)


ONE_GPU = ("--servers", "1", "--gpus-per-server", "1")


def test_gavel_with_a_restart_longer_than_its_round_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gavel takes turns between the two jobs every 360 s round; a restart cost of 1000 s
    never lets a resumed job progress. The command stops (exit 2) with one line naming the
    restart cost, the policy and its round, instead of running forever."""
    trace = _two_jobs_on_one_gpu(tmp_path)
    args = ["simulate", "--trace", trace, *ONE_GPU, "--policy", "gavel"]
    assert main([*args, "--restart-cost", "1000"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ddlsched: error: restart_cost: 1000 s") and "\n" not in err
    assert "'gavel' (rounds of 360 s)" in err


def test_a_preemptive_run_past_max_preemptions_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gavel on the two jobs preempts about 550 times; ``--max-preemptions 50`` stops it
    (exit 2) with one line naming the option and the cap; 1000 lets it finish."""
    trace = _two_jobs_on_one_gpu(tmp_path)
    args = ["simulate", "--trace", trace, *ONE_GPU, "--policy", "gavel"]
    assert main([*args, "--max-preemptions", "50"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ddlsched: error: max_preemptions: policy 'gavel' preempted more ")
    assert "50 times" in err and "--max-preemptions" in err and "\n" not in err
    assert main([*args, "--max-preemptions", "1000"]) == 0


def test_an_elastic_run_reports_its_jobs_done_as_it_goes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate`` on a Pollux workload opens the same progress report as a rigid run
    (a bar on a terminal, a line every few seconds otherwise) for the jobs of the run, and
    the simulator feeds it after every round, up to every job done; the report is closed
    at the end."""
    import ddlsched.cli.elastic as command

    calls: list[tuple[int, int]] = []
    opened: list[tuple[int, str]] = []
    closed: list[bool] = []

    def recording_bar(total: int, label: str, unit: str = "instance") -> tuple[object, object]:
        opened.append((total, unit))
        return (lambda done, of: calls.append((done, of))), (lambda: closed.append(True))

    monkeypatch.setattr(command, "progress_bar", recording_bar)
    args = ["simulate", "--trace", "workload-6.csv", "--servers", "2", "--gpus-per-server"]
    assert main([*args, "4", "--limit", "4", "--policy", "pollux"]) == 0
    capsys.readouterr()
    assert opened == [(4, "job")] and closed == [True]
    done = [d for d, _ in calls]
    assert len(calls) > 1 and done == sorted(done) and calls[-1] == (4, 4)
