"""``ddlsched.elastic``, the elastic product's front door: its runs, comparisons and sandwiches
against the simulator, the independent check and the bounds called directly."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from ddlsched.algorithms.elastic import ELASTIC_POLICIES, ElasticSimParams, simulate_elastic
from ddlsched.formulations.elastic_bounds import elastic_flow_bound
from ddlsched.proofs_checks.elastic import check_elastic

import ddlsched
from ddlsched import elastic
from ddlsched.core.elastic import ElasticCluster, ElasticWorkload, load_pollux_workload
from ddlsched.core.model import InputError

HEADER = "name,time,application,num_replicas,batch_size"

WRITTEN_ROWS = (
    "batch-a,0,cifar10,4,512",
    "batch-b,0,ncf,1,32768",
    "batch-c,0,cifar10,2,256",
    "spread-a,61.25,cifar10,8,2048",
    "spread-b,300.75,ncf,2,32768",
)
"""A workload the tests write: three jobs at once at time 0 (a batch arrival), then two
spread out at times that are not whole seconds nor round boundaries; asks of 1 to 8 GPUs,
so on two 4-GPU nodes jobs queue and a rigid 8-GPU job spans both nodes."""

SHIPPED = {
    "workload-2.csv": ElasticCluster(2, 4),
    "workload-3.csv": ElasticCluster(1, 8),
    "workload-7.csv": ElasticCluster(4, 2),
}
"""Shipped Pollux workloads (their first three jobs), each on a cluster of another shape."""

JOBS = 3

TYPED = ElasticCluster.from_type_counts([("v100", 1), ("k80", 1)], 4)
"""A node of V100s and one of K80s: a cluster the sandwich refuses."""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`WRITTEN_ROWS` as a Pollux workload file."""
    path = tmp_path_factory.mktemp("workload") / "written.csv"
    path.write_text("\n".join((HEADER, *WRITTEN_ROWS)) + "\n")
    return path


def _cases(written: Path) -> list[tuple[str, ElasticCluster, int | None]]:
    """Every workload of the family: a file, its cluster and how many jobs to take."""
    cases: list[tuple[str, ElasticCluster, int | None]] = [
        (name, cluster, JOBS) for name, cluster in SHIPPED.items()
    ]
    return [*cases, (str(written), ElasticCluster(2, 4), None)]


def _direct(
    path: str, policy: str, cluster: ElasticCluster, limit: int | None, params: ElasticSimParams
) -> tuple[dict[str, float], list[str], float]:
    """The existing path, called piece by piece: the file read, cut, simulated, checked by the
    independent verifier and bounded, each by its own module."""
    workload = load_pollux_workload(path)
    workload = workload.replace(jobs=workload.jobs[:limit])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # asks capped to the cluster: said once by the façade
        from ddlsched.core.elastic import fit_to_cluster

        workload = fit_to_cluster(workload, cluster)
    result = simulate_elastic(workload, ELASTIC_POLICIES[policy](), cluster, params)
    bound = elastic_flow_bound(
        workload.jobs, cluster.total_gpus, params.round_length, params.restart_time
    )
    return dict(result.completion), check_elastic(result), bound.value


@pytest.mark.parametrize(
    "policy", [pytest.param("pollux", marks=pytest.mark.slow), "asrpt-elastic", "fifo"]
)
def test_simulate_gives_the_simulator_s_run_checked_and_bounded(
    written: Path, policy: str
) -> None:
    """On shipped workloads (three clusters) and a written one (batch and spread arrivals at
    non-integral times, 1 to 8 GPUs asked), ``elastic.simulate`` gives the completion times
    the simulator gives when called directly, the verifier accepts the run, the reported
    mean JCT is the mean of completion minus arrival, and the flow bound is the one
    :func:`elastic_flow_bound` computes and no more than the run's total JCT."""
    params = ElasticSimParams()
    for path, cluster, limit in _cases(written):
        run = elastic.simulate(path, policy, cluster=cluster, limit=limit)
        completion, violations, bound = _direct(path, policy, cluster, limit, params)
        assert violations == [] and run.verified, path
        assert dict(run.result.completion) == completion, path
        arrivals = {job.name: job.submit_time for job in run.result.workload.jobs}
        jcts = [completion[name] - arrivals[name] for name in completion]
        summary = run.summary()
        assert summary["mean_jct"] == pytest.approx(math.fsum(jcts) / len(jcts), rel=1e-12)
        assert summary["flow_lower_bound"] == bound <= math.fsum(jcts) * (1 + 1e-9)
        assert summary["jobs"] == (limit or len(WRITTEN_ROWS))


def test_settings_and_policy_objects_reach_the_simulator(written: Path) -> None:
    """``params`` (30 s rounds, 5 s restarts) reaches the simulator: the run equals the
    simulator's with them, and differs from the default's; a policy object is run as given."""
    params = ElasticSimParams(round_length=30.0, restart_time=5.0)
    cluster = ElasticCluster(2, 4)
    run = elastic.simulate(written, "fifo", cluster=cluster, params=params)
    completion, violations, _ = _direct(str(written), "fifo", cluster, None, params)
    assert run.verified and violations == []
    assert dict(run.result.completion) == completion
    default = elastic.simulate(written, "fifo", cluster=cluster)
    assert dict(default.result.completion) != completion
    own = elastic.simulate(written, ELASTIC_POLICIES["fifo"](), cluster=cluster, params=params)
    assert dict(own.result.completion) == completion


def test_compare_rows_are_the_separate_runs(written: Path) -> None:
    """``elastic.compare`` gives one row per policy, in the order asked, each equal on every
    figure but the clock to ``elastic.simulate`` of that policy alone; ``progress`` sees
    each policy done."""
    policies = ["asrpt-elastic", "fifo", "las-pollux"]
    cluster = ElasticCluster(2, 4)
    seen: list[tuple[int, int]] = []
    report = elastic.compare(
        written, policies, cluster=cluster, progress=lambda *p: seen.append(p)
    )
    assert [row["policy"] for row in report.rows()] == policies
    assert seen == [(1, 3), (2, 3), (3, 3)] and not report.interrupted
    for row, policy in zip(report.rows(), policies, strict=True):
        alone = elastic.simulate(written, policy, cluster=cluster).summary()
        assert row == {"policy": policy, **{key: alone[key] for key in row if key != "policy"}}


@pytest.mark.parametrize(("path", "cluster"), list(SHIPPED.items()))
def test_sandwich_brackets_every_checked_run(path: str, cluster: ElasticCluster) -> None:
    """``elastic.sandwich``'s lower end is the larger of the two bounds and at most every
    policy's total JCT, each run separately by ``elastic.simulate`` and accepted by the
    verifier; its upper end is the least of those totals, the offline schedules' included,
    and equals the experiment's sandwich called directly."""
    from ddlsched.experiments.elastic import elastic_sandwich

    policies = ["pollux", "fifo"]
    pinned = elastic.sandwich(path, policies, cluster=cluster, limit=JOBS, lagrangian_steps=20)
    workload = elastic.load_workload(path, JOBS)
    assert pinned.lower == max(pinned.bound.value, pinned.lagrangian) > 0
    for policy in policies:
        run = elastic.simulate(workload, policy, cluster=cluster)
        total = math.fsum(row["jct"] for row in run.jobs)
        assert run.verified and pinned.totals[policy] == total
        assert pinned.lower <= total * (1 + 1e-9)
    assert set(pinned.totals) == {*policies, "srpt-ceiling", "marginal-ceiling"}
    assert pinned.upper == min(pinned.totals.values()) >= pinned.lower
    assert pinned.failed == ()
    direct = elastic_sandwich(
        workload, cluster, ElasticSimParams(), policies, None, None, lagrangian_steps=20
    )
    assert direct.to_dict() == pinned.to_dict()


def test_a_sandwich_of_one_lone_job_holds_its_run(written: Path) -> None:
    """A lone job asking 4 GPUs at 0 s on one 4-GPU node under ``fifo``: it starts in the
    first round, so the run's JCT is its completion, which the upper end equals (the only
    schedule run) and the lower end does not exceed; ``progress`` sees the one run."""
    path = written.parent / "lone.csv"
    path.write_text(f"{HEADER}\nlone,0,cifar10,4,512\n")
    seen: list[tuple[int, int]] = []
    pinned = elastic.sandwich(
        path,
        ["fifo"],
        offline=(),
        cluster=ElasticCluster(1, 4),
        progress=lambda *p: seen.append(p),
    )
    run = elastic.simulate(path, "fifo", cluster=ElasticCluster(1, 4))
    assert seen == [(1, 1)] and pinned.upper_method == "fifo" == pinned.best_online
    assert pinned.upper == run.result.completion["lone"] == run.jobs[0]["jct"]
    assert 0 < pinned.lower <= pinned.upper


def test_a_sandwich_caps_an_ask_beyond_the_cluster_once(written: Path) -> None:
    """On one 4-GPU node the written workload's 8-GPU ask is capped to 4 for every run of a
    sandwich, with one warning naming the job, not one per run."""
    from ddlsched.core.elastic import AskedReplicasCapped

    with pytest.warns(AskedReplicasCapped) as caught:
        pinned = elastic.sandwich(
            written,
            ["fifo", "las-pollux"],
            offline=["srpt-ceiling"],
            cluster=ElasticCluster(1, 4),
            lagrangian_steps=0,
        )
    assert len(caught) == 1 and "job 'spread-a' asks 8 GPUs" in str(caught[0].message)
    assert len(pinned.totals) == 3 and pinned.lower <= pinned.upper


def test_ctrl_c_during_a_sandwich_keeps_the_runs_done(
    written: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the second run of a sandwich returns the first run's sandwich, said to
    be interrupted: its upper end is that run's total JCT (as ``elastic.simulate`` gives it),
    its lower end the fast bound alone, which stays below it. Ctrl-C before any run is done
    is raised, not swallowed."""
    from ddlsched.experiments import elastic as experiments

    finished = experiments.run_elastic
    calls: list[str] = []

    def stopped_at_second(*arguments, **options):  # type: ignore[no-untyped-def]
        calls.append("run")
        if len(calls) == 2:
            raise KeyboardInterrupt
        return finished(*arguments, **options)

    monkeypatch.setattr(experiments, "run_elastic", stopped_at_second)
    cluster = ElasticCluster(2, 4)
    pinned = elastic.sandwich(written, ["fifo", "pollux"], cluster=cluster)
    assert pinned.interrupted and pinned.to_dict()["interrupted"] is True
    assert dict(pinned.totals) == {"fifo": pinned.upper} and pinned.lagrangian == 0.0
    monkeypatch.setattr(experiments, "run_elastic", finished)
    alone = elastic.simulate(written, "fifo", cluster=cluster)
    assert pinned.upper == math.fsum(row["jct"] for row in alone.jobs)
    assert pinned.lower == pinned.bound.value <= pinned.upper
    calls.clear()
    calls.append("run")  # the next run is the second: stopped before any finished
    monkeypatch.setattr(experiments, "run_elastic", stopped_at_second)
    with pytest.raises(KeyboardInterrupt):
        elastic.sandwich(written, ["fifo"], cluster=cluster)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda w: elastic.simulate(w, "asrpt"), ValueError, "policy: unknown 'asrpt'"),
        (lambda w: elastic.compare(w, ["fifo", "srpt"]), ValueError, "policies: unknown 'srpt'"),
        (lambda w: elastic.compare(w, ["fifo", "fifo"]), ValueError, "policies: fifo named twice"),
        (lambda w: elastic.compare(w, "fifo"), ValueError, "policies: expected a non-empty"),
        (lambda w: elastic.compare(w, []), ValueError, "policies: expected a non-empty list"),
        (
            lambda w: elastic.sandwich(w, ["fifo"], offline=["oracle"]),
            ValueError,
            "offline: unknown 'oracle' (the offline elastic schedule names are srpt-ceiling",
        ),
        (
            lambda w: elastic.sandwich(w, [], offline=[]),
            ValueError,
            "policies, offline: both empty",
        ),
        (
            lambda w: elastic.sandwich(w, ["fifo"], lagrangian_steps=-1),
            ValueError,
            "lagrangian_steps: expected a whole number >= 0, got -1",
        ),
        (
            lambda w: elastic.sandwich(w, ["fifo"], cluster=TYPED),
            ValueError,
            "cluster: one GPU type only, got v100, k80",
        ),
        (lambda w: elastic.simulate(w, "fifo", limit=0), ValueError, "limit: expected a whole"),
        (lambda w: elastic.load_workload(w, 1.5), ValueError, "limit: expected a whole number"),
        (lambda w: elastic.simulate(w, "fifo", progress=1), TypeError, "progress: expected a"),
        (lambda w: elastic.simulate(6, "fifo"), TypeError, "workload: expected an ElasticWork"),
        (
            lambda w: elastic.simulate(w, "fifo", cluster=(2, 4)),
            TypeError,
            "cluster: expected ElasticCluster, got tuple",
        ),
    ],
)
def test_a_bad_argument_is_one_error_naming_it(
    written: Path, call: object, error: type[Exception], message: str
) -> None:
    """Each bad argument is refused before any run, in one error naming the argument and
    the value (an unknown name lists the known ones)."""
    assert callable(call)
    with pytest.raises(error, match=f"^{re.escape(message)}") as caught:
        call(written)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("row", "where"),
    [
        ("late,soon,cifar10,2,256", "line 3: column time: not a number: 'soon'"),
        ("late,-4,cifar10,2,256", "line 3: column time: out of range: '-4'"),
        ("late,30,resnet9000,2,256", "line 3: column application: unknown model 'resnet9000'"),
        ("late,30,cifar10,0,256", "line 3: column num_replicas: out of range: '0'"),
        ("late,30,cifar10,2", "line 3: 4 fields, the header names 5"),
        ("batch-a,30,cifar10,2,256", "duplicate names ['batch-a']"),
    ],
)
def test_a_malformed_workload_line_is_one_error_naming_it(
    tmp_path: Path, row: str, where: str
) -> None:
    """A workload file with one bad row is refused by every entry point, before any run, in
    one ``InputError`` naming the file, the line and the column (the CLI's exit 2)."""
    path = tmp_path / "bad.csv"
    path.write_text(f"{HEADER}\n{WRITTEN_ROWS[0]}\n{row}\n")
    for call in (
        lambda: elastic.load_workload(path),
        lambda: elastic.simulate(path, "fifo"),
        lambda: elastic.compare(str(path), ["fifo"]),
        lambda: elastic.sandwich(path, ["fifo"]),
    ):
        with pytest.raises(InputError) as caught:
            call()
        message = str(caught.value)
        assert message.startswith(str(path)) and where in message and "\n" not in message


def test_the_old_names_are_the_facade(written: Path) -> None:
    """``ddlsched.simulate_elastic`` and ``ddlsched.api.compare_elastic`` (kept for code
    written against them) give what ``ddlsched.elastic`` gives; the types are those of the
    modules that define them."""
    from ddlsched import api
    from ddlsched.experiments import elastic as experiments

    cluster = ElasticCluster(2, 4)
    old = ddlsched.simulate_elastic(written, "fifo", cluster=cluster, limit=4).summary()
    new = elastic.simulate(written, "fifo", cluster=cluster, limit=4).summary()
    del old["median_decision_s"], new["median_decision_s"]
    assert old == new
    assert (
        api.compare_elastic(written, ["fifo"], cluster=cluster).rows()
        == elastic.compare(written, ["fifo"], cluster=cluster).rows()
    )
    assert elastic.ElasticRun is experiments.ElasticRun is ddlsched.ElasticRun
    assert elastic.ElasticSandwich is experiments.ElasticSandwich
    assert elastic.ElasticSimParams is ElasticSimParams
    assert elastic.ElasticWorkload is ElasticWorkload is ddlsched.ElasticWorkload
    assert set(elastic.__all__) <= set(dir(elastic)) | {*elastic._LAZY}
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = elastic.Nothing


def test_importing_the_facade_loads_no_simulator_or_solver() -> None:
    """``import ddlsched.elastic`` loads the model only: no policy, experiment, solver or
    verifier until a call needs them."""
    probe = "import sys, ddlsched.elastic; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    heavy = ("ddlsched.algorithms", "ddlsched.experiments", "ddlsched.formulations", "pyomo")
    assert "ddlsched.core.elastic" in loaded
    assert not sorted(m for m in loaded if m.startswith(heavy))


@pytest.mark.slow
def test_the_examples_run() -> None:
    """Every example of the façade (the module's, ``simulate``'s, ``compare``'s and
    ``sandwich``'s) prints what it shows, so the documentation cannot show a stale call."""
    import doctest

    for name in ("simulate", "compare", "sandwich"):
        assert "Examples\n" in (getattr(elastic, name).__doc__ or ""), name
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, attempted = doctest.testmod(elastic, optionflags=flags, report=True)
    assert attempted >= 4 and failed == 0
