"""Trace studies: every rigid policy on one trace, each run against its model's bounds."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ddlsched import api
from ddlsched.experiments import trace_study as study_module
from ddlsched.experiments.trace_study import (
    finish_time_fairness,
    replay_trace,
    simulate_trace,
    trace_study,
)

PHILLY = (
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-09 07:00:00,600,1,600,alpha\n"
    "2017-10-09 07:00:00,1200,4,4800,alpha\n"
    "2017-10-09 07:00:00,300,2,600,beta\n"
    "2017-10-09 07:00:00,2400,8,19200,gamma\n"
    "2017-10-09 07:05:30,90,1,90,beta\n"
    "2017-10-09 07:11:00,4000,2,8000,alpha\n"
    "2017-10-09 07:30:00,150,4,600,gamma\n"
    "2017-10-09 08:02:00,700,1,700,beta\n"
)
"""Philly-shaped: three users (the cluster column), one to eight GPUs, four jobs in one
batch at the start, then arrivals spread over an hour."""

MINIMAL = (
    "submit,duration,gpus,user\n"
    "0,400.5,2,u1\n0,33.25,1,u2\n0,900,4,u1\n12.5,60,1,u3\n"
    "200,1500.75,3,u2\n260,10,1,u3\n1000,75,2,u1\n"
)
"""Minimal CSV: non-integral times, a three-GPU job, a batch at 0 and spread arrivals."""

FAST = {"bounds": "fast", "workers": 1}


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture(params=["philly", "minimal", "tiresias"])
def study(request, tmp_path):
    """One study per trace family, at two loads where the trace allows a target."""
    if request.param == "philly":
        return trace_study(_write(tmp_path, "p.csv", PHILLY), servers=2, gpus_per_server=8, **FAST)
    if request.param == "minimal":
        trace = _write(tmp_path, "m.csv", MINIMAL)
        return trace_study(trace, servers=1, gpus_per_server=4, target_loads=(0.6, 1.5), **FAST)
    return trace_study(
        "tiresias_60_job.csv", servers=2, gpus_per_server=8, target_loads=(0.9,), **FAST
    )


def test_every_run_is_verified_and_no_ratio_beats_its_bound_or_the_best(study) -> None:
    """Each row's total JCT over its model's lower bound, and over the best verified
    schedule of the model, is at least 1 (a ratio below 1 would be a wrong bound, a bound
    of the other model or a best that misses a run); the best is named."""
    table = study.table()
    assert len(table) == len(study.settings.policies) * len(study.settings.target_loads)
    assert table["verified"].all()
    assert (table["jct_over_lb"] >= 1 - 1e-9).all(), table[["policy", "jct_over_lb"]]
    assert (table["jct_over_best"] >= 1 - 1e-9).all(), table[["policy", "jct_over_best"]]
    assert table["best_schedule"].ne("none").all()
    for record in study.records():
        bound = study.sandwiches[record["load"]][record["model"]].lower.flow_value
        assert record["jct_over_lb"] == pytest.approx(record["total_jct"] / bound)


def test_the_best_of_a_model_is_its_least_verified_total(study) -> None:
    """JCT/best is 1 for the policy the best names, and the best is no more than the
    sandwich's upper end nor any run the model admits."""
    for load in study.settings.target_loads:
        for model, found in study.sandwiches[load].items():
            best, name = study.best(load, model)
            assert best <= found.upper.total_jct
            runs = study.runs[load]
            admitted = [
                r.total_jct
                for r in runs.values()
                if model == "preemptive" or not any(e.pieces for e in r.schedule.jobs)
            ]
            assert best == min([found.upper.total_jct, *admitted])
            if name in runs:
                assert runs[name].total_jct == best


def test_the_table_means_are_the_means_of_the_job_rows(study) -> None:
    """Per load and policy, the table's mean JCT, mean queueing delay, mean and worst rho
    and mean bounded slowdown are those of :meth:`jobs`' rows."""
    jobs, table = study.jobs(), study.table()
    assert (
        len(jobs) == len(table) * study.replays[study.settings.target_loads[0]].instance.num_jobs
    )
    for record in table.to_dict("records"):
        load = record["load"]
        same_load = jobs["load"].isna() if load is None else jobs["load"] == load
        rows = jobs[same_load & (jobs["policy"] == record["policy"])]
        assert rows["jct"].mean() == pytest.approx(record["mean_jct"])
        assert rows["jct"].sum() == pytest.approx(record["total_jct"])
        assert rows["queueing_delay"].mean() == pytest.approx(record["mean_queueing_delay"])
        assert rows["rho"].mean() == pytest.approx(record["rho_mean"])
        assert rows["rho"].max() == pytest.approx(record["rho_max"])
        assert rows["bounded_slowdown"].mean() == pytest.approx(record["bounded_slowdown_mean"])
        assert rows["preemptions"].sum() == record["preemptions"]
        assert ((rows["end"] - rows["submit"]) == rows["jct"]).all()


@pytest.mark.parametrize("policy", ["fifo", "sjf", "las", "gavel"])
def test_a_row_equals_the_policy_simulated_alone(tmp_path, policy: str) -> None:
    """A study's row of a policy holds the figures of the same policy simulated on its own
    (the same trace, cluster, load and seed)."""
    trace = _write(tmp_path, "p.csv", PHILLY)
    found = trace_study(
        trace, servers=1, gpus_per_server=8, target_loads=(0.8,), policies=[policy], **FAST
    )
    alone = api.simulate(
        replay_trace(trace, servers=1, gpus_per_server=8, target_load=0.8).instance, policy
    )
    record = found.records()[0]
    for key in ("mean_jct", "p50_jct", "p95_jct", "p99_jct", "makespan", "gpu_utilisation"):
        assert record[key] == pytest.approx(alone.metrics[key]), key
    assert record["total_jct"] == pytest.approx(alone.total_jct)


def test_finish_time_fairness_by_hand() -> None:
    """Two jobs released at 0 on 2 GPUs, both 10 s alone: a 1-GPU job runs [0, 10], then a
    2-GPU job [10, 20]. The first shares its life with the second throughout (N = 2): its
    fair share, 1 GPU, is all it asks, so alone it takes 10 s and rho = 1. The second
    lives 20 s with 2 jobs for 10 and 1 for 10 (N = 1.5): on 2 / 1.5 of its 2 GPUs it would
    take 10 x 1.5 = 15 s, so rho = 20 / 15."""
    rho = finish_time_fairness(
        releases=np.array([0.0, 0.0]),
        ends=np.array([10.0, 20.0]),
        gpus=np.array([1.0, 2.0]),
        processing=np.array([10.0, 10.0]),
        num_gpus=2,
    )
    assert rho == pytest.approx([1.0, 20.0 / 15.0])


def test_finish_time_fairness_counts_only_the_jobs_alive_meanwhile() -> None:
    """Three 1-GPU jobs on 1 GPU, each 4 s alone, released at 0, 0 and 10 and run back to
    back: [0, 4], [4, 8], [10, 14]. The first lives 4 s beside the second (N = 2: 8 s on
    half a GPU, rho = 0.5); the second 8 s, two jobs for 4 and one for 4 (N = 1.5, rho =
    8 / 6); the third lives alone (N = 1, rho = 1)."""
    rho = finish_time_fairness(
        releases=np.array([0.0, 0.0, 10.0]),
        ends=np.array([4.0, 8.0, 14.0]),
        gpus=np.ones(3),
        processing=np.full(3, 4.0),
        num_gpus=1,
    )
    assert rho == pytest.approx([0.5, 8.0 / 6.0, 1.0])


def test_the_two_job_trace_gives_the_hand_worked_rho_and_user_spread(tmp_path) -> None:
    """The two-job case above as a trace: fifo runs the 1-GPU job first; rho 1 and 4/3;
    the users' mean JCTs 10 and 20: max/min 2, coefficient of variation 1/3."""
    trace = _write(tmp_path, "two.csv", "submit,duration,gpus,user\n0,10,1,a\n0,10,2,b\n")
    found = trace_study(trace, servers=1, gpus_per_server=2, policies=["fifo"], **FAST)
    jobs = found.jobs()
    assert list(jobs["jct"]) == [10.0, 20.0]
    assert list(jobs["rho"]) == pytest.approx([1.0, 4.0 / 3.0])
    record = found.records()[0]
    assert record["user_jct_max_over_min"] == pytest.approx(2.0)
    assert record["user_jct_cv"] == pytest.approx(1.0 / 3.0)
    assert list(jobs["bounded_slowdown"]) == pytest.approx([1.0, 2.0])


def test_a_trace_without_users_has_no_user_spread() -> None:
    """The Tiresias trace names no users: no spread, rather than one of a single group."""
    found = trace_study(
        "tiresias_60_job.csv", servers=2, policies=["fifo"], bounds="none", workers=1
    )
    record = found.records()[0]
    assert record["user_jct_max_over_min"] is None and record["user_jct_cv"] is None
    assert math.isnan(record["jct_over_lb"])  # no bound asked for
    assert record["jct_over_best"] == 1.0 and record["best_schedule"] == "fifo"


def test_the_sandwich_is_computed_once_per_load_and_model(tmp_path, monkeypatch) -> None:
    """Ten policies at two loads: one sandwich call per load holding both models (problem
    A's first, so that its upper side serves the preemptive model's), never one per policy
    or per model; only the models of the policies asked are computed."""
    import ddlsched.sandwich as sandwich_module

    asked = []
    original = sandwich_module.study_sandwiches

    def counting(instance, **options):
        asked.append((instance.num_jobs, options["models"]))
        return original(instance, **options)

    monkeypatch.setattr(sandwich_module, "study_sandwiches", counting)
    trace = _write(tmp_path, "m.csv", MINIMAL)
    found = trace_study(trace, servers=1, gpus_per_server=4, target_loads=(0.5, 0.9), **FAST)
    assert asked == [(7, (False, True))] * 2
    assert all(set(found.sandwiches[load]) == {"A", "preemptive"} for load in (0.5, 0.9))
    asked.clear()
    trace_study(trace, servers=1, gpus_per_server=4, policies=["fifo", "sjf"], **FAST)
    assert asked == [(7, (False,))]


def test_ctrl_c_keeps_the_runs_finished(tmp_path, monkeypatch) -> None:
    """An interrupt during the third policy leaves a study marked interrupted holding the
    sandwiches and the two runs done, whose rows are still complete."""
    original = study_module._run_policy
    started = []

    def interrupted(instance, policy, seed):
        started.append(policy)
        if len(started) == 3:
            raise KeyboardInterrupt
        return original(instance, policy, seed)

    monkeypatch.setattr(study_module, "_run_policy", interrupted)
    trace = _write(tmp_path, "m.csv", MINIMAL)
    found = trace_study(trace, servers=1, gpus_per_server=4, **FAST)
    assert found.interrupted
    assert list(found.runs[None]) == started[:2]
    assert [r["policy"] for r in found.records()] == started[:2]
    assert all(r["jct_over_lb"] >= 1 for r in found.records())


def test_worker_processes_give_the_same_table(tmp_path) -> None:
    """Two worker processes give the table one process gives (the runs are seeded)."""
    trace = _write(tmp_path, "m.csv", MINIMAL)
    options = {"servers": 1, "gpus_per_server": 4, "policies": ["fifo", "las", "asrpt"]}
    alone = trace_study(trace, bounds="fast", workers=1, **options).table()
    pooled = trace_study(trace, bounds="fast", workers=2, **options).table()
    assert alone.drop(columns="runtime_s").equals(pooled.drop(columns="runtime_s"))


def test_worker_processes_pass_the_sandwich_progress_on(tmp_path) -> None:
    """In worker processes the sandwich's own lines (each phase of both models) still reach
    the study's progress, as its task's phase: a silent sandwich of minutes is what a
    heartbeat of "running sandwich" alone would show."""
    trace = _write(tmp_path, "m.csv", MINIMAL)
    heard: list[str] = []
    trace_study(trace, servers=1, gpus_per_server=4, policies=["fifo", "las"], bounds="fast",
                workers=2, progress=lambda text, done, total: heard.append(text))  # fmt: skip
    phases = [line for line in heard if line.startswith("sandwich A and preemptive (load")]
    assert any(": problem A lower: " in line for line in phases), heard
    assert any(": preemptive upper: " in line for line in phases), heard


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"policies": ["fifo", "nope"]}, "nope"),
        ({"policies": ["pollux"]}, "pollux"),
        ({"policies": ["fifo", "fifo"]}, "fifo"),
        ({"target_loads": (0.5, 0.0)}, "0.0"),
        ({"target_loads": (-1.0,)}, "-1.0"),
        ({"target_loads": 0.5}, "target_loads: expected a list of loads"),
        ({"target_loads": "0.5"}, "target_loads: expected a list of loads"),
        ({"target_loads": ()}, "target_loads: expected one or more loads"),
        ({"target_loads": (True,)}, "target_loads: expected numbers > 0, got True"),
        ({"bounds": "most"}, "most"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_settings_are_refused_naming_the_value(options, named: str) -> None:
    """An unknown, elastic or repeated policy, a load <= 0, loads given as one number, a
    string, none at all or a bool, unknown bounds or no workers: one ValueError naming the
    value, before the trace is read (a bare number was a TypeError from iterating it, a
    string read character by character)."""
    with pytest.raises(ValueError, match=named) as error:
        trace_study("no-such-file.csv", servers=1, **{**FAST, **options})
    assert "\n" not in str(error.value)


def test_simulate_trace_claims_no_upper_end_without_an_offline_schedule() -> None:
    """Without an offline schedule the summary names the lower bound of the model and no
    upper end (the run itself is none); with one, the upper end is at most the run's."""
    replay = replay_trace("tiresias_60_job.csv", servers=2)
    plain = simulate_trace(replay, "las").summary()
    assert plain["flow_model"] == "preemptive" and plain["flow_upper_bound"] is None
    assert plain["flow_upper_bound_note"] == study_module.NO_OFFLINE
    bounded = simulate_trace(replay, "las", upper_bound=True).summary()
    assert bounded["flow_lower_bound"] <= bounded["flow_upper_bound"] <= bounded["total_jct"]
    assert "flow_upper_bound_note" not in bounded


def test_each_policy_is_measured_against_its_own_models_bound(tmp_path) -> None:
    """A 4-GPU job arrives while two others hold the server: problem A's start-time bound
    beats every bound of the preemptive model, so fifo (problem A) and las (preemptive)
    are measured against different bounds, each its model's."""
    trace = _write(
        tmp_path, "four.csv", "submit,duration,gpus\n0,100,1\n10,5,2\n20,1000,4\n20,1,1\n"
    )
    found = trace_study(trace, servers=1, gpus_per_server=4, policies=["fifo", "las"],
                        bounds="full", workers=1)  # fmt: skip
    bounds = {model: s.lower.flow_value for model, s in found.sandwiches[None].items()}
    assert bounds["A"] > bounds["preemptive"]
    for record in found.records():
        assert record["lower_bound"] == bounds[record["model"]]
        assert record["jct_over_lb"] >= 1


def test_a_preempting_run_can_be_the_preemptive_models_best(tmp_path) -> None:
    """A 1,000 s job holds the only GPU when four 10 s jobs arrive: a policy that preempts
    it finishes them at once and is the preemptive model's best, which no run of problem A
    (whose best preempts nothing) reaches."""
    trace = _write(
        tmp_path,
        "long.csv",
        "submit,duration,gpus\n0,1000,1\n10,10,1\n20,10,1\n30,10,1\n40,10,1\n",
    )
    found = trace_study(trace, servers=1, gpus_per_server=1, bounds="none", workers=1)
    table = found.table().set_index("policy")
    preemptive_best = found.best(None, "preemptive")[1]
    a_best = found.best(None, "A")[1]
    assert table.loc[preemptive_best, "preemptions"] > 0
    assert table.loc[a_best, "preemptions"] == 0
    assert (table["jct_over_best"] >= 1 - 1e-9).all()
    assert table.loc[preemptive_best, "total_jct"] < table.loc[a_best, "total_jct"]
