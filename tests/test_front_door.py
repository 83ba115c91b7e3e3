"""The front door: what a researcher reaches from ``import ddlsched`` alone."""

from __future__ import annotations

import pytest

import ddlsched


def test_checks_bounds_and_figures_are_at_the_front_door() -> None:
    """verify, the lower bounds and the figures come from ``ddlsched`` itself; a schedule a
    policy returns verifies, and no bound exceeds the optimum the exact method proves."""
    instance = ddlsched.generate(ddlsched.GeneratorConfig.exact_friendly(6, 2, 4), seed=0)
    online = ddlsched.simulate(instance, "asrpt-greedy")
    assert online.schedule is not None
    assert ddlsched.verify(instance, online.schedule).feasible
    optimum = ddlsched.solve(instance, "exact", params=ddlsched.ExactParams(time_limit=600))
    assert optimum.proven_optimal
    bounds = [b for b in ddlsched.lower_bounds(instance) if b.valid]
    assert bounds and all(b.value <= optimum.objective + 1e-6 for b in bounds)
    assert callable(ddlsched.plotting.gantt) and callable(ddlsched.plotting.save_figure)


def test_a_zoo_job_in_one_call() -> None:
    """``zoo_job(model, dp, pp, tp)`` gives the job the generators would build for that model
    and shape: dp*pp*tp workers, the model's name in its features, its typical iteration
    count unless given; an unknown model names the known ones."""
    job = ddlsched.zoo_job("gpt2_xl", dp=2, pp=2, tp=2, iterations=500)
    assert job.gpus == 8 and job.iterations == 500 and job.features["model"] == "gpt2_xl"
    assert job.parallelism == ddlsched.Parallelism(2, 2, 2) and job.edges
    single = ddlsched.zoo_job("resnet50")
    assert single.gpus == 1 and single.edges == () and single.iterations >= 1
    with pytest.raises(ValueError, match="unknown model 'gpt5'; the zoo has"):
        ddlsched.zoo_job("gpt5")


def test_the_namespace_holds_the_api_and_nothing_else() -> None:
    """``dir(ddlsched)`` is ``__all__``, ``plotting``, ``elastic`` and ``bench``: no import
    (``Any``, ``Path``, ``sys``, ``importlib``), helper or sub-package beside the API, and every
    name listed is reachable (the lazy ones through ``__getattr__``). Catches the front door's
    own imports and helpers showing up as its API."""
    assert set(dir(ddlsched)) == {*ddlsched.__all__, "plotting", "elastic", "bench"}
    assert ddlsched.elastic.simulate is not None
    assert ddlsched.bench.run is not None
    assert not {"Any", "Path", "sys", "importlib"} & set(dir(ddlsched))
    assert not [name for name in ddlsched.__all__ if name.startswith("_")]
    for name in ddlsched.__all__:
        assert getattr(ddlsched, name) is not None, name
