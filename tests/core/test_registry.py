"""The registry type (ddlsched.core.registry), and the project's registries built on it."""

from __future__ import annotations

import pytest

from ddlsched.core.registry import Registry


def test_names_map_to_factories_in_order() -> None:
    """add and register bind names; names() keeps registration order."""
    registry: Registry = Registry("widget")
    registry.add("b", lambda: "B", "the b")
    registry.register("a", "the a")(lambda: "A")
    assert registry.names() == ("b", "a")
    assert registry["a"]() == "A" and "b" in registry and "c" not in registry
    assert [e.summary for e in registry.entries()] == ["the b", "the a"]


def test_unknown_and_duplicate_names_are_clear_errors() -> None:
    """An unknown name lists every known one; a name cannot mean two things."""
    registry: Registry = Registry("widget")
    registry.add("a", lambda: None, "")
    with pytest.raises(ValueError, match="widget: unknown 'z'; expected one of a"):
        registry["z"]
    with pytest.raises(ValueError, match="registered twice"):
        registry.add("a", lambda: None, "")
    with pytest.raises(ValueError, match="methods: unknown widget 'z'"):
        registry.check(["a", "z"], "methods")


def test_project_registries() -> None:
    """The façade's method names are the exact methods then the policies, each spelled once."""
    from ddlsched.algorithms.registry import MAPPERS, POLICIES, PREDICTORS
    from ddlsched.formulations.registry import EXACT_METHODS

    from ddlsched.api import method_names

    assert method_names() == EXACT_METHODS.names() + POLICIES.names()
    assert len(set(method_names())) == len(method_names())
    assert {"asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive", "las"} <= set(POLICIES)
    assert {"oracle", "noisy", "forest"} <= set(PREDICTORS)
    assert {"graph", "first-fit", "random"} <= set(MAPPERS)
