"""compare (ddlsched.experiments.compare): methods against proven optima, all verified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest

from ddlsched.core.generators import generate
from ddlsched.experiments import CompareConfig, compare


def test_compare_ratios_against_proven_optima() -> None:
    """Non-preemptive methods never beat the optimum; every schedule is verified.

    LAS preempts, so the non-preemptive OPT(A) does not bound it from below.
    """
    report = compare(CompareConfig(jobs=5, instances=4))
    summary = report.summary()
    assert summary["optima_proven"] == 4
    for method, row in summary["methods"].items():  # type: ignore[union-attr]
        assert row["verified"] == 4
        assert row["worst C/OPT"] >= row["mean C/OPT"] - 1e-9
        if method != "las":
            assert row["mean C/OPT"] >= 1 - 1e-9


def test_compare_rejects_unknown_method() -> None:
    """An unknown method is named."""
    with pytest.raises(ValueError, match="methods: unknown policy 'magic'"):
        CompareConfig(methods=("magic",))


def test_compare_cli_json_and_plot(tmp_path: Path) -> None:
    """compare --json has the summary; --plot writes a PNG."""
    png = tmp_path / "f.png"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ddlsched.cli",
            "compare",
            "--jobs",
            "4",
            "--instances",
            "2",
            "--json",
            "--plot",
            str(png),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["instances"] == 2 and set(doc["methods"]) >= {"asrpt", "fifo"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


_READY_AFTER_FIRST = """
import sys
import ddlsched.cli as cli
import ddlsched.cli.compare as command


def _announce(total, label):
    def update(done, _total):
        if done == 1:
            print("first instance done", file=sys.stderr, flush=True)

    return update, lambda: None


command.progress_bar = _announce
sys.exit(cli.main(sys.argv[1:]))
"""


def test_compare_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    """SIGINT stops compare with the table of what finished and exit 130.

    HiGHS catches SIGINT during a solve and returns normally; catches a Ctrl-C swallowed
    that way, the whole run going on. The signal is sent once the first instance has
    finished (announced on stderr by a progress hook), never after a fixed sleep, so the
    test does not depend on the machine's speed: whatever runs at that moment (the next
    exact solve, a policy, the verifier) must give way.
    """
    import signal

    script = tmp_path / "compare_ready.py"
    script.write_text(_READY_AFTER_FIRST)
    process = subprocess.Popen(
        [sys.executable, str(script), "compare", "--instances", "500", "--jobs", "12"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:  # HiGHS's banner may come first (solver logs go to stderr)
        if line.strip() == "first instance done":
            break
    else:
        raise AssertionError("compare ended before its first instance was done")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "interrupted" in out and "| asrpt |" in out
    assert "Traceback" not in err


def test_ratios_beyond_theorem1_are_flagged_with_the_reason() -> None:
    """A learned predictor without history makes guided A-SRPT absurd; the report says why."""
    from ddlsched.experiments import CompareConfig, compare

    config = CompareConfig(instances=2, jobs=6, methods=("asrpt", "fifo"), predictor="forest")
    summary = compare(config).summary()
    asrpt = summary["methods"]["asrpt"]  # type: ignore[index]
    assert asrpt["above Theorem 1"] == 2  # cold start: the zoo's typical counts, ~1e4x off
    assert "predictions from 'forest' are not exact" in asrpt["note"]
    oracle = compare(CompareConfig(instances=2, jobs=6, methods=("asrpt",))).summary()
    assert oracle["methods"]["asrpt"]["note"] == ""  # type: ignore[index]


def test_compare_on_a_trace_uses_each_seeds_sample_of_real_jobs(tmp_path: Path) -> None:
    """With ``from_trace`` each instance is the trace sample of its seed (the same jobs
    ``trace_sample`` gives), every method's schedule verified; GPU types are refused with
    it. Catches a comparison that ignores the trace
    or draws every instance from one seed."""
    from ddlsched.core.traces import trace_sample

    trace = tmp_path / "t.csv"
    trace.write_text(
        "submit_time,duration,num_gpus\n"
        + "".join(f"{7 * k},{20.5 + 11.75 * k},{1 + k % 2}\n" for k in range(10))
    )
    config = CompareConfig(
        jobs=3, servers=1, gpus_per_server=4, instances=3, seed=5, methods=("fifo", "sjf"),
        from_trace=str(trace),
    )  # fmt: skip
    report = compare(config)
    assert [row.seed for row in report.rows] == [5, 6, 7]
    for row in report.rows:
        expected = trace_sample(trace, config.generator().cluster(), 3, seed=row.seed)
        assert [job.id for job in row.instance.jobs] == [job.id for job in expected.jobs]
        assert all(row.verified.values())


def test_compare_on_a_trace_honours_the_load_and_the_gpu_types(tmp_path: Path) -> None:
    """With ``from_trace``, ``load`` scales each sample's arrivals to that offered load
    (``None``: as recorded) and ``gpu_types`` gives the typed cluster, as ``generate`` and
    sweeps do: each instance is ``generate(config.generator(), seed)`` and its ``command``
    names both. Guards against a comparison that drops the load or refuses the types that
    the API and sweeps accept."""
    from ddlsched.core.offered_load import offered_load

    trace = tmp_path / "t.csv"
    trace.write_text(
        "submit_time,duration,num_gpus\n"
        + "".join(f"{7 * k},{20.5 + 11.75 * k},{1 + k % 2}\n" for k in range(10))
    )
    typed = (("v100", 1), ("k80", 1))
    for load in (0.5, None):
        config = CompareConfig(
            jobs=3, servers=2, gpus_per_server=2, gpu_types=typed, from_trace=str(trace),
            load=load,
        )  # fmt: skip
        instance = config.instance(4)
        assert instance == generate(config.generator(), 4)
        assert instance.cluster.types == ("v100", "k80")
        assert ("--load" in config.command(4)) == (load is not None)
        assert "--gpu-types v100:1,k80:1" in config.command(4)
        if load is not None:
            assert offered_load(instance) == pytest.approx(load)
