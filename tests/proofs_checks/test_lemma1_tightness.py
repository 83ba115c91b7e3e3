"""Lemma 1, ``OPT(A1) <= rho OPT(A)``, holds with equality on a shipped instance with ``rho > 1``.

``examples/lemma1_tight.json`` is five data-parallel rings (two of 4 GPUs, three of 2) on
2 x 4 GPUs, all released at 0, each with traffic ``Q_i = 2 c_i`` at a bandwidth ratio of
2: every job runs at ``alpha_min = 2 c_i`` on one server and at ``alpha_max = 3 c_i`` with
every edge cut, so each is slowed by the same factor ``rho = 1.5``. Problem A1 is then
the pooled problem at ``alpha_min`` stretched by ``rho``, and an optimum of A loses nothing
to the server boundaries, so ``OPT(A1) = rho OPT(A)``: the factor ``rho`` of Lemma 1
cannot be lowered in general. The ratio is recomputed twice: by the brute-force oracles
of the tests, which share no code with the MILPs or with ``proofs_checks``, and by
``check_instance`` through the claim's own check.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlsched.core.io import read_instance
from ddlsched.core.model import Instance
from ddlsched.experiments import check_instance
from tests.oracles import all_alphas, all_cut_on, brute_force_a, brute_force_a1

TIGHT = Path(__file__).resolve().parents[2] / "examples" / "lemma1_tight.json"


@pytest.fixture(scope="module")
def tight() -> Instance:
    """The shipped instance on which Lemma 1 is an equality."""
    return read_instance(TIGHT)


def _slowdowns(instance: Instance) -> list[float]:
    """Each job's ``alpha_max / alpha_min``, from every node-to-server map (the oracles')."""
    cluster = instance.cluster
    return [all_cut_on(job, cluster) / min(all_alphas(job, cluster)) for job in instance.jobs]


def test_the_tight_instance_is_not_trivial(tight: Instance) -> None:
    """``rho > 1`` (placement changes every job's speed), some job spans more than one GPU,
    and the jobs cannot all run at once, so the equality is not that of one-GPU jobs, whose
    ``rho`` is 1 and whose two problems coincide."""
    assert max(_slowdowns(tight)) > 1.25
    assert max(job.gpus for job in tight.jobs) > 1
    assert sum(job.gpus for job in tight.jobs) > tight.cluster.num_gpus


def test_lemma1_is_an_equality_by_brute_force(tight: Instance) -> None:
    """The oracles' ``OPT(A1)`` equals ``rho`` times their ``OPT(A)`` (44 and 66 at
    ``rho = 1.5``), with ``rho`` recomputed from every mapping."""
    rho = max(_slowdowns(tight))
    opt_a, opt_a1 = brute_force_a(tight), brute_force_a1(tight)
    assert opt_a1 == pytest.approx(rho * opt_a, rel=1e-12)
    assert (opt_a, opt_a1, rho) == pytest.approx((44.0, 66.0, 1.5))


def test_the_lemma1_check_finds_ratio_one(tight: Instance) -> None:
    """``check_instance`` proves both optima and an exact ``rho`` on this integral instance,
    and its Lemma 1 record holds with ``lhs / rhs`` equal to 1."""
    report = check_instance(tight, time_limit=None)
    assert report.values["integral"] is True and report.values["rho"] == pytest.approx(1.5)
    record = next(r for r in report.claims if r.name == "lemma1")
    assert record.status == "holds" and record.exact
    assert record.ratio == pytest.approx(1.0, rel=1e-9)
