"""The façades (ddlsched.api): one solve, one simulate, names or your own objects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ddlsched.algorithms import FirstFitMapper, FreeGPUs, JobView, Policy
from ddlsched.algorithms.prediction import OraclePredictor
from ddlsched.proofs_checks.verifier import verify

import ddlsched
from ddlsched import (
    Cluster,
    ExactParams,
    Instance,
    Job,
    OnlineParams,
    Problem,
    SolveStatus,
    method_names,
    simulate,
    solve,
)


class StrictFCFS(Policy):
    """A user's own policy: arrival order, the head blocks, consolidating first fit."""

    name = "my-fcfs"

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.waiting: list[JobView] = []
        self.mapper = FirstFitMapper()

    def on_arrival(self, job: JobView, now: float) -> None:
        self.waiting.append(job)

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        while self.waiting:
            mapping = self.mapper(self.waiting[0], self.cluster, free)
            if mapping is None:
                return
            yield self.waiting.pop(0), mapping


def _three_jobs() -> Instance:
    """One server of 2 GPUs: a 2-GPU job a (2 s), then b (3 s) and c (1 s) of 1 GPU.

    Worked by hand for strict FCFS: a runs [0, 2]; b (arrived at 0) and c (at 1)
    both start at 2; c ends at 3, b at 5: sum C = 2 + 5 + 3 = 10.
    """
    cluster = Cluster((2,), 1.0, 1.0)
    return Instance(
        cluster,
        (
            Job(id="a", release=0.0, iterations=2, compute_time=1.0, gpus=2),
            Job(id="b", release=0.0, iterations=3, compute_time=1.0, gpus=1),
            Job(id="c", release=1.0, iterations=1, compute_time=1.0, gpus=1),
        ),
    )


def test_custom_policy_object_runs_and_is_verified() -> None:
    """A Policy subclass with three members runs through ddlsched.simulate, as worked by hand."""
    instance = _three_jobs()
    result = simulate(instance, StrictFCFS(instance.cluster))
    assert result.method == "my-fcfs" and result.status is SolveStatus.FEASIBLE
    ends = {entry.id: entry.end for entry in result.schedule.jobs}
    assert ends == {"a": 2.0, "b": 5.0, "c": 3.0}
    report = verify(instance, result.schedule)
    assert report.feasible and report.total_completion_time == result.objective == 10.0


def test_incomplete_policy_is_named() -> None:
    """An object lacking the protocol's methods is a TypeError naming what is missing."""

    class NoDispatch:
        name = "broken"

        def on_arrival(self, job: JobView, now: float) -> None: ...

    with pytest.raises(TypeError, match="lacks dispatch, on_start"):
        simulate(_three_jobs(), NoDispatch())  # type: ignore[arg-type]


def test_own_predictor_and_mapper_reach_the_policy() -> None:
    """simulate(..., predictor=, mapper=) replaces the named parts; each is asked per job."""
    instance = _three_jobs()
    asked: list[str] = []
    seen: list[tuple[str, int]] = []
    mapped: list[str] = []

    class Recording(OraclePredictor):
        def predict(self, job: JobView) -> float:
            asked.append(job.id)
            return super().predict(job)

        def observe(self, job: JobView, iterations: int) -> None:
            seen.append((job.id, iterations))

    def mapper(job: JobView, cluster: Cluster, free: FreeGPUs) -> tuple[int, ...] | None:
        mapped.append(job.id)
        return FirstFitMapper()(job, cluster, free)

    result = simulate(instance, "asrpt", predictor=Recording(instance), mapper=mapper)
    assert sorted(asked) == sorted(mapped) == ["a", "b", "c"]
    assert sorted(seen) == [("a", 2), ("b", 3), ("c", 1)]
    assert verify(instance, result.schedule).feasible


def test_solve_dispatches_by_name_and_checks_params() -> None:
    """solve runs exact methods and policies alike and rejects mismatched settings clearly."""
    instance = _three_jobs()
    exact = solve(instance, "milp", params=ExactParams(time_limit=30))
    assert exact.status is SolveStatus.OPTIMAL and exact.problem is Problem.A
    # By hand: a first gives 2 + 5 + 3; a after b and c gives at least 3 + 2 + 5; a
    # between them is worse (13): OPT = 10, which strict FCFS attains here.
    assert exact.objective == 10.0
    online = solve(instance, "fifo", params=OnlineParams(), seed=0)
    assert online.objective == simulate(instance, "fifo").objective
    with pytest.raises(ValueError, match="method: expected one of " + ", ".join(method_names())):
        solve(instance, "magic")
    with pytest.raises(ValueError, match="takes ExactParams"):
        solve(instance, "milp", params=OnlineParams())
    with pytest.raises(ValueError, match="online methods solve problem A"):
        solve(instance, "asrpt", problem="A2")
    with pytest.raises(ValueError, match="problem: expected one of A, A1, A2"):
        solve(instance, "milp", problem="B")


def test_same_seed_same_schedule() -> None:
    """Randomness is passed in: the random-mapping baseline repeats itself exactly per seed."""
    instance = ddlsched.generate(ddlsched.GeneratorConfig(num_jobs=8), 4)
    first = simulate(instance, "srpt-naive", seed=11)
    again = simulate(instance, "srpt-naive", seed=11)
    assert first.schedule == again.schedule


def test_online_start_is_the_best_non_preemptive_policy_schedule() -> None:
    """The exact methods' default start for problem A: feasible, non-preemptive, and the
    least objective of the UPPER_BOUND_POLICIES (not the first, not the last)."""
    from ddlsched.algorithms.registry import UPPER_BOUND_POLICIES

    from ddlsched.api import online_start
    from ddlsched.core.generators import GeneratorConfig, generate

    instance = generate(GeneratorConfig.exact_friendly(16, 4, 4, 1.0), 2)
    start = online_start(instance)
    assert start is not None and verify(instance, start).feasible
    assert all(entry.pieces is None for entry in start.jobs)
    objectives = [simulate(instance, name, bound=False).objective for name in UPPER_BOUND_POLICIES]
    ends = {entry.id: entry.end for entry in start.jobs}
    mine = sum(job.weight * (ends[job.id] or 0.0) for job in instance.jobs)
    assert mine == pytest.approx(min(objectives))
    assert len(set(objectives)) > 1  # the choice means something on this instance


def test_simulate_takes_a_loaded_trace(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``simulate(load_trace(...))`` runs on the trace's instance, as the docstring says.
    Catches: AttributeError on the LoadedTrace (it has no ``jobs``)."""
    from ddlsched.core.traces import load_trace

    path = tmp_path / "t.csv"
    path.write_text("submit_time,duration,num_gpus\n0,50,1\n5,80,2\n")
    loaded = load_trace(path, Cluster.uniform(1, 2, 20.0, 1.0))
    result = simulate(loaded, "fifo")
    assert result.schedule is not None
    assert result.objective == simulate(loaded.instance, "fifo").objective
    assert solve(loaded, "fifo").objective == result.objective


def test_wrong_argument_types_say_what_was_expected() -> None:
    """A dict or a file name where an Instance goes, a policy object given to solve, a
    params object of the wrong kind, a mapper that is not callable: a TypeError or
    ValueError naming the argument and what it takes (no "'str' object is not callable"
    from deep inside the simulator). Registry names are taken for predictor and mapper."""
    instance = _three_jobs()
    with pytest.raises(TypeError, match=r"instance: expected an Instance.*instance_from_dict"):
        simulate(instance.to_dict(), "fifo")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"instance: expected an Instance.*read_instance"):
        solve("in.json", "fifo")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="method: expected a name"):
        solve(instance, StrictFCFS(instance.cluster))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="params: expected OnlineParams"):
        simulate(instance, "fifo", params=ExactParams())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="mapper: expected a name or a callable"):
        simulate(instance, "fifo", mapper=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed: expected a whole number"):
        simulate(instance, "fifo", seed="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mapper"):
        simulate(instance, "fifo", mapper="no-such-mapper")
    by_name = simulate(instance, "fifo", mapper="first-fit", predictor="oracle")
    by_params = simulate(instance, "fifo", params=OnlineParams(mapper="first-fit"))
    assert by_name.objective == by_params.objective


def test_more_wrong_arguments_say_what_was_expected(tmp_path: Path) -> None:
    """The front door's other entries name the argument too: a ``progress`` that cannot be
    called (was "'int' object is not callable" from inside the simulator), a switch given
    as a string (``bound="no"`` ran with the bound), ``verify`` and ``rho`` given a loaded
    trace (their instance, as ``simulate`` takes it: was AttributeError) or a wrong type,
    ``generate`` given a config or seed of the wrong type (was NumPy's message)."""
    from ddlsched.core.traces import load_trace

    instance = _three_jobs()
    with pytest.raises(TypeError, match=r"progress: expected a callable progress\(completed"):
        simulate(instance, "fifo", progress=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="progress: expected a callable"):
        solve(instance, "fifo", progress="bar")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bound: expected True or False, got 'no'"):
        simulate(instance, "fifo", bound="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="partial: expected True or False, got 1"):
        simulate(instance, "fifo", partial=1)  # type: ignore[arg-type]
    path = tmp_path / "t.csv"
    path.write_text("submit_time,duration,num_gpus\n0,50,1\n5,80,2\n")
    loaded = load_trace(path, Cluster.uniform(1, 2, 20.0, 1.0))
    schedule = simulate(loaded, "fifo").schedule
    assert schedule is not None
    assert verify(loaded, schedule).feasible  # type: ignore[arg-type]
    assert ddlsched.rho(loaded) == ddlsched.rho(loaded.instance)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="instance: expected an Instance"):
        verify(schedule, instance)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"schedule: expected a Schedule, got str \(read"):
        verify(instance, "s.json")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="instance: expected an Instance"):
        ddlsched.rho(instance.jobs)  # type: ignore[arg-type]
    config = ddlsched.GeneratorConfig(num_jobs=2)
    with pytest.raises(TypeError, match="seed: expected a whole number or a numpy Generator"):
        ddlsched.generate(config, "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed: expected a whole number >= 0, got -1"):
        ddlsched.generate(config, -1)
    with pytest.raises(TypeError, match="config: expected a GeneratorConfig, got dict"):
        ddlsched.generate({"num_jobs": 2}, 0)  # type: ignore[arg-type]


def test_numpy_integers_are_accepted_wherever_an_int_is() -> None:
    """A NumPy integer (``np.int64``, what arithmetic on arrays gives) is accepted as a
    count, a seed or a limit, and means the same as the Python int; a bool is still
    refused. Guards against integer checks that test ``isinstance(value, int)``."""
    import numpy as np

    config = ddlsched.GeneratorConfig(num_jobs=np.int64(3), servers=np.int32(2))
    assert config == ddlsched.GeneratorConfig(num_jobs=3, servers=2)
    assert type(config.num_jobs) is int  # stored as an int: sweeps write it as JSON
    instance = ddlsched.generate(config, seed=0)
    by_numpy = ddlsched.solve(instance, "fifo", seed=np.int64(1))
    assert by_numpy.objective == ddlsched.solve(instance, "fifo", seed=1).objective
    run = ddlsched.simulate_elastic("workload-6.csv", "fifo", limit=np.int64(2))
    assert len(run.result.completion) == 2
    with pytest.raises(ValueError, match="seed"):
        ddlsched.solve(instance, "fifo", seed=np.bool_(True))
    with pytest.raises(ValueError, match="num_jobs"):
        ddlsched.GeneratorConfig(num_jobs=True)
