"""The layering rules of the architecture, checked on the source.

- the core (``ddlsched``, except its CLI and ``api`` façades, which sit on
  top and import lazily) imports none of ``formulations``, ``algorithms``, ``proofs_checks``;
- ``proofs_checks`` imports neither ``formulations`` nor ``algorithms``, nor
  the core's ``alpha`` (it recomputes per-iteration times itself);
- nothing in the model or the algorithms imports matplotlib.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(path: Path) -> set[str]:
    """Every module named in an import statement of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def sources(package: str) -> list[Path]:
    """The Python files of ``package``."""
    return sorted((ROOT / package).rglob("*.py"))


# The CLI and the façades sit on top of every layer by design (importing
# lazily), so they are not core modules.
TOP = {"cli.py", "api.py", "sweep.py"}
CORE = [p for p in sources("ddlsched") if p.name not in TOP]


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_core_imports_no_upper_layer(path: Path) -> None:
    """Core modules never import formulations, algorithms or proofs_checks."""
    bad = {
        m
        for m in imported_modules(path)
        if m.split(".")[0] in {"formulations", "algorithms", "proofs_checks"}
    }
    assert not bad, f"{path} imports {bad}"


@pytest.mark.parametrize("path", sources("proofs_checks"), ids=lambda p: p.name)
def test_checks_are_independent(path: Path) -> None:
    """proofs_checks never imports the code it verifies."""
    bad = {
        m
        for m in imported_modules(path)
        if m.split(".")[0] in {"formulations", "algorithms"} or m == "ddlsched.alpha"
    }
    if path.name == "verifier.py":
        bad |= {
            m
            for m in imported_modules(path)
            if m.startswith("ddlsched.") and m != "ddlsched.model"
        }
    assert not bad, f"{path} imports {bad}"


@pytest.mark.parametrize(
    "path",
    [p for pkg in ("formulations", "algorithms", "proofs_checks") for p in sources(pkg)]
    + [p for p in sources("ddlsched") if p.name not in {"plotting.py", *TOP}],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_no_matplotlib_outside_plotting(path: Path) -> None:
    """Only the plotting module imports matplotlib."""
    assert not any(m.startswith("matplotlib") for m in imported_modules(path))
