"""The model zoo (ddlsched.core.zoo)."""

from __future__ import annotations

import pytest

from ddlsched.core.zoo import ZOO, get_profile


def test_zoo_has_six_models_and_unknown_named() -> None:
    """At least six real models; an unknown one is named with the list."""
    assert len(ZOO) >= 6
    with pytest.raises(ValueError, match="unknown model 'alexnet'"):
        get_profile("alexnet")
