"""Generators (ddlsched.core.generators): seeded, integral on purpose, settings named."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddlsched.core.alpha import alpha, alpha_max
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.io import dumps
from ddlsched.core.model import InputError, Instance
from tests.strategies import generated_instances


def _is_multiple(value: float, slot: float) -> bool:
    ratio = value / slot
    return math.isclose(ratio, round(ratio), rel_tol=0, abs_tol=1e-7)


@given(st.one_of(generated_instances(integral=True), generated_instances(True, mixed=True)))
def test_integral_mode_is_integral(instance: Instance) -> None:
    """Integral mode: releases, K*alpha(x) for every mapping, K*alpha_max on the slot grid."""
    cluster = instance.cluster
    slot = instance.slot
    for job in instance.jobs:
        assert _is_multiple(job.release, slot)
        assert _is_multiple(job.iterations * alpha_max(job, cluster).value, slot)
        mappings = itertools.islice(
            itertools.product(range(cluster.num_servers), repeat=job.gpus), 200
        )
        for mapping in mappings:
            assert _is_multiple(job.iterations * alpha(job, cluster, mapping), slot)


@given(generated_instances())
def test_generated_instances_validate(instance: Instance) -> None:
    """Every generated instance passes validation again from its own fields."""
    assert Instance(instance.cluster, instance.jobs, instance.slot) == instance
    for job in instance.jobs:
        assert job.parallelism is not None and job.parallelism.gpus == job.gpus
        assert job.gpus <= instance.cluster.num_gpus


def test_same_seed_same_bytes() -> None:
    """The same configuration and seed give byte-identical files; another seed differs."""
    config = GeneratorConfig(num_jobs=10, load=1.0, integral=True, bandwidth_intra=2.0)
    first = dumps(generate(config, 7).to_dict())
    assert dumps(generate(config, 7).to_dict()) == first
    assert dumps(generate(config, np.random.default_rng(7)).to_dict()) == first
    assert dumps(generate(config, 8).to_dict()) != first


def test_poisson_load_scales_arrivals() -> None:
    """A higher load packs the same jobs into a shorter arrival span."""
    light = generate(GeneratorConfig(num_jobs=200, load=0.5), 3)
    heavy = generate(GeneratorConfig(num_jobs=200, load=2.0), 3)
    span = lambda inst: inst.jobs[-1].release  # noqa: E731
    assert span(heavy) == pytest.approx(span(light) / 4.0, rel=1e-9)
    assert all(job.release == 0.0 for job in generate(GeneratorConfig(num_jobs=5), 3).jobs)


def test_bad_generator_settings_named() -> None:
    """Bad settings fail with the setting's name."""
    with pytest.raises(InputError, match="integer"):
        GeneratorConfig(integral=True, bandwidth_intra=2.5, bandwidth_inter=1.0)
    with pytest.raises(InputError, match="models: unknown model 'alexnet'"):
        GeneratorConfig(models=("alexnet",))
    with pytest.raises(InputError, match="load"):
        GeneratorConfig(load=-1.0)
    with pytest.raises(InputError, match="num_jobs"):
        GeneratorConfig(num_jobs=0)


def test_toml_config(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A [generator] table in TOML loads; an unknown key is named."""
    path = tmp_path / "gen.toml"
    path.write_text(
        '[generator]\nnum_jobs = 3\nmodels = ["bert_base"]\nintegral = true\n'
        "bandwidth_intra = 2.0\n"
    )
    config = GeneratorConfig.from_toml(path)
    assert config.num_jobs == 3 and config.models == ("bert_base",)
    path.write_text("[generator]\nnum_jobz = 3\n")
    with pytest.raises(InputError, match="num_jobz"):
        GeneratorConfig.from_toml(path)


def test_no_negative_zero_release() -> None:
    """Integral rounding never writes a release of -0.0 to a file."""
    config = GeneratorConfig(num_jobs=5, load=1.0, integral=True, bandwidth_intra=2.0)
    for seed in range(20):
        text = dumps(generate(config, seed).to_dict())
        assert '"release": -0.0' not in text


def test_mixed_cluster_jobs_carry_gavel_times() -> None:
    """Each job gets one compute time per type present, in Gavel's measured ratios."""
    from ddlsched.core.zoo import GAVEL_MATCH, GAVEL_SLOWDOWN

    config = GeneratorConfig(
        num_jobs=6, servers=3, gpu_types=(("v100", 1), ("k80", 2)), models=("resnet50",)
    )
    instance = generate(config, 3)
    assert instance.cluster.server_types == ("v100", "k80", "k80")
    k80, _, v100 = GAVEL_SLOWDOWN[GAVEL_MATCH["resnet50"][0]]
    for job in instance.jobs:
        times = dict(job.compute_times)
        assert set(times) == {"v100", "k80"}
        assert times["k80"] / times["v100"] == pytest.approx(k80 / v100)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"servers": 3, "gpu_types": (("v100", 2), ("k80", 2))}, "servers"),
        ({"gpu_types": (("a100", 2),)}, "gpu_types.a100"),
        ({"gpu_types": (("v100", 0), ("k80", 2))}, "gpu_types.v100"),
        (
            {"gpu_types": (("v100", 1), ("k80", 1)), "type_slowdown": (("k80", -1.0),)},
            "type_slowdown.k80",
        ),
        (
            {
                "integral": True,
                "bandwidth_intra": 2.0,
                "gpu_types": (("v100", 1), ("k80", 1)),
                "type_bandwidth": (("v100", 3.0),),
            },
            "bandwidth",
        ),
    ],
)
def test_bad_gpu_type_settings_are_named(changes: dict[str, object], named: str) -> None:
    with pytest.raises(InputError, match=named):
        GeneratorConfig(**changes)  # type: ignore[arg-type]


def test_own_type_with_slowdown() -> None:
    """A user's own type computes at its slowdown times the zoo's (V100) time."""
    config = GeneratorConfig(
        num_jobs=3, gpu_types=(("v100", 1), ("t4", 1)), type_slowdown=(("t4", 1.5),)
    )
    for job in generate(config, 0).jobs:
        times = dict(job.compute_times)
        assert times["t4"] == pytest.approx(1.5 * times["v100"])


@pytest.mark.parametrize("load", [0.5, 2.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_generated_offered_load_matches_the_setting(load: float, seed: int) -> None:
    """The generated arrivals give the asked offered load, recomputed independently
    (:func:`ddlsched.core.offered_load.offered_load`: GPU-seconds at ``alpha_min`` over
    ``M`` times the arrival span) within 10% on 400 jobs that fit one server
    (where the generator's one-server estimate is ``alpha_min``).

    Catches the slip: an arrival rate wrong by a load-independent factor
    (``load * mean(work) / M``, the cluster size left out, ...), which the
    span-ratio test cannot see.
    """
    from ddlsched.core.offered_load import offered_load

    config = GeneratorConfig(num_jobs=400, load=load, max_job_gpus=4)
    measured = offered_load(generate(config, seed))
    assert measured == pytest.approx(load, rel=0.1)


def test_a_negative_iteration_spread_is_refused_by_name() -> None:
    """``iteration_sigma = -1`` is refused when the settings are made, naming the setting
    (it failed inside NumPy's lognormal draw, as a sweep task's error)."""
    from ddlsched.core.generators import GeneratorConfig
    from ddlsched.core.model import InputError

    with pytest.raises(InputError, match="iteration_sigma: must be a number >= 0"):
        GeneratorConfig(iteration_sigma=-1)
    assert GeneratorConfig(iteration_sigma=0).iteration_sigma == 0


def test_a_config_naming_a_trace_generates_its_sample(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``GeneratorConfig(from_trace=...)`` makes ``generate`` return the trace sample of the
    seed (what sweeps and the API get), on the config's cluster, ``arrivals`` passed on;
    the drawn-job settings that cannot apply are refused. Catches a generator that ignores
    the trace or the seed."""
    from ddlsched.core.model import InputError
    from ddlsched.core.traces import trace_sample

    trace = tmp_path / "t.csv"
    trace.write_text(
        "submit_time,duration,num_gpus\n"
        + "".join(f"{5 * k},{30.25 + 7.5 * k},{1 + k % 3}\n" for k in range(9))
    )
    config = GeneratorConfig(num_jobs=3, from_trace=str(trace))
    for seed in range(4):
        for arrivals in (None, "sampled"):
            drawn = generate(config.replace(arrivals=arrivals), seed)
            sample = trace_sample(trace, config.cluster(), 3, seed=seed,
                                  arrivals=arrivals or "consecutive")  # fmt: skip
            assert drawn == sample
    with pytest.raises(InputError, match="integral: not with from_trace"):
        config.replace(integral=True)
    with pytest.raises(InputError, match="arrivals: only with from_trace"):
        GeneratorConfig(arrivals="sampled")
    with pytest.raises(InputError, match="arrivals: expected 'consecutive' or 'sampled'"):
        config.replace(arrivals="poisson")
    with pytest.raises(InputError, match="from_trace: expected a trace"):
        GeneratorConfig(from_trace="  ")


@st.composite
def _distinct_size_weights(draw: st.DrawFn) -> list[tuple[int, float]]:
    """Distinct GPU sizes from 1..8 in any order with weights from 0 to 5 (size 1's
    positive, so some size fits 2 x 4 GPUs)."""
    wider = draw(st.lists(st.integers(2, 8), max_size=4, unique=True))
    pairs = [(1, draw(st.floats(0.1, 5.0))), *((s, draw(st.floats(0.0, 5.0))) for s in wider)]
    return list(draw(st.permutations(pairs)))


@given(_distinct_size_weights(), st.data(), st.integers(0, 2**32 - 1))
def test_a_gpu_size_listed_twice_is_refused_by_name(
    pairs: list[tuple[int, float]], data: st.DataObject, seed: int
) -> None:
    """Distinct ``size_weights`` are taken and the jobs drawn have only sizes listed with a
    positive weight; one of those sizes listed again, anywhere, with any weight, is
    refused when the settings are made, naming the setting and the size (both weights
    were drawn from, so the size got their sum, whichever the user meant)."""
    instance = generate(GeneratorConfig(num_jobs=4, size_weights=tuple(pairs)), seed)
    drawn = {job.gpus for job in instance.jobs}
    assert drawn <= {size for size, weight in pairs if weight > 0 and size <= 8}
    size = data.draw(st.sampled_from([s for s, _ in pairs]))
    at = data.draw(st.integers(0, len(pairs)))
    repeated = [*pairs[:at], (size, data.draw(st.floats(0.0, 5.0))), *pairs[at:]]
    with pytest.raises(
        InputError, match=rf"^size_weights: GPU size {size} listed more than once;"
    ):
        GeneratorConfig(num_jobs=4, size_weights=tuple(repeated))


def test_a_repeat_is_refused_whatever_the_integer_type() -> None:
    """``2`` and ``numpy.int64(2)`` are one GPU size (a NumPy-built setting repeats too)."""
    with pytest.raises(InputError, match="size_weights: GPU size 2 listed more than once"):
        GeneratorConfig(size_weights=((2, 1.0), (np.int64(2), 3.0)))  # type: ignore[arg-type]


def test_a_gpu_type_given_two_slowdowns_is_refused_by_name() -> None:
    """``type_slowdown`` naming one type twice is refused, naming the type (the last
    factor was used without a word)."""
    with pytest.raises(InputError, match="type_slowdown: GPU type 't4' listed more than once"):
        GeneratorConfig(
            servers=2,
            gpu_types=(("v100", 1), ("t4", 1)),
            type_slowdown=(("t4", 1.5), ("t4", 2.0)),
        )


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ("size_weights = [[2, 1.0], [2, 3.0]]", "size_weights: GPU size 2"),
        ("size_weights = [[1, 0.5], [4, 0.5], [1, 0.0]]", "size_weights: GPU size 1"),
        (
            'servers = 2\ngpu_types = [["v100", 1], ["t4", 1]]\n'
            'type_slowdown = [["t4", 1.5], ["t4", 1.5]]',
            "type_slowdown: GPU type 't4'",
        ),
    ],
)
def test_a_repeat_in_a_toml_generator_table_is_refused(
    tmp_path: Path, table: str, named: str
) -> None:
    """A ``[generator]`` table repeating a size or a type is refused when read, naming the
    file, the setting and the repeat, from :meth:`GeneratorConfig.from_toml` and from a
    sweep file alike (one check, in the settings themselves)."""
    from ddlsched.sweeps import read_sweep

    path = tmp_path / "gen.toml"
    path.write_text(f"[generator]\n{table}\n")
    with pytest.raises(InputError, match=rf"^{path}: generator: {named} listed more than once"):
        GeneratorConfig.from_toml(path)
    path.write_text(f'[sweep]\nmethods = ["fifo"]\nseeds = 1\n[generator]\n{table}\n')
    with pytest.raises(InputError, match=f"{named} listed more than once"):
        read_sweep(path)


def _small_trace(folder: Path) -> Path:
    """Nine jobs of 1-3 GPUs submitted 5 s apart, with distinct durations."""
    trace = folder / "t.csv"
    trace.write_text(
        "submit_time,duration,num_gpus\n"
        + "".join(f"{5 * k},{30.25 + 7.5 * k},{1 + k % 3}\n" for k in range(9))
    )
    return trace


def test_a_trace_sample_is_scaled_to_the_load_asked(tmp_path: Path) -> None:
    """With ``from_trace``, ``load`` scales the sample's recorded arrivals so that its offered
    load is ``load`` (``offered_load.at_load``): the same jobs, other releases, one instance
    per load; ``None`` keeps the recorded arrivals. A sample whose jobs all arrive at once,
    or of one job, cannot be scaled and is refused naming ``load``. Guards against a load
    silently dropped beside a trace (every load gave the same instance)."""
    from ddlsched.core.offered_load import at_load, offered_load
    from ddlsched.core.traces import trace_sample

    trace = _small_trace(tmp_path)
    config = GeneratorConfig(num_jobs=4, from_trace=str(trace))
    recorded = generate(config, 2)
    assert recorded == trace_sample(trace, config.cluster(), 4, seed=2)
    for load in (0.5, 2.0):
        scaled = generate(config.replace(load=load), 2)
        assert scaled == at_load(recorded, load)[0]
        assert math.isclose(offered_load(scaled), load)
        assert [job.id for job in scaled.jobs] == [job.id for job in recorded.jobs]
    assert generate(config.replace(load=0.5), 2) != generate(config.replace(load=2.0), 2)
    with pytest.raises(InputError, match="load: needs at least 2 jobs"):
        config.replace(num_jobs=1, load=1.0)
    same_time = tmp_path / "same.csv"
    same_time.write_text("submit_time,duration,num_gpus\n" + "7,30,1\n" * 3)
    with pytest.raises(InputError, match=r"same\.csv: load 1: the 3 jobs of the sample"):
        generate(GeneratorConfig(num_jobs=3, from_trace=str(same_time), load=1.0), 0)


def test_a_trace_sample_runs_on_a_mixed_cluster(tmp_path: Path) -> None:
    """``gpu_types`` with ``from_trace`` gives the trace's jobs per-type compute times on the
    typed cluster (Gavel's measured slowdowns, a user type's ``type_slowdown``), as drawn
    jobs get them. Guards against the types being accepted by one door and refused or
    ignored by another."""
    from ddlsched.core.zoo import type_compute_times

    trace = _small_trace(tmp_path)
    config = GeneratorConfig(
        num_jobs=3, servers=2, gpu_types=(("v100", 1), ("t4", 1)),
        type_slowdown=(("t4", 1.5),), from_trace=str(trace),
    )  # fmt: skip
    instance = generate(config, 1)
    assert instance.cluster.types == ("v100", "t4")
    for job in instance.jobs:
        assert math.isclose(job.compute_on("t4"), 1.5 * job.compute_on("v100"))
        measured = type_compute_times(str(job.features["model"]), 1.0)
        assert job.compute_on("v100") == pytest.approx(job.compute_time * measured["v100"])
