"""The command line: outputs, exit codes, and one clear line on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ddlsched.cli import main
from ddlsched.core.io import read_instance, write_schedule
from ddlsched.core.model import Schedule, ScheduledJob


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``ddlsched`` in a subprocess, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_generate_then_verify_json(tmp_path: Path) -> None:
    """generate writes a readable instance; verify --json reports a serial schedule."""
    instance_path = tmp_path / "inst.json"
    assert (
        main(
            [
                "generate",
                "--jobs",
                "3",
                "--seed",
                "4",
                "--preset",
                "exact-friendly",
                "--out",
                str(instance_path),
            ]
        )
        == 0
    )
    instance = read_instance(instance_path)
    assert instance.num_jobs == 3
    doc = json.loads(instance_path.read_text())
    assert all("edges" in job for job in doc["jobs"])

    # One job at a time, every job on server 0 if it fits, else spread.
    from tests.proofs_checks.test_verifier import serial_schedule

    schedule_path = tmp_path / "sched.json"
    write_schedule(serial_schedule(instance), schedule_path)
    result = run_cli("verify", str(instance_path), str(schedule_path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["feasible"] is True and report["violations"] == []
    assert set(report) >= {"feasible", "violations", "total_completion_time", "total_jct"}


def test_verify_infeasible_exit_1(tmp_path: Path, ring_instance) -> None:  # type: ignore[no-untyped-def]
    """An infeasible schedule exits 1 and lists its violations."""
    from ddlsched.core.io import write_instance

    write_instance(ring_instance, tmp_path / "i.json")
    write_schedule(Schedule((ScheduledJob("ring", 0.0, None, (0, 0, 0, 0)),)), tmp_path / "s.json")
    result = run_cli("verify", str(tmp_path / "i.json"), str(tmp_path / "s.json"))
    assert result.returncode == 1
    assert "server 0: 4 GPUs in use" in result.stdout
    assert "'solo': not scheduled" in result.stdout


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON (line 1"),
        ('{"format": "ddlsched.instance/9"}', "unknown format 'ddlsched.instance/9'"),
        (
            '{"format": "ddlsched.instance/1", "cluster": {"gpus_per_server": [2],'
            ' "bandwidth_intra": 1, "bandwidth_inter": 0}, "jobs": []}',
            "cluster.bandwidth_inter: must be >= 1e-06",
        ),
        (
            '{"format": "ddlsched.instance/1", "cluster": {"gpus_per_server": [2],'
            ' "bandwidth_intra": 1, "bandwidth_inter": 1}, "jobs": [{"id": "a",'
            ' "release": 0, "iterations": 1, "compute_time": 1, "gpus": 3}]}',
            "needs 3 GPUs but the cluster has only 2",
        ),
        (
            '{"format": "ddlsched.instance/1", "cluster": {"gpus_per_server": [2],'
            ' "bandwidth_intra": 1, "bandwidth_inter": 1}, "jobs": [{"id": "a",'
            ' "release": 0, "iterations": 1, "compute_time": 1, "gpus": 2,'
            ' "edges": [[0, 5, 1.0]]}]}',
            "node 5 does not exist",
        ),
        (
            '{"format": "ddlsched.instance/1", "cluster": {"gpus_per_server": [2],'
            ' "bandwidth_intra": 1, "bandwidth_inter": 1}, "jobs": [{"id": "a",'
            ' "release": -3, "iterations": 1, "compute_time": 1, "gpus": 1}]}',
            "release: must be >= 0, got -3",
        ),
    ],
)
def test_bad_instance_one_line_exit_2(tmp_path: Path, content: str, expected: str) -> None:
    """Bad input exits 2 with one line on stderr naming the problem; no traceback."""
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = run_cli("info", str(path))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0]
    assert str(path) in lines[0]
    assert "Traceback" not in result.stderr


def test_missing_file_exit_2(tmp_path: Path) -> None:
    """A missing file is named, exit 2."""
    result = run_cli("info", str(tmp_path / "nope.json"))
    assert result.returncode == 2 and "no such file" in result.stderr


def test_info_json(tmp_path: Path, ring_instance) -> None:  # type: ignore[no-untyped-def]
    """info --json gives per-job alpha bounds and rho with exactness."""
    from ddlsched.core.io import write_instance

    write_instance(ring_instance, tmp_path / "i.json")
    result = run_cli("info", str(tmp_path / "i.json"), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["rho"] == pytest.approx(1.25) and doc["rho_exact"] is True
    assert doc["jobs"][0]["alpha_min"] == pytest.approx(4.0)


def test_solve_milp_json_and_schedule(tmp_path: Path) -> None:
    """solve --method milp --json has the documented keys; the written schedule verifies."""
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched.core.generators import GeneratorConfig, generate
    from ddlsched.core.io import read_schedule, write_instance

    instance = generate(GeneratorConfig(num_jobs=4, integral=True, bandwidth_intra=2.0), 2)
    write_instance(instance, tmp_path / "i.json")
    for problem in ("A", "A1", "A2"):
        out = tmp_path / f"s{problem}.json"
        result = run_cli(
            "solve",
            str(tmp_path / "i.json"),
            "--method",
            "milp",
            "--problem",
            problem,
            "--json",
            "--out",
            str(out),
        )
        assert result.returncode == 0, result.stderr
        doc = json.loads(result.stdout)
        assert {
            "method",
            "problem",
            "status",
            "total_completion_time",
            "total_jct",
            "best_bound",
            "gap",
            "runtime_s",
        } <= set(doc)
        assert doc["status"] == "optimal" and doc["problem"] == problem
        report = verify(instance, read_schedule(out))
        assert report.feasible
        assert report.total_completion_time == pytest.approx(doc["total_completion_time"])


def test_solve_bad_option_exit_2(tmp_path: Path, ring_instance) -> None:  # type: ignore[no-untyped-def]
    """A negative time limit is bad input: exit 2, one line."""
    from ddlsched.core.io import write_instance

    write_instance(ring_instance, tmp_path / "i.json")
    result = run_cli("solve", str(tmp_path / "i.json"), "--time-limit", "-1")
    assert result.returncode == 2
    assert "--time-limit" in result.stderr and "must be a number > 0" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_check_json_and_random_table(tmp_path: Path) -> None:
    """check --json has values and claims as documented; --random prints one row per claim."""
    from ddlsched.core.generators import generate
    from ddlsched.core.io import write_instance
    from tests.strategies import TINY_INTEGRAL

    write_instance(generate(TINY_INTEGRAL, 3), tmp_path / "i.json")
    result = run_cli("check", str(tmp_path / "i.json"), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc["values"]) >= {"opt_A", "opt_A1", "opt_A2", "srpt_A2", "rho"}
    assert all({"name", "holds", "lhs", "rhs", "exact"} <= set(c) for c in doc["claims"])
    assert all(c["holds"] is True for c in doc["claims"])
    table = run_cli(
        "check",
        "--random",
        "2",
        "--servers",
        "2",
        "--gpus-per-server",
        "2",
        "--jobs",
        "3",
        "--out-dir",
        str(tmp_path),
    )
    assert table.returncode == 0, table.stderr
    for claim in (
        "srpt_optimal_A2",
        "relaxation",
        "lemma1",
        "mapping_bounds",
        "theorem1",
        "verifier",
    ):
        assert f"| {claim} | " in table.stdout
    assert run_cli("check").returncode == 2  # neither an instance nor --random


def test_help_lists_exactly_the_registered_names() -> None:
    """Each command's choices come from the registries: --help shows every name, spelled once."""
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES
    from ddlsched.algorithms.registry import MAPPERS, POLICIES, PREDICTORS

    from ddlsched.api import method_names
    from ddlsched.cli import build_parser

    parser = build_parser()
    commands = {
        action.dest: action
        for action in parser._subparsers._group_actions[0].choices["simulate"]._actions  # type: ignore[union-attr]
    }
    elastic = tuple(n for n in ELASTIC_POLICIES.names() if n not in POLICIES)
    assert tuple(commands["policy"].choices) == (*POLICIES.names(), *elastic)
    assert set(ELASTIC_POLICIES.names()) <= set(commands["policy"].choices)
    assert tuple(commands["predictor"].choices) == PREDICTORS.names()
    assert tuple(commands["mapper"].choices) == MAPPERS.names()
    solve_help = run_cli("solve", "--help").stdout
    assert "{" + ",".join(method_names()) + "}" in solve_help.replace("\n", "").replace(" ", "")
    assert run_cli("--version").stdout.startswith("ddlsched ")


def test_check_json_with_unknown_values(tmp_path: Path) -> None:
    """``check --json`` on MILPs stopped without a value: every value carries its
    exactness, and an unknown one is null, never NaN (which is not JSON)."""
    path = tmp_path / "i.json"
    run_cli(
        "generate", "--jobs", "6", "--seed", "1", "--preset", "exact-friendly", "--out", str(path)
    )
    result = run_cli("check", str(path), "--json", "--time-limit", "0.001")
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    for name in ("opt_A", "opt_A1", "opt_A2", "srpt_A2", "rho"):
        entry = doc["values"][name]
        assert set(entry) == {"value", "exact"}
        assert entry["value"] is not None or entry["exact"] is False
    assert "NaN" not in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("sweep", "x.toml", "--workers", "0"),
        ("check", "--random", "0"),
        ("simulate", "--trace", "x.csv", "--limit", "-3"),
        ("compare", "--time-limit", "0"),
        ("generate", "--jobs", "2", "--out", "x.json", "--seed", "-1"),
        ("check", "--adversarial", "-3"),
        ("predict", "evaluate", "--retrain-every", "0"),
        ("simulate", "--trace", "x.csv", "--target-load", "nan"),
        ("compare", "--jobs", "2.5"),
    ],
)
def test_bad_numbers_are_one_line_exit_2(args: tuple[str, ...]) -> None:
    """An out-of-range number (--workers 0, --limit -3, --random 0, --time-limit 0, ...) is
    refused before any work, with exit 2 and one line naming the option."""
    result = run_cli(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and args[-2] in lines[0], result.stderr


def test_check_on_the_readme_non_integral_example(tmp_path: Path) -> None:
    """The MILPs are refused as too large; check reports them unknown, no traceback, exit 0."""
    path = tmp_path / "a.json"
    assert main(["generate", "--jobs", "6", "--seed", "1", "--out", str(path)]) == 0
    done = run_cli("check", str(path))
    assert done.returncode == 0, done.stderr
    assert "opt_A unknown" in done.stdout and "Traceback" not in done.stderr


@pytest.mark.parametrize("target", ["folder", "under_file"])
def test_unwritable_outputs_one_line_exit_2(tmp_path: Path, target: str) -> None:
    """An output in a folder or under a plain file: one line naming why, exit 2."""
    (tmp_path / "plain").write_text("")
    out = {"folder": tmp_path, "under_file": tmp_path / "plain" / "x.json"}[target]
    done = run_cli("generate", "--jobs", "2", "--out", str(out))
    assert done.returncode == 2
    why = {"folder": "is a folder", "under_file": "cannot write there"}[target]
    assert done.stderr.count("\n") == 1 and why in done.stderr


OUTPUT_CASES = {
    "solve-out-is-the-instance": (["solve", "{i}", "--method", "fifo", "--out", "{i}"],
                                  "is also an input"),
    "solve-out-is-the-warm-start": (["solve", "{i}", "--warm-start", "{s}", "--out", "{s}"],
                                    "is also an input"),
    "solve-out-empty": (["solve", "{i}", "--method", "fifo", "--out", ""], "an empty path"),
    "solve-out-slash": (["solve", "{i}", "--method", "fifo", "--out", "{d}/new/"], "is a folder"),
    "solve-out-folder": (["solve", "{i}", "--method", "fifo", "--out", "{d}"], "is a folder"),
    "generate-out-empty": (["generate", "--out", ""], "an empty path"),
    "generate-out-is-the-config": (["generate", "--config", "{c}", "--out", "{c}"],
                                   "is also an input"),
    "simulate-out-is-the-trace": (["simulate", "--trace", "{t}", "--out", "{t}"],
                                  "is also an input"),
    "simulate-out-and-plot-same": (["simulate", "--trace", "{t}", "--out", "{d}/x",
                                    "--plot", "{d}/x"], "the same file"),
    "compare-plot-folder": (["compare", "--plot", "{d}/"], "is a folder"),
    "check-out-dir-is-a-file": (["check", "{i}", "--out-dir", "{i}"], "is a file, not a folder"),
    "check-out-dir-empty": (["check", "{i}", "--out-dir", ""], "an empty path"),
    "sweep-results-is-the-config": (["sweep", "{c}", "--results", "{c}"], "is also an input"),
    "sweep-results-folder": (["sweep", "{c}", "--results", "{d}"], "is a folder"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(OUTPUT_CASES))
def test_bad_output_paths_refused_before_any_work(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output path equal to an input, empty, or naming a folder is refused in one line
    (exit 2) before anything runs, and every input is left as it was.

    Catches: ``solve in.json --out in.json`` replacing the instance with a schedule, an
    empty ``--out`` reaching the writer, a folder found only after minutes of work.
    """
    instance, schedule = tmp_path / "in.json", tmp_path / "s.json"
    assert (
        main(["generate", "--jobs", "3", "--preset", "exact-friendly", "--out", str(instance)])
        == 0
    )
    assert main(["solve", str(instance), "--method", "fifo", "--out", str(schedule)]) == 0
    config, trace = tmp_path / "c.toml", tmp_path / "t.csv"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n')
    trace.write_text("submit_time,duration,num_gpus\n0,50,1\n")
    before = {p: p.read_bytes() for p in (instance, schedule, config, trace)}
    names = {"i": instance, "s": schedule, "c": config, "t": trace, "d": tmp_path}
    argv = [word.format(**names) for word in OUTPUT_CASES[case][0]]
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and OUTPUT_CASES[case][1] in captured.err, captured
    assert captured.out == ""
    assert {p: p.read_bytes() for p in before} == before
    assert not (tmp_path / "new").exists()


def test_predict_evaluate_names_a_bad_submit_cell(tmp_path: Path) -> None:
    """One non-numeric submit_time is an error naming its line, not a string sort."""
    from ddlsched.core.data import data_path

    lines = data_path("traces", "tiresias_60_job.csv").read_text().splitlines()
    cells = lines[7].split(",")
    cells[2] = "x"
    lines[7] = ",".join(cells)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    done = run_cli("predict", "evaluate", "--trace", str(path))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(":8: submit_time: not a number: 'x'")


@pytest.mark.parametrize("target", ["folder", "binary"])
def test_unreadable_traces_one_line_exit_2(tmp_path: Path, target: str) -> None:
    (tmp_path / "b.csv").write_bytes(bytes(range(256)))
    path = {"folder": tmp_path, "binary": tmp_path / "b.csv"}[target]
    done = run_cli("simulate", "--trace", str(path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr


def test_json_has_no_infinity_when_all_jobs_arrive_at_once(tmp_path: Path) -> None:
    """The offered load of simultaneous arrivals is unbounded: null in JSON, never Infinity."""
    path = tmp_path / "t.csv"
    path.write_text("submit_time,duration,num_gpus\n0,50,1\n0,80,2\n")
    done = run_cli("simulate", "--trace", str(path), "--servers", "2", "--gpus-per-server", "4",
                   "--policy", "fifo", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["offered_load"] is None


def test_mixed_clusters_from_the_command_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """--gpu-types sets the servers and their types; solve and check run on the file;
    bad type lists are one clear line (exit 2)."""
    path = tmp_path / "mixed.json"
    argv = ["generate", "--jobs", "4", "--preset", "exact-friendly", "--gpu-types", "v100:1,k80:2"]
    assert main([*argv, "--type-bandwidth", "v100:4", "--out", str(path)]) == 0
    instance = read_instance(path)
    assert instance.cluster.server_types == ("v100", "k80", "k80")
    assert dict(instance.cluster.type_bandwidth) == {"v100": 4.0}
    assert json.loads(path.read_text())["format"] == "ddlsched.instance/2"
    capsys.readouterr()
    assert main(["check", str(path), "--json"]) == 0
    claims = json.loads(capsys.readouterr().out)["claims"]
    assert claims and all(claim["status"] == "holds" for claim in claims)
    assert main(["check", "--random", "2", "--jobs", "3", "--gpu-types", "p100:1,k80:1"]) == 0
    assert "(p100 x1, k80 x1)" in capsys.readouterr().out
    bad = run_cli("generate", "--gpu-types", "v100", "--out", str(tmp_path / "x.json"))
    assert bad.returncode == 2 and "type:value pairs" in bad.stderr
    unknown = run_cli("generate", "--gpu-types", "h100:2", "--out", str(tmp_path / "x.json"))
    assert unknown.returncode == 2 and "gpu_types.h100" in unknown.stderr
    assert "Traceback" not in bad.stderr + unknown.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_inputs_that_are_not_regular_files_refused(tmp_path: Path, kind: str) -> None:
    """A named pipe (reading it blocks for ever), ``/dev/zero`` (never ends: it filled the
    memory) or a folder, wherever a file is read: one line naming it, exit 2, at once.

    Catches: ``info /dev/zero`` killed by the kernel for memory, ``info fifo`` hanging,
    a binary-file error from the TOML reader (exit 3).
    """
    import os

    instance = tmp_path / "in.json"
    assert main(["generate", "--jobs", "2", "--out", str(instance)]) == 0
    bad = {"fifo": tmp_path / "pipe", "dev-zero": Path("/dev/zero"), "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(bad)
    cases = [
        ["info", str(bad)],
        ["verify", str(instance), str(bad)],
        ["solve", str(instance), "--warm-start", str(bad)],
        ["generate", "--config", str(bad), "--out", str(tmp_path / "g.json")],
        ["simulate", "--trace", str(bad)],
        ["predict", "evaluate", "--trace", str(bad)],
        ["sweep", str(bad), "--results", str(tmp_path / "r.sqlite")],
    ]
    # One interpreter for every case, in a subprocess: a hang (the bug) fails, not blocks.
    done = subprocess.run(
        [sys.executable, "-c", _EACH_CASE, json.dumps(cases)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,  # only a hang gets near it
    )
    assert done.returncode == 0, done.stderr
    for argv, (code, err) in zip(cases, json.loads(done.stdout), strict=True):
        assert code == 2, (argv, err)
        assert err.count("\n") == 1 and str(bad) in err, (argv, err)


_EACH_CASE = """
import contextlib, io, json, sys
from ddlsched.cli import main
found = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    found.append((code, err.getvalue()))
print(json.dumps(found))
"""


def _json_commands(tmp_path: Path) -> dict[str, list[list[str]]]:
    """Every command that takes --json, with small arguments (``--verbose`` where a solver
    can print its log), keyed by the command's name."""
    instance, schedule = tmp_path / "in.json", tmp_path / "s.json"
    assert main(["generate", "--jobs", "3", "--servers", "1", "--gpus-per-server", "2",
                 "--preset", "exact-friendly", "--out", str(instance)]) == 0  # fmt: skip
    assert main(["solve", str(instance), "--method", "fifo", "--out", str(schedule)]) == 0
    trace = tmp_path / "t.csv"
    trace.write_text("submit_time,duration,num_gpus\n0,50,1\n5,80,2\n")
    config, results = tmp_path / "c.toml", tmp_path / "r.sqlite"
    config.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n[sweep.grid]\nnum_jobs = [2]\n')
    from ddlsched.sweeps import read_sweep, run_sweep

    run_sweep(read_sweep(config), results, workers=1)
    small = ["--servers", "1", "--gpus-per-server", "2"]
    return {
        "info": [["info", str(instance)]],
        "verify": [["verify", str(instance), str(schedule)]],
        "solve": [["solve", str(instance), "--method", m, "--verbose"] for m in ("milp", "cpsat")],
        "bound": [["bound", str(instance), "--lp", "--lp-max-variables", "2000"],
                  ["bound", "--trace", str(trace), *small]],
        "simulate": [["simulate", "--trace", str(trace), *small]],
        "check": [["check", str(instance)], ["check", "--random", "1", "--jobs", "2",
                                             "--out-dir", str(tmp_path)]],
        "compare": [["compare", "--jobs", "2", "--instances", "1", *small[:2], "--exact",
                     "milp"]],
        "predict": [["predict", "evaluate", "--jobs", "60"]],
        "results": [["results", str(results)]],
        "data": [["data"], ["data", "check", str(trace), *small]],
        "bench": [["bench", "list", "--tier", "S"],
                  ["bench", "run", "--policy", "fifo", "--names", "S-ef-1x4-j10-s0"]],
    }  # fmt: skip


def test_json_stdout_is_exactly_one_document(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """With --json, stdout is one JSON document and nothing else, in every command that
    takes --json (found in the parser, so a new one must be added here), solver logs
    (``--verbose``, the LP bound) included: they go to stderr.

    Catches: HiGHS's banner and log written from C++ to file descriptor 1 ahead of the
    document (``solve --verbose --json``, ``bound --lp --json``).
    """
    import argparse

    from ddlsched.cli import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))

    def takes_json(sub: argparse.ArgumentParser) -> bool:
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        if nested:
            return any(takes_json(p) for p in nested[0].choices.values())
        return any("--json" in a.option_strings for a in sub._actions)

    with_json = {name for name, sub in subparsers.choices.items() if takes_json(sub)}
    commands = _json_commands(tmp_path)
    assert set(commands) == with_json
    capfd.readouterr()
    for argvs in commands.values():
        for argv in argvs:
            # In this process, stdout read at the file descriptor: what native code and
            # solver children write there is caught too.
            code = main([*argv, "--json"])
            captured = capfd.readouterr()
            assert code == 0, (argv, captured.err)
            json.loads(captured.out)  # the whole of stdout, one document


def test_no_wait_warning_only_when_no_job_waited(tmp_path: Path) -> None:
    """LAS starts the second job on arrival by preempting the first, which then waits:
    no "no job ever waited" warning (the mean queueing delay S - r is 0 all the same);
    FIFO on a cluster with room for both warns, rightly.

    Catches: the warning computed from the queueing delay alone (which shows it for LAS).
    """
    path = tmp_path / "t.csv"
    # One GPU; the first job crosses LAS's first threshold (3,600 GPU-s) as the second
    # arrives: the second runs at once, the first is preempted until it ends.
    path.write_text("submit_time,duration,num_gpus\n0,5000,1\n3600,1000,1\n")
    one = ["--servers", "1", "--gpus-per-server", "1"]
    las = run_cli("simulate", "--trace", str(path), *one, "--policy", "las", "--json")
    assert las.returncode == 0, las.stderr
    summary = json.loads(las.stdout)
    assert summary["mean_queueing_delay"] == 0 and summary["preempted_jobs"] == 1
    assert "warning" not in summary
    two = ["--servers", "1", "--gpus-per-server", "2"]
    fifo = run_cli("simulate", "--trace", str(path), *two, "--policy", "fifo", "--json")
    assert "no job ever waited" in json.loads(fifo.stdout)["warning"]


def test_a_large_generate_says_what_it_will_cost_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From ``LARGE`` jobs on (a million took minutes without a word), ``generate`` first
    prints the size and time to expect and how to stop it, then writes the file as
    usual. (``LARGE`` lowered to 5 here, so the test generates 6 jobs.)"""
    import ddlsched.cli.generate as command

    monkeypatch.setattr(command, "LARGE", 5)
    out = tmp_path / "g.json"
    assert main(["generate", "--jobs", "6", "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("generating 6 jobs: about 0 MB of JSON") and "Ctrl-C" in err[0]
    assert err[1].startswith(f"wrote {out}: 6 jobs")
    assert main(["generate", "--jobs", "4", "--out", str(out)]) == 0
    assert capsys.readouterr().err.startswith(f"wrote {out}: 4 jobs")


@pytest.mark.parametrize(
    ("name", "magic"),
    [
        ("f.pdf", b"%PDF"),
        ("f.svg", b"<?xml"),
        ("f", b"\x89PNG"),
        ("F.PNG", b"\x89PNG"),
        (".pdf", b"%PDF"),
    ],
)
def test_plot_writes_the_format_its_extension_names(
    tmp_path: Path, name: str, magic: bytes
) -> None:
    """``--plot`` writes PDF, SVG or PNG by the extension (PNG without one), never PNG bytes
    into a file named .pdf."""
    trace = tmp_path / "t.csv"
    trace.write_text("submit_time,duration,num_gpus\n0,50,1\n10,30,2\n")
    figure = tmp_path / name
    done = run_cli("simulate", "--trace", str(trace), "--servers", "1", "--plot", str(figure))
    assert done.returncode == 0, done.stderr
    assert figure.read_bytes().startswith(magic)


def test_plot_with_another_extension_is_refused_before_any_work(tmp_path: Path) -> None:
    """One line naming the option and the formats; no file written."""
    trace = tmp_path / "t.csv"
    trace.write_text("submit_time,duration,num_gpus\n0,50,1\n")
    figure = tmp_path / "f.jpg"
    done = run_cli("simulate", "--trace", str(trace), "--plot", str(figure))
    assert done.returncode == 2 and not figure.exists()
    assert done.stderr.strip().count("\n") == 0 and "--plot" in done.stderr
    assert ".png, .pdf, .svg" in done.stderr and "not .jpg" in done.stderr


def test_a_closed_standard_output_still_writes_the_out_file(tmp_path: Path) -> None:
    """Started with standard output closed (``>&-``), ``solve --out`` runs its MILP child and
    writes the schedule (the child's ``sys.stdout`` is None, so a flush of it would fail:
    "HiGHS crashed", no file), and a ``--json`` command ends normally, not with exit 3."""
    import os

    instance, schedule = tmp_path / "i.json", tmp_path / "s.json"
    assert (
        run_cli(
            "generate", "--jobs", "4", "--preset", "exact-friendly", "--out", str(instance)
        ).returncode
        == 0
    )

    def closed(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ddlsched.cli", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            preexec_fn=lambda: os.close(1),
            cwd=Path(__file__).resolve().parents[1],
        )

    solved = closed("solve", str(instance), "--method", "milp", "--out", str(schedule))
    assert solved.returncode == 0 and solved.stderr == "", solved.stderr
    assert schedule.exists()
    bounded = closed("bound", str(instance), "--json")
    assert bounded.returncode == 0 and bounded.stderr == "", bounded.stderr
