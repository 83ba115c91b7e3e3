"""The readers of today's published traces, on small files written here in each published
shape (Helios, Acme, raw Philly, PAI 2020): what becomes a job, with which release,
duration, GPUs and features, what is left out and why, and one clear line naming file,
line and column for a bad field."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from ddlsched.core.model import Cluster, InputError
from ddlsched.core.trace_formats import RowsRead
from ddlsched.core.traces import LoadedTrace, load_trace, read_trace_rows

CLUSTER = Cluster.uniform(2, 8, 20.0, 1.0)

HELIOS = "\n".join(
    (
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,"
        "duration,queue",
        "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,"
        "2020-06-10 04:55:09,36848,0",
        "1425512,uVMrF,vchbv,4,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,"
        "2020-06-09 18:45:36,249,0",
        "1425513,uzqls,vcpDC,0,1,1,CANCELLED,2020-06-09 18:41:28,2020-06-09 18:41:28,"
        "2020-06-17 14:15:21,675233,0",
        "1425514,uXBbc,vcJkd,16,64,2,COMPLETED,2020-06-09 18:51:01,2020-06-09 18:51:01,"
        "2020-06-09 19:51:01,3600.5,0",
        "1425515,uzqls,vchbv,2,4,1,CANCELLED,2020-06-09 18:52:01,2020-06-09 18:52:01,"
        "2020-06-09 18:52:01,0,0",
        "",
    )
)
"""A Helios ``cluster_log.csv`` (columns and first rows as HeliosData's README shows them):
naive datetimes, three states, a CPU job (gpu_num 0), a job of the whole cluster with a
non-integral duration, and a job that never ran (duration 0)."""

ACME = "\n".join(
    (
        "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,"
        "duration,queue,gpu_time",
        "5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,"
        "2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,936.0",
        "5778469,u5907,1,8,128,Pretrain,COMPLETED,2023-02-28 16:48:22+00:00,"
        "2023-03-01 00:24:11+08:00,2023-03-01 01:09:04+08:00,2693,13,21544.0",
        "5778470,u0001,1,0,16,Other,COMPLETED,2023-03-01 00:50:00+08:00,"
        "2023-03-01 00:50:00+08:00,2023-03-01 00:51:00+08:00,60,0,0.0",
        "",
    )
)
"""An Acme ``trace_seren.csv`` (AcmeTrace's README): zoned datetimes, the second written in
UTC (00:48:22 at +08:00, 30 min after the first), an LLM workload type, a CPU job."""


def _philly_raw_jobs() -> list[dict[str, object]]:
    """A raw Philly ``cluster_job_log`` (msr-fiddle/philly-traces' README): a job retried
    once, 8 GPUs on one host then 2 on each of two hosts; a job that never ran; one still
    running; a failed 1-GPU job."""
    gpus = [f"gpu{k}" for k in range(8)]
    return [
        {
            "status": "Pass",
            "vc": "ee9e8c",
            "jobid": "application_1506638472019_14199",
            "attempts": [
                {
                    "start_time": "2017-10-07 01:12:09",
                    "end_time": "2017-10-07 01:13:23",
                    "detail": [{"ip": "m47", "gpus": gpus}],
                },
                {
                    "start_time": "2017-10-07 01:13:30",
                    "end_time": "2017-10-07 02:13:30",
                    "detail": [{"ip": "m412", "gpus": gpus[:2]}, {"ip": "m413", "gpus": gpus[:2]}],
                },
            ],
            "submitted_time": "2017-10-07 01:11:39",
            "user": "ce2f4c",
        },
        {
            "status": "Killed",
            "vc": "ee9e8c",
            "jobid": "never",
            "attempts": [],
            "submitted_time": "2017-10-07 01:20:00",
            "user": "aa",
        },
        {
            "status": "Pass",
            "vc": "b436b2",
            "jobid": "running",
            "attempts": [
                {
                    "start_time": "2017-10-07 01:30:00",
                    "end_time": None,
                    "detail": [{"ip": "m1", "gpus": gpus[:1]}],
                }
            ],
            "submitted_time": "2017-10-07 01:29:00",
            "user": "aa",
        },
        {
            "status": "Failed",
            "vc": "b436b2",
            "jobid": "failed",
            "attempts": [
                {
                    "start_time": "2017-10-07 01:40:00",
                    "end_time": "2017-10-07 01:40:30",
                    "detail": [{"ip": "m2", "gpus": gpus[:1]}],
                }
            ],
            "submitted_time": "2017-10-07 01:39:39",
            "user": "bb",
        },
    ]


PAI_JOBS = """j1,i1,u1,Terminated,100,900
j2,i2,u2,Failed,150,300
j3,i3,u1,Terminated,160,200
j4,i4,u3,Terminated,170.5,400
j5,i5,u3,Waiting,180,0
"""
"""A PAI ``pai_job_table.csv`` (no header, as published): submissions at 100-180 s."""

PAI_TASKS = """j1,ps,1,Terminated,105,400,600,29.3,,
j1,worker,2,Terminated,110,390,600,29.3,100,V100
j2,worker,2,Failed,160,290.5,600,29.3,50,T4
j3,tensorflow,1,Terminated,165,195,400,10,0,
j4,worker,1,Terminated,0,0,400,10,200,P100
j4,evaluator,1,Terminated,180,380,400,10,100,P100
"""
"""Its ``pai_task_table.csv``: j1 a CPU parameter server (105-400) and two 1-GPU
workers (110-390), j2 two half-GPU instances, j3 a CPU job, j4 a task that never launched (times 0)
beside a 1-GPU evaluator, j5 no task (waiting)."""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def philly_raw(tmp_path: Path, jobs: list[dict[str, object]] | None = None) -> Path:
    """The raw log written as Microsoft's is: a JSON list, one record over many lines."""
    return write(tmp_path, "cluster_job_log", json.dumps(jobs or _philly_raw_jobs(), indent=4))


def pai(tmp_path: Path, tasks: str = PAI_TASKS, header: bool = False) -> Path:
    write(tmp_path, "pai_task_table.csv", tasks)
    head = "job_name,inst_id,user,status,start_time,end_time\n" if header else ""
    return write(tmp_path, "pai_job_table.csv", head + PAI_JOBS)


def load(path: Path, **reading: str) -> LoadedTrace:
    with pytest.warns(UserWarning):  # the reader names the rows it leaves out
        return load_trace(path, CLUSTER, **reading)  # type: ignore[arg-type]


def kinds(read: RowsRead) -> dict[int, str]:
    return {row.line: row.left_out.kind for row in read.rows if row.left_out is not None}


def test_a_helios_log_replays_with_its_users_vcs_and_states(tmp_path: Path) -> None:
    """Helios (recognised by its columns): releases from the datetimes, recorded
    durations, user and vc as features; the CPU job, the 0 s job and nothing else left
    out, each by its reason; every state kept by default and counted."""
    loaded = load(write(tmp_path, "cluster_log.csv", HELIOS))
    assert loaded.format == "helios"
    jobs = {job.features["trace_id"]: job for job in loaded.instance.jobs}
    assert sorted(jobs) == ["1425511", "1425512", "1425514"]
    assert [jobs[k].release for k in ("1425511", "1425512", "1425514")] == [0.0, 26.0, 600.0]
    assert jobs["1425514"].features["trace_duration"] == 3600.5 and jobs["1425514"].gpus == 16
    assert (jobs["1425512"].features["user"], jobs["1425512"].features["vc"]) == ("uVMrF", "vchbv")
    assert loaded.left_out_counts() == {"invalid": 1, "cpu-only": 1}
    assert [(r.line, r.column) for r in loaded.left_out] == [(4, "gpu_num"), (6, "duration")]
    assert loaded.states is None and loaded.state_counts == {"COMPLETED": 2, "FAILED": 1}
    assert loaded.summary_lines() == ["states kept: all (COMPLETED 2, FAILED 1)"]


def test_states_keep_only_the_named_states_case_aside(tmp_path: Path) -> None:
    """``states="completed"`` keeps the two COMPLETED jobs; the others are left out as
    ``state`` (the CPU job too: its state is checked first), and the summary names the
    states kept."""
    path = write(tmp_path, "cluster_log.csv", HELIOS)
    loaded = load(path, states="completed")
    assert sorted(job.features["trace_id"] for job in loaded.instance.jobs) == [
        "1425511",
        "1425514",
    ]
    assert loaded.left_out_counts() == {"state": 3}
    assert loaded.summary_lines() == ["states kept: completed (COMPLETED 2)"]
    with pytest.raises(InputError, match=r"states: .* no state column"):
        load_trace(write(tmp_path, "m.csv", "submit,duration,gpus\n0,5,1\n"), CLUSTER, states="X")


def test_an_acme_log_converts_zoned_times(tmp_path: Path) -> None:
    """Acme: ``+08:00`` and ``+00:00`` times are the moments they name (the second job,
    written in UTC, comes 30 min after the first), the workload type is a feature, and
    the CPU job is left out."""
    loaded = load(write(tmp_path, "trace_seren.csv", ACME))
    assert loaded.format == "acme"
    assert [(job.release, job.features["workload_type"]) for job in loaded.instance.jobs] == [
        (0.0, "Other"),
        (1800.0, "Pretrain"),
    ]
    assert loaded.left_out_counts() == {"cpu-only": 1}


def test_naive_and_zoned_times_mixed_are_refused_naming_the_line(tmp_path: Path) -> None:
    """A zone on one line and none on a later one: which zone the naive one is in would be
    a guess, so the file is refused at the line of the first time of the other kind."""
    text = ACME.replace("COMPLETED,2023-03-01 00:50:00+08:00", "COMPLETED,2023-03-01 00:50:00")
    with pytest.raises(InputError, match=r"trace_seren\.csv:4: submit_time: .*no time zone"):
        load_trace(write(tmp_path, "trace_seren.csv", text), CLUSTER)
    # the other order: none on the first line, a zone on a later one
    text = ACME.replace("2023-03-01 00:18:22+08:00", "2023-03-01 00:18:22", 1)
    with pytest.raises(InputError, match=r"trace_seren\.csv:\d+: \w+: .*time zone"):
        load_trace(write(tmp_path, "trace_seren.csv", text), CLUSTER)


def test_a_raw_philly_log_sums_its_attempts(tmp_path: Path) -> None:
    """Raw Philly (recognised as a JSON list): a job's duration is the sum of its attempts
    (74 s + 3600 s), its GPUs those of its last attempt (2 hosts of 2), its host GPUs the
    most on one host over every attempt (8), retries the attempts after the first; a job
    without attempts and one still running are left out as ``no run``, by line."""
    path = philly_raw(tmp_path)
    read = read_trace_rows(path)
    assert read.format.name == "philly-raw"
    first = read.rows[0]
    assert (first.duration, first.gpus, first.host_gpus) == (3674.0, 4, 8)
    assert (first.user, first.vc, first.state) == ("ce2f4c", "ee9e8c", "Pass")
    text = path.read_text().splitlines()
    starts = [k + 1 for k, line in enumerate(text) if line == "    {"]
    assert [row.line for row in read.rows] == starts
    assert kinds(read) == {starts[1]: "no run", starts[2]: "no run"}
    loaded = load(path)
    jobs = loaded.instance.jobs
    assert [(job.release, job.gpus) for job in jobs] == [(0.0, 4), (1680.0, 1)]
    assert jobs[0].features["retries"] == 1 and jobs[0].features["vc"] == "ee9e8c"
    assert loaded.state_counts == {"Pass": 1, "Failed": 1}


def test_raw_philly_reads_none_as_missing_counts_gpus_once_and_refuses_time_travel(
    tmp_path: Path,
) -> None:
    """The published log's missing times are the string ``"None"`` as well as ``null``: a
    job whose last attempt ends ``"None"`` is still running (left out as ``no run``, not an
    error); a GPU listed twice on one host counts once; an attempt that ends before it
    starts is refused naming its ``end_time`` and the line it is on (before, it was
    subtracted from the job's duration)."""
    jobs = _philly_raw_jobs()
    jobs[2]["attempts"][0]["end_time"] = "None"  # type: ignore[index]
    jobs[3]["attempts"][0]["detail"] = [{"ip": "m9", "gpus": ["gpu0", "gpu0", "gpu0"]}]  # type: ignore[index]
    read = read_trace_rows(philly_raw(tmp_path, jobs))
    assert sorted(kinds(read).values()) == ["no run", "no run"]
    assert read.rows[3].gpus == 1
    jobs = _philly_raw_jobs()
    jobs[0]["attempts"][1]["end_time"] = "2017-10-07 00:43:30"  # type: ignore[index]
    path = philly_raw(tmp_path, jobs)
    with pytest.raises(
        InputError, match=r":(\d+): attempts\[1\]\.end_time: ends before it starts"
    ) as error:
        read_trace_rows(path)
    line = int(re.search(r":(\d+): attempts", str(error.value)).group(1))  # type: ignore[union-attr]
    assert "2017-10-07 00:43:30" in path.read_text().splitlines()[line - 1]


def test_pai_tables_join_tasks_to_jobs(tmp_path: Path) -> None:
    """PAI (recognised by the job table's name; its task table beside it): GPUs are
    instances times ``plan_gpu / 100`` summed over every task asked for (j4's unlaunched
    2-GPU worker too), the run from the first task launch to the last end (unlaunched
    tasks aside); the CPU job and the job without a task are left out. A header row is
    read as one."""
    for header in (False, True):
        tasks = PAI_TASKS.replace("j2,worker,2,Failed,160,290.5,600,29.3,50,T4\n", "")
        read = read_trace_rows(pai(tmp_path, tasks, header))
        assert read.format.name == "pai2020"
        rows = {row.id: row for row in read.rows}
        assert (rows["j1"].gpus, rows["j1"].duration, rows["j1"].submit) == (2, 295.0, 100.0)
        assert (rows["j4"].gpus, rows["j4"].duration) == (3, 200.0)
        assert dict(rows["j4"].extra) == {"gpu_type": "P100"}
        first = 2 if header else 1
        assert kinds(read) == {first + 1: "no run", first + 2: "cpu-only", first + 4: "no run"}


def test_fractional_gpus_are_refused_rounded_or_dropped(tmp_path: Path) -> None:
    """j2's two half-GPU instances: refused by default naming the task table's line and
    ``plan_gpu``; ``ceil`` gives each instance a GPU (2 GPUs); ``drop`` leaves j2 out,
    counted as ``fractional``."""
    path = pai(tmp_path)
    with pytest.raises(InputError, match=r"pai_task_table\.csv:3: plan_gpu: .*got 0\.5"):
        read_trace_rows(path)
    ceil = {row.id: row for row in read_trace_rows(path, fractional="ceil").rows}
    assert (ceil["j2"].gpus, ceil["j2"].duration, ceil["j2"].left_out) == (2, 130.5, None)
    dropped = read_trace_rows(path, fractional="drop")
    assert kinds(dropped)[2] == "fractional"
    csv_row = "submit,duration,gpus\n0,5,0.25\n1,5,1\n2,5,2.25\n"
    rows = read_trace_rows(write(tmp_path, "f.csv", csv_row), fractional="ceil").rows
    assert [row.gpus for row in rows] == [1, 1, 3]  # up, never to the nearest


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("helios", r"cluster_log\.csv:3: gpu_num: not a number"),
        ("acme", r"trace_seren\.csv:2: submit_time: not a date and time"),
        ("philly-raw", r"cluster_job_log:(\d+): attempts\[1\]\.end_time: not a date and time"),
        ("pai2020", r"pai_task_table\.csv:4: inst_num: not a number"),
    ],
)
def test_a_planted_bad_field_names_file_line_and_column(
    tmp_path: Path, name: str, expected: str
) -> None:
    """One bad field in each format: one error naming the file, the line the field is on
    and its column (its path in a raw Philly record)."""
    if name == "helios":
        path = write(
            tmp_path, "cluster_log.csv", HELIOS.replace(",4,16,1,FAILED", ",four,16,1,FAILED")
        )
    elif name == "acme":
        path = write(
            tmp_path, "trace_seren.csv", ACME.replace("2023-03-01 00:18:22+08:00", "yesterday", 1)
        )
    elif name == "philly-raw":
        jobs = _philly_raw_jobs()
        jobs[0]["attempts"][1]["end_time"] = "soon"  # type: ignore[index]
        path = philly_raw(tmp_path, jobs)
    else:
        path = pai(tmp_path, PAI_TASKS.replace("j3,tensorflow,1,", "j3,tensorflow,one,"))
    with pytest.raises(InputError, match=expected) as error:
        read_trace_rows(path, format=name, fractional="ceil")
    if name == "philly-raw":
        line = int(re.search(expected, str(error.value)).group(1))  # type: ignore[union-attr]
        assert '"soon"' in path.read_text().splitlines()[line - 1]


def test_a_named_format_checks_its_columns(tmp_path: Path) -> None:
    """``format="acme"`` on a Helios file names the column it lacks; a CSV file read as
    raw Philly is refused as not a JSON list."""
    path = write(tmp_path, "cluster_log.csv", HELIOS)
    with pytest.raises(InputError, match=r"not in the acme format: no column type"):
        read_trace_rows(path, format="acme")
    with pytest.raises(InputError, match=r"not a raw Philly log"):
        read_trace_rows(path, format="philly-raw")
    with pytest.raises(InputError, match=r"format: expected one of"):
        read_trace_rows(path, format="slurm")


def test_the_philly_csv_cluster_is_the_virtual_cluster_and_the_user() -> None:
    """The shipped Philly CSV's ``cluster`` column is the job's virtual cluster: feature
    ``vc``, and ``user`` as before."""
    jobs = load_trace("philly_jobs.csv", Cluster.uniform(32, 8, 20.0, 1.0), limit=20)
    assert all(job.features["vc"] == job.features["user"] for job in jobs.instance.jobs)
    assert math.isfinite(jobs.instance.jobs[-1].release)
