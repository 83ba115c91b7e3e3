"""The API reference and the rendered notebooks build with warnings as errors.

The build executes every notebook on its defaults (myst-nb): this is where the suite
runs them top to bottom, each on a fresh kernel; a cell that raises, a conclusion's
assertion included, fails the build and names the notebook and the cell.
"""

from __future__ import annotations

import doctest
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ddlsched

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))

EXAMPLES = {
    "ddlsched.api": ("solve", "simulate", "lower_bounds", "method_names"),
    "ddlsched.core.generators": ("generate",),
    "ddlsched.core.alpha": ("rho",),
    "ddlsched.proofs_checks.verifier": ("verify",),
    "ddlsched.provenance": ("git_revision",),
}
"""The modules whose examples are run, and the objects that must carry one (the façades)."""


def test_docs_build_without_warnings(tmp_path: Path) -> None:
    """sphinx-build -W: a broken docstring, a missing module, a bad page or a notebook cell
    that raises fails the suite; the notebook pages show what their cells printed."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(ROOT / "docs"),
            str(tmp_path / "html"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for page in ("index", "api/algorithms", "api/core", "notebooks/1_quickstart"):
        assert (tmp_path / "html" / f"{page}.html").exists(), page
    assert "GuidedASRPT" in (tmp_path / "html" / "api" / "algorithms.html").read_text()
    for name in NOTEBOOKS:
        page = (tmp_path / "html" / "notebooks" / f"{name}.html").read_text()
        assert "cell_output" in page, f"{name}: rendered without outputs"
    quickstart = (tmp_path / "html" / "notebooks" / "1_quickstart.html").read_text()
    assert re.search(r"greedy A-SRPT / OPT = \d\.\d{3}", quickstart)  # a printed result
    front = (tmp_path / "html" / "api" / "front_door.html").read_text()
    assert 'href="top_floor.html#ddlsched.api.solve"' in front  # a member, linked
    assert "Examples" in (tmp_path / "html" / "api" / "top_floor.html").read_text()


def test_the_front_door_page_lists_every_member() -> None:
    """Each name of ``ddlsched.__all__`` (but the constant ``PROBLEMS``) is in the table of
    the front door's page, under the module that defines it; a new export without an entry
    would be missing from the page."""
    text = (ROOT / "docs" / "api" / "front_door.rst").read_text()
    listed = set(re.findall(r"^   ~([\w.]+)$", text, flags=re.M))
    expected = {
        f"{getattr(ddlsched, name).__module__}.{name}"
        for name in ddlsched.__all__
        if name != "PROBLEMS"
    }
    assert listed == expected


@pytest.mark.parametrize("module", sorted(EXAMPLES))
def test_the_examples_run(module: str) -> None:
    """The façades carry an Examples section, and every example in their modules prints
    what it shows (doctest), so the API pages cannot show a stale call or result."""
    loaded = importlib.import_module(module)
    for name in EXAMPLES[module]:
        assert "Examples\n" in (getattr(loaded, name).__doc__ or ""), f"{module}.{name}"
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, attempted = doctest.testmod(loaded, optionflags=flags, report=True)
    assert attempted >= len(EXAMPLES[module]) and failed == 0


def test_every_module_has_an_api_page() -> None:
    """A new module without an ``automodule`` entry would be missing from the reference."""
    root = Path(__file__).resolve().parents[1]
    documented = {
        line.split("automodule::", 1)[1].strip()
        for page in (root / "docs" / "api").glob("*.rst")
        for line in page.read_text().splitlines()
        if "automodule::" in line
    }
    modules = {
        ".".join(("ddlsched", *path.relative_to(root).with_suffix("").parts)).replace(
            "ddlsched.ddlsched", "ddlsched"
        )
        for package in ("ddlsched", "formulations", "algorithms", "proofs_checks")
        for path in (root / package).rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }
    assert modules - documented == set()
