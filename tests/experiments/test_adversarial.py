"""Adversarial search for Theorem 1's empirical tightness (hypothesis.target)."""

from __future__ import annotations

from ddlsched.experiments import adversarial_theorem1
from proofs_checks.bounds import rho_of, theorem1_constant


def test_adversarial_search_stays_within_theorem_1() -> None:
    """The worst asrpt / OPT(A) that hypothesis finds is reported with, and below, its bound."""
    ratio, factor, instance = adversarial_theorem1(2, 2, jobs=3, examples=25)
    assert instance is not None
    assert 1.0 <= ratio <= factor
    expected = theorem1_constant(instance.cluster.num_gpus, instance.max_job_gpus)
    assert factor == expected * rho_of(instance).rho
