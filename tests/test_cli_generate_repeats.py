"""``ddlsched generate`` refuses a GPU size given two weights or a GPU type given two
slowdowns, whether typed as an option or read from a ``--config`` file: one line naming
the option or setting and the repeat, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlsched.cli import main


def _exit_code(argv: list[str]) -> int:
    """``main(argv)``'s exit code, whether returned or raised by argparse."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--size-weights", "2:1,2:3"], "argument --size-weights: 2 named more than once"),
        (["--size-weights", "1:1,4:0.5,01:2"], "argument --size-weights: 1 named more than once"),
        (
            ["--gpu-types", "v100:1,t4:1", "--type-slowdown", "t4:1.5,t4:2"],
            "argument --type-slowdown: t4 named more than once",
        ),
    ],
)
def test_a_repeat_given_as_an_option_is_one_line_exit_2(
    tmp_path: Path, options: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A size (``2``, ``1`` and ``01`` alike) or a type listed twice in an option is refused
    in one line naming the option and the repeat; no instance is written."""
    out = tmp_path / "g.json"
    assert _exit_code(["generate", *options, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and named in captured.err, captured.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ("size_weights = [[2, 1.0], [2, 3.0]]", "size_weights: GPU size 2"),
        (
            'servers = 2\ngpu_types = [["v100", 1], ["t4", 1]]\n'
            'type_slowdown = [["t4", 1.5], ["t4", 2.0]]',
            "type_slowdown: GPU type 't4'",
        ),
    ],
)
def test_a_repeat_in_the_config_file_is_one_line_exit_2(
    tmp_path: Path, table: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``generate --config`` with a repeated size or type in its ``[generator]`` table is
    refused by the settings' own check, in one line naming the file, the setting and
    the repeat; no instance is written."""
    config, out = tmp_path / "c.toml", tmp_path / "g.json"
    config.write_text(f"[generator]\n{table}\n")
    assert _exit_code(["generate", "--config", str(config), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"ddlsched: error: {config}: generator: {named} listed more than once; "
        f"give each {'size one weight' if 'size' in named else 'type one factor'}\n"
    )
    assert captured.out == "" and not out.exists()


def test_distinct_sizes_from_the_options_are_written(tmp_path: Path) -> None:
    """Distinct sizes are taken: the instance is written and its jobs use only them."""
    from ddlsched.core.io import read_instance

    out = tmp_path / "g.json"
    argv = ["generate", "--jobs", "6", "--size-weights", "1:1,2:3", "--out", str(out)]
    assert _exit_code(argv) == 0
    assert {job.gpus for job in read_instance(out).jobs} <= {1, 2}
