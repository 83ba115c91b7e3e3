"""Every number the command line takes is checked at the door, in one line naming the option.

The options are found by walking the real parser (every subcommand, every option with a
converter), so an option added later is covered without editing this file, and a converter
loosened by one character (``>=`` for ``>``, a dropped finiteness test) fails here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ddlsched.cli import build_parser, main

ZERO_ALLOWED = {
    ("compare", "--load"): "0 means: no load scaling",
    ("solve", "--mip-gap"): "0 asks for a proven optimum",
    ("simulate", "--restart-cost"): "0 is Tiresias's own restart cost",
    ("check", "--prediction-error"): "0 means exact predictions (Theorem 1 itself)",
    **{(command, "--seed"): "seeds start at 0" for command in
       ("compare", "generate", "solve", "simulate", "bound", "check", "predict")},
}  # fmt: skip
"""Numeric options for which 0 is a meaningful value (each with the reason)."""

NEVER_ACCEPTED = ("-1", "-0.5", "nan", "inf", "-inf", "1e400", "x", "", "1,5")
"""Values no numeric option takes: negatives, non-finite, not a number."""


def _numeric_options() -> list[tuple[str, str, str]]:
    """(command, option, a valid value) for every option whose converter reads a number."""
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for command, sub in subparsers.choices.items():
        for action in sub._actions:
            if action.type is None or not action.option_strings:
                continue
            option = action.option_strings[-1]
            for valid in ("2.5", "1", "v100:1"):
                try:
                    action.type(valid)
                except (argparse.ArgumentTypeError, ValueError, TypeError):
                    continue
                if valid != "v100:1":
                    found.append((command, option, valid))
                break
    return found


OPTIONS = _numeric_options()


def test_the_walk_finds_the_numeric_options_of_every_command() -> None:
    """The walk finds the numeric options of every command, so the parametrised tests below
    check each of them: at least these named ones, and at least 40 in all."""
    names = {(command, option) for command, option, _ in OPTIONS}
    assert {("simulate", "--restart-cost"), ("compare", "--load"), ("solve", "--mip-gap"),
            ("bound", "--lp-max-variables"), ("sweep", "--workers")} <= names  # fmt: skip
    assert len(OPTIONS) >= 40


def _refused(capsys: pytest.CaptureFixture[str], command: str, option: str, value: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        main([command, f"{option}={value}"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2, (command, option, value)
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("command", "option", "valid"), OPTIONS, ids=lambda v: str(v))
def test_negative_non_finite_and_non_numbers_are_refused(
    capsys: pytest.CaptureFixture[str], command: str, option: str, valid: str
) -> None:
    """Negative, NaN, infinite, overflowing and non-numeric values are refused with exit 2
    and an error line naming the option and the value.

    Catches: a negative ``--restart-cost`` or ``--load`` accepted (a job resuming in negative
    time; arrivals compressed by a negative factor), a NaN slipping through a ``>`` test.
    """
    for value in NEVER_ACCEPTED:
        err = _refused(capsys, command, option, value)
        last = err.strip().splitlines()[-1]
        assert f"argument {option}" in last and "error" in last, last


@pytest.mark.parametrize(("command", "option", "valid"), OPTIONS, ids=lambda v: str(v))
def test_zero_only_where_it_means_something(
    capsys: pytest.CaptureFixture[str], command: str, option: str, valid: str
) -> None:
    """0 is refused (a zero time limit, bandwidth, count, LP size or load factor has no
    meaning) except for the options listed in :data:`ZERO_ALLOWED`, which parse it.

    Catches: ``--lp-max-variables 0`` or ``--time-limit 0`` accepted, and a converter made
    strict where 0 is the documented default (``--mip-gap 0``).
    """
    if (command, option) in ZERO_ALLOWED:
        parser = build_parser()
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        action = next(
            a for a in subparsers.choices[command]._actions if option in a.option_strings
        )
        assert action.type is not None
        assert action.type("0") == 0
    else:
        _refused(capsys, command, option, "0")


@pytest.mark.parametrize(
    ("command", "option", "valid"),
    [entry for entry in OPTIONS if entry[2] == "1"],
    ids=lambda v: str(v),
)
def test_whole_number_options_refuse_fractions(
    capsys: pytest.CaptureFixture[str], command: str, option: str, valid: str
) -> None:
    """Counts (jobs, servers, GPUs, workers, seeds, LP variables) refuse 2.5 and 1e3.5
    rather than rounding them. Catches: ``int(float(text))`` in a count's converter."""
    _refused(capsys, command, option, "2.5")


CONFLICTS = [
    (
        ["simulate", "--trace", "{workload}", "--policy", "pollux", "--seed", "0",
         "--columns", "submit=time", "--load-factor", "2"],
        "--columns, --load-factor, --seed: not available for elastic jobs ({workload})",
    ),
    (
        ["simulate", "--trace", "{workload}", "--policy", "pollux", "--predictor", "oracle",
         "--unnamed", "zoo", "--bandwidth-intra", "20"],
        "--bandwidth-intra, --predictor, --unnamed: not available for elastic jobs ({workload})",
    ),
    (
        ["bound", "{instance}", "--limit", "5", "--servers", "256"],
        "--servers, --limit: only with --trace (the instance file fixes the cluster and jobs)",
    ),
    (["bound", "{instance}", "--lp-time-limit", "300"], "--lp-time-limit: only with --lp"),
    (
        ["solve", "{instance}", "--method", "fifo", "--time-limit", "60", "--verbose"],
        "--time-limit, --verbose: only for exact methods; 'fifo' is an online policy",
    ),
    (
        ["solve", "{instance}", "--method", "milp", "--mapper", "graph", "--seed", "0"],
        "--mapper, --seed: only for online policies; 'milp' is exact",
    ),
    (["check", "{instance}", "--random", "2"], "check: INSTANCE and --random: give one of them"),
    (
        ["check", "--random", "2", "--adversarial", "2"],
        "check: --random and --adversarial: give one of them",
    ),
    (
        ["check", "{instance}", "--jobs", "4", "--gpus-per-server", "2"],
        "--gpus-per-server, --jobs: only with --random or --adversarial (the instance file is "
        "checked as it is)",
    ),
    (
        ["check", "--adversarial", "2", "--prediction-error", "0.1"],
        "--prediction-error: not used by --adversarial (its search sets its own)",
    ),
    (
        ["predict", "evaluate", "--trace", "{trace}", "--jobs", "3000"],
        "--jobs: the size of a generated history; --trace gives the jobs",
    ),
    (
        ["sweep", "{sweep}", "--scheduler", "tcp://127.0.0.1:8786", "--workers", "2",
         "--results", "{results}"],
        "--workers: only for the local cluster; --scheduler names one",
    ),
    (["compare", "--arrivals", "sampled"], "--arrivals: only with --from-trace"),
    (
        ["compare", "--out", "{results}"],
        "--out {results}: expected a .csv file (rows are written as CSV)",
    ),
    (
        ["compare", "--seed", "9223372036854775807", "--instances", "2"],
        "instances: seeds 9223372036854775807..9223372036854775808 pass 2^63 - 1, the "
        "largest seed; give a smaller seed or fewer instances",
    ),
]  # fmt: skip
"""Options that would be ignored beside others, and the line refusing each (a value equal
to the default is refused too: what matters is that the user asked for it)."""


@pytest.mark.parametrize(
    ("argv", "expected"), CONFLICTS, ids=[" ".join(argv)[:60] for argv, _ in CONFLICTS]
)
def test_options_that_would_be_ignored_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], expected: str
) -> None:
    """An option that means nothing beside another (a trace reader's option with a Pollux
    workload or an instance file, an exact solver's option with a policy and the reverse,
    two modes of ``check``, ``--workers`` with a remote scheduler) is one line, exit 2,
    naming the options in the order the command lists them (with a Pollux workload, every
    option it does not use, in alphabetical order), rather than silently ignored."""
    from ddlsched.core.data import data_path
    from ddlsched.core.generators import GeneratorConfig, generate
    from ddlsched.core.io import write_instance

    workload = tmp_path / "w.csv"
    head = data_path("pollux", "workloads", "workload-6.csv").read_text().splitlines()
    workload.write_text("\n".join(head[:4]) + "\n")
    instance = tmp_path / "i.json"
    write_instance(generate(GeneratorConfig(num_jobs=2), 0), instance)
    trace = tmp_path / "t.csv"
    trace.write_text("submit,duration,gpus,iterations\n0,10,1,5\n")
    sweep = tmp_path / "s.toml"
    sweep.write_text('[sweep]\nmethods = ["fifo"]\nseeds = 1\n')
    names = {"workload": workload, "instance": instance, "trace": trace, "sweep": sweep,
             "results": tmp_path / "r.sqlite"}  # fmt: skip
    code = main([word.format(**names) for word in argv])
    assert code == 2
    captured = capsys.readouterr()
    assert captured.err == f"ddlsched: error: {expected.format(**names)}\n"
    assert captured.out == ""
    assert not (tmp_path / "r.sqlite").exists()


def test_typed_options_are_told_from_defaults() -> None:
    """The parser records the options the user typed (an abbreviation under its full name),
    not those left at their defaults, so a refusal never fires on a default."""
    from ddlsched.cli.options import given

    parser = build_parser()
    args = parser.parse_args(["simulate", "--trace", "t.csv", "--serv", "3", "--json"])
    assert given(args) == {"--trace", "--servers", "--json"}
    assert given(parser.parse_args(["predict", "evaluate"])) == frozenset()


def test_threads_beyond_the_machines_cores_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """``--threads`` beyond the machine's cores is refused (HiGHS stalls starting 100,000
    threads); as many as the cores is accepted."""
    import os

    cores = os.cpu_count() or 1
    _refused(capsys, "solve", "--threads", str(cores + 1))
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(
        a for a in subparsers.choices["solve"]._actions if "--threads" in a.option_strings
    )
    assert action.type is not None and action.type(str(cores)) == cores


def _every_option() -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    """Every option of every command (and of each subcommand of a command), with the
    parser that prints its help."""
    found = []

    def walk(name: str, parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    walk(f"{name} {sub}".strip(), child)
            elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
                found.append((name, parser, action))

    walk("", build_parser())
    return found


def test_every_option_of_every_command_shows_its_default_or_says_it_is_required() -> None:
    """Each option and positional argument of every command and subcommand (``predict
    evaluate`` too) has a line in its command's ``--help`` (an argument without help text
    gets none), and that line, as the command's own formatter expands it, says
    ``required`` for a required option or positional, else its default (a value, ``off``
    for a switch, ``not set``, or words naming it). Catches options left out of the help
    (``check --jobs``, ``solve --method``) and required ones not marked (``generate
    --out``, ``verify INSTANCE``)."""
    options = _every_option()
    assert len(options) > 100
    assert any(command == "predict evaluate" for command, _, _ in options)
    missing = []
    for command, parser, action in options:
        if action.help == argparse.SUPPRESS:
            continue
        shown = parser._get_formatter()._expand_help(action) if action.help else ""
        required = action.required or (not action.option_strings and action.nargs is None)
        if "required" not in shown if required else "default" not in shown:
            missing.append(f"{command} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, missing


def test_no_stray_quote_in_the_servers_default() -> None:
    """The ``--servers`` help of ``compare`` and ``check`` names its fallback, the servers
    ``--gpu-types`` lists, without a stray quote."""
    for command, parser, action in _every_option():
        if "--servers" in action.option_strings and command in ("compare", "check"):
            text = parser._get_formatter()._expand_help(action)
            assert "'" not in text and "--gpu-types lists" in text, (command, text)


def test_compare_help_shows_its_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    """``compare --help`` prints the defaults of --jobs, --instances, --gpus-per-server
    and --servers (4 x 4 GPUs, 20 instances of 20 jobs), which the README's table used."""
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for expected in ("jobs per instance (default: 20)", "GPUs per server (default: 4)",
                     "(default: 20)", "servers (default 4"):  # fmt: skip
        assert expected in text, expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--slot", "1e11", "--integral", "--load", "1"], "--slot: must be from 1e-06 to 1e+06"),
        (["--slot", "5e5", "--integral"], "--slot: integral jobs last up to duration_slots' 4"),
    ],
)
def test_a_slot_too_long_is_named_as_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], expected: str
) -> None:
    """``generate --slot`` beyond the model's slot range, or so long that an integral job's
    compute time (up to duration_slots' high end x slot, 4 x 5e5 s) passes its 1e6 s limit,
    is one line naming ``--slot`` (not a drawn job's compute_time), exit 2, no file."""
    out = tmp_path / "i.json"
    assert main(["generate", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ddlsched: error: {expected}") and err.count("\n") == 1
    assert not out.exists()
