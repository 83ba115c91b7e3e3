"""The elastic Lagrangian's supergradient is projected where prices are zero: a block under
its capacity at a zero price pushes nothing, so an ascent with no block over its capacity
stops at once.

Truth: the bound's own value at zero prices (``steps=0``) and the module's rule that the
ascent stops when no block is over or under capacity at a positive price.
"""

from __future__ import annotations

from ddlsched.formulations.elastic_lagrangian import elastic_lagrangian_bound

from ddlsched.core.elastic import ElasticJob
from tests.elastic.workloads import MIXED_ROWS


def test_a_job_alone_on_a_wide_cluster_stops_the_ascent_at_zero_prices() -> None:
    """One job alone on 64 GPUs leaves every block under its capacity at a zero price, so
    the projected supergradient (the parts that would push a zero price below zero dropped)
    is zero at the start: the ascent takes no step and its bound is the value at zero
    prices, the same as with ``steps=0``. Catches the supergradient left unprojected where
    prices are zero: every step is then taken (50 reported) though the prices never move."""
    name, model, submit, gpus, batch, epochs = MIXED_ROWS[0]
    job = [ElasticJob(name, model, submit, gpus, batch, epochs)]
    bound = elastic_lagrangian_bound(job, 64, steps=50)
    assert bound.steps == 0
    assert bound.value == elastic_lagrangian_bound(job, 64, steps=0).value
