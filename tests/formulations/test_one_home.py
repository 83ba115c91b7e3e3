"""Bounds and proofs have one home, :mod:`ddlsched.formulations.certify`, checked on the
source of every package (``ddlsched/``, ``formulations/``, ``algorithms/``,
``proofs_checks/``) and, for the names of bounds, on the docs and notebooks too.

Outside the home no module

- calls :func:`~ddlsched.core.result.gap_closed` or
  :func:`~ddlsched.formulations.certify.honest_status` (the rules that decide a status),
  except where HiGHS's word on its own model is read (:data:`MODEL_WORDS`);
- sets a status to ``optimal`` itself (an assignment, a keyword argument or a return of
  ``SolveStatus.OPTIMAL``), except where a backend reads its solver's own word on its
  model into a raw answer, which the home then certifies (:data:`RAW_CLAIMS`,
  :data:`MODEL_WORDS`);
- writes a note announcing a proof (a string starting ``"optimal:"``);
- computes the fast bounds (:func:`~ddlsched.formulations.lower_bounds.lower_bounds`)
  beside an exact solve instead of taking them from a
  :class:`~ddlsched.formulations.certify.BoundSet`.

The solver's dual bound has one name, ``solver-dual``: no other (``milp-dual``) appears in
the packages, the docs or the notebooks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ddlsched", "formulations", "algorithms", "proofs_checks")
HOME = ROOT / "formulations" / "certify.py"

DECIDING = {"gap_closed", "honest_status"}
"""The functions that decide a status, called by the home alone."""

MODEL_WORDS = {("formulations/solver.py", "model_status")}
"""Functions that apply the closed gap to a solver's own model, below the home's floor:
HiGHS's ``optimal`` at a larger ``mip_gap`` is ``feasible`` (the mapping MILP's proven
mappings rest on it; a scheduling model's answer is then certified by the home)."""

RAW_CLAIMS = {("formulations/cpsat.py", "_result")}
"""Functions that store ``SolveStatus.OPTIMAL`` as a backend's raw claim on its own model
(CP-SAT's status, read into a :class:`~ddlsched.formulations.certify.RawAnswer`), which
:func:`~ddlsched.formulations.certify.certify` then demotes or keeps."""

FAST_BOUND_USERS = {
    "formulations/certify.py",  # the home: BoundSet.of
    "ddlsched/api.py",  # the public lower_bounds() of the front door
    "ddlsched/cli/bound.py",  # the bound command: every bound, the LP and pooled ones too
    "ddlsched/sandwich.py",  # the preemptive and start-time bounds of the sandwich
    "formulations/lower_bounds.py",  # where they are defined
}
"""Modules that may call ``lower_bounds`` themselves: none of them certifies a result."""


def sources() -> list[Path]:
    """Every Python file of the packages."""
    return sorted(path for folder in PACKAGES for path in (ROOT / folder).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _called(node: ast.Call) -> str | None:
    """The name a call calls (``f(...)`` or ``module.f(...)``)."""
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _is_optimal(node: ast.AST | None) -> bool:
    """Whether ``node`` is ``SolveStatus.OPTIMAL`` (also inside a conditional expression)."""
    if isinstance(node, ast.IfExp):
        return _is_optimal(node.body) or _is_optimal(node.orelse)
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "OPTIMAL"
        and isinstance(node.value, ast.Name)
        and node.value.id == "SolveStatus"
    )


def _owners(tree: ast.AST) -> dict[ast.AST, str]:
    """The name of the function each node of ``tree`` is in (``""``: the module's level)."""
    owners: dict[ast.AST, str] = {}

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = (
                child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else owner
            )
            owners[child] = inner
            visit(child, inner)

    visit(tree, "")
    return owners


def _stores_optimal(node: ast.AST) -> bool:
    """Whether ``node`` sets something to ``SolveStatus.OPTIMAL``."""
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.Return | ast.keyword):
        return _is_optimal(node.value)
    return False


def _proof_note(node: ast.AST) -> bool:
    """Whether ``node`` is a string (or f-string) announcing a proof."""
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("optimal:")
    )


def decisions(source: str, name: str) -> list[str]:
    """Where the module ``name`` of text ``source`` decides a status or announces a proof
    itself (``line: what``, in the order of the lines)."""
    tree = ast.parse(source)
    owners = _owners(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        deciding = isinstance(node, ast.Call) and _called(node) in DECIDING
        if deciding and (name, owners[node]) not in MODEL_WORDS:
            found.append((line, f"calls {_called(node)}"))
        elif _proof_note(node):
            found.append((line, "writes a proof note"))
        elif _stores_optimal(node) and (name, owners[node]) not in RAW_CLAIMS | MODEL_WORDS:
            found.append((line, "sets a status to optimal"))
    return [f"{line}: {what}" for line, what in sorted(set(found))]


def fast_bound_calls(source: str) -> list[str]:
    """Where ``source`` calls ``lower_bounds`` (``line: what``)."""
    return [
        f"{node.lineno}: calls lower_bounds"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and _called(node) == "lower_bounds"
    ]


SOURCES = [path for path in sources() if path != HOME]


@pytest.mark.parametrize("path", SOURCES, ids=[_name(p) for p in SOURCES])
def test_only_the_home_decides_a_status(path: Path) -> None:
    """No module but :mod:`ddlsched.formulations.certify` closes a gap, demotes or
    promotes a status, or writes the note of a proof."""
    found = decisions(path.read_text(encoding="utf-8"), _name(path))
    assert found == [], f"{_name(path)} decides a status outside the home"


@pytest.mark.parametrize("path", SOURCES, ids=[_name(p) for p in SOURCES])
def test_only_the_home_computes_the_fast_bounds_beside_a_solve(path: Path) -> None:
    """The fast bounds of an exact solve are computed once, in a ``BoundSet``; only the
    modules that offer bounds for themselves (the bound command, the sandwich, the front
    door's ``lower_bounds``) call ``lower_bounds``."""
    if _name(path) in FAST_BOUND_USERS:
        return
    found = fast_bound_calls(path.read_text(encoding="utf-8"))
    assert found == [], f"{_name(path)} computes the fast bounds itself"


def test_the_checks_see_what_they_look_for() -> None:
    """The checks find each thing they forbid in a module made of them, and pass over a
    raw claim where one is allowed (so an empty answer above means none, not a check that
    sees nothing)."""
    planted = (
        "from ddlsched.core.result import SolveStatus\n"
        "def promote(objective, bound, fixed):\n"
        "    if gap_closed(objective, bound, fixed):\n"
        "        status = SolveStatus.OPTIMAL\n"
        "    note = f'optimal: {bound}'\n"
        "    return SolveStatus.OPTIMAL\n"
        "def keyword():\n"
        "    return Result(status=SolveStatus.OPTIMAL if True else None)\n"
        "def _result(answer):\n"
        "    status = SolveStatus.OPTIMAL if answer == 'OPTIMAL' else None\n"
        "    return lower_bounds(answer)\n"
    )
    assert decisions(planted, "formulations/cpsat.py") == [
        "3: calls gap_closed",
        "4: sets a status to optimal",
        "5: writes a proof note",
        "6: sets a status to optimal",
        "8: sets a status to optimal",
    ]
    assert "10: sets a status to optimal" in decisions(planted, "formulations/other.py")
    assert fast_bound_calls(planted) == ["11: calls lower_bounds"]


def test_the_solver_bound_has_one_name() -> None:
    """The solver's dual bound is ``solver-dual`` everywhere: no ``milp-dual`` (its old
    name in the API) in the packages, the docs or the notebooks."""
    folders = (*PACKAGES, "docs", "notebooks")
    suffixes = {".py", ".md", ".rst", ".ipynb", ".toml"}
    found = [
        _name(path)
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in suffixes and "milp-dual" in path.read_text(encoding="utf-8")
    ]
    assert found == []
