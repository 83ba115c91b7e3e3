"""Every claim holds on tiny integral instances, and every check can fail.

The negative controls feed each check a deliberately wrong input (a rho
that is too small, FIFO in place of SRPT on the virtual machine, a
schedule that breaks capacity, a mapping split for no reason) and require
the check to say "violated": a check that cannot fail is worth nothing.
"""

from __future__ import annotations

import dataclasses

import pytest
from ddlsched.proofs_checks import claims
from ddlsched.proofs_checks.bounds import fastest_time, rho_of, theorem1_constant
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.generators import generate
from ddlsched.core.graphs import ring_edges
from ddlsched.core.model import Cluster, Instance, Job, Schedule, ScheduledJob
from ddlsched.experiments import check_instance
from tests.oracles import brute_force_a, brute_force_a1, brute_force_a2
from tests.strategies import TINY_INTEGRAL

TINY = TINY_INTEGRAL


@settings(max_examples=12)
@given(st.integers(0, 100_000), st.sampled_from([None, 1.0]))
def test_every_claim_holds_on_integral_instances(seed: int, load: float | None) -> None:
    """On tiny integral instances every claim is conclusive and holds."""
    instance = generate(TINY.replace(load=load), seed)
    report = check_instance(instance, time_limit=None)
    assert report.values["integral"] is True
    for record in report.claims:
        assert record.status == "holds", (record.name, record.detail, record.lhs, record.rhs)


@settings(max_examples=8)
@given(
    st.integers(0, 100_000),
    st.sampled_from([None, 1.0]),
    st.sampled_from([(("v100", 1), ("k80", 1)), (("p100", 1), ("k80", 1))]),
)
def test_every_claim_holds_on_mixed_clusters(
    seed: int, load: float | None, types: tuple[tuple[str, int], ...]
) -> None:
    """GPU types: rho then carries the spread of compute times too, and every claim
    still holds (the derivation uses only alpha_min <= alpha(x) <= alpha_max); the
    optima equal the brute-force oracles, which time every map themselves."""
    instance = generate(TINY.replace(load=load, gpu_types=types), seed)
    report = check_instance(instance, time_limit=None)
    for record in report.claims:
        assert record.status == "holds", (record.name, record.detail, record.lhs, record.rhs)
    values = report.values
    assert values["opt_A"] == pytest.approx(brute_force_a(instance))
    assert values["opt_A1"] == pytest.approx(brute_force_a1(instance))
    assert values["opt_A2"] == pytest.approx(brute_force_a2(instance))


@settings(max_examples=8)
@given(st.integers(0, 100_000))
def test_values_agree_with_independent_oracles(seed: int) -> None:
    """check's opt_A, opt_A1, opt_A2 equal the brute-force oracles of the formulation tests."""
    instance = generate(TINY.replace(num_jobs=3, load=1.0), seed)
    values = check_instance(instance, time_limit=None).values
    assert values["opt_A"] == pytest.approx(brute_force_a(instance))
    assert values["opt_A1"] == pytest.approx(brute_force_a1(instance))
    assert values["opt_A2"] == pytest.approx(brute_force_a2(instance))
    assert values["srpt_A2"] == pytest.approx(values["opt_A2"])


def test_non_integral_checks_only_ceil_rho() -> None:
    """On a non-integral instance Lemma 1 is stated with ceil(rho) between slotted optima."""
    cluster = Cluster((2, 2), 2.0, 1.0)
    instance = Instance(
        cluster,
        (
            Job(
                id="a",
                release=0.0,
                iterations=2,
                compute_time=0.7,
                gpus=3,
                edges=ring_edges(3, 0.3),
            ),
            Job(
                id="b", release=0.4, iterations=3, compute_time=0.45, gpus=2, edges=((0, 1, 0.2),)
            ),
            Job(id="c", release=0.0, iterations=1, compute_time=1.3, gpus=1),
        ),
    )
    report = check_instance(instance, time_limit=None)
    assert report.values["integral"] is False
    lemma = next(r for r in report.claims if r.name == "lemma1")
    assert "ceil(rho)" in lemma.statement
    assert lemma.bound == float(int(lemma.bound or 0))
    assert lemma.status in ("holds", "inconclusive")
    theorem = next(r for r in report.claims if r.name == "theorem1")
    assert theorem.status == "inconclusive"  # OPT(A) is only a slotted value there


def _integral_instance() -> Instance:
    return generate(TINY.replace(load=1.0), 7)


def test_negative_control_wrong_rho() -> None:
    """Lemma 1 with rho replaced by 0.5 is violated (OPT(A1) > 0.5 OPT(A))."""
    instance = _integral_instance()
    report = check_instance(instance, time_limit=None)
    rho = rho_of(instance)
    wrong = dataclasses.replace(rho, rho=0.5)
    record = claims.lemma1(
        claims.Value(float(report.values["opt_A1"]), True),
        claims.Value(float(report.values["opt_A"]), True),
        wrong,
        integral=True,
    )
    assert record.status == "violated"


def test_negative_control_fifo_on_virtual_machine() -> None:
    """A 'broken SRPT' (FIFO, no preemption, on the virtual machine) fails claim 1."""
    cluster = Cluster((2,), 1.0, 1.0)
    long = Job(id="long", release=0.0, iterations=4, compute_time=1.0, gpus=2)
    short = Job(id="short", release=1.0, iterations=1, compute_time=1.0, gpus=2)
    instance = Instance(cluster, (long, short))
    # Sizes 4 and 1; FIFO: long [0,4), short [4,5): total 9. SRPT: 1+... = 2 + 5 = 7.
    fifo = Schedule(
        (
            ScheduledJob("long", 0.0, 4.0, pieces=((0.0, 4.0),)),
            ScheduledJob("short", 4.0, 5.0, pieces=((4.0, 5.0),)),
        ),
        problem="A2",
    )
    record = claims.srpt_optimal_a2(instance, fifo, claims.Value(7.0, True))
    assert record.status == "violated" and record.lhs == pytest.approx(9.0)


def test_negative_control_capacity_violation() -> None:
    """A schedule overlapping two 2-GPU jobs on one 2-GPU server fails claim 6."""
    cluster = Cluster((2,), 1.0, 1.0)
    jobs = tuple(
        Job(id=f"j{k}", release=0.0, iterations=1, compute_time=1.0, gpus=2) for k in range(2)
    )
    instance = Instance(cluster, jobs)
    clash = Schedule(tuple(ScheduledJob(f"j{k}", 0.0, 1.0, (0, 0)) for k in range(2)))
    record = claims.verifier(instance, clash, "broken")
    assert record.status == "violated" and "server 0" in record.detail
    # lhs counts the violations, and the margin (rhs - lhs) is negative when violated.
    assert record.lhs == len(verify(instance, clash).violations) >= 1
    assert record.margin == -record.lhs
    fine = Schedule((ScheduledJob("j0", 0.0, 1.0, (0, 0)), ScheduledJob("j1", 1.0, 2.0, (0, 0))))
    ok = claims.verifier(instance, fine, "serial")
    assert ok.status == "holds" and ok.lhs == 0.0 and ok.margin == 0.0


def test_negative_control_needless_split() -> None:
    """A job split across servers while one server was free fails claim 4."""
    cluster = Cluster((2, 2), 2.0, 1.0)
    job = Job(id="a", release=0.0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    instance = Instance(cluster, (job,))
    split = Schedule((ScheduledJob("a", 0.0, None, (0, 1)),))
    record = claims.mapping_bounds(instance, split)
    assert record.status == "violated" and "spans servers" in record.detail


@pytest.mark.parametrize("mapping", [None, (0,), (0, 1, 1)])
def test_negative_control_a_job_without_a_valid_mapping(mapping: tuple[int, ...] | None) -> None:
    """Claim 4 on a schedule whose job has no mapping, or one of the wrong width: violated,
    the job named (the claim must not stop on it, nor pass it)."""
    cluster = Cluster((2, 2), 2.0, 1.0)
    job = Job(id="a", release=0.0, iterations=1, compute_time=1.0, gpus=2, edges=((0, 1, 1.0),))
    instance = Instance(cluster, (job,))
    record = claims.mapping_bounds(instance, Schedule((ScheduledJob("a", 0.0, None, mapping),)))
    assert record.status == "violated" and "job 'a' has no valid mapping" in record.detail


def test_a_claim_holds_at_the_edge_of_its_tolerance() -> None:
    """The tolerance is inclusive: an equality off by exactly ``TOLERANCE`` (scale 1) holds,
    twice that is violated; an inequality likewise."""
    from ddlsched.proofs_checks.claims import TOLERANCE, inequality

    def status(lhs: float, rhs: float, equality: bool) -> str:
        return inequality("c", "s", lhs, rhs, True, equality=equality).status

    assert status(0.0, TOLERANCE, True) == "holds"
    assert status(0.0, 2 * TOLERANCE, True) == "violated"
    assert status(TOLERANCE, 0.0, False) == "holds"
    assert status(2 * TOLERANCE, 0.0, False) == "violated"


def test_lemma1_states_rho_on_integral_instances() -> None:
    """On an integral instance claim 3 is stated with rho itself (``ceil(rho)`` is for the
    slotted optima of other instances, above), and checked against rho."""
    from ddlsched.proofs_checks.bounds import RhoCheck
    from ddlsched.proofs_checks.claims import Value

    record = claims.lemma1(Value(10.0, True), Value(8.0, True), RhoCheck(1.5, True, (), ()), True)
    assert record.statement == "OPT(A1) <= rho * OPT(A)"
    assert record.bound == 1.5 and record.status == "holds"


def test_negative_control_theorem1_with_slow_schedule() -> None:
    """A schedule far slower than the bound allows fails the Theorem 1 check."""
    instance = _integral_instance()
    report = check_instance(instance, time_limit=None)
    opt = float(report.values["opt_A"])
    slow_entries = []
    time = 1000.0 * opt
    for job in instance.jobs:
        mapping = tuple(min(k // 2, 1) for k in range(job.gpus))
        slow_entries.append(ScheduledJob(job.id, time, None, mapping))
        time += 1000.0 * opt
    record = claims.theorem1(
        instance, Schedule(tuple(slow_entries)), claims.Value(opt, True), rho_of(instance)
    )
    assert record.status == "violated"


def test_inexact_values_are_inconclusive() -> None:
    """A time-limited optimum makes a claim inconclusive, never 'holds'."""
    record = claims.relaxation(claims.Value(1.0, True), claims.Value(2.0, False))
    assert record.status == "inconclusive" and record.holds is None


def test_bounds_module_matches_hand_values(ring_instance: Instance) -> None:
    """Independent alpha_min and constant: the 4-ring's alpha_min is 4; 2 + 4/(4-4+1) = 6."""
    low = fastest_time(ring_instance.jobs[0], ring_instance.cluster)
    assert low.exact and low.value == pytest.approx(4.0)
    assert theorem1_constant(4, 4) == pytest.approx(6.0)
    with pytest.raises(ValueError, match="g_max"):
        theorem1_constant(4, 5)


def _two_jobs_one_server() -> tuple[Instance, Schedule]:
    """Sizes 4 then 1 (released at 1) on one 2-GPU server: SRPT on the virtual machine runs
    long [0,1), short [1,2), long [2,5): total 2 + 5 = 7, which is OPT(A2)."""
    cluster = Cluster((2,), 1.0, 1.0)
    long = Job(id="long", release=0.0, iterations=4, compute_time=1.0, gpus=2)
    short = Job(id="short", release=1.0, iterations=1, compute_time=1.0, gpus=2)
    srpt = Schedule(
        (
            ScheduledJob("long", 0.0, 5.0, pieces=((0.0, 1.0), (2.0, 5.0))),
            ScheduledJob("short", 1.0, 2.0, pieces=((1.0, 2.0),)),
        ),
        problem="A2",
    )
    return Instance(cluster, (long, short)), srpt


def test_claim1_is_an_equality() -> None:
    """SRPT(A2) = OPT(A2) is an equality: an 'optimum' above SRPT's value (a wrong one) is a
    violation, not a pass of SRPT <= OPT."""
    instance, srpt = _two_jobs_one_server()
    assert claims.srpt_optimal_a2(instance, srpt, claims.Value(7.0, True)).holds is True
    assert claims.srpt_optimal_a2(instance, srpt, claims.Value(7.5, True)).holds is False


def test_tolerance_just_past_the_bound() -> None:
    """A breach of one part in ten thousand is a violation (the tolerance is 1e-6, not 1%)."""
    rho = dataclasses.replace(rho_of(_integral_instance()), rho=1.0, exact=True)
    just_over = claims.lemma1(claims.Value(100.01, True), claims.Value(100.0, True), rho, True)
    assert just_over.status == "violated"
    at = claims.lemma1(claims.Value(100.0, True), claims.Value(100.0, True), rho, True)
    assert at.status == "holds"


def test_theorem1_is_inconclusive_outside_its_assumptions() -> None:
    """Theorem 1 is proved for unit weights and an exact rho: with weights, or with rho only
    a bound, the record is inconclusive even when the inequality is true."""
    instance = _integral_instance()
    report = check_instance(instance, time_limit=None)
    opt = claims.Value(float(report.values["opt_A"]), True)
    from ddlsched import simulate

    guided = simulate(instance, "asrpt", bound=False).schedule
    assert guided is not None
    rho = rho_of(instance)
    assert claims.theorem1(instance, guided, opt, rho).status == "holds"
    weighted = instance.replace(jobs=tuple(j.replace(weight=2.0) for j in instance.jobs))
    guided_w = simulate(weighted, "asrpt", bound=False).schedule
    assert guided_w is not None
    doubled = claims.Value(2 * opt.value, True)
    assert claims.theorem1(weighted, guided_w, doubled, rho_of(weighted)).status == "inconclusive"
    bounded = dataclasses.replace(rho, exact=False)
    assert claims.theorem1(instance, guided, opt, bounded).status == "inconclusive"


def test_mapping_rule_counts_jobs_starting_at_the_same_instant() -> None:
    """Servers of 4 and 2 GPUs: a (3 GPUs) on server 0 and b (3 GPUs) split 1 + 2 both start
    at 0. When b starts, server 0 has 1 free GPU and server 1 has 2: b cannot fit on one
    server, so its split is legitimate and the claim holds."""
    cluster = Cluster((4, 2), 2.0, 1.0)
    a = Job(id="a", release=0.0, iterations=1, compute_time=1.0, gpus=3)
    b = Job(id="b", release=0.0, iterations=1, compute_time=1.0, gpus=3)
    instance = Instance(cluster, (a, b))
    schedule = Schedule(
        (ScheduledJob("a", 0.0, 1.0, (0, 0, 0)), ScheduledJob("b", 0.0, 1.0, (0, 1, 1)))
    )
    assert verify(instance, schedule).feasible
    assert claims.mapping_bounds(instance, schedule).status == "holds"
