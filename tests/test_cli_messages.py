"""What the command line says on the way: a trace where an instance belongs, the trace
reader's rules explained where they are offered, files written named, progress that is
never silent for long, and no meaningless ratio."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ddlsched.cli import main, output
from tests.waiting import wait_until


@pytest.mark.parametrize("command", ["bound", "solve", "check", "info", "verify"])
def test_a_csv_where_an_instance_belongs_points_at_the_trace_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """A CSV file given as an instance is refused in one line (exit 2) that names it as a
    trace and the ``--trace`` way to use it, not "not valid JSON"."""
    trace = tmp_path / "mytrace.csv"
    trace.write_text("submit,duration,gpus\n0,10,1\n")
    extra = [str(trace)] if command == "verify" else []
    code = main([command, str(trace), *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "not an instance" in err and f"--trace {trace}" in err


def test_the_unnamed_rules_are_explained_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    """``simulate --help`` explains each rule of ``--unnamed`` itself, sending nobody to
    a README that does not describe them."""
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    start = text.index("--unnamed {", text.index("options:"))
    entry = text[start : text.index(" --", start + 12)]
    assert "README" not in entry
    for rule in ("data-parallel (", "zoo-data-parallel (", "zoo (any zoo model"):
        assert rule in entry, rule


def test_simulate_says_where_it_wrote_its_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate --plot`` and ``--out`` name the files written, as ``compare`` does."""
    png, out = tmp_path / "f.png", tmp_path / "s.json"
    argv = ["simulate", "--trace", "tiresias_60_job.csv", "--servers", "2",
            "--gpus-per-server", "4", "--limit", "5",
            "--plot", str(png), "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert f"figure written to {png}" in printed and f"schedule written to {out}" in printed
    assert png.exists() and out.exists()


def test_progress_off_a_terminal_is_a_line_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With stderr not a terminal (piped, logged), progress is a line naming what is done
    and in which unit, repeated while one slow item runs; closing joins its thread. (The interval
    is shortened here; the test waits for the lines, never for a time.)"""
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setattr(output, "HEARTBEAT_S", 0.01)
    update, close = output.progress_bar(3, "compare")
    update(1, 3)
    wait_until(lambda: stream.getvalue().count("\n") >= 2, "two progress lines")
    close()
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("compare: 1/3 instances done, ")


def test_the_verifier_row_of_check_random_shows_no_ratio(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``check --random``: the verifier's row (a count of violations against 0) shows
    ``-`` for the worst lhs/rhs and its seed, while the inequality claims show ratios; the
    heading names the preset and the arrivals used."""
    assert main(["check", "--random", "1", "--jobs", "3", "--out-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "(exact-friendly, all released at 0)" in lines[0]
    verifier = next(line for line in lines if line.startswith("| verifier |"))
    assert verifier.split("|")[-3:-1] == [" - ", " - "]
    lemma = next(line for line in lines if line.startswith("| lemma1 |"))
    assert float(lemma.split("|")[-3]) > 0


def _help_entry(capsys: pytest.CaptureFixture[str], command: str, option: str) -> str:
    """The help line of ``option`` in ``ddlsched command --help``, printed wide so that
    each entry is one line (argparse would wrap it, at hyphens too)."""
    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit):
        patch.setenv("COLUMNS", "10000")
        main([command, "--help"])
    lines = capsys.readouterr().out.splitlines()
    start = next(k for k, line in enumerate(lines) if line.strip().startswith(f"{option} "))
    entry = [lines[start]]
    for line in lines[start + 1 :]:  # a long option's help starts on the next line
        if not line.strip() or line.lstrip().startswith("-"):
            break
        entry.append(line.strip())
    return " ".join(entry)


def test_each_help_states_the_unnamed_rule_its_command_uses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``simulate`` and ``bound`` read traces with :func:`load_trace` and ``generate`` and
    ``compare --from-trace`` with :func:`trace_sample`, whose defaults differ
    (data-parallel, zoo-data-parallel): each command's help names its own, read from the
    functions' signatures."""
    import inspect

    from ddlsched.core.traces import load_trace, trace_sample

    replay = inspect.signature(load_trace).parameters["unnamed"].default
    sample = inspect.signature(trace_sample).parameters["unnamed"].default
    assert replay != sample
    for command in ("simulate", "bound"):
        assert f"(default: {replay};" in _help_entry(capsys, command, "--unnamed"), command
    assert f"(default {sample}," in _help_entry(capsys, "generate", "--unnamed")
    assert f"--unnamed {sample})" in _help_entry(capsys, "compare", "--from-trace")


def test_solve_with_a_policy_reports_its_jobs_done_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``solve`` with an online policy passes a progress callback to the API and prints
    "<policy>: k/n jobs done" lines while it runs (it was silent for minutes on 200,000
    jobs); an exact method gets none. The policy's run is stood in for by one that reports
    two jobs done and waits for the line (never for a time)."""
    import ddlsched.api as api

    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setattr(output, "HEARTBEAT_S", 0.01)
    real = api.solve
    seen: list[object] = []

    def reporting(instance, method, **kwargs):  # type: ignore[no-untyped-def]
        progress = kwargs.get("progress")
        seen.append(progress)
        if progress is not None:
            progress(2, instance.num_jobs)
            wait_until(lambda: "jobs done" in stream.getvalue(), "a progress line")
        return real(instance, method, **kwargs)

    monkeypatch.setattr(api, "solve", reporting)
    path = tmp_path / "i.json"
    assert (
        main(["generate", "--jobs", "5", "--servers", "2", "--seed", "1", "--out", str(path)]) == 0
    )
    assert main(["solve", str(path), "--method", "fifo"]) == 0
    assert seen[-1] is not None
    assert any(line.startswith("fifo: 2/5 jobs done, ") for line in stream.getvalue().splitlines())
    assert main(["solve", str(path), "--method", "exact", "--time-limit", "30"]) == 0
    assert seen[-1] is None
