"""Trace loaders: recognised by columns, clear errors, durations preserved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from algorithms.simulator import REPORTED_METRICS
from ddlsched.core.alpha import alpha
from ddlsched.core.model import Cluster, InputError
from ddlsched.core.traces import data_dir, load_trace, packed_mapping

CLUSTER = Cluster.uniform(4, 4, 20.0, 1.0)

MURI_HEADER = (
    "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,"
    "iteration_time,resource_time_0,resource_time_1,resource_time_2,priority\n"
)
MURI = (
    MURI_HEADER
    + """0,1,0,1000,vgg16,128,2000000,0,2000,1,1,0,1
1,8,3000000,500,bert,16,5000000,0,10000,1,1,0,0
2,4,1000000,200,dqn,32,800000,0,4000,1,1,0,0
"""
)

PHILLY = """timestamp,duration,num_gpus,gpu_time,cluster
2017-10-09 07:01:55,66.0,1,66.0,11cb48
2017-10-09 06:13:03,2951.0,2,5902.0,6214e9
2017-10-09 08:00:00,0.0,1,0.0,6214e9
2017-10-09 09:00:00,10.0,64,640.0,6214e9
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_muri_times_iterations_and_models(tmp_path: Path) -> None:
    """Muri: microseconds to seconds, iterations kept, models aliased, durations preserved."""
    loaded = load_trace(write(tmp_path, "m.csv", MURI), CLUSTER)
    assert loaded.format == "muri"
    jobs = {j.features["trace_model"]: j for j in loaded.instance.jobs}
    assert jobs["vgg16"].release == 0.0 and jobs["dqn"].release == pytest.approx(1.0)
    assert jobs["bert"].release == pytest.approx(3.0)
    assert jobs["vgg16"].iterations == 1000 and jobs["bert"].features["model"] == "bert_base"
    for job, duration in ((jobs["vgg16"], 2.0), (jobs["bert"], 5.0), (jobs["dqn"], 0.8)):
        packed = alpha(job, CLUSTER, packed_mapping(job.gpus, CLUSTER))
        assert job.iterations * packed == pytest.approx(duration)


def test_philly_skips_invalid_and_drops_wide(tmp_path: Path) -> None:
    """Philly: sorted by timestamp, zero durations skipped, too-wide jobs dropped and counted."""
    loaded = load_trace(write(tmp_path, "p.csv", PHILLY), CLUSTER, seed=3)
    assert loaded.format == "philly"
    assert (loaded.rows_read, loaded.skipped_invalid, loaded.dropped_wide) == (4, 1, 1)
    first, second = loaded.instance.jobs
    assert first.gpus == 2 and first.release == 0.0
    assert second.release == pytest.approx(48 * 60 + 52)
    assert first.features["user"] == "6214e9"
    with pytest.raises(InputError, match=r"p\.csv:5: num_gpus: 64 GPUs, the cluster has 16"):
        load_trace(tmp_path / "p.csv", CLUSTER, drop_wide=False)


def test_same_seed_same_models(tmp_path: Path) -> None:
    """Models drawn for rows naming none are reproducible from the seed."""
    path = write(tmp_path, "p.csv", PHILLY)
    a = [j.features["model"] for j in load_trace(path, CLUSTER, seed=1).instance.jobs]
    b = [j.features["model"] for j in load_trace(path, CLUSTER, seed=1).instance.jobs]
    assert a == b


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("job_id,num_gpu,submit_time\n0,1,0\n", "closest format 'tiresias' is missing duration"),
        ("timestamp,duration,num_gpus\n2017-10-09 07:01:55,abc,1\n", ":2: duration: not a number"),
        (
            "timestamp,duration,num_gpus\n2017-10-09 07:01:55,5,0\n",
            ":2: num_gpus: expected a whole",
        ),
        ("timestamp,duration,num_gpus\nyesterday,5,1\n", ":2: timestamp: not a date"),
    ],
)
def test_bad_traces_named(tmp_path: Path, text: str, expected: str) -> None:
    """Unknown columns name what is missing; bad values name file, line and column."""
    with pytest.raises(InputError, match=expected):
        load_trace(write(tmp_path, "bad.csv", text), CLUSTER)


def test_real_traces_load() -> None:
    """The real traces in ../shared/data load with their documented row counts."""
    root = data_dir() / "traces"
    counts = {"tiresias_60_job.csv": 60, "muri_trace1.csv": 1494}
    for name, rows in counts.items():
        loaded = load_trace(root / name, Cluster.uniform(8, 8, 20.0, 1.0))
        assert loaded.rows_read == rows


def test_simulate_cli_json(tmp_path: Path) -> None:
    """simulate --json prints the metrics, jobs_completed and wall_time_s."""
    path = write(tmp_path, "m.csv", MURI)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ddlsched.cli",
            "simulate",
            "--trace",
            str(path),
            "--servers",
            "4",
            "--gpus-per-server",
            "4",
            "--policy",
            "asrpt-greedy",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["jobs_completed"] == 3
    for key in REPORTED_METRICS:
        assert key in doc
