"""``ddlsched compare --trace`` on a rigid trace (a trace study), and ``simulate --trace``
saying only what it knows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ddlsched.api import replay_trace, simulate_trace
from ddlsched.cli import main
from ddlsched.experiments import trace_study as study_module

TRACE = (
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-09 07:00:00,600,1,600,alpha\n"
    "2017-10-09 07:00:00,1200,4,4800,alpha\n"
    "2017-10-09 07:00:00,300,2,600,beta\n"
    "2017-10-09 07:05:30,90,1,90,beta\n"
    "2017-10-09 07:11:00,4000,2,8000,alpha\n"
    "2017-10-09 07:30:00,150,4,600,gamma\n"
)
"""Philly-shaped: three users, a batch of three jobs and spread arrivals, up to 4 GPUs."""

CLUSTER = ["--servers", "1", "--gpus-per-server", "4"]
QUICK = [*CLUSTER, "--bounds", "fast", "--workers", "1"]


@pytest.fixture
def trace(tmp_path: Path) -> str:
    path = tmp_path / "philly.csv"
    path.write_text(TRACE)
    return str(path)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_a_load_list_gives_one_table_per_load(trace: str, capsys) -> None:
    """``--target-load 0.5,0.9``: one heading and one table per load, one row per policy,
    JCT / LB in the table's first ratio column; --json holds both loads' sandwiches."""
    argv = ["compare", "--trace", trace, *QUICK, "--target-load", "0.5,0.9"]
    assert main([*argv, "--policies", "fifo,las"]) == 0
    out = capsys.readouterr().out
    assert out.count("load target 0.5 ") == 1 and out.count("load target 0.9 ") == 1
    headers = [line for line in out.splitlines() if line.startswith("| policy |")]
    assert len(headers) == 2 and all(h.split("|")[3].strip() == "JCT/LB" for h in headers)
    rows = [line for line in out.splitlines() if line.startswith(("| fifo ", "| las "))]
    assert len(rows) == 4
    document = _json(capsys, [*argv, "--policies", "fifo,las", "--json"])
    assert [load["target_load"] for load in document["loads"]] == [0.5, 0.9]
    assert all(set(load["sandwiches"]) == {"A", "preemptive"} for load in document["loads"])
    assert [(r["load"], r["policy"]) for r in document["records"]] == [
        (0.5, "fifo"), (0.5, "las"), (0.9, "fifo"), (0.9, "las"),
    ]  # fmt: skip
    assert all(r["jct_over_lb"] >= 1 and r["jct_over_best"] >= 1 for r in document["records"])


def test_the_jobs_file_averages_to_the_table(trace: str, tmp_path: Path, capsys) -> None:
    """``--out jobs.csv``: one row per job and policy; per policy, the mean JCT and rho of
    the rows are the table's."""
    out = tmp_path / "jobs.csv"
    argv = ["compare", "--trace", trace, *QUICK, "--policies", "fifo,sjf,gavel", "--json"]
    document = _json(capsys, [*argv, "--out", str(out)])
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3 * 6
    for record in document["records"]:
        mine = [row for row in rows if row["policy"] == record["policy"]]
        jct = [float(row["jct"]) for row in mine]
        rho = [float(row["rho"]) for row in mine]
        assert sum(jct) / len(jct) == pytest.approx(record["mean_jct"])
        assert sum(rho) / len(rho) == pytest.approx(record["rho_mean"])
        assert {row["user"] for row in mine} == {"alpha", "beta", "gamma"}


@pytest.mark.parametrize("policy", ["fifo", "las"])
def test_a_row_equals_simulate_of_that_policy(trace: str, capsys, policy: str) -> None:
    """The study's row of a policy carries the figures ``simulate --json`` prints for it
    alone on the same trace, cluster and load, its JCT / LB included when the bound is the
    same."""
    at = ["--target-load", "0.8"]
    study = _json(capsys, ["compare", "--trace", trace, *QUICK, *at, "--policies", policy,
                           "--json"])["records"][0]  # fmt: skip
    alone = _json(capsys, ["simulate", "--trace", trace, *CLUSTER, *at, "--policy", policy,
                           "--json"])  # fmt: skip
    for key in ("total_jct", "mean_jct", "p95_jct", "makespan", "mean_queueing_delay"):
        assert study[key] == pytest.approx(alone[key]), key
    assert study["offered_load"] == pytest.approx(alone["offered_load"])
    assert study["lower_bound"] >= alone["flow_lower_bound"] * (1 - 1e-9)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--policies", "fifo,nope"], "'nope'"),
        (["--policies", "pollux"], "'pollux' schedules elastic jobs"),
        (["--target-load", "0.5,0"], "--target-load: '0' must be a number > 0"),
        (["--target-load", "0.5,-2"], "'-2'"),
        (["--target-load", "0.5,0.5"], "--target-load"),
        (["--jobs", "4"], "--jobs: not available with a rigid --trace"),
        (["--target-load", "0.5,,0.9"], "--target-load: an empty item between commas"),
        (["--target-load", "0.5,"], "--target-load: an empty item between commas"),
        (["--target-load", "0_9"], "--target-load: expected a number > 0, got '0_9'"),
        (["--policies", "fifo,,sjf"], "--policies: an empty item between commas"),
        (["--plot", "figure.txt"], "--plot figure.txt: figures are written as"),
    ],
)
def test_bad_inputs_are_one_line_naming_the_value(trace: str, capsys, options, named) -> None:
    """An unknown policy, an elastic one, a load <= 0 or repeated, an empty item of a list
    (a slip, not a shorter list), a figure of no format the plots write, an option of the
    random comparison: exit 2, one line naming the value, before any run."""
    assert main(["compare", "--trace", trace, *QUICK, *options]) == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1, err


def test_rows_left_out_are_said_once_on_stderr(tmp_path: Path, capsys) -> None:
    """A row wider than the cluster and one of zero duration are left out of the study and
    said so on stderr, naming their lines (as ``simulate`` does); ``--json`` on stdout stays
    one document."""
    path = tmp_path / "p.csv"
    wide, empty = "2017-10-09 07:40:00,100,64,6400,beta", "2017-10-09 07:41:00,0,1,0,beta"
    path.write_text(f"{TRACE}{wide}\n{empty}\n")
    argv = ["compare", "--trace", str(path), *QUICK, "--policies", "fifo", "--json"]
    document = _json(capsys, argv)
    assert document["loads"][0]["jobs"] == 6
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["loads"][0]["rows_read"] == 8
    err = captured.err
    assert "2 of 8 rows left out (1 too wide, 1 invalid)" in err, err
    assert "p.csv:8:" in err and "p.csv:9:" in err, err


def test_study_options_need_a_rigid_trace(capsys) -> None:
    """``--target-load`` without ``--trace`` is refused, not ignored."""
    assert main(["compare", "--target-load", "0.5"]) == 2
    assert "--target-load: only with a rigid --trace" in capsys.readouterr().err


def test_ctrl_c_prints_what_finished_and_exits_130(trace: str, capsys, monkeypatch) -> None:
    """Ctrl-C during the third policy: the table of the two done, then one line, exit 130."""
    original, started = study_module._run_policy, []

    def interrupted(instance, policy, seed):
        started.append(policy)
        if len(started) == 3:
            raise KeyboardInterrupt
        return original(instance, policy, seed)

    monkeypatch.setattr(study_module, "_run_policy", interrupted)
    argv = ["compare", "--trace", trace, *QUICK, "--policies", "fifo,sjf,las,gavel"]
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines()[-1] == "ddlsched: interrupted"
    assert "| fifo |" in captured.out and "| sjf |" in captured.out
    assert "| las |" not in captured.out and "interrupted" in captured.out


def test_the_figures_are_written(trace: str, tmp_path: Path, capsys) -> None:
    """``--plot PREFIX``: the JCT CDF, mean JCT against load and the fairness CDF."""
    pytest.importorskip("matplotlib")
    prefix = tmp_path / "study"
    argv = ["compare", "--trace", trace, *QUICK, "--policies", "fifo,las"]
    assert main([*argv, "--target-load", "0.5,0.9", "--plot", str(prefix)]) == 0
    for name in ("jct-cdf", "jct-vs-load", "fairness"):
        assert (tmp_path / f"study-{name}.png").stat().st_size > 0


def test_simulate_json_is_the_summary_of_one_api_call(trace: str, capsys) -> None:
    """``simulate --json`` on a trace prints exactly the keys and values of
    :func:`ddlsched.api.simulate_trace`'s summary (timings aside)."""
    document = _json(capsys, ["simulate", "--trace", trace, *CLUSTER, "--policy", "sjf",
                              "--json"])  # fmt: skip
    summary = simulate_trace(replay_trace(trace, servers=1, gpus_per_server=4), "sjf").summary()
    assert set(document) == set(summary)
    timed = {"runtime_s", "wall_time_s", "lower_bound"}
    for key in set(summary) - timed:
        assert (
            document[key] == pytest.approx(summary[key])
            if isinstance(summary[key], float)
            else document[key] == summary[key]
        ), key


def test_simulate_text_leads_with_jct_over_lb_and_claims_no_upper_end(trace: str, capsys) -> None:
    """The first figure printed is total JCT / LB; without ``--upper-bound`` no interval
    is printed, only why there is no upper end."""
    assert main(["simulate", "--trace", trace, *CLUSTER, "--policy", "fifo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split(":")[0].strip() == "total JCT / LB"
    assert not any("total JCT interval" in line for line in lines)
    assert any("no offline schedule computed" in line for line in lines)


@pytest.mark.slow
def test_ctrl_c_in_worker_processes_ends_every_process(tmp_path: Path) -> None:
    """Ctrl-C (to the whole process group, as a terminal sends it) once a worker process has
    started a task of a long study: exit 130, ``ddlsched: interrupted`` as the last line,
    no traceback, and no worker left in the command's session (the workers ignore the
    signal; the study stops them)."""
    from tests.test_signals import _ctrl_c, _marked

    rows = ["submit_time,duration,num_gpus"]
    rows += [f"{k},{50 + k % 977},{1 << (k % 3)}" for k in range(20_000)]
    trace = tmp_path / "long.csv"
    trace.write_text("\n".join(rows) + "\n")
    process = _marked(
        tmp_path,
        "ddlsched.experiments.trace_study:_call",
        ["compare", "--trace", str(trace), "--servers", "8", "--workers", "2", "--no-cache"],
    )
    _, err = _ctrl_c(process)
    assert process.returncode == 130, err
    lines = err.strip().splitlines()
    assert lines[-1] == "ddlsched: interrupted", err
    assert "Traceback" not in err
    # Before the progress lines, what the trace's check found (its load is over 1).
    assert all(line.startswith(("compare --trace: ", "check: ")) for line in lines[:-1]), err
