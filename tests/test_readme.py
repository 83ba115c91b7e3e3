"""The README and the docs name only what exists: every path, every command, every option.

A path written in backticks (``ddlsched/cli/solve.py``, ``benchmarks/bench_exact.py``,
``ddlsched/data/traces/philly_jobs.csv``) must exist; every ``ddlsched ...`` line in a shell
block must parse with the real parser (an unknown command or option, or a bad value, fails
here rather than in a reader's terminal); every ``python path/to/script.py`` names a file.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ddlsched.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "docs").glob("*.rst")),
]
PAGES = [page for page in PAGES if "_build" not in page.parts and "notebooks" not in page.parts]
TOP = ("ddlsched/", "formulations/", "algorithms/", "proofs_checks/", "tests/", "benchmarks/",
       "tools/", "notebooks/", "docs/", "examples/", ".ci/")  # fmt: skip
"""A backticked word starting with one of these is a path of the repository."""


def _paths(text: str) -> set[str]:
    found = set()
    for word in re.findall(r"`([^`\s]+)`", text):
        word = re.sub(r":\d+(-\d+)?$", "", word.split("::", 1)[0]).rstrip(".,;:)")
        if word.startswith(TOP) and not word.startswith(("ddlsched/cli ", "docs/_build")):
            found.add(word)
    return found


def _commands(text: str) -> list[str]:
    commands = []
    for block in re.findall(r"```(?:bash|sh|console|shell)\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
                if part.startswith(("ddlsched ", "python ", "python3 ")):
                    commands.append(part)
    return commands


def _exists(path: str) -> bool:
    target = (ROOT / path).resolve()
    if any(ch in path for ch in "*?["):
        return any(ROOT.glob(path))
    return target.exists() and target.is_relative_to(ROOT)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_named_exists(page: Path) -> None:
    """Catches a page naming a file that was renamed or never written (seven did)."""
    missing = sorted(path for path in _paths(page.read_text()) if not _exists(path))
    assert not missing, f"{page.relative_to(ROOT)} names missing paths: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_shown_parses(page: Path) -> None:
    """Every ``ddlsched`` command in a shell block parses (command, options and values);
    every ``python script.py`` names an existing script. Catches a renamed option or
    command left in the docs."""
    parser = build_parser()
    for command in _commands(page.read_text()):
        words = shlex.split(command)
        if words[0].startswith("python"):
            scripts = [w for w in words[1:] if w.endswith(".py")]
            assert all((ROOT / s).exists() for s in scripts), command
            continue
        try:
            parser.parse_args(words[1:])
        except SystemExit as stopped:
            assert stopped.code == 0, f"{page.relative_to(ROOT)}: does not parse: {command}"


def _inline_commands(text: str) -> list[str]:
    """Commands written in running text or tables (in backticks), one line each."""
    found = re.findall(r"`+((?:ddlsched|python3?) [^`]+)`+", text)
    return [" ".join(command.replace("\\|", "|").split()) for command in found]


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of the subcommands below it."""
    options = set(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                options |= _options(child)
    return options


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_inline_command_names_what_exists(page: Path) -> None:
    """A command in running text (``ddlsched bound FILE --lp``, ``python
    benchmarks/bench_milp.py --shapes 4x4``) names a real command and only its real options;
    a ``python script.py`` names an existing script that reads each option given, a
    ``python -m module`` an importable module. Placeholders (``FILE``, ``[--json]``) are fine:
    only the command and the option names are checked."""
    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    problems = []
    for command in _inline_commands(page.read_text()):
        words = command.split()
        options = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", command))
        if words[0] == "ddlsched":
            name = next((w for w in words[1:] if not w.startswith(("-", "["))), None)
            if name is None or name not in commands.choices:
                known = _options(parser)
            else:
                known = _options(commands.choices[name])
            if name is not None and name not in commands.choices and not options:
                problems.append(f"{command}: no command {name!r}")
            problems += [f"{command}: {o}" for o in sorted(options - known - {"--help"})]
        elif words[1] == "-m":
            if importlib.util.find_spec(words[2]) is None:
                problems.append(f"{command}: no module {words[2]}")
        else:
            script = ROOT / words[1]
            if not script.exists():
                problems.append(f"{command}: no script {words[1]}")
                continue
            source = script.read_text()
            problems += [f"{command}: {o}" for o in sorted(options) if f'"{o}"' not in source]
    assert not problems, f"{page.relative_to(ROOT)}: {problems}"


def test_the_readme_is_a_front_door() -> None:
    """At most 250 lines: what, the two set-up commands, the main command's expected output,
    a tour, findings, citing; details live in the docs."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert "python -m pip install -e . && ddlsched compare" in text
    assert 'python -m pip install -e ".[dev]" && python -m pytest -n 2' in text


def _tour() -> list[str]:
    """The README's tour: the ``ddlsched`` lines of the shell block after its heading."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## A tour of the commands", 1)[1]
    block = "```" + "```".join(section.split("```", 3)[1:3]) + "```"
    return [c for c in _commands(block) if c.startswith("ddlsched ")]


@pytest.mark.slow
def test_the_readme_tour_runs_in_order_from_a_bare_folder(tmp_path: Path) -> None:
    """Every command of the tour, in order, exits 0 in a folder holding only the repository's
    ``examples/``, without ``DDLSCHED_DATA``: what a reader of a fresh clone types. Catches a
    command that needs a file the repository does not have (a trace outside it, a sweep
    file never written) or one that depends on a previous line's output that changed."""
    tour = _tour()
    assert len(tour) >= 10 and any("philly_jobs.csv" in c for c in tour)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {k: v for k, v in os.environ.items() if k != "DDLSCHED_DATA"}
    env["MPLBACKEND"] = "Agg"
    for command in tour:
        words = shlex.split(command)
        done = subprocess.run(
            [sys.executable, "-m", "ddlsched.cli", *words[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        assert done.returncode == 0, f"{command}: exit {done.returncode}: {done.stderr[-500:]}"
