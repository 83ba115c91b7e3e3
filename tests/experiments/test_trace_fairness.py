"""Finish-time fairness per user and per virtual cluster in every trace summary.

Hand-worked ``rho`` on a three-job FIFO schedule, the groups of ``simulate --trace``
(text and ``--json``) and of ``compare --trace``'s study.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ddlsched import simulate
from ddlsched.cli import main
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.experiments.trace_study import (
    group_fairness,
    job_rows,
    replay_trace,
    run_fairness,
    simulate_trace,
    trace_study,
)

USERS = (
    "submit,duration,gpus,user\n"
    "0,600,1,ann\n0,300,2,bob\n0,900,4,ann\n60,120,1,cy\n"
    "200,1500,3,bob\n260,10,1,cy\n1000,75,2,ann\n"
)
"""Three users of one to four GPUs, a batch at 0 and spread arrivals."""


def _three_jobs() -> Instance:
    """One GPU, 100 s jobs: ``a`` (user U, vc X) and ``b`` (user V, vc X) at 0, ``c``
    (user U, no vc) at 50. FIFO runs them in that order: ends 100, 200, 300."""
    return Instance(
        Cluster((1,), 1.0, 1.0),
        (
            Job("a", 0.0, 100, 1.0, 1, features={"user": "U", "vc": "X"}),
            Job("b", 0.0, 100, 1.0, 1, features={"user": "V", "vc": "X"}),
            Job("c", 50.0, 100, 1.0, 1, features={"user": "U"}),
        ),
    )


def test_rho_per_user_and_virtual_cluster_by_hand() -> None:
    """Jobs active: 2 in [0, 50), 3 in [50, 100), 2 in [100, 200), 1 in [200, 300). So
    N_a = 2.5, N_b = 2.25, N_c = 1.8 and rho = JCT / (100 N): a 100 / 250 = 0.4, b 200 /
    225, c 250 / 180. User U (a, c): mean JCT 175, rho mean (0.4 + 25/18) / 2, max 25/18;
    V: b alone. vc X holds a and b; c names no vc and is left out of that grouping."""
    instance = _three_jobs()
    result = simulate(instance, "fifo", bound=False)
    jobs = job_rows(instance, result, np.array([100.0, 100.0, 100.0]))
    rho_a, rho_b, rho_c = 0.4, 200 / 225, 250 / 180
    assert jobs["rho"].tolist() == pytest.approx([rho_a, rho_b, rho_c])
    groups = group_fairness(jobs)
    assert groups["user"] == {
        "U": {"jobs": 2, "mean_jct": 175.0, "rho_mean": pytest.approx((rho_a + rho_c) / 2),
              "rho_max": pytest.approx(rho_c)},
        "V": {"jobs": 1, "mean_jct": 200.0, "rho_mean": pytest.approx(rho_b),
              "rho_max": pytest.approx(rho_b)},
    }  # fmt: skip
    assert groups["vc"] == {
        "X": {"jobs": 2, "mean_jct": 150.0, "rho_mean": pytest.approx((rho_a + rho_b) / 2),
              "rho_max": pytest.approx(rho_b)},
    }  # fmt: skip
    summary = run_fairness(jobs)
    assert summary["rho_max"] == pytest.approx(rho_c) and summary["rho_max_job"] == "c"
    assert summary["rho_mean"] == pytest.approx((rho_a + rho_b + rho_c) / 3)


def test_a_trace_naming_no_user_reports_no_groups() -> None:
    """Without user or vc features only the overall figures are reported."""
    instance = _three_jobs()
    plain = instance.replace(jobs=tuple(job.replace(features={}) for job in instance.jobs))
    jobs = job_rows(plain, simulate(plain, "fifo", bound=False), np.full(3, 100.0))
    assert group_fairness(jobs) == {}
    assert set(run_fairness(jobs)) == {"rho_mean", "rho_max", "rho_max_job"}


def test_simulate_trace_reports_each_users_figures(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``simulate --trace`` (text and --json): per-user jobs add up to the trace's, each
    user's mean JCT is the mean over its jobs, the worst rho overall is the largest
    user's, under a fair policy too."""
    trace = tmp_path / "users.csv"
    trace.write_text(USERS)
    args = ["simulate", "--trace", str(trace), "--servers", "1", "--gpus-per-server", "4",
            "--policy", "maxmin-users"]  # fmt: skip
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    users = summary["fairness_by_user"]
    assert sorted(users) == ["ann", "bob", "cy"]
    assert sum(u["jobs"] for u in users.values()) == summary["jobs"] == 7
    assert summary["rho_max"] == pytest.approx(max(u["rho_max"] for u in users.values()))
    run = simulate_trace(replay_trace(trace, servers=1, gpus_per_server=4), "maxmin-users")
    jobs = run.jobs()
    assert users["ann"]["mean_jct"] == pytest.approx(jobs[jobs["user"] == "ann"]["jct"].mean())
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "per user: 3, the worst rho first" in text
    assert f"max {summary['rho_max']:.4g} (job {summary['rho_max_job']}" in text


def test_a_study_reports_groups_per_policy(tmp_path: Path) -> None:
    """``compare --trace``'s study: one group row per user and policy, the same figures
    as the run's own summary, and in the JSON document."""
    trace = tmp_path / "users.csv"
    trace.write_text(USERS)
    study = trace_study(trace, servers=1, gpus_per_server=4, policies=["fifo", "themis"],
                        bounds="none", workers=1)  # fmt: skip
    groups = study.groups()
    assert len(groups) == 6 and set(groups["grouping"]) == {"user"}
    for policy in ("fifo", "themis"):
        mine = groups[groups["policy"] == policy].set_index("group")
        assert mine["jobs"].sum() == 7
        rows = study.jobs()
        rows = rows[rows["policy"] == policy]
        assert mine.loc["bob", "rho_max"] == pytest.approx(
            rows[rows["user"] == "bob"]["rho"].max()
        )
    assert len(study.to_dict()["fairness_groups"]) == 6
