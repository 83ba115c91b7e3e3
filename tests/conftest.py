"""Shared fixtures and the hypothesis profiles.

Profile ``ci`` (the default, and what CI runs): derandomized, bounded in
examples, no deadlines (solver tests vary in time). Profile ``dev`` explores
more: ``pytest --hypothesis-profile=dev``.
"""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import HealthCheck, settings

from ddlsched.core.model import Cluster, Instance, Job
from tests import examples

settings.register_profile(
    "ci",
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def cache_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test's cache (ddlsched.cache) in a fresh folder of its own, never the user's
    home: what one test stores no other reads."""
    monkeypatch.setenv("DDLSCHED_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def two_by_two() -> Cluster:
    """Two servers of two GPUs; intra bandwidth twice inter (see tests/examples.py)."""
    return examples.two_by_two()


@pytest.fixture
def ring_instance() -> Instance:
    """The 4-ring that must be cut, and a 1-GPU job (see tests/examples.py)."""
    return examples.ring_instance()


@pytest.fixture
def triangle_job() -> Job:
    """A triangle whose all-cut alpha_max is only a bound (see tests/examples.py)."""
    return examples.triangle_job()


# Tests that press Ctrl-C on a command (tests/test_signals.py, test_compare.py) need it to
# reach the command. A shell script that starts a job with "&" (a background CI step, nohup)
# makes SIGINT ignored, and an ignored signal stays ignored in every child: the commands
# under test would then never see Ctrl-C, as the shell intends for background jobs, and the
# tests would fail for a reason that has nothing to do with the code. A Python handler is not
# inherited (the child starts with the default action and installs its KeyboardInterrupt).
signal.signal(signal.SIGINT, signal.default_int_handler)
