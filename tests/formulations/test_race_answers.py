"""The portfolio ``exact`` answers with a schedule however early its race is stopped: on
problem A1 without a warm start its watch holds a list schedule from the start."""

from __future__ import annotations

import threading

from ddlsched.formulations import portfolio
from ddlsched.formulations.certify import BoundSet
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings

from ddlsched import Problem
from ddlsched.core.model import Instance
from tests.strategies import weighted_instances


@settings(max_examples=15, deadline=None, derandomize=True)
@given(weighted_instances(max_jobs=4, typed=True))
def test_the_a1_race_watches_a_verified_list_schedule_from_the_start(instance: Instance) -> None:
    """Over weighted, typed, multi-GPU instances, the watch of an A1 race holds a schedule
    the verifier accepts for A1 before either backend runs."""
    watch = portfolio._Watch.started(
        BoundSet.empty(instance), Problem.A1, threading.Event(), False, None
    )
    assert watch.best is not None
    schedule, source = watch.best
    assert source == "a list schedule"
    assert verify(instance, schedule).feasible
