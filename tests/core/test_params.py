"""Typed parameters (ddlsched.core.params): defaults, validation naming the field, TOML."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ddlsched.core.model import InputError
from ddlsched.core.params import DEFAULT_RESTART_COST, ExactParams, OnlineParams, from_toml


def test_defaults_are_the_documented_ones() -> None:
    """One place holds each default (the CLI and the façades read them from here)."""
    assert ExactParams() == ExactParams(time_limit=60.0, mip_gap=1e-6, threads=None)
    online = OnlineParams()
    assert (online.predictor, online.noise, online.mapper) == ("oracle", 0.5, None)
    assert (online.restart_cost, online.outrun_factor, online.placement) == (None, 2.0, "any")
    assert DEFAULT_RESTART_COST == 1.0  # used when the policy names no reference value


@pytest.mark.parametrize(
    ("kind", "changes", "field"),
    [
        (ExactParams, {"time_limit": 0}, "time_limit"),
        (ExactParams, {"time_limit": math.inf}, "time_limit"),
        (ExactParams, {"mip_gap": 1.0}, "mip_gap"),
        (ExactParams, {"threads": 0}, "threads"),
        (ExactParams, {"threads": True}, "threads"),
        (OnlineParams, {"noise": -0.1}, "noise"),
        (OnlineParams, {"restart_cost": math.nan}, "restart_cost"),
        (OnlineParams, {"outrun_factor": 1.0}, "outrun_factor"),
        (OnlineParams, {"predictor": 3}, "predictor"),
    ],
)
def test_bad_values_name_the_field(kind: type, changes: dict[str, object], field: str) -> None:
    """Every invalid setting is a ValueError that starts with the field's name."""
    with pytest.raises(ValueError, match=f"^{field}:"):
        kind(**changes)


@pytest.mark.parametrize(
    ("kind", "field", "edge", "beyond"),
    [
        (OnlineParams, "restart_cost", 0.0, -1e-12),
        (OnlineParams, "noise", 0.0, -1e-12),
        (OnlineParams, "outrun_factor", 1.0 + 1e-12, 1.0),
        (ExactParams, "mip_gap", 0.0, -1e-12),
        (ExactParams, "time_limit", 1e-9, 0.0),
        (ExactParams, "threads", 1, 0),
    ],
)
def test_each_limit_accepts_its_edge_and_refuses_just_beyond(
    kind: type, field: str, edge: float, beyond: float
) -> None:
    """Catches an inclusive bound made strict or the reverse: a restart cost of 0 (no
    restart charged, Tiresias's own value) or a noise of 0 (an exact predictor) must be
    accepted, an outrun factor of exactly 1 (a prediction never grows) refused."""
    assert getattr(kind(**{field: edge}), field) == edge
    with pytest.raises(ValueError, match=f"^{field}:"):
        kind(**{field: beyond})


def test_replace_validates_again() -> None:
    """replace() returns a checked copy."""
    assert ExactParams().replace(threads=2).threads == 2
    with pytest.raises(ValueError, match="threads"):
        ExactParams().replace(threads=-1)


def test_from_toml(tmp_path: Path) -> None:
    """A [table] of a TOML file gives the parameters; a missing table gives the defaults."""
    path = tmp_path / "run.toml"
    path.write_text('[exact]\ntime_limit = 5\nthreads = 1\n[online]\npredictor = "noisy"\n')
    assert from_toml(ExactParams, path, "exact") == ExactParams(time_limit=5, threads=1)
    assert from_toml(OnlineParams, path, "online").predictor == "noisy"
    assert from_toml(ExactParams, path, "nothing") == ExactParams()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[exact]\ntime_limt = 5\n", "exact.time_limt: unknown setting"),
        ("[exact]\ntime_limit = -5\n", "time_limit: must be a finite number > 0"),
        ("[exact\n", "not valid TOML"),
        ("exact = 3\n", "[exact] must be a table"),
    ],
)
def test_toml_errors_name_the_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    """A typo, a bad value or bad TOML is one InputError naming the file and what is wrong."""
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        from_toml(ExactParams, path, "exact")
    assert str(path) in str(error.value) and expected in str(error.value)


def test_limits_text_names_each_limit_set_and_only_those() -> None:
    """``ExactParams.limits_text``, the words compare and sweep rows use: the deterministic
    limits first, the wall-clock limit last, ``none`` without any. Catches a limit named
    that does not stop the solve, or one that does left unnamed."""
    from ddlsched.core.params import ExactParams

    both = ExactParams(time_limit=30, deterministic_limit=5, node_limit=20_000)
    assert both.limits_text() == "5 CP-SAT work units, 20,000 MILP nodes, wall-clock 30 s"
    assert ExactParams(time_limit=None, node_limit=7).limits_text() == "7 MILP nodes"
    assert ExactParams(time_limit=None).limits_text() == "none"
