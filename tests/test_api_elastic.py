"""The elastic front door in Python: ``ddlsched.simulate_elastic`` and ``compare_elastic``."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ddlsched
from ddlsched.core.elastic import ElasticCluster, ElasticJob, ElasticWorkload
from ddlsched.provenance import git_revision, package_version
from tests.elastic.workloads import mixed_workload

JOB_FIELDS = {"name", "model", "arrival", "completion", "jct", "restarts", "gpu_seconds"}


@pytest.fixture(scope="module")
def mixed() -> ElasticWorkload:
    """Five short jobs of four models arriving within and across rounds, asking 1 to 8 GPUs:
    on two 4-GPU nodes they queue, and rigid ones span nodes."""
    return mixed_workload(5)


TWO_NODES = ElasticCluster(2, 4)
"""Two nodes of four GPUs: small enough that the jobs above compete."""


def test_a_lone_rigid_job_holds_its_gpus_from_its_first_round_to_completion() -> None:
    """Per-job figures against a hand-worked run: one job asking 4 GPUs arrives at 30 s, so
    under ``fifo`` it starts at the next round (60 s) and holds 4 GPUs until it completes.
    Its GPU-seconds are then 4 x (completion - 60), its JCT completion - 30, one start; the
    GPUs in use are 4 from 60 s to the end of its last round, then 0."""
    job = ElasticJob("solo", "cifar10", 30.0, 4, 512, 1)
    run = ddlsched.simulate_elastic(ElasticWorkload((job,)), "fifo", cluster=ElasticCluster(1, 4))
    (row,) = run.jobs
    assert run.verified
    assert row["arrival"] == 30.0 and row["jct"] == row["completion"] - 30.0
    assert row["restarts"] == 1
    assert row["gpu_seconds"] == pytest.approx(4 * (row["completion"] - 60.0), rel=1e-12)
    times, gpus = run.gpus_in_use()
    assert times[0] == 60.0 and set(gpus[:-1]) == {4} and gpus[-1] == 0
    assert times[-1] == 60.0 * math.ceil(row["completion"] / 60.0)


@pytest.mark.parametrize("policy", ["fifo", "las-pollux", "asrpt-elastic"])
def test_the_job_rows_add_up_to_the_summary(mixed: ElasticWorkload, policy: str) -> None:
    """``summary()`` is computed from ``.jobs``: the mean JCT is the mean of the rows' JCTs
    (each completion minus arrival), restarts and GPU-seconds are their totals, the
    makespan is the last completion; the run passes the independent check; the rows are
    flat records (one line to a ``pandas.DataFrame``). A job's restarts equal its placement
    changes counted from ``.rounds``; no round holds more GPUs than the cluster."""
    run = ddlsched.simulate_elastic(mixed, policy, cluster=TWO_NODES)
    summary = run.summary()
    rows = run.jobs
    assert summary["verified"] is True and run.violations == ()
    assert all(set(row) == JOB_FIELDS for row in rows)
    assert all(isinstance(v, str | int | float) for row in rows for v in row.values())
    jcts = [row["completion"] - row["arrival"] for row in rows]
    assert [row["jct"] for row in rows] == jcts
    assert summary["mean_jct"] == math.fsum(jcts) / len(jcts)
    assert summary["restarts"] == sum(row["restarts"] for row in rows)
    assert summary["gpu_seconds"] == pytest.approx(sum(row["gpu_seconds"] for row in rows))
    assert summary["makespan"] == max(row["completion"] for row in rows)
    changes = dict.fromkeys((row["name"] for row in rows), 0)
    last: dict[str, object] = {}
    for record in run.rounds:
        assert record["gpus_in_use"] <= TWO_NODES.total_gpus
        for name, alloc in record["allocations"].items():
            changes[name] += last.get(name) != alloc["placement"]
        last = {name: alloc["placement"] for name, alloc in record["allocations"].items()}
    assert changes == {row["name"]: row["restarts"] for row in rows}


@given(
    limit=st.integers(1, 5),
    nodes=st.integers(1, 3),
    policy=st.sampled_from(["fifo", "las-pollux"]),
)
def test_gpu_seconds_never_exceed_the_gpus_in_use_over_time(
    mixed: ElasticWorkload, limit: int, nodes: int, policy: str
) -> None:
    """On any prefix of the workload and any cluster of 1-3 nodes, the jobs' GPU-seconds add
    up to at most the area under the GPUs-in-use curve (equal but for the ends of rounds in
    which jobs complete) and at most the cluster's GPUs times the last round's end; every
    run is checked."""
    cluster = ElasticCluster(nodes, 4) if nodes > 1 else ElasticCluster(1, 8)
    run = ddlsched.simulate_elastic(mixed, policy, cluster=cluster, limit=limit)
    assert run.verified and len(run.jobs) == limit
    times, gpus = run.gpus_in_use()
    area = sum(g * (b - a) for g, a, b in zip(gpus, times, times[1:], strict=False))
    held = run.summary()["gpu_seconds"]
    assert 0 < held <= area * (1 + 1e-12)
    assert area <= cluster.total_gpus * times[-1]
    unused = sum(
        record["allocations"][row["name"]]["gpus"] * (record["time"] + 60.0 - row["completion"])
        for row in run.jobs
        for record in run.rounds
        if row["name"] in record["allocations"]
        and record["time"] < row["completion"]
        and record["time"] + 60.0 > row["completion"]
    )
    assert held + unused == pytest.approx(area, rel=1e-9)


@pytest.mark.parametrize("policy", ["sia", "typed-greedy", "fifo"])
def test_typed_runs_name_each_allocation_s_gpu_type(mixed: ElasticWorkload, policy: str) -> None:
    """On a mixed cluster (one V100, one P100, one K80 node of 4 GPUs) every run passes the
    independent check, each round's allocation names the type of every node it holds (read
    here from the cluster's list of node types), no type holds more GPUs than its nodes in
    any round, and the summary and settings name the types."""
    nodes = ("v100", "p100", "k80")
    cluster = ElasticCluster(3, 4, nodes)
    run = ddlsched.simulate_elastic(mixed, policy, cluster=cluster)
    assert run.verified, run.violations
    assert run.summary()["cluster"] == "3 x 4 (v100 x1, p100 x1, k80 x1)"
    assert tuple(run.settings()["cluster"]["node_types"]) == nodes
    for record in run.rounds:
        held = dict.fromkeys(nodes, 0)
        for alloc in record["allocations"].values():
            assert {nodes[node] for node, _ in alloc["placement"]} == {alloc["gpu_type"]}
            held[alloc["gpu_type"]] += alloc["gpus"]
        assert max(held.values()) <= 4


def test_the_file_holds_every_job_round_and_setting(
    mixed: ElasticWorkload, tmp_path: Path
) -> None:
    """``write`` saves the run as one JSON document whose jobs' mean JCT is the summary's
    exactly, with the code and settings that produced it and one entry per round."""
    run = ddlsched.simulate_elastic(mixed, "fifo", cluster=TWO_NODES, limit=4)
    path = tmp_path / "run.json"
    run.write(str(path))
    saved = json.loads(path.read_text())
    assert saved["format"] == "ddlsched.elastic-run/1"
    assert saved["producer"] == {"version": package_version(), "revision": git_revision()}
    jcts = [job["completion"] - job["arrival"] for job in saved["jobs"]]
    assert math.fsum(jcts) / len(jcts) == saved["summary"]["mean_jct"] == run.summary()["mean_jct"]
    assert saved["settings"]["policy"] == "fifo" and saved["settings"]["jobs"] == 4
    assert saved["settings"]["cluster"]["num_nodes"] == 2
    assert saved["settings"]["round_length"] == 60.0 and saved["settings"]["restart_time"] == 30.0
    assert len(saved["rounds"]) == len(run.result.records)
    assert all(
        "gpu_type" not in alloc for r in saved["rounds"] for alloc in r["allocations"].values()
    )


def test_the_same_run_writes_the_same_bytes(mixed: ElasticWorkload, tmp_path: Path) -> None:
    """Two runs of the same policy on the same workload and cluster write identical files:
    the wall-clock time per round, which differs from run to run, is left out."""
    for name in ("first.json", "second.json"):
        run = ddlsched.simulate_elastic(mixed, "las-pollux", cluster=TWO_NODES, limit=4)
        run.write(str(tmp_path / name))
    first = (tmp_path / "first.json").read_bytes()
    assert first == (tmp_path / "second.json").read_bytes()
    assert b"median_decision_s" not in first


def test_an_interrupted_write_leaves_the_previous_file_whole(
    mixed: ElasticWorkload, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the file is being written (here: at the flush to disk) leaves the file
    that was there untouched and no temporary file beside it; a first write interrupted
    leaves no file at all."""
    run = ddlsched.simulate_elastic(mixed, "fifo", cluster=TWO_NODES, limit=2)
    kept = tmp_path / "kept.json"
    kept.write_text("previous\n")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    for path in (kept, tmp_path / "new.json"):
        with pytest.raises(KeyboardInterrupt):
            run.write(str(path))
    assert kept.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]


def test_compare_runs_each_policy_as_simulate_does(mixed: ElasticWorkload) -> None:
    """``compare_elastic`` gives one row per policy, in the order asked, equal on every
    deterministic figure to a separate ``simulate_elastic`` run of that policy; it reports
    progress after each policy."""
    names = ["las-pollux", "fifo"]
    seen: list[tuple[int, int]] = []
    report = ddlsched.compare_elastic(
        mixed, names, cluster=TWO_NODES, limit=4, progress=lambda *done: seen.append(done)
    )
    assert seen == [(1, 2), (2, 2)] and report.interrupted is False
    rows = report.rows()
    assert [row["policy"] for row in rows] == names
    for row in rows:
        alone = ddlsched.simulate_elastic(mixed, row["policy"], cluster=TWO_NODES, limit=4)
        summary = alone.summary()
        assert {key: summary[key] for key in row if key != "policy"} == {
            key: value for key, value in row.items() if key != "policy"
        }
    assert report.summary()["settings"]["jobs"] == 4


def test_a_policy_object_runs_and_a_bad_one_is_refused(mixed: ElasticWorkload) -> None:
    """Your own policy object runs like a named one (same figures as the registry's
    ``fifo`` when it is that policy); an object without ``allocate`` is a TypeError, and
    one that over-fills a node a ValueError naming the round and node."""
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES, Allocation

    own = ddlsched.simulate_elastic(mixed, ELASTIC_POLICIES["fifo"](), cluster=TWO_NODES)
    named = ddlsched.simulate_elastic(mixed, "fifo", cluster=TWO_NODES)
    assert own.jobs == named.jobs
    with pytest.raises(TypeError, match="policy: expected a name or an object"):
        ddlsched.simulate_elastic(mixed, object(), cluster=TWO_NODES)

    class Greedy:
        name = "greedy"

        def allocate(self, state: object) -> dict[str, Allocation]:
            jobs = state.jobs  # type: ignore[attr-defined]
            return {job.job.name: Allocation(((0, 4),), 32) for job in jobs}

    with pytest.raises(ValueError, match="round at 60 s: node 0 holds 12 GPUs"):
        ddlsched.simulate_elastic(mixed, Greedy(), cluster=TWO_NODES)


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"policy": "asrpt"}, ValueError, "unknown 'asrpt'"),
        ({"limit": 0}, ValueError, "limit: expected a whole number >= 1, got 0"),
        ({"limit": True}, ValueError, "limit: expected a whole number >= 1, got True"),
        ({"limit": 2.0}, ValueError, "limit: expected a whole number >= 1, got 2.0"),
        ({"cluster": (2, 4)}, TypeError, "cluster: expected ElasticCluster, got tuple"),
        ({"params": {"round_length": 30}}, TypeError, "params: expected ElasticSimParams"),
        ({"workload": 6}, TypeError, "workload: expected an ElasticWorkload or a Pollux"),
    ],
)
def test_bad_arguments_are_one_clear_error(
    mixed: ElasticWorkload, arguments: dict, error: type, message: str
) -> None:
    """Each bad argument is refused before any simulation, naming it and its value."""
    call = {"workload": mixed, "policy": "fifo", **arguments}
    with pytest.raises(error, match=message):
        ddlsched.simulate_elastic(call.pop("workload"), call.pop("policy"), **call)


@pytest.mark.parametrize(
    ("policies", "message"),
    [
        ([], "policies: expected a non-empty list"),
        ("fifo", "policies: expected a non-empty list"),
        (["fifo", "fifo"], "policies: fifo named twice"),
        (["fifo", "srpt"], "unknown 'srpt'"),
        ({"progress": "yes"}, "progress: expected a callable"),
    ],
)
def test_bad_policy_lists_are_refused(
    mixed: ElasticWorkload, policies: object, message: str
) -> None:
    """``compare_elastic`` refuses an empty list, a bare string (read letter by letter
    otherwise), a repeated name, an unknown one and a progress that cannot be called,
    before running anything."""
    arguments = policies if isinstance(policies, dict) else {"policies": policies}
    with pytest.raises((ValueError, TypeError), match=message):
        ddlsched.compare_elastic(mixed, **arguments)


def test_a_shipped_workload_name_is_read_and_kept_in_the_settings() -> None:
    """``simulate_elastic("workload-6.csv", limit=N)`` reads the shipped Pollux workload,
    keeps its first N jobs by submission and records the file it read; the front door
    exports the types and settings it takes."""
    run = ddlsched.simulate_elastic("workload-6.csv", "fifo", limit=3)
    full = ddlsched.load_pollux_workload("workload-6.csv")
    assert [row["name"] for row in run.jobs] == [job.name for job in full.jobs[:3]]
    assert run.settings()["workload"].endswith("workload-6.csv")
    assert run.result.params == ddlsched.ElasticSimParams()
    assert isinstance(run, ddlsched.ElasticRun)


def test_percentiles_are_numpy_s_of_the_job_rows(mixed: ElasticWorkload) -> None:
    """``p50_jct``, ``p95_jct`` and ``p99_jct`` are ``numpy.percentile`` (linear) of the rows'
    JCTs at 50, 95 and 99, each at its own level: on these five jobs the two longest JCTs
    differ, so p95 and p99 differ too."""
    import numpy as np

    run = ddlsched.simulate_elastic(mixed, "fifo", cluster=TWO_NODES)
    jcts = sorted(row["jct"] for row in run.jobs)
    assert jcts[-1] > jcts[-2]
    summary = run.summary()
    for level in (50, 95, 99):
        assert summary[f"p{level}_jct"] == float(np.percentile(jcts, level))
    assert summary["p50_jct"] == jcts[2]
    assert summary["p50_jct"] < summary["p95_jct"] < summary["p99_jct"] < jcts[-1]


def test_each_round_s_gpus_in_use_add_up_its_allocations(mixed: ElasticWorkload) -> None:
    """A round's ``gpus_in_use`` is the sum of its allocations' GPUs (not the number of
    jobs placed): on two 4-GPU nodes some round holds a job on more than one GPU, so the
    two differ; the step function of :meth:`gpus_in_use` shows the same counts."""
    run = ddlsched.simulate_elastic(mixed, "fifo", cluster=TWO_NODES)
    rounds = run.rounds
    for record in rounds:
        gpus = sum(alloc["gpus"] for alloc in record["allocations"].values())
        assert record["gpus_in_use"] == gpus
        assert gpus == sum(n for a in record["allocations"].values() for _, n in a["placement"])
    assert any(r["gpus_in_use"] > len(r["allocations"]) for r in rounds)
    times, gpus = run.gpus_in_use()
    steps = dict(zip(times, gpus, strict=True))
    assert all(steps[r["time"]] == r["gpus_in_use"] for r in rounds)


def test_gpu_seconds_follow_the_round_length_asked() -> None:
    """With 30 s rounds a lone job asking 4 GPUs (several rounds' work), arriving at 15 s,
    starts at the next round (30 s) and holds 4 GPUs until it completes: 4 x (completion -
    30) GPU-seconds, whatever the default round length."""
    from ddlsched.algorithms.elastic import ElasticSimParams

    job = ElasticJob("solo", "cifar10", 15.0, 4, 512, 4)
    params = ElasticSimParams(round_length=30.0, restart_time=10.0)
    run = ddlsched.simulate_elastic(
        ElasticWorkload((job,)), "fifo", cluster=ElasticCluster(1, 4), params=params
    )
    (row,) = run.jobs
    assert run.verified and run.rounds[0]["time"] == 30.0 and len(run.rounds) > 2
    assert row["gpu_seconds"] == pytest.approx(4 * (row["completion"] - 30.0), rel=1e-12)
    assert run.gpus_in_use()[0][-1] == 30.0 * math.ceil(row["completion"] / 30.0)


def test_compare_runs_with_the_settings_given(mixed: ElasticWorkload) -> None:
    """``compare_elastic`` with settings other than the defaults (30 s rounds, 5 s restarts)
    runs each policy with them: its rows equal ``simulate_elastic`` with the same settings,
    differ from the default settings' rows, and its settings say 30 s and 5 s."""
    from ddlsched.algorithms.elastic import ElasticSimParams

    params = ElasticSimParams(round_length=30.0, restart_time=5.0)
    report = ddlsched.compare_elastic(mixed, ["fifo"], cluster=TWO_NODES, params=params)
    (row,) = report.rows()
    alone = ddlsched.simulate_elastic(mixed, "fifo", cluster=TWO_NODES, params=params)
    assert alone.result.params == params == report.runs[0].result.params
    assert {key: alone.summary()[key] for key in row if key != "policy"} == {
        key: value for key, value in row.items() if key != "policy"
    }
    default = ddlsched.simulate_elastic(mixed, "fifo", cluster=TWO_NODES).summary()
    assert default["mean_jct"] != row["mean_jct"]
    settings = report.summary()["settings"]
    assert (settings["round_length"], settings["restart_time"]) == (30.0, 5.0)


def test_the_policy_names_are_the_registry_s() -> None:
    """``ddlsched.elastic.policy_names()`` is every policy of the registry in its order (what
    the docstring of ``ddlsched.elastic.simulate`` points to instead of a typed list); a list
    given is kept in its order."""
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES

    from ddlsched import elastic

    assert elastic.policy_names() == ELASTIC_POLICIES.names()
    assert "typed-greedy" in elastic.policy_names()
    assert elastic.policy_names(["fifo", "sia"]) == ("fifo", "sia")
    assert "policy_names" in (elastic.simulate.__doc__ or "")


def test_a_row_asking_more_gpus_than_a_job_can_hold_is_capped_with_a_warning(
    tmp_path: Path,
) -> None:
    """A Pollux workload row asking 100,000 replicas on the 64-GPU cluster is capped to the
    most GPUs one job can hold, with one warning naming the file, the field and the job, the
    same for every policy (the rigid ones used to cap it silently, the elastic ones to
    ignore it); a comparison warns once, not once per policy."""
    from ddlsched.core.elastic import AskedReplicasCapped, fit_to_cluster

    path = tmp_path / "w.csv"
    path.write_text(
        "name,time,application,num_replicas,batch_size\n"
        "huge,0,cifar10,100000,128\nsmall,30,cifar10,2,128\n"
    )
    for policy in ("fifo", "pollux"):
        with pytest.warns(AskedReplicasCapped) as caught:
            ddlsched.simulate_elastic(str(path), policy)
        assert len(caught) == 1
        message = str(caught[0].message)
        assert f"{path}: num_replicas: job 'huge' asks 100,000 GPUs" in message
        assert "capped to 64" in message
    with pytest.warns(AskedReplicasCapped) as caught:
        ddlsched.compare_elastic(str(path), ["fifo", "las-pollux"])
    assert len(caught) == 1
    typed = ElasticCluster.from_type_counts([("v100", 2), ("k80", 1)])
    workload = ddlsched.load_pollux_workload(path)
    with pytest.warns(AskedReplicasCapped, match="capped to 8"):
        fitted = fit_to_cluster(workload, typed, str(path))
    assert [job.asked_replicas for job in fitted.jobs] == [8, 2]
