"""``ddlsched simulate`` on a Pollux workload runs the elastic simulator with its policies."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from ddlsched.algorithms.elastic import ELASTIC_POLICIES

from ddlsched.cli import main
from ddlsched.core.data import data_path


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 6 jobs of the Pollux study's workload 6 (its header decides the format)."""
    lines = data_path("pollux", "workloads", "workload-6.csv").read_text().splitlines()
    path = tmp_path_factory.mktemp("elastic") / "w6-head.csv"
    path.write_text("\n".join(lines[:7]) + "\n")
    return path


def _run(capsys: pytest.CaptureFixture[str], workload: Path, policy: str) -> dict:
    code = main(["simulate", "--trace", str(workload), "--servers", "2", "--gpus-per-server",
                 "4", "--policy", policy, "--json"])  # fmt: skip
    assert code == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("policy", ELASTIC_POLICIES.names())
def test_every_elastic_policy_runs_checked_and_deterministic(
    capsys: pytest.CaptureFixture[str], workload: Path, policy: str
) -> None:
    """Each elastic policy runs from the command line, its run passes the independent check,
    and the same command gives the same mean JCT twice. Catches a workload routed to the
    rigid simulator, an unchecked run, and a nondeterministic policy."""
    first = _run(capsys, workload, policy)
    assert first["trace_format"] == "pollux-workload" and first["jobs"] == 6
    assert first["verified"] is True and first["violations"] == []
    assert first["mean_jct"] > 0
    assert _run(capsys, workload, policy)["mean_jct"] == first["mean_jct"]


def test_rigid_policies_and_rigid_options_are_refused_on_elastic_jobs(
    capsys: pytest.CaptureFixture[str], workload: Path
) -> None:
    """A rigid policy, or an option that means nothing for elastic jobs, is one line (exit
    2), never silently ignored."""
    assert main(["simulate", "--trace", str(workload), "--policy", "asrpt"]) == 2
    assert "rigid policy" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(workload), "--policy", "pollux", "--seed", "0"]) == 2
    assert "--seed" in capsys.readouterr().err


def test_elastic_policies_are_refused_on_rigid_traces(capsys: pytest.CaptureFixture[str]) -> None:
    """``--policy pollux`` on a rigid trace says what it needs, in one line (exit 2)."""
    code = main(["simulate", "--trace", "tiresias_60_job.csv", "--servers", "4",
                 "--gpus-per-server", "4", "--policy", "pollux"])  # fmt: skip
    assert code == 2 and "Pollux workload" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_json_stdout_is_one_document_with_an_in_process_solver(command: str) -> None:
    """The elastic policies solve their round MILPs with HiGHS in this process, which prints
    its banner on file descriptor 1 at its first use; ``--json`` stdout of ``simulate`` and
    of ``compare --trace`` must still be exactly one JSON document (the banner goes to
    stderr). Catches any command whose native output precedes the document (``| jq`` fails
    on it)."""
    import subprocess
    import sys

    policy = ["--policy", "pollux"] if command == "simulate" else ["--policies", "pollux"]
    done = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", command, "--trace", "workload-6.csv",
         "--servers", "2", "--gpus-per-server", "4", "--limit", "4", *policy, "--json"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document if command == "simulate" else document["policies"][0])["verified"] is True


def _simulate(*options: str) -> list[str]:
    """``simulate`` on the first jobs of workload 6 on two 4-GPU nodes, plus ``options``."""
    return ["simulate", "--trace", "workload-6.csv", "--servers", "2", "--gpus-per-server", "4",
            *options]  # fmt: skip


def test_the_saved_runs_mean_jct_is_the_printed_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``simulate --policy pollux --out run.json`` writes per-job results whose mean JCT,
    recomputed from each job's arrival and completion, is the printed mean JCT: to the
    printed digits in the text, exactly in ``--json``, whose document is the file's summary
    (the policy's wall-clock time per round aside)."""
    out = tmp_path / "run.json"
    assert main(_simulate("--policy", "pollux", "--limit", "4", "--out", str(out))) == 0
    text = capsys.readouterr().out
    printed = next(line for line in text.splitlines() if line.strip().startswith("mean_jct:"))
    saved = json.loads(out.read_text())
    jcts = [job["completion"] - job["arrival"] for job in saved["jobs"]]
    mean = math.fsum(jcts) / len(jcts)
    assert printed.split(":")[1].strip() == f"{mean:.6g}"
    assert f"written to {out}" in text
    assert main(_simulate("--policy", "pollux", "--limit", "4", "--out", str(out), "--json")) == 0
    document = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    assert document["mean_jct"] == mean == saved["summary"]["mean_jct"]
    assert len(saved["jobs"]) == 4 and saved["settings"]["policy"] == "pollux"
    document.pop("median_decision_s")
    document.pop("trace_format")
    assert document == saved["summary"]


def test_limit_keeps_the_first_jobs_and_the_default_cluster_is_pollux_s(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--limit N`` runs the first N jobs by submission; without ``--servers`` and
    ``--gpus-per-server`` the cluster is the Pollux study's 16 nodes x 4 GPUs (not the rigid
    traces' default); ``--limit 0`` is refused in one line."""
    assert main(["simulate", "--trace", "workload-6.csv", "--policy", "fifo", "--limit", "3",
                 "--json"]) == 0  # fmt: skip
    document = json.loads(capsys.readouterr().out)
    assert document["jobs"] == 3 and document["cluster"] == "16 x 4"
    with pytest.raises(SystemExit) as stopped:
        main(_simulate("--policy", "fifo", "--limit", "0"))
    assert stopped.value.code == 2
    assert "argument --limit: '0' must be a whole number" in capsys.readouterr().err


def test_plot_draws_the_figure_and_says_where(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--plot run.png`` writes a PNG and says where; ``compare --plot`` too, one curve per
    policy in each panel."""
    figure = tmp_path / "run.png"
    assert main(_simulate("--policy", "fifo", "--limit", "3", "--plot", str(figure))) == 0
    assert f"figure written to {figure}" in capsys.readouterr().out
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    both = tmp_path / "both.svg"
    code = main(_compare("--policies", "fifo,las-pollux", "--plot", str(both)))
    assert code == 0 and f"figure written to {both}" in capsys.readouterr().out
    assert both.read_text().count("<svg") == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--out", "{tmp}"], "--out {tmp}: is a folder"),
        (["--out", "{tmp}/a.json", "--plot", "{tmp}/a.json"], "the same file"),
        (["--plot", "{tmp}/a.txt"], "--plot {tmp}/a.txt: figures are written as"),
        (["--out", "{trace}"], "is also an input of the command"),
        (["--restart-cost", "5"], "--restart-cost: not available for elastic jobs"),
        (["--mapper", "first-fit"], "--mapper: not available for elastic jobs"),
        (["--predictor", "oracle"], "--predictor: not available for elastic jobs"),
        (["--placement", "any"], "--placement: not available for elastic jobs"),
        (["--seed", "1"], "--seed: not available for elastic jobs"),
        (["--columns", "submit=time"], "--columns: not available for elastic jobs"),
        (["--time-unit", "s"], "--time-unit: not available for elastic jobs"),
        (["--unnamed", "zoo"], "--unnamed: not available for elastic jobs"),
        (["--bandwidth-intra", "5"], "--bandwidth-intra: not available for elastic jobs"),
        (["--bandwidth-inter", "5"], "--bandwidth-inter: not available for elastic jobs"),
        (["--load-factor", "2"], "--load-factor: not available for elastic jobs"),
        (["--target-load", "0.5"], "--target-load: not available for elastic jobs"),
        (["--upper-bound"], "--upper-bound: not available for elastic jobs"),
        (["--seed", "1", "--mapper", "graph"], "--mapper, --seed: not available for elastic"),
    ],
)
def test_simulate_refuses_what_an_elastic_run_cannot_take(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, options: list[str], message: str
) -> None:
    """Each output path that cannot be right and each option meaningless for elastic jobs is
    one line naming it (exit 2), before any simulation, and no file is left behind."""
    from ddlsched.core.data import resolve_trace

    trace = str(resolve_trace("workload-6.csv"))
    filled = [o.format(tmp=tmp_path, trace=trace) for o in options]
    assert main(_simulate("--policy", "fifo", "--limit", "2", *filled)) == 2
    err = capsys.readouterr().err
    assert message.format(tmp=tmp_path, trace=trace) in err and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_save_leaves_no_half_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while ``--out`` is being written exits 130 and leaves neither the file nor a
    temporary one."""
    import os

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    out = tmp_path / "run.json"
    assert main(_simulate("--policy", "fifo", "--limit", "2", "--out", str(out))) == 130
    assert list(tmp_path.iterdir()) == []


def _compare(*options: str) -> list[str]:
    """``compare --trace`` on the first 3 jobs of workload 6 on two 4-GPU nodes."""
    return ["compare", "--trace", "workload-6.csv", "--servers", "2", "--gpus-per-server", "4",
            "--limit", "3", *options]  # fmt: skip


def test_compare_rows_are_the_separate_simulate_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """``compare --trace --json`` gives one row per policy, in the order asked, each equal on
    every figure it shows to ``simulate --json`` of that policy alone; the text prints one
    table row per policy."""
    policies = ["las-pollux", "asrpt-elastic", "fifo"]
    assert main(_compare("--policies", ",".join(policies), "--json")) == 0
    rows = json.loads(capsys.readouterr().out)["policies"]
    assert [row["policy"] for row in rows] == policies
    for row in rows:
        assert main(_simulate("--policy", row["policy"], "--limit", "3", "--json")) == 0
        alone = json.loads(capsys.readouterr().out)
        assert {key: alone[key] for key in row if key != "policy"} == {
            key: value for key, value in row.items() if key != "policy"
        }
    assert main(_compare("--policies", ",".join(policies))) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [line.split("|")[1].strip() for line in table[2:]] == policies


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["compare", "--policies", "fifo"], "--policies: only with --trace"),
        (["compare", "--limit", "3"], "--limit: only with --trace"),
        (["--jobs", "3"], "--jobs: not available with --trace"),
        (["--seed", "1"], "--seed: not available with --trace"),
        (["--methods", "asrpt"], "--methods: not available with --trace"),
        (["--from-trace", "philly_jobs.csv"], "--from-trace: not available with --trace"),
        (["--instances", "2"], "--instances: not available with --trace"),
        (["--time-limit", "5"], "--time-limit: not available with --trace"),
        (["--load", "0.5"], "--load: not available with --trace"),
        (["--predictor", "oracle"], "--predictor: not available with --trace"),
        (["--exact", "milp"], "--exact: not available with --trace"),
        (["--arrivals", "sampled"], "--arrivals: not available with --trace"),
        (["--policies", "fifo,nope"], "--policies: unknown 'nope' (the elastic policy names"),
        (["--policies", "fifo,fifo"], "--policies: fifo named twice"),
        (["--policies", ","], "--policies: expected one or more names"),
        (["--plot", "f.txt"], "--plot f.txt: figures are written as"),
        (["--out", "rows.json"], "--out rows.json: expected a .csv file"),
        (["--out", "rows.sqlite"], "--out rows.sqlite: expected a .csv file"),
    ],
)
def test_compare_refuses_what_an_elastic_comparison_cannot_take(
    capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    """Elastic-only options without ``--trace``, random-instance options with it, and bad
    policy lists or figure names are one line naming the option (exit 2)."""
    argv = options if options[0] == "compare" else _compare(*options)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1


def test_compare_on_a_rigid_trace_refuses_an_elastic_policy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``compare --trace`` on a rigid trace is a trace study of the rigid policies: an
    elastic policy is refused in one line naming it."""
    assert main(["compare", "--trace", "tiresias_60_job.csv", "--policies", "pollux"]) == 2
    err = capsys.readouterr().err
    assert "'pollux' schedules elastic jobs" in err and len(err.strip().splitlines()) == 1


def test_compare_out_writes_the_rows_as_csv(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``compare --trace --out rows.csv`` writes one CSV row per policy holding the figures
    ``--json`` prints, numbers exact, and says where."""
    import csv

    out = tmp_path / "rows.csv"
    assert main(_compare("--policies", "fifo,las-pollux", "--out", str(out), "--json")) == 0
    rows = json.loads(capsys.readouterr().out)["policies"]
    with out.open(newline="") as handle:
        saved = list(csv.DictReader(handle))
    assert [row["policy"] for row in saved] == ["fifo", "las-pollux"]
    for row, line in zip(rows, saved, strict=True):
        assert list(line) == list(row)
        for key, value in row.items():
            assert line[key] == str(value) and (
                isinstance(value, str | bool) or float(line[key]) == value
            )
    assert main(_compare("--policies", "fifo", "--out", str(out))) == 0
    assert f"written to {out}" in capsys.readouterr().out


@pytest.mark.parametrize("policy", ["asrpt-elastic", "las-pollux"])
def test_the_python_api_gives_the_command_line_s_figures(
    capsys: pytest.CaptureFixture[str], policy: str
) -> None:
    """``ddlsched.simulate_elastic`` on the same workload, policy, cluster and limit returns
    the figures ``simulate --json`` prints, every one but the wall-clock time per round."""
    import ddlsched

    assert main(_simulate("--policy", policy, "--limit", "3", "--json")) == 0
    printed = json.loads(capsys.readouterr().out)
    run = ddlsched.simulate_elastic(
        "workload-6.csv", policy, cluster=ddlsched.ElasticCluster(2, 4), limit=3
    )
    summary = run.summary()
    for figures in (printed, summary):
        figures.pop("median_decision_s")
    assert printed.pop("trace_format") == "pollux-workload"
    assert printed == summary and summary["verified"] is True


def test_a_run_failing_the_check_exits_1_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the independent check reports violations (planted here: 12), ``simulate``
    exits 1, prints how many and the first ten, and the saved run says it is not
    verified; ``compare`` marks the policy's row and exits 1 too."""
    import ddlsched.proofs_checks.elastic as checker

    monkeypatch.setattr(checker, "check_elastic", lambda result: [f"v{k}" for k in range(12)])
    out = tmp_path / "run.json"
    assert main(_simulate("--policy", "fifo", "--limit", "2", "--out", str(out))) == 1
    text = capsys.readouterr().out
    assert "FAILS (12 violations, up to 10 below)" in text
    assert "  - v9" in text and "v10" not in text
    saved = json.loads(out.read_text())["summary"]
    assert saved["verified"] is False and len(saved["violations"]) == 10
    assert main(_compare("--policies", "fifo")) == 1
    assert "FAILS" in capsys.readouterr().out


def test_ctrl_c_in_compare_keeps_the_policies_finished(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the second policy's run stops ``compare --trace`` with exit 130: the
    first policy's row is printed (text and ``--json``, which says it was interrupted)."""
    import ddlsched.experiments.elastic as experiment

    real = experiment.run_elastic

    def stopped_at_second(*args: object, **kwargs: object) -> object:
        if calls.append(None) or len(calls) > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(experiment, "run_elastic", stopped_at_second)
    calls: list[None] = []
    assert main(_compare("--policies", "fifo,las-pollux", "--json")) == 130
    document = json.loads(capsys.readouterr().out)
    assert document["interrupted"] is True
    assert [row["policy"] for row in document["policies"]] == ["fifo"]
    calls.clear()
    assert main(_compare("--policies", "fifo,las-pollux")) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.out and "interrupted" in captured.err
    assert "| fifo |" in captured.out and "las-pollux |" not in captured.out


def test_a_typed_cluster_flows_into_the_run_file_and_compare(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--gpu-types v100:1,k80:1`` runs on a V100 node and a K80 node: the saved run names
    the node types in its settings and summary and each allocation's type; ``compare
    --trace`` on the same typed cluster gives that run's row."""
    typed = ["--gpu-types", "v100:1,k80:1", "--gpus-per-server", "4", "--limit", "3"]
    out = tmp_path / "run.json"
    argv = ["simulate", "--trace", "workload-6.csv", "--policy", "typed-greedy", *typed]
    assert main([*argv, "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    assert saved["settings"]["cluster"]["node_types"] == ["v100", "k80"]
    assert saved["summary"]["cluster"] == printed["cluster"] == "2 x 4 (v100 x1, k80 x1)"
    kinds = {a["gpu_type"] for r in saved["rounds"] for a in r["allocations"].values()}
    assert kinds and kinds <= {"v100", "k80"}
    assert main(["compare", "--trace", "workload-6.csv", "--policies", "typed-greedy", *typed,
                 "--json"]) == 0  # fmt: skip
    (row,) = json.loads(capsys.readouterr().out)["policies"]
    assert {key: printed[key] for key in row if key != "policy"} == {
        key: value for key, value in row.items() if key != "policy"
    }


def test_gpus_per_server_sizes_the_nodes_of_each_gpu_type(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--gpu-types v100:1,k80:2 --gpus-per-server 2`` is three nodes of 2 GPUs (not the
    default 4): the summary says ``3 x 2``, the saved cluster holds 2 GPUs per node and no
    round uses more than 6 GPUs, nor more than 2 on a node."""
    out = tmp_path / "run.json"
    assert main(["simulate", "--trace", "workload-6.csv", "--policy", "fifo", "--gpu-types",
                 "v100:1,k80:2", "--gpus-per-server", "2", "--limit", "3", "--out", str(out),
                 "--json"]) == 0  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert printed["cluster"] == "3 x 2 (v100 x1, k80 x2)" and printed["verified"] is True
    saved = json.loads(out.read_text())
    assert saved["settings"]["cluster"]["gpus_per_node"] == 2
    for record in saved["rounds"]:
        assert record["gpus_in_use"] <= 6
        held: dict[int, int] = {}
        for alloc in record["allocations"].values():
            for node, gpus in alloc["placement"]:
                held[node] = held.get(node, 0) + gpus
        assert max(held.values(), default=0) <= 2


def test_compare_counts_its_progress_in_policy_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compare --trace`` counts its progress in policy runs, one per policy asked (not in
    instances, which a workload comparison has none of)."""
    import ddlsched.cli.elastic as elastic_cli

    asked: list[tuple[object, ...]] = []
    real = elastic_cli.progress_bar

    def recorded(total: int, label: str, unit: str = "instance") -> tuple[object, object]:
        asked.append((total, label, unit))
        return real(total, label, unit)

    monkeypatch.setattr(elastic_cli, "progress_bar", recorded)
    assert main(_compare("--policies", "fifo,las-pollux")) == 0
    assert asked == [(2, "compare", "policy run")]
    capsys.readouterr()


def test_compare_takes_an_upper_case_csv_suffix(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--out ROWS.CSV`` is a CSV file (the suffix is read in any case, as the rigid
    ``compare`` reads it): the rows are written there."""
    out = tmp_path / "ROWS.CSV"
    assert main(_compare("--policies", "fifo", "--out", str(out))) == 0
    assert out.read_text().startswith("policy,") and str(out) in capsys.readouterr().out


def test_simulate_help_says_the_elastic_cluster_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``simulate --help`` says, beside the rigid defaults, that on a Pollux workload the
    cluster is the Pollux study's (nodes and GPUs read from ``ElasticCluster()``) and that
    ``--servers`` is refused with ``--gpu-types``; and the refusal is what it says."""
    from ddlsched.core.elastic import ElasticCluster

    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    default = ElasticCluster()
    servers = f"on a Pollux workload {default.num_nodes} nodes, and refused with --gpu-types"
    assert f"(default: 256; {servers})" in text
    assert f"(default: 8; on a Pollux workload {default.gpus_per_node})" in text
    assert "on a Pollux workload: nodes per type" in text
    code = main(["simulate", "--trace", "workload-6.csv", "--policy", "fifo", "--gpu-types",
                 "v100:1", "--servers", "1"])  # fmt: skip
    assert code == 2 and "--servers: not with --gpu-types" in capsys.readouterr().err
