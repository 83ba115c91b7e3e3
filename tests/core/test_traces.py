"""Trace loaders: recognised by columns, clear errors, durations preserved."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ddlsched.algorithms.simulator import REPORTED_METRICS

from ddlsched.core.alpha import alpha
from ddlsched.core.model import Cluster, InputError, Instance
from ddlsched.core.traces import (
    UNNAMED_RULES,
    load_trace,
    match_model,
    packed_mapping,
    parse_columns,
    stretched_jobs,
)

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
            "timestamp,duration,num_gpus\n2017-10-09 07:01:55,5,-1\n",
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
    """The shipped traces load by their bare names with their published row counts."""
    counts = {"tiresias_60_job.csv": 60, "muri_trace1.csv": 1494}
    for name, rows in counts.items():
        loaded = load_trace(name, Cluster.uniform(8, 8, 20.0, 1.0))
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


def test_minimal_format_seconds_and_ids(tmp_path: Path) -> None:
    """ElasticFlow-style rows (submit s, duration s, GPUs) load; durations kept exactly."""
    path = write(tmp_path, "e.csv", "submit_time,duration,num_gpus\n10,100,2\n0,50,1\n")
    loaded = load_trace(path, CLUSTER)
    assert loaded.format == "minimal" and loaded.unnamed_jobs == 2
    first, second = loaded.instance.jobs  # sorted by submit time
    assert (first.release, first.gpus, second.release, second.gpus) == (0.0, 1, 10.0, 2)
    for job, duration in ((first, 50.0), (second, 100.0)):
        assert job.iterations * alpha(job, CLUSTER, packed_mapping(job.gpus, CLUSTER)) == (
            pytest.approx(duration)
        )
        assert job.features["model"] == "resnet50" and job.features["trace_duration"] == duration


def test_column_mapping_and_time_unit(tmp_path: Path) -> None:
    text = "name,arrives_ms,runs_ms,accelerators,arch\na,0,60000,4,gpt2\nb,30000,1000,1,dqn\n"
    path = write(tmp_path, "x.csv", text)
    with pytest.raises(InputError, match="unknown trace columns"):
        load_trace(path, CLUSTER)
    mapping = parse_columns("submit=arrives_ms,duration=runs_ms,gpus=accelerators,model=arch")
    loaded = load_trace(path, CLUSTER, columns=mapping, time_unit="ms")
    assert loaded.format == "mapped"
    a, b = loaded.instance.jobs
    assert b.release == pytest.approx(30.0)
    assert (a.features["model"], b.features["model"]) == ("gpt2", "rl_atari")
    assert a.features["trace_id"] == "a"  # "name" is one of the minimal id columns
    with pytest.raises(InputError, match=r"mapped column.*nope"):
        load_trace(path, CLUSTER, columns={"submit": "nope"})
    with pytest.raises(InputError, match="not FIELD=COLUMN"):
        parse_columns("submit")
    with pytest.raises(InputError, match="unknown field 'start'"):
        parse_columns("start=x")


@pytest.mark.parametrize(
    ("name", "zoo"),
    [
        ("shufflenet_v2_x1_0", "resnet18_cifar10"),
        ("dqn", "rl_atari"),
        ("a2c", "rl_atari"),
        ("gpt2", "gpt2"),
        ("GPT2-XL", "gpt2_xl"),
        ("vgg19", "vgg16"),
        ("inception4", "resnet50"),
        ("ResNet-50", "resnet50"),
        ("bert", "bert_base"),
        ("word2vec", None),
    ],
)
def test_model_names_normalised(name: str, zoo: str | None) -> None:
    assert match_model(name) == zoo


def test_unmatched_models_counted_and_rules(tmp_path: Path) -> None:
    """Unknown names are listed; each rule decides what such rows become."""
    rows = "".join(f"{k},8,{k},10,word2vec,100\n" for k in range(40))
    path = write(
        tmp_path, "t.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration\n" + rows
    )
    cluster = Cluster.uniform(2, 8, 20.0, 1.0)
    for rule in UNNAMED_RULES:
        loaded = load_trace(path, cluster, unnamed=rule, seed=5)
        assert loaded.unmatched_models == {"word2vec": 40} and loaded.unnamed_jobs == 40
        tps = {job.parallelism.tp for job in loaded.instance.jobs}
        models = {job.features["model"] for job in loaded.instance.jobs}
        if rule == "data-parallel":
            assert models == {"resnet50"} and tps == {1}
        elif rule == "zoo-data-parallel":
            assert tps == {1} and len(models) > 1
        else:
            assert tps > {1}  # the zoo's transformers get tensor groups at 8 GPUs
    with pytest.raises(InputError, match="unnamed: expected one of"):
        load_trace(path, cluster, unnamed="random")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\ufeffsubmit_time,duration,num_gpus\n0,5,1\n", None),  # a byte-order mark
        ("submit_time,duration,num_gpus\n\n\n0,5,1\n0,x,1\n", r":5: duration: not a number"),
        ("submit_time,duration,num_gpus\n0,5\n", r":2: 2 fields, the header has 3"),
        ("submit_time,duration,num_gpus\n0,5,1,9\n", r":2: 4 fields, the header has 3"),
        ("submit_time,duration,num_gpus\n0,nan,1\n", r":2: duration: not finite"),
        ("submit_time,duration,num_gpus\n0,1e308,1\n", r":2: duration: 1e308 is beyond"),
        ("submit_time,duration,num_gpus\n0,5,2.5\n", r":2: num_gpus: expected a whole number"),
        ("submit_time,duration,num_gpus\n0,5,1e300\n", r":2: num_gpus: expected a whole number"),
        (
            "job_id,num_gpu,submit_time,iterations,model_name,duration\n0,1,0,2.5,vgg16,5\n",
            r":2: iterations: expected a whole number",
        ),
        (
            "job_id,num_gpu,submit_time,iterations,model_name,duration\n0,1,0,0,vgg16,5\n",
            r":2: iterations: expected a whole number",
        ),
        (
            "job_id,num_gpu,submit_time,iterations,model_name,duration\n0,1,0,-7,vgg16,5\n",
            r":2: iterations: expected a whole number",
        ),
        (
            "job_id,num_gpu,submit_time,iterations,model_name,duration\n0,1,0,"
            + "9" * 400
            + ",vgg16,5\n",
            r":2: iterations: expected a whole number",
        ),
    ],
)
def test_hostile_csv_one_clear_error(tmp_path: Path, text: str, expected: str | None) -> None:
    path = write(tmp_path, "h.csv", text)
    if expected is None:
        assert load_trace(path, CLUSTER).instance.num_jobs == 1
        return
    with pytest.raises(InputError, match=expected):
        load_trace(path, CLUSTER)


def test_binary_and_folder_traces(tmp_path: Path) -> None:
    (tmp_path / "b.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    with pytest.raises(InputError, match=r"b\.csv: not UTF-8 text|b\.csv: not a CSV"):
        load_trace(tmp_path / "b.csv", CLUSTER)
    (tmp_path / "n.csv").write_bytes(b"submit_time,duration,num_gpus\n0,5\x00,1\n")
    with pytest.raises(InputError, match=r"n\.csv"):
        load_trace(tmp_path / "n.csv", CLUSTER)
    with pytest.raises(InputError, match="not a file"):
        load_trace(tmp_path, CLUSTER)


def test_stretched_jobs_counts_runs_over_twice_the_record(tmp_path: Path) -> None:
    """A job spread over servers runs longer than recorded; the count says how many."""
    from ddlsched.core.model import Schedule, ScheduledJob

    path = write(tmp_path, "s.csv", "submit_time,duration,num_gpus,model_name\n0,100,8,vgg16\n")
    cluster = Cluster.uniform(2, 4, 20.0, 0.1)
    job = load_trace(path, cluster).instance.jobs[0]
    spread = (0, 1) * 4
    ran = job.iterations * alpha(job, cluster, spread)
    assert ran > 200  # vgg16's 553 MB gradient over a 0.1 GB/s link
    instance = load_trace(path, cluster).instance
    assert stretched_jobs(instance, Schedule((ScheduledJob(job.id, 0.0, ran, spread),))) == 1
    assert stretched_jobs(instance, Schedule((ScheduledJob(job.id, 0.0, 100.0),))) == 0


def test_trace_on_a_mixed_cluster(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """On a mixed cluster each trace job gets its zoo model's per-type times (Gavel's
    slowdowns), its recorded duration stays its consolidated time on the fastest setting,
    and every policy's schedule passes the verifier."""
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched import simulate
    from ddlsched.core.zoo import GAVEL_MATCH, GAVEL_SLOWDOWN

    path = tmp_path / "t.csv"
    path.write_text("submit_time,duration,num_gpu\n0,100,1\n5,200,2\n7,50,4\n")
    cluster = Cluster((4, 4), 20.0, 1.0, server_types=("v100", "k80"))
    loaded = load_trace(path, cluster)
    k80, _, v100 = GAVEL_SLOWDOWN[GAVEL_MATCH["resnet50"][0]]  # the data-parallel rule's model
    for job in loaded.instance.jobs:
        times = dict(job.compute_times)
        assert times["k80"] / times["v100"] == pytest.approx(k80 / v100)
        assert times["v100"] == pytest.approx(job.compute_time)
    first = loaded.instance.jobs[0]  # 1 GPU, no edges: K * c(v100) is the recorded 100 s
    assert first.iterations * dict(first.compute_times)["v100"] == pytest.approx(100.0)
    for policy in ("fifo", "las", "gavel", "asrpt"):
        result = simulate(loaded.instance, policy)
        assert result.schedule is not None
        assert verify(loaded.instance, result.schedule).feasible


LOAD_TRACE = "submit_time,duration,num_gpus\n100,50,1\n104,30,2\n110,20.5,4\n112.5,10,1\n"
"""Four data-parallel rows on 4 x 4 GPUs, each job fitting one server (so its recorded
duration is its fastest time ``K alpha_min``), submitted at non-integral gaps."""


def test_offered_load_and_arrival_scaling_on_a_trace_whose_first_release_is_not_zero(
    tmp_path: Path,
) -> None:
    """Offered load counts from the first release, and scaling keeps the first release.

    The trace without its first row releases at 4, 10 and 12.5 (span 8.5); it
    needs 30 * 2 + 20.5 * 4 + 10 * 1 = 152 GPU-seconds at its fastest, on 16
    GPUs: load 152 / (16 * 8.5). Scaling arrivals by 2 gives releases 4, 7,
    8.25 and twice the load; asking for load 1.5 gives load 1.5, first
    release still 4.

    Catches the slips: the span taken as ``r_max`` (from time 0) instead of
    ``r_max - r_min``; releases scaled as ``r_i / factor`` (moving the first
    release too); the factor applied inverted.
    """
    from ddlsched.core.offered_load import at_load, offered_load, scale_arrivals

    trace = load_trace(write(tmp_path, "load.csv", LOAD_TRACE), CLUSTER).instance
    instance = trace.replace(jobs=trace.jobs[1:])
    assert [job.release for job in instance.jobs] == [4.0, 10.0, 12.5]
    load = 152.0 / (16 * 8.5)
    assert offered_load(instance) == pytest.approx(load, rel=1e-9)
    faster = scale_arrivals(instance, 2.0)
    assert [job.release for job in faster.jobs] == pytest.approx([4.0, 7.0, 8.25])
    assert offered_load(faster) == pytest.approx(2 * load, rel=1e-9)
    target, factor = at_load(instance, 1.5)
    assert factor == pytest.approx(1.5 / load)
    assert target.jobs[0].release == pytest.approx(4.0)
    assert offered_load(target) == pytest.approx(1.5, rel=1e-9)


@pytest.mark.parametrize(
    ("per_server", "expected_tp"), [(2, 2), (4, 4), (8, 8)], ids=["2-gpu", "4-gpu", "8-gpu"]
)
def test_tensor_groups_never_wider_than_a_server(
    tmp_path: Path, per_server: int, expected_tp: int
) -> None:
    """A trace job's tensor-parallel group fits one server: ``tp`` is the largest power
    of two dividing the GPUs, at most the model's ``max_tp`` (8 for Megatron) and at
    most a server's GPUs; its tensor edges join only workers of one group.

    An 8-GPU Megatron row on servers of 2, 4 and 8 GPUs: ``tp`` 2, 4, 8.

    Catches the slip: the server's size left out of the bound (then a 2-GPU
    server cluster gets tensor groups of 8, split across servers).
    """
    path = write(
        tmp_path, "tp.csv", "submit_time,duration,num_gpus,model_name\n0,100,8,megatron\n"
    )
    cluster = Cluster.uniform(8 // per_server, per_server, 20.0, 1.0)
    job = load_trace(path, cluster).instance.jobs[0]
    assert job.parallelism is not None
    assert (job.parallelism.dp, job.parallelism.pp, job.parallelism.tp) == (
        8 // expected_tp,
        1,
        expected_tp,
    )
    groups = [node // expected_tp for node in range(8)]
    heaviest = max(q for *_, q in job.edges)
    assert all(groups[u] == groups[v] for u, v, q in job.edges if q == heaviest)


def test_recorded_duration_is_read_on_the_fastest_types_bandwidth(tmp_path: Path) -> None:
    """On a mixed cluster a recorded duration ``D`` is the job's consolidated time with
    the zoo's (V100) compute and the **fastest** intra-server bandwidth of the
    cluster's types: ``K * (c + sum_e q_e / B_fastest) = D``, recomputed edge by edge.

    A 4-GPU data-parallel job (all its edges inside one server) on a V100
    server (default ``B_intra`` 20) and a K80 server given 40 GB/s: the
    fastest is the K80's 40, neither the first server's nor ``bandwidth_intra``.
    Without iterations in the file, ``K = round(D / alpha_packed)`` with the
    zoo's unscaled times, so the times are scaled by less than ``1 / (2K)``.

    Catches the slips: reading ``D`` with the slowest type's bandwidth,
    ``bandwidth_intra`` or the typed cluster's own servers; deriving the count
    as anything but ``round(D / alpha_packed)``.
    """
    from ddlsched.core.graphs import build_job_graph
    from ddlsched.core.model import Parallelism
    from ddlsched.core.zoo import ZOO

    path = write(tmp_path, "bw.csv", "submit_time,duration,num_gpus\n0,3600,4\n")
    cluster = Cluster((4, 4), 20.0, 1.0, server_types=("v100", "k80"), type_bandwidth={"k80": 40})
    job = load_trace(path, cluster).instance.jobs[0]
    assert job.edges and job.parallelism == Parallelism(dp=4)
    per_iteration = job.compute_time + sum(q for *_, q in job.edges) / 40.0
    assert job.iterations * per_iteration == pytest.approx(3600.0, rel=1e-12)
    compute, edges = build_job_graph(ZOO["resnet50"], Parallelism(dp=4))
    unscaled = compute + sum(q for *_, q in edges) / 40.0
    assert job.iterations == max(1, round(3600.0 / unscaled))
    assert abs(job.compute_time / compute - 1) <= 0.5 / job.iterations + 1e-12


LEFT_OUT = (
    "submit_time,duration,num_gpus\n"
    "0,10,1\n"  # line 2: kept
    "5,0,1\n"  # line 3: skipped, duration 0
    "6,10,999\n"  # line 4: dropped, 999 GPUs on 16
    "7,-3,2\n"  # line 5: skipped, negative duration
    "8,10,1\n"  # line 6: kept
    "9,0,4\n"  # line 7: skipped, the fourth left out (not among the first three)
    "10,10,1\n"  # line 8: kept
)
"""Seven rows: three jobs and four rows left out, each for a reason read off its line."""


def test_left_out_rows_are_named_by_line_column_and_reason(tmp_path: Path) -> None:
    """Every row that did not become a job is named: its line, the column holding the
    reason, the value and why, in file order; the counts agree with the names.

    Guards against a report of counts alone ("0 too wide, 0 invalid rows skipped"), which
    leaves the reader to hunt for the rows.
    """
    loaded = load_trace(write(tmp_path, "l.csv", LEFT_OUT), CLUSTER)
    assert loaded.instance.num_jobs == 3
    assert (loaded.rows_read, loaded.skipped_invalid, loaded.dropped_wide) == (7, 3, 1)
    assert [(r.line, r.column, r.value, r.kind) for r in loaded.left_out] == [
        (3, "duration", "0", "invalid"),
        (4, "num_gpus", "999", "too wide"),
        (5, "duration", "-3", "invalid"),
        (7, "duration", "0", "invalid"),
    ]
    assert loaded.left_out[1].message("l.csv") == (
        "l.csv:4: num_gpus: 999 GPUs, the cluster has 16 (job dropped)"
    )
    assert (
        loaded.left_out[2].message("l.csv") == "l.csv:5: duration: -3 s is not > 0 (row skipped)"
    )


def _simulate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", "simulate", "--servers", "4",
         "--gpus-per-server", "4", "--policy", "fifo", *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_simulate_names_the_first_three_left_out_rows(tmp_path: Path) -> None:
    """``simulate`` prints a summary of the rows left out and the first three by line
    (``FILE:LINE: COLUMN: why``), and ``--json`` lists the same three with the counts."""
    path = write(tmp_path, "l.csv", LEFT_OUT)
    text = _simulate("--trace", str(path))
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    start = lines.index("  4 of 7 rows left out (1 too wide, 3 invalid); the first 3:")
    assert lines[start + 1 : start + 4] == [
        f"    {path}:3: duration: 0 s is not > 0 (row skipped)",
        f"    {path}:4: num_gpus: 999 GPUs, the cluster has 16 (job dropped)",
        f"    {path}:5: duration: -3 s is not > 0 (row skipped)",
    ]
    assert ":7:" not in text.stdout
    doc = json.loads(_simulate("--trace", str(path), "--json").stdout)
    assert (doc["rows_read"], doc["rows_skipped"], doc["jobs_dropped_too_wide"]) == (7, 3, 1)
    assert [(r["line"], r["column"], r["value"]) for r in doc["rows_left_out_first"]] == [
        (3, "duration", "0"),
        (4, "num_gpus", "999"),
        (5, "duration", "-3"),
    ]


def test_counts_describe_the_rows_up_to_the_limit(tmp_path: Path) -> None:
    """When ``limit`` leaves jobs out, counts cover the rows read up to the last job kept
    in submit order, not the whole file: the first 2 jobs (submits 0 and 8) span lines
    2-6, of which 2 were skipped and 1 dropped; line 7 (submit 9) was never reached. A
    limit that keeps every job keeps every count.

    Guards against the regression where ``--limit 1000`` on Philly reported 82,247
    jobs without a known model for a 1,000-job run.
    """
    path = write(tmp_path, "l.csv", LEFT_OUT)
    loaded = load_trace(path, CLUSTER, limit=1)
    assert loaded.instance.num_jobs == 1 and loaded.unnamed_jobs == 1
    assert (loaded.rows_read, loaded.skipped_invalid, loaded.dropped_wide) == (1, 0, 0)
    two = load_trace(path, CLUSTER, limit=2)
    assert (two.rows_read, two.skipped_invalid, two.dropped_wide) == (5, 2, 1)
    assert [r.line for r in two.left_out] == [3, 4, 5]
    assert two.unnamed_jobs == 2
    three = load_trace(path, CLUSTER, limit=3)
    assert (three.rows_read, three.skipped_invalid, three.dropped_wide) == (7, 3, 1)
    rows = "".join(f"{k},1,{k},10,word2vec,5\n" for k in range(10))
    named = write(
        tmp_path, "n.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration\n" + rows
    )
    few = load_trace(named, CLUSTER, limit=3)
    assert few.unnamed_jobs == 3 and few.unmatched_models == {"word2vec": 3}
    every = load_trace(named, CLUSTER)
    assert every.unnamed_jobs == 10 and every.unmatched_models == {"word2vec": 10}
    # The limit keeps the models a job gets without it (same seed, same draws).
    assert [j.features["model"] for j in few.instance.jobs] == [
        j.features["model"] for j in every.instance.jobs[:3]
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("submit,duration,gpus\n-5,10,1\n0,10,1\n", r"h\.csv:2: submit: negative submit time -5"),
        ("submit_time,duration,num_gpus\n0,10,1\n-0.5,10,1\n", r":3: submit_time: negative"),
        (
            "job_id,num_gpu,submit_time,iterations,model_name,duration\n0,1,-1,5,vgg16,5\n",
            r":2: submit_time: negative submit time -1",
        ),
        (
            "submit,duration,gpus,submit\n0,10,1,3\n",
            r"h\.csv:1: column 'submit' appears twice \(columns 1 and 4\)",
        ),
        (
            "submit,duration,gpus, Submit\n0,10,1,3\n",
            r"h\.csv:1: column 'Submit' appears twice \(columns 1 and 4\)",
        ),
        (
            "\ufeffsubmit,duration,gpus,duration\n0,10,1,3\n",
            r"h\.csv:1: column 'duration' appears twice \(columns 2 and 4\)",
        ),
        (
            "timestamp,duration,num_gpus,cluster,cluster\n2017-10-09 07:01:55,5,1,a,b\n",
            r":1: column 'cluster' appears twice",
        ),
    ],
    ids=["negative", "negative-later", "negative-muri", "twice", "case", "bom", "philly"],
)
def test_negative_submits_and_repeated_columns_refused(
    tmp_path: Path, text: str, expected: str
) -> None:
    """A negative submit time and a column named twice are refused, naming the line and
    column, rather than accepted silently with one of the two columns read."""
    with pytest.raises(InputError, match=expected):
        load_trace(write(tmp_path, "h.csv", text), CLUSTER)


def test_blank_column_names_may_repeat(tmp_path: Path) -> None:
    """Unnamed columns (trailing commas) are never read, so two of them are no conflict."""
    path = write(tmp_path, "b.csv", "submit,duration,gpus,,\n0,10,1,,\n")
    assert load_trace(path, CLUSTER).instance.num_jobs == 1


def test_a_field_mapped_twice_is_refused() -> None:
    """``--columns submit=a,submit=b`` names the field and both columns, rather than using
    the last one silently; mapping it twice to the same column is refused too."""
    with pytest.raises(InputError, match=r"field 'submit' mapped twice \(submit=a and submit=b\)"):
        parse_columns("submit=a,submit=b")
    with pytest.raises(InputError, match="field 'gpus' mapped twice"):
        parse_columns("gpus=n, gpus=n")
    assert parse_columns("id=name,model=name") == {"id": "name", "model": "name"}


def test_time_zones_in_philly_timestamps_are_kept(tmp_path: Path) -> None:
    """A timestamp with an offset is that moment (replacing the offset by UTC would make a
    07:01:55+02:00 job come two hours late); naive timestamps read as UTC; a file mixing
    the two is refused, naming the line of the first time of the other kind."""
    text = "timestamp,duration,num_gpus\n2017-10-09 07:00:00+02:00,5,1\n2017-10-09 05:30:00Z,5,1\n"
    jobs = load_trace(write(tmp_path, "z.csv", text), CLUSTER).instance.jobs
    assert [(job.id, job.release) for job in jobs] == [("t2", 0.0), ("t3", 1800.0)]
    naive = "timestamp,duration,num_gpus\n2017-10-09 05:00:00,5,1\n2017-10-09 05:30:00,5,1\n"
    jobs = load_trace(write(tmp_path, "n.csv", naive), CLUSTER).instance.jobs
    assert [job.release for job in jobs] == [0.0, 1800.0]
    mixed = text.replace("05:30:00Z", "05:30:00")
    with pytest.raises(InputError, match=r"z\.csv:3: timestamp: .* has no time zone.*line 2"):
        load_trace(write(tmp_path, "z.csv", mixed), CLUSTER)


@pytest.mark.parametrize(
    ("changes", "error", "expected"),
    [
        ({"cluster": 4}, TypeError, "cluster: expected a Cluster"),
        ({"limit": "5"}, TypeError, "limit: expected a whole number, got str"),
        ({"limit": 0}, ValueError, "limit: expected a whole number >= 1, got 0"),
        ({"limit": True}, TypeError, "limit: expected a whole number, got bool"),
        ({"seed": -1}, ValueError, "seed: expected a whole number >= 0, got -1"),
        ({"columns": "submit=a"}, TypeError, "columns: expected a mapping.*parse_columns"),
        ({"path": 3}, TypeError, "path: expected a file name"),
    ],
)
def test_load_trace_arguments_checked(
    tmp_path: Path, changes: dict[str, object], error: type[Exception], expected: str
) -> None:
    """Arguments of the wrong type or range name the argument and what was expected, not an
    AttributeError, NumPy's or slicing's messages, or an empty limit read as 'no job'."""
    arguments: dict[str, object] = {
        "path": write(tmp_path, "m.csv", "submit,duration,gpus\n0,10,1\n"),
        "cluster": CLUSTER,
    }
    with pytest.raises(error, match=expected):
        load_trace(**(arguments | changes))  # type: ignore[arg-type]


SAMPLE_TRACE = (
    "submit_time,duration,num_gpus\n"
    + "".join(f"{10 * k + (k % 3)},{37.5 + 13.25 * k},{1 + k % 3}\n" for k in range(12))
    + "200,-1,1\n210,50,64\n"
)
"""Twelve usable jobs with real durations, then a row without a duration and one too wide."""


def _sample_lines(instance: Instance) -> list[int]:
    """The trace line each job came from (jobs are named ``t<line>``)."""
    return [int(job.id.removeprefix("t")) for job in instance.jobs]


def test_a_consecutive_trace_sample_keeps_each_jobs_row(tmp_path: Path) -> None:
    """``trace_sample`` takes ``jobs`` consecutive usable rows (by submit time), each job
    with its row's GPU count and recorded duration (iterations times the packed
    per-iteration time), released relative to the first; the same seed gives the same
    jobs and another seed another window. Catches a window that skips rows, shifts the
    releases, or ignores the seed."""
    from ddlsched.core.traces import packed_mapping, trace_sample

    path = write(tmp_path, "t.csv", SAMPLE_TRACE)
    rows = {k + 2: (10 * k + (k % 3), 37.5 + 13.25 * k, 1 + k % 3) for k in range(12)}
    windows = set()
    for seed in range(8):
        instance = trace_sample(path, CLUSTER, 4, seed=seed)
        lines = _sample_lines(instance)
        assert lines == list(range(lines[0], lines[0] + 4)) and set(lines) <= set(rows)
        first = rows[lines[0]][0]
        for job, line in zip(instance.jobs, lines, strict=True):
            submit, duration, gpus = rows[line]
            assert job.gpus == gpus and job.release == pytest.approx(submit - first)
            mapping = packed_mapping(job.gpus, CLUSTER)
            from ddlsched.core.alpha import alpha

            assert job.iterations * alpha(job, CLUSTER, mapping) == pytest.approx(duration)
        assert _sample_lines(trace_sample(path, CLUSTER, 4, seed=seed)) == lines
        windows.add(lines[0])
    assert len(windows) > 1


def test_a_sampled_trace_sample_draws_jobs_at_a_windows_times(tmp_path: Path) -> None:
    """``arrivals="sampled"`` draws distinct usable jobs from the whole trace, in submit
    order, released at the relative times of some window of consecutive submissions.
    Catches sampling with replacement, unusable rows drawn, or the sampled jobs' own
    (spread) times kept."""
    from ddlsched.core.traces import trace_sample

    path = write(tmp_path, "t.csv", SAMPLE_TRACE)
    submits = [10 * k + (k % 3) for k in range(12)]
    gaps = {tuple(s - submits[i] for s in submits[i : i + 5]) for i in range(8)}
    drawn = set()
    for seed in range(10):
        instance = trace_sample(path, CLUSTER, 5, seed=seed, arrivals="sampled")
        lines = _sample_lines(instance)
        assert len(set(lines)) == 5 and lines == sorted(lines) and max(lines) <= 13
        assert tuple(round(job.release) for job in instance.jobs) in gaps
        drawn.add(tuple(lines))
    assert len(drawn) > 1


@pytest.mark.parametrize(
    ("jobs", "arrivals", "expected"),
    [
        (13, "consecutive", r"12 usable jobs on this cluster, 13 asked"),
        (0, "consecutive", r"jobs: expected a whole number >= 1, got 0"),
        (3, "poisson", r"arrivals: expected one of consecutive, sampled, got 'poisson'"),
    ],
)
def test_a_trace_sample_refuses_what_it_cannot_give(
    tmp_path: Path, jobs: int, arrivals: str, expected: str
) -> None:
    """More jobs than the trace has usable rows, no job, or an unknown arrival rule is one
    input error naming it."""
    from ddlsched.core.traces import trace_sample

    path = write(tmp_path, "t.csv", SAMPLE_TRACE)
    with pytest.raises(InputError, match=expected):
        trace_sample(path, CLUSTER, jobs, arrivals=arrivals)


def test_generate_from_a_trace_writes_real_jobs_and_exact_answers_them(tmp_path: Path) -> None:
    """``generate --from-trace`` writes the sample (options that shape drawn jobs are
    refused with it, and its own options without it), and ``solve --method exact``
    answers the real durations (no slot grid refusal) with a schedule the verifier
    accepts. Catches the command ignoring the trace, or exact refusing real jobs."""
    from ddlsched.proofs_checks.verifier import verify

    from ddlsched.cli import main
    from ddlsched.core.io import read_instance, read_schedule
    from ddlsched.core.traces import trace_sample

    path = write(tmp_path, "t.csv", SAMPLE_TRACE)
    out, schedule = tmp_path / "real.json", tmp_path / "s.json"
    common = ["generate", "--from-trace", str(path), "--jobs", "4", "--servers", "1"]
    assert main([*common, "--gpus-per-server", "4", "--seed", "3", "--out", str(out)]) == 0
    instance = read_instance(out)
    same = trace_sample(path, Cluster.uniform(1, 4, 20.0, 1.0), 4, seed=3)
    assert _sample_lines(instance) == _sample_lines(same)
    assert main([*common, "--integral", "--out", str(tmp_path / "x.json")]) == 2
    assert main(["generate", "--arrivals", "sampled", "--out", str(tmp_path / "y.json")]) == 2
    args = ["solve", str(out), "--method", "exact", "--out", str(schedule)]
    assert main(args) in (0, 1)
    assert verify(instance, read_schedule(schedule)).feasible


@pytest.mark.parametrize("arrivals", ["consecutive", "sampled"])
def test_a_trace_sample_of_every_usable_job_is_the_whole_trace(
    tmp_path: Path, arrivals: str
) -> None:
    """Asking for all 12 usable jobs (the only window is the last one, starting at the
    first row) gives every usable row once, in submit order, each job with its row's GPU
    count and releases relative to the first submission; the unusable rows stay out.
    Catches a window start drawn from one window too few (numpy refuses an empty range
    when every usable job is asked)."""
    from ddlsched.core.traces import trace_sample

    path = write(tmp_path, "t.csv", SAMPLE_TRACE)
    rows = {k + 2: (10 * k + (k % 3), 1 + k % 3) for k in range(12)}
    instance = trace_sample(path, CLUSTER, 12, seed=3, arrivals=arrivals)
    assert _sample_lines(instance) == sorted(rows)
    for job, line in zip(instance.jobs, sorted(rows), strict=True):
        submit, gpus = rows[line]
        assert job.gpus == gpus and job.release == pytest.approx(submit)


def test_the_last_window_of_a_trace_can_be_sampled(tmp_path: Path) -> None:
    """Over seeds 0-39, windows of 4 consecutive usable jobs start only at the 9 possible
    rows and the last window (the trace's last 4 usable rows, lines 10-13) is among them,
    each job released relative to the window's first submission. Catches the window's
    start drawn from ``[0, usable - jobs)``, which never takes the last window."""
    from ddlsched.core.traces import trace_sample

    path = write(tmp_path, "t.csv", SAMPLE_TRACE)
    submits = {k + 2: 10 * k + (k % 3) for k in range(12)}
    firsts = set()
    for seed in range(40):
        lines = _sample_lines(trace_sample(path, CLUSTER, 4, seed=seed))
        firsts.add(lines[0])
        if lines[0] == 10:
            instance = trace_sample(path, CLUSTER, 4, seed=seed)
            assert lines == [10, 11, 12, 13]
            releases = [job.release for job in instance.jobs]
            assert releases == pytest.approx([submits[line] - submits[10] for line in lines])
    assert 10 in firsts and firsts <= set(range(2, 11))
