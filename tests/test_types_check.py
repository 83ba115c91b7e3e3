"""The packages' types, checked on the source: mypy passes, and ``Any`` stays rare.

mypy cannot read ``[tool.setuptools.package-dir]``: checking the folders as they lie
(``mypy ddlsched formulations algorithms proofs_checks``) makes ``formulations`` a
top-level package of its own, so every ``from ddlsched.formulations... import`` in the
project resolves to nothing and its names are silently ``Any``. So mypy checks the
installed layout instead: a folder whose ``ddlsched/`` holds links to the checkout's
modules and packages, with ``formulations/``, ``algorithms/`` and ``proofs_checks/``
linked inside it where ``package-dir`` puts them. Every file is checked once, under the
module name it is imported by.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"

ANY_LIMIT = 38
"""Most uses of ``typing.Any`` the four packages may hold (:func:`any_uses`). Lower it as
precise types replace them; keep ``Any`` only where a value is truly any (a value read
from a file before it is checked, ``**kwargs`` passed on unchanged)."""


def package_folders() -> dict[str, Path]:
    """Each package of the project by its import name, with its folder in the checkout:
    ``ddlsched`` and the subpackages ``package-dir`` maps from top-level folders."""
    setuptools = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = {"ddlsched": ROOT / "ddlsched"}
    folders.update({name: ROOT / path for name, path in setuptools["package-dir"].items()})
    return folders


def sources() -> list[Path]:
    """Every Python file of the four packages."""
    return sorted(path for folder in package_folders().values() for path in folder.rglob("*.py"))


def installed_layout(where: Path) -> Path:
    """A folder under ``where`` laid out as the installed ``ddlsched``, of links into the
    checkout (edits show at once); the path that holds ``ddlsched/``."""
    top = where / "layout"
    package = top / "ddlsched"
    package.mkdir(parents=True)
    for entry in sorted((ROOT / "ddlsched").iterdir()):
        if entry.suffix == ".py" or (entry / "__init__.py").is_file():
            (package / entry.name).symlink_to(entry)
    for name, folder in package_folders().items():
        if name != "ddlsched":
            *parents, last = name.split(".")[1:]
            (package.joinpath(*parents) / last).symlink_to(folder)
    return top


def checkout_path(line: str) -> str:
    """A line of mypy's report with the installed path of a subpackage's file turned back
    into the checkout's (``ddlsched/formulations/milp.py`` -> ``formulations/milp.py``)."""
    for name, folder in package_folders().items():
        if name != "ddlsched":
            installed = name.replace(".", "/") + "/"
            line = line.replace(installed, folder.relative_to(ROOT).as_posix() + "/")
    return line


@pytest.mark.slow
def test_mypy_passes_on_every_file_of_the_four_packages(tmp_path: Path) -> None:
    """mypy, with the project's ``[tool.mypy]`` settings, finds no error in the packages,
    and checks each of their files exactly once (none left out, none checked twice under
    two module names)."""
    layout = installed_layout(tmp_path)
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(PYPROJECT),
        "--cache-dir",
        os.devnull,  # no cache: every run checks afresh (writing one costs a tenth more)
        "-p",
        "ddlsched",
    ]
    done = subprocess.run(command, cwd=layout, capture_output=True, text=True, check=False)
    report = "\n".join(checkout_path(line) for line in done.stdout.splitlines())
    # "Success: no issues found in N source files" or "... (checked N source files)"
    checked = re.search(r"(\d+) source files?\)?$", report)
    assert checked is not None, f"no summary from mypy:\n{report}\n{done.stderr}"
    assert int(checked.group(1)) == len(sources()), report.splitlines()[-1]
    assert done.returncode == 0, f"mypy found errors:\n{report}"


def any_uses(path: Path) -> int:
    """How many times ``path`` names ``typing.Any`` in its code: ``Any`` and ``typing.Any``,
    in annotations written out or as strings; not its import, not the word in prose."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    uses = 0
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id == "Any") or (
            isinstance(node, ast.Attribute) and node.attr == "Any"
        ):
            uses += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            uses += _any_in_annotation(node.value)
    return uses


def _any_in_annotation(text: str) -> int:
    """The uses of ``Any`` in ``text`` if it reads as a type expression (a string
    annotation such as ``"dict[str, Any]"``); prose does not parse and counts none."""
    if "Any" not in text:
        return 0
    try:
        expression = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return 0
    return sum(isinstance(n, ast.Name) and n.id == "Any" for n in ast.walk(expression))


def test_uses_of_any_stay_within_the_limit() -> None:
    """The packages use ``typing.Any`` at most :data:`ANY_LIMIT` times (precise types
    instead: the real classes, protocols, ``object`` for what is only passed on)."""
    counts = {path: any_uses(path) for path in sources()}
    total = sum(counts.values())
    worst = sorted(counts.items(), key=lambda item: -item[1])[:10]
    listing = ", ".join(f"{p.relative_to(ROOT)} {n}" for p, n in worst if n)
    assert total <= ANY_LIMIT, f"{total} uses of Any (limit {ANY_LIMIT}); most in {listing}"


def test_any_is_counted_in_code_and_string_annotations_only(tmp_path: Path) -> None:
    """The count sees ``Any`` written out, through ``typing.`` and inside a string
    annotation, and skips the import, a comment and the word in a docstring."""
    module = tmp_path / "sample.py"
    module.write_text(
        '"""Any value goes here."""\n'
        "import typing\n"
        "from typing import Any  # Any in a comment\n"
        "def f(a: Any, b: typing.Any) -> 'dict[str, Any]':\n"
        '    """Any such call."""\n'
        "    return {}\n",
        encoding="utf-8",
    )
    assert any_uses(module) == 3
