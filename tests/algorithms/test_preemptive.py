"""The preemptive priority policies (ddlsched.algorithms.preemptive): hand-worked runs,
verified schedules on the hard families, and claim 7 checked by computation."""

from __future__ import annotations

import pytest
from ddlsched.algorithms.registry import build_policy
from ddlsched.algorithms.simulator import simulate
from ddlsched.proofs_checks import claims
from ddlsched.proofs_checks.claims import ClaimStatus
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.alpha import virtual_size
from ddlsched.core.model import Cluster, Instance, Job, Piece, Problem, Schedule, ScheduledJob
from ddlsched.core.params import OnlineParams
from ddlsched.core.virtual import srpt
from tests.strategies import fragmenting_instances, generated_instances, weighted_instances

PREEMPTIVE = ("asrpt-preemptive", "srpt-area")


def _run(instance: Instance, name: str, restart_cost: float) -> Schedule:
    params = OnlineParams(predictor="oracle", restart_cost=restart_cost)
    result = simulate(instance, build_policy(name, instance, params), restart_cost=restart_cost)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(result.objective, rel=1e-9)
    return result.schedule


def _long_then_short() -> Instance:
    """One 2-GPU server; 'long' (2 GPUs, 10 s) at 0, 'short' (2 GPUs, 1 s) at 1: SRPT
    by area and the virtual machine both rank 'short' first when it arrives."""
    cluster = Cluster((2,), 1.0, 1.0)
    return Instance(
        cluster,
        (
            Job(id="long", release=0.0, iterations=10, compute_time=1.0, gpus=2),
            Job(id="short", release=1.0, iterations=1, compute_time=1.0, gpus=2),
        ),
    )


@pytest.mark.parametrize("name", PREEMPTIVE)
@pytest.mark.parametrize("restart_cost", [0.0, 0.5])
def test_a_shorter_arrival_preempts_and_the_resume_pays_the_restart(
    name: str, restart_cost: float
) -> None:
    """'short' preempts 'long' at 1 and ends at 2; 'long' resumes at 2, restores for the
    restart cost and runs its 9 s left: it ends at 11 + restart cost."""
    schedule = _run(_long_then_short(), name, restart_cost)
    entries = schedule.by_id()
    assert entries["short"].end == pytest.approx(2.0)
    assert entries["long"].end == pytest.approx(11.0 + restart_cost)
    assert entries["long"].pieces is not None and len(entries["long"].pieces) == 2


@pytest.mark.parametrize("name", PREEMPTIVE)
def test_a_wide_job_ranked_first_displaces_narrow_running_ones(name: str) -> None:
    """Two 1-GPU jobs of 10 s fill a 2-GPU server from 0; a 2-GPU job of 1 s arrives at 1
    with the least remaining area (2 against 9 each): both narrow jobs are preempted, the
    wide one runs [1, 2], and both resume at 2 to end at 11 (no restart cost)."""
    cluster = Cluster((2,), 1.0, 1.0)
    instance = Instance(
        cluster,
        (
            Job(id="a", release=0.0, iterations=10, compute_time=1.0, gpus=1),
            Job(id="b", release=0.0, iterations=10, compute_time=1.0, gpus=1),
            Job(id="wide", release=1.0, iterations=1, compute_time=1.0, gpus=2),
        ),
    )
    ends = {e.id: e.end for e in _run(instance, name, 0.0).jobs}
    assert ends == pytest.approx({"a": 11.0, "b": 11.0, "wide": 2.0})


@given(
    instance=st.one_of(
        fragmenting_instances(),
        weighted_instances(max_jobs=4, typed=True),
        generated_instances(mixed=True),
    ),
    name=st.sampled_from(PREEMPTIVE),
    restart_cost=st.sampled_from([0.0, 0.7]),
)
def test_preemptive_schedules_pass_the_verifier(
    instance: Instance, name: str, restart_cost: float
) -> None:
    """On uneven, typed, weighted instances with batch and spread arrivals and multi-GPU
    jobs, every schedule passes the verifier (restart cost paid on resumes) and the
    simulator's objective is the verifier's."""
    _run(instance, name, restart_cost)


def srpt_a2(instance: Instance) -> Schedule:
    """The SRPT schedule of A2 (sizes ``g K alpha_max / M``) as a schedule."""
    ids = [job.id for job in instance.jobs]
    sizes = [virtual_size(job, instance.cluster, job.iterations) for job in instance.jobs]
    completions, pieces = srpt(sizes, [job.release for job in instance.jobs], ids)
    entries = tuple(
        ScheduledJob(i, pieces[i][0][0], completions[i], pieces=tuple(Piece(*p) for p in runs))
        for i, runs in ((i, pieces[i]) for i in ids)
    )
    return Schedule(entries, problem=Problem.A2)


@given(instance=st.one_of(fragmenting_instances(), generated_instances(mixed=True)))
@settings(max_examples=150)
def test_claim7_holds_with_exact_counts_and_free_restarts(instance: Instance) -> None:
    """Every job of asrpt-preemptive (exact counts, restart cost 0) ends by
    (1 + M / D_i) C^V_i + K_i alpha_i^max, on uneven and typed clusters."""
    schedule = _run(instance, "asrpt-preemptive", 0.0)
    record = claims.asrpt_preemptive(instance, schedule, srpt_a2(instance))
    assert record.status is ClaimStatus.HOLDS, record.detail


def test_claim7_names_a_job_that_ends_too_late() -> None:
    """A schedule delayed past the bound (both jobs shifted by 100 s, still feasible) is a
    violation naming a job; with a restart cost or predicted counts nothing is concluded."""
    instance = _long_then_short()
    schedule = _run(instance, "asrpt-preemptive", 0.0)
    late = Schedule(
        (
            ScheduledJob("long", 100.0, 110.0, (0, 0)),
            ScheduledJob("short", 110.0, 111.0, (0, 0)),
        )
    )
    record = claims.asrpt_preemptive(instance, late, srpt_a2(instance))
    assert record.status is ClaimStatus.VIOLATED
    assert "job 'long'" in record.detail
    assert claims.asrpt_preemptive(instance, schedule, srpt_a2(instance)).holds is True
    predicted = claims.asrpt_preemptive(instance, late, srpt_a2(instance), exact_counts=False)
    assert predicted.status is ClaimStatus.INCONCLUSIVE
    costly = _run(instance, "asrpt-preemptive", 0.5)
    record = claims.asrpt_preemptive(instance, costly, srpt_a2(instance))
    assert record.status is ClaimStatus.INCONCLUSIVE and "restart cost" in record.detail


def test_the_blocking_share_counts_servers_that_could_hold_the_job() -> None:
    """Servers of 8, 8 and 4 GPUs: a 4-GPU job waits only while 5 + 5 + 1 = 11 GPUs are
    held ahead of it, an 8-GPU job 1 + 1 = 2 (the small server cannot hold it), a 10-GPU
    job (wider than any server) 20 - 10 + 1 = 11."""
    assert claims.blocking_share((8, 8, 4), 4) == 11
    assert claims.blocking_share((8, 8, 4), 8) == 2
    assert claims.blocking_share((8, 8, 4), 10) == 11


def test_a_job_that_fits_a_server_never_spans_servers() -> None:
    """Two 2-GPU servers each half busy with a long 1-GPU job: a 2-GPU job ranked first
    does not take the two scattered free GPUs; it preempts one long job and runs on its
    server whole."""
    cluster = Cluster((2, 2), 2.0, 1.0)
    instance = Instance(
        cluster,
        (
            Job(id="a", release=0.0, iterations=20, compute_time=1.0, gpus=1),
            Job(id="b", release=0.0, iterations=20, compute_time=1.0, gpus=1),
            Job(id="c", release=0.0, iterations=20, compute_time=1.0, gpus=1),
            Job(id="d", release=0.0, iterations=20, compute_time=1.0, gpus=1),
            Job(id="pair", release=1.0, iterations=1, compute_time=1.0, gpus=2),
        ),
    )
    # b and d leave at 0.5 on purpose: one GPU free on each server.
    short = instance.replace(
        jobs=tuple(
            job.replace(iterations=1, compute_time=0.5) if job.id in ("b", "d") else job
            for job in instance.jobs
        )
    )
    for name in PREEMPTIVE:
        entry = _run(short, name, 0.0).by_id()["pair"]
        mappings = [entry.mapping] if entry.pieces is None else [p.mapping for p in entry.pieces]
        assert all(len(set(m)) == 1 for m in mappings)
