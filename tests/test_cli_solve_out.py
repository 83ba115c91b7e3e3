"""``ddlsched solve --out``: the schedule is written as JSON, so only a ``.json`` name is
taken; any other is refused before any work, in one line, with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ddlsched.proofs_checks.verifier import verify

from ddlsched.cli import main
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.io import read_instance, read_schedule, write_instance


@pytest.fixture
def mixed_instance(tmp_path: Path) -> Path:
    """Four jobs, some multi-GPU, released at spread times on a V100 and a K80 server:
    typed compute times and arrivals after 0, so a schedule read back has something to
    get wrong."""
    config = GeneratorConfig(num_jobs=4, servers=2, gpu_types=(("v100", 1), ("k80", 1)), load=1.0)
    path = tmp_path / "in.json"
    write_instance(generate(config, 5), path)
    return path


@pytest.mark.parametrize(
    "name", ["s.png", "s.csv", "s", "s.json.png", "s.jsonl", "schedule.sqlite"]
)
def test_solve_out_without_json_extension_is_refused(
    mixed_instance: Path, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``--out`` not ending in ``.json`` (a figure's, a CSV's, none) exits 2 with one
    line naming the option, the path and the extension taken; nothing is written and
    nothing printed on stdout (JSON written under a ``.png`` name was the failure)."""
    out = tmp_path / name
    assert main(["solve", str(mixed_instance), "--method", "fifo", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"ddlsched: error: --out {out}: expected a .json file (the schedule is written as JSON)\n"
    )
    assert not out.exists()


def test_refused_out_leaves_an_existing_file_as_it_was(
    mixed_instance: Path, tmp_path: Path
) -> None:
    """A refused ``--out`` naming a file that exists (a figure) leaves its bytes alone."""
    figure = tmp_path / "figure.png"
    figure.write_bytes(b"\x89PNG\r\n\x1a\n")
    argv = ["solve", str(mixed_instance), "--method", "fifo", "--out", str(figure)]
    assert main(argv) == 2
    assert figure.read_bytes() == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["s.json", "S.JSON", "run.v2.Json"])
@pytest.mark.parametrize("method", ["fifo", "asrpt"])
def test_solve_out_json_is_written_and_reads_back(
    mixed_instance: Path,
    tmp_path: Path,
    name: str,
    method: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A ``.json`` name in any case is written; the schedule read back is feasible by the
    verifier and its recomputed total completion time is the one ``--json`` reported."""
    out = tmp_path / name
    argv = ["solve", str(mixed_instance), "--method", method, "--json", "--out", str(out)]
    assert main(argv) == 0
    reported = json.loads(capsys.readouterr().out)
    report = verify(read_instance(mixed_instance), read_schedule(out))
    assert report.feasible, report
    assert report.total_completion_time == pytest.approx(reported["total_completion_time"])
