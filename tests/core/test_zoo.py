"""The model zoo (ddlsched.core.zoo)."""

from __future__ import annotations

import pytest

from ddlsched.core.zoo import ZOO, get_profile


def test_zoo_has_six_models_and_unknown_named() -> None:
    """At least six real models; an unknown one is named with the list."""
    assert len(ZOO) >= 6
    with pytest.raises(ValueError, match="unknown model 'alexnet'"):
        get_profile("alexnet")


def test_gavel_slowdowns_are_the_files() -> None:
    """GAVEL_SLOWDOWN is recomputed from the shipped profiles/gavel_throughputs.csv:
    steps per second on V100 over steps per second on each type, one GPU, consolidated."""
    import csv

    from ddlsched.core.data import data_path
    from ddlsched.core.zoo import GAVEL_MATCH, GAVEL_SLOWDOWN, MEASURED_TYPES

    with data_path("profiles", "gavel_throughputs.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    speed = {
        (row["gpu_type"], row["model"], row["batch_size"]): float(row["steps_per_second"])
        for row in rows
        if row["scale_factor"] == "1"
    }
    for (model, batch), factors in GAVEL_SLOWDOWN.items():
        size = "" if batch is None else str(batch)
        v100 = speed[("v100", model, size)]
        for kind, factor in zip(MEASURED_TYPES, factors, strict=True):
            assert factor == pytest.approx(v100 / speed[(kind, model, size)], abs=5e-5)
    assert set(GAVEL_MATCH) == set(ZOO)
