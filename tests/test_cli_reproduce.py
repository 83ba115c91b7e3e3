"""One meaning per word: presets defined once, and every printed ``ddlsched generate``
command writes its instance byte for byte."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.core.generators import PRESETS, GeneratorConfig, generate, generate_command
from ddlsched.core.io import dumps
from ddlsched.core.model import InputError
from tests.strategies import generator_configs


def _run_printed(command: str, folder: Path) -> bytes:
    """Run a printed ``ddlsched generate ... --out FILE`` command in-process, writing into
    ``folder``; the bytes written."""
    words = shlex.split(command)
    assert words[:2] == ["ddlsched", "generate"]
    out = folder / "regenerated.json"
    words[words.index("--out") + 1] = str(out)
    assert main(words[1:]) == 0
    return out.read_bytes()


def _expected(config: GeneratorConfig, seed: int) -> bytes:
    """The bytes :func:`ddlsched.core.io.write_instance` writes for the API's instance
    (written independently of the command line)."""
    return dumps(generate(config, seed).to_dict()).encode()


@st.composite
def _every_setting(draw: st.DrawFn) -> GeneratorConfig:
    """Generator settings with the rarely changed fields moved off their defaults too."""
    config = draw(generator_configs())
    return config.replace(
        size_weights=draw(
            st.sampled_from([((1, 0.4), (2, 0.6)), ((1, 1.0),), ((1, 0.1), (4, 0.3))])
        ),
        models=draw(st.sampled_from([("resnet50",), ("bert_base", "vgg16")])),
        duration_slots=draw(st.sampled_from([(1, 4), (2, 3)])),
        iteration_sigma=draw(st.sampled_from([0.8, 0.3, 0.0])),
        users=draw(st.integers(1, 5)),
    )


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(config=_every_setting(), seed=st.integers(0, 2**31))
def test_the_printed_command_writes_the_same_bytes(
    tmp_path: Path, config: GeneratorConfig, seed: int
) -> None:
    """For settings across the generator's space (integral or not, load or batch, every
    drawing setting off its default), running ``generate_command(config, seed)`` writes
    exactly the bytes of ``generate(config, seed)``."""
    assert _run_printed(generate_command(config, seed), tmp_path) == _expected(config, seed)


def test_a_mixed_cluster_and_a_trace_sample_are_reproduced(tmp_path: Path) -> None:
    """Typed clusters (with a per-type bandwidth and a user's own type) and samples of a
    shipped trace are written again byte for byte by their printed commands."""
    typed = GeneratorConfig(
        num_jobs=5,
        servers=3,
        integral=True,
        bandwidth_intra=4.0,
        gpu_types=(("v100", 1), ("t4", 2)),
        type_slowdown=(("t4", 1.6),),
        type_bandwidth=(("v100", 4.0),),
        load=0.7,
    )
    trace = GeneratorConfig.exact_friendly(6, 2, 4).replace(
        integral=False, from_trace="philly_jobs.csv", arrivals="sampled"
    )
    for config in (typed, trace):
        assert _run_printed(config.command(3), tmp_path) == _expected(config, 3)


def test_integral_means_one_thing_on_the_command_line_and_in_the_api(tmp_path: Path) -> None:
    """``generate --integral`` is ``GeneratorConfig(integral=True)`` (the bandwidths stay at
    their defaults, ratio 20), and ``--preset exact-friendly`` is
    ``GeneratorConfig.exact_friendly``: a sweep's ``integral = true`` row and the flag give
    the same instance."""
    out = tmp_path / "i.json"
    assert main(["generate", "--jobs", "6", "--integral", "--seed", "1", "--out", str(out)]) == 0
    assert out.read_bytes() == _expected(GeneratorConfig(num_jobs=6, integral=True), 1)
    assert main(["generate", "--jobs", "6", "--preset", "exact-friendly", "--load", "1",
                 "--seed", "1", "--out", str(out)]) == 0  # fmt: skip
    friendly = GeneratorConfig.exact_friendly(6, 2, 4, load=1.0)
    assert out.read_bytes() == _expected(friendly, 1)
    assert friendly.bandwidth_intra / friendly.bandwidth_inter == 2


def test_a_preset_in_a_toml_table_means_what_it_means_in_the_api(tmp_path: Path) -> None:
    """``preset = "exact-friendly"`` in a ``[generator]`` table gives the API's preset, the
    settings beside it win; an unknown preset is a one-line error naming the key."""
    toml = tmp_path / "g.toml"
    toml.write_text('[generator]\npreset = "exact-friendly"\nnum_jobs = 5\n')
    assert GeneratorConfig.from_toml(toml) == GeneratorConfig.preset("exact-friendly", num_jobs=5)
    assert GeneratorConfig.from_toml(toml) == GeneratorConfig.exact_friendly(5, 2, 4)
    toml.write_text('[generator]\npreset = "fast"\n')
    with pytest.raises(InputError, match=r"generator\.preset: expected one of"):
        GeneratorConfig.from_toml(toml)


def test_every_preset_is_a_valid_configuration() -> None:
    """Each named preset builds a configuration and sets only generator fields."""
    for name in PRESETS:
        assert isinstance(GeneratorConfig.preset(name), GeneratorConfig)
    assert GeneratorConfig.preset("realistic") == GeneratorConfig()
    assert GeneratorConfig.preset("integral") == GeneratorConfig(integral=True)


def _cli_json(*args: str) -> dict:
    """Run ``ddlsched`` in a subprocess (stdout piped, as in a script); its JSON document."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_compare_row_names_its_instance_and_the_worst_seed(tmp_path: Path) -> None:
    """``compare --json`` has one row per instance and method (the exact method too), its
    method rows keyed by the table's headers with the worst seed; ``--out`` writes the same
    rows as CSV (pandas reads it in one line); a row's printed command writes the compared
    instance byte for byte (``CompareConfig.instance``, independent of the CLI)."""
    import pandas as pd

    from ddlsched.experiments.compare import METHOD_HEADERS, RECORD_HEADERS, CompareConfig

    csv = tmp_path / "rows.csv"
    doc = _cli_json("compare", "--jobs", "4", "--instances", "2", "--seed", "5",
                    "--methods", "asrpt,fifo", "--json", "--out", str(csv))  # fmt: skip
    rows = doc["rows"]
    assert [(r["seed"], r["method"]) for r in rows] == [
        (seed, method) for seed in (5, 6) for method in ("exact", "asrpt", "fifo")
    ]
    assert all(list(r) == list(RECORD_HEADERS) for r in rows)
    for name, row in doc["methods"].items():
        assert set(METHOD_HEADERS) <= set(row) and row["method"] == name
        mine = [r["C/OPT"] for r in rows if r["method"] == name]
        assert row["worst seed"] == (5, 6)[mine.index(max(mine))]
        assert row["worst C/OPT"] == max(mine)
    table = pd.read_csv(csv)
    assert list(table.columns) == list(RECORD_HEADERS) and len(table) == len(rows)
    config = CompareConfig(jobs=4, instances=2, seed=5, methods=("asrpt", "fifo"))
    regenerated = _run_printed(rows[-1]["command"], tmp_path)
    assert regenerated == dumps(config.instance(6).to_dict()).encode()


def test_a_missing_optimum_is_explained_and_the_bounds_still_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """When the exact method proves nothing (here its answer is made ``feasible``, as a
    solve stopped by its limit returns it: deterministic, whatever the machine's speed),
    the table says ``not proven`` where C/OPT would be, one line names the seed and why,
    the C/LB column still has certified ratios, and the bounds line is printed against the
    best schedule found."""
    import dataclasses
    import importlib

    from ddlsched.core.result import SolveStatus

    module = importlib.import_module("ddlsched.experiments.compare")

    solve = module.solve

    def unproven(instance, method, **kwargs):  # type: ignore[no-untyped-def]
        result = solve(instance, method, **kwargs)
        if method != "exact":
            return result
        return dataclasses.replace(result, status=SolveStatus.FEASIBLE)

    monkeypatch.setattr(module, "solve", unproven)
    assert main(["compare", "--jobs", "5", "--instances", "1", "--methods", "fifo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    why = [line for line in lines if line.startswith("OPT not proven on 1/1 instance(s)")]
    assert len(why) == 1 and "seeds 0): exact ended unproven" in why[0]
    assert "deterministic limits: 60 CP-SAT work units" in why[0]
    assert "wall-clock" not in why[0]  # no time limit unless asked
    assert any(line.startswith("lower bounds: the best is at least") for line in lines)
    fifo = next(line for line in lines if line.startswith("| fifo |")).split("|")
    assert fifo[2].strip() == "not proven" and float(fifo[7]) >= 1.0


def test_a_trace_sample_at_a_load_on_a_mixed_cluster_is_reproduced(tmp_path: Path) -> None:
    """A trace sample with a load and GPU types (what a sweep row of ``from_trace`` with a
    ``load`` axis records) is accepted by ``generate`` and written byte for byte by its
    printed command, and each load gives its own instance. Guards against a recorded
    command that ``generate`` refuses (``--load`` beside ``--from-trace``)."""
    base = GeneratorConfig(
        num_jobs=5, servers=2, gpu_types=(("v100", 1), ("k80", 1)),
        from_trace="philly_jobs.csv", arrivals="sampled",
    )  # fmt: skip
    written = []
    for load in (0.5, 1.0):
        config = base.replace(load=load)
        assert "--load" in config.command(4) and "--gpu-types" in config.command(4)
        written.append(_run_printed(config.command(4), tmp_path))
        assert written[-1] == _expected(config, 4)
    assert written[0] != written[1]
