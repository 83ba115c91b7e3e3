"""The trace-scale queues of ``las`` and ``gavel`` decide exactly as the plain walks did.

Both policies once walked (or sorted) every waiting job at every event, which made them
7x and 430x FIFO's time on the full Philly trace. Their queues are now filed by GPU
request. The truths here are independent of that filing: a plain Python list for LAS's
waiting part, and the former Gavel class (``reference_gavel``) run side by side on
instances with long queues, fractional weights, mixed GPU types, jobs wider than a
server and a seeded random mapper.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from ddlsched.algorithms.gavel import HeterogeneityAwareRounds
from ddlsched.algorithms.las import _Waiting
from ddlsched.algorithms.mapping import FirstFitMapper, GraphMapper, RandomMapper
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.api import simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance
from ddlsched.core.params import OnlineParams
from tests.algorithms.reference_gavel import ReferenceGavel
from tests.mappers import RefusesEvery

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("back"), st.integers(1, 8)),
        st.tuples(st.just("front"), st.integers(1, 8)),
        st.tuples(st.just("take"), st.integers(0, 12)),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_OPS)
def test_las_waiting_part_takes_in_list_order_what_fits(ops: list[tuple[str, int]]) -> None:
    """Against a list walked in order: the same jobs taken, in the same order, the same
    room left, the same order of those left. Catches: the earliest fitting request not
    chosen (a job taken out of list order), a head insertion that lands behind older
    head insertions, a request dropped when its last job leaves."""
    waiting, model = _Waiting(), []
    gpus: dict[str, int] = {}
    for step, (op, value) in enumerate(ops):
        if op == "take":
            room, expected = value, []
            for job_id in list(model):
                if room > 0 and gpus[job_id] <= room:
                    room -= gpus[job_id]
                    expected.append(job_id)
                    model.remove(job_id)
            assert waiting.take(value) == (expected, room)
        else:
            job_id = f"j{step}"
            gpus[job_id] = value
            if op == "back":
                waiting.push_back(job_id, value)
                model.append(job_id)
            else:
                waiting.push_front(job_id, value)
                model.insert(0, job_id)
        assert list(waiting) == model
        assert len(waiting) == len(model)


def _hard_instances() -> list[tuple[str, Instance]]:
    """Overloaded clusters (queues of tens of jobs), typed and not, weighted 1/2, 2/3, 3."""
    shapes = {
        "uniform": GeneratorConfig(
            num_jobs=120,
            servers=3,
            gpus_per_server=4,
            load=3.0,
            size_weights=((1, 0.4), (2, 0.2), (4, 0.2), (6, 0.2)),
        ),
        "typed": GeneratorConfig(
            num_jobs=100,
            servers=6,
            gpus_per_server=2,
            load=2.5,
            gpu_types=(("v100", 2), ("p100", 2), ("k80", 2)),
            size_weights=((1, 0.5), (2, 0.2), (3, 0.2), (5, 0.1)),
        ),
        "batch": GeneratorConfig(
            num_jobs=60, servers=2, gpus_per_server=4, size_weights=((1, 0.6), (3, 0.4))
        ),
    }
    weights = (0.5, 2 / 3, 1.0, 3.0)
    out = []
    for name, config in shapes.items():
        for seed in (0, 1):
            instance = generate(config, seed=seed)
            jobs = tuple(
                dataclasses.replace(job, weight=weights[k % len(weights)])
                for k, job in enumerate(instance.jobs)
            )
            out.append((f"{name}-{seed}", Instance(instance.cluster, jobs)))
    return out


@pytest.mark.parametrize("mapper", ["graph", "first-fit", "random", "refusing"])
@pytest.mark.parametrize(("name", "instance"), _hard_instances(), ids=lambda x: str(x)[:12])
def test_gavel_decides_as_the_plain_walk(name: str, instance: Instance, mapper: str) -> None:
    """Pieces, mappings and completions equal the former class's on overloaded
    instances. Catches: a waiting job that fit skipped at a boundary (or one that no
    longer fits chosen), a job preempted at a boundary restarted in the same dispatch,
    work-conserving starts between boundaries in another order, a chosen job that
    failed to map retried, a cursor lost when a started job leaves its list."""
    schedules = []
    for cls in (HeterogeneityAwareRounds, ReferenceGavel):
        made = {
            "graph": GraphMapper(),
            "first-fit": FirstFitMapper(),
            "random": RandomMapper(np.random.default_rng(5)),
            "refusing": RefusesEvery(5),
        }[mapper]
        # 10 h rounds: these jobs run for days, so 6 min rounds would make 10^5 pieces
        policy = cls(instance.cluster, made, round_length=36_000.0, restart_cost=7.5)
        result = simulate(instance, policy, bound=False)
        assert result.schedule is not None
        assert verify(instance, result.schedule).feasible
        schedules.append([job.to_dict() for job in result.schedule.jobs])
    fast, plain = schedules
    assert fast == plain
    preempted = sum(len(job["pieces"]) > 1 for job in fast if job.get("pieces"))
    assert preempted >= 5, "the family must make Gavel preempt"


def test_las_on_an_overloaded_typed_cluster_is_a_feasible_fair_schedule() -> None:
    """``las`` and ``las-tiresias`` on the hard family pass the verifier and preempt."""
    for _, instance in _hard_instances():
        for policy in ("las", "las-tiresias"):
            result = simulate(instance, policy, params=OnlineParams(restart_cost=3.0), bound=False)
            assert result.schedule is not None
            assert verify(instance, result.schedule).feasible
