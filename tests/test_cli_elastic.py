"""``ddlsched simulate`` on a Pollux workload runs the elastic simulator with its policies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ddlsched.cli import main
from ddlsched.core.data import data_path


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 12 jobs of the Pollux study's workload 6 (its header decides the format)."""
    lines = data_path("pollux", "workloads", "workload-6.csv").read_text().splitlines()
    path = tmp_path_factory.mktemp("elastic") / "w6-head.csv"
    path.write_text("\n".join(lines[:13]) + "\n")
    return path


def _run(capsys: pytest.CaptureFixture[str], workload: Path, policy: str) -> dict:
    code = main(["simulate", "--trace", str(workload), "--servers", "2", "--gpus-per-server",
                 "4", "--policy", policy, "--json"])  # fmt: skip
    assert code == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("policy", ["pollux", "sia", "asrpt-elastic", "las-pollux", "fifo"])
def test_every_elastic_policy_runs_checked_and_deterministic(
    capsys: pytest.CaptureFixture[str], workload: Path, policy: str
) -> None:
    """Each elastic policy runs from the command line, its run passes the independent check,
    and the same command gives the same mean JCT twice. Catches a workload routed to the
    rigid simulator, an unchecked run, and a nondeterministic policy."""
    first = _run(capsys, workload, policy)
    assert first["trace_format"] == "pollux-workload" and first["jobs"] == 12
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


def test_json_stdout_is_one_document_with_an_in_process_solver(workload: Path) -> None:
    """The elastic policies solve their round MILPs with HiGHS in this process, which prints
    its banner on file descriptor 1 at its first use; ``--json`` stdout must still be exactly
    one JSON document (the banner goes to stderr). Catches any command whose native output
    precedes the document (``| jq`` fails on it)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", "simulate", "--trace", str(workload),
         "--servers", "2", "--gpus-per-server", "4", "--policy", "pollux", "--json"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verified"] is True
