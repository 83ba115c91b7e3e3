"""The floors of the architecture, checked on the source, by package, with no exemptions.

- the ground floor ``ddlsched.core`` imports nothing of the project outside itself;
- ``formulations`` and ``algorithms`` import only the ground floor (and themselves);
  both also consult the independent verifier (``ddlsched.proofs_checks.verifier``, which
  imports none of them): ``formulations`` before a schedule may enter an exact solve,
  ``algorithms`` before an offline schedule counts as an upper bound;
- ``proofs_checks`` imports only the data model, rigid and elastic (and itself): it
  never shares code with what it checks;
- ``ddlsched.plotting`` imports only the ground floor, and is the only
  module that imports matplotlib;
- the top floor (``ddlsched``'s other modules: façades, the elastic façade
  ``ddlsched.elastic`` among them, experiments, sweeps, the benchmark library, CLI) may
  import anything, but
  ``import ddlsched`` loads no heavy backend.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = {"ddlsched"}


def imported_modules(path: Path) -> set[str]:
    """Every module named in an import statement of ``path`` (lazy imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == "ddlsched":  # "from ddlsched import plotting"
                names.update(f"ddlsched.{alias.name}" for alias in node.names)
    return names


def project_imports(path: Path) -> set[str]:
    """The project modules ``path`` imports."""
    return {m for m in imported_modules(path) if m.split(".")[0] in PROJECT}


def sources(folder: str) -> list[Path]:
    """The Python files under ``folder`` (relative to the root)."""
    return sorted((ROOT / folder).rglob("*.py"))


def _allowed(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


FLOORS = {
    "ddlsched/core": ("ddlsched.core",),
    "formulations": ("ddlsched.core", "ddlsched.formulations", "ddlsched.proofs_checks.verifier"),
    "algorithms": ("ddlsched.core", "ddlsched.algorithms", "ddlsched.proofs_checks.verifier"),
    # The checks recompute from the instance and the shipped measurements (data locates the files).
    "proofs_checks": (
        "ddlsched.core.model",
        "ddlsched.core.elastic",
        "ddlsched.core.data",
        "ddlsched.proofs_checks",
    ),
    "ddlsched/plotting.py": ("ddlsched.core",),
}
CASES = [
    (folder, path)
    for folder in FLOORS
    for path in ([ROOT / folder] if folder.endswith(".py") else sources(folder))
]


@pytest.mark.parametrize(
    ("folder", "path"), CASES, ids=[str(p.relative_to(ROOT)) for _, p in CASES]
)
def test_floor_imports_only_what_is_below(folder: str, path: Path) -> None:
    """Each module imports only its own package and the floors below it."""
    bad = {m for m in project_imports(path) if not _allowed(m, FLOORS[folder])}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def _formulations_floor(module: str) -> int:
    from ddlsched.formulations import FLOORS

    name = module.removeprefix("ddlsched.formulations.")
    return next(k for k, names in enumerate(FLOORS) if name in names)


@pytest.mark.parametrize(
    "path", sources("formulations"), ids=[p.name for p in sources("formulations")]
)
def test_the_exact_pipeline_runs_one_way(path: Path) -> None:
    """Inside ``formulations`` a module imports (lazily too) only modules on lower floors of
    ``ddlsched.formulations.FLOORS``: prepared problem -> backend -> outcome never turns back, and
    one backend never borrows another's helpers (CP-SAT once took its prepared problem,
    decoding and status honesty from the MILP's module)."""
    from ddlsched.formulations import FLOORS

    listed = {name for names in FLOORS for name in names} | {"__init__"}
    assert path.stem in listed, f"formulations/{path.name} is on no floor of FLOORS"
    if path.stem == "__init__":
        return
    own = _formulations_floor(path.stem)
    inside = {m for m in project_imports(path) if m.startswith("ddlsched.formulations.")}
    bad = sorted(m for m in inside if _formulations_floor(m) >= own)
    assert not bad, f"formulations/{path.name} (floor {own}) imports {bad} (not below it)"


def test_the_floor_check_sees_a_backend_borrowing_from_another(tmp_path: Path) -> None:
    """The check above is not vacuous: CP-SAT importing the MILP's module is refused."""
    planted = tmp_path / "cpsat.py"
    planted.write_text("def f():\n    from ddlsched.formulations.milp import objectives\n")
    with pytest.raises(AssertionError, match=r"formulations\.milp"):
        test_the_exact_pipeline_runs_one_way(planted)


PACKAGES = ("ddlsched", "formulations", "algorithms", "proofs_checks")
PUBLIC_DESPITE_UNDERSCORE = {"os._exit"}
"""Names another project documents as public although they start with an underscore."""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(path: Path) -> list[str]:
    """Each private name (one leading underscore) ``path`` takes from another module:
    ``import x._y``, ``from x import _y``, and ``x._y`` where ``x`` is a name bound by an
    import statement (a module, or a class or function of one). Lazy imports included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if any(_private(part) for part in alias.name.split(".")):
                    found.append(f"line {node.lineno}: import {alias.name}")
                bound = alias.asname or alias.name.split(".")[0]
                imported[bound] = alias.name if alias.asname else bound
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"line {node.lineno}: from {module} import {alias.name}")
                imported[alias.asname or alias.name] = f"{module}.{alias.name}"
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        owner, chain = node.value, [node.attr]
        while isinstance(owner, ast.Attribute):
            chain.append(owner.attr)
            owner = owner.value
        if isinstance(owner, ast.Name) and owner.id in imported:
            dotted = ".".join([imported[owner.id], *reversed(chain)])
            if dotted not in PUBLIC_DESPITE_UNDERSCORE:
                found.append(f"line {node.lineno}: {dotted}")
    return found


@pytest.mark.parametrize(
    "path",
    [p for package in PACKAGES for p in sources(package)],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_module_takes_a_private_name_from_another(path: Path) -> None:
    """A module of the packages never imports or reaches into another module's private
    names (``from x import _y``, ``x._y``): what two modules share is public, documented
    and named as such (CP-SAT's runtime, the slotted problem, a claim's record). The tests
    may reach into privates; the packages may not."""
    found = private_imports(path)
    assert not found, f"{path.relative_to(ROOT)} takes private names: {found}"


def test_the_private_import_check_sees_each_form(tmp_path: Path) -> None:
    """The check above is not vacuous: each way of taking a private name is caught, a
    dunder or a private alias of a public name is not."""
    planted = tmp_path / "borrower.py"
    planted.write_text(
        "import argparse\n"
        "import ddlsched.core._hidden\n"
        "from ddlsched import core as _core, __version__\n"
        "from ddlsched.formulations.cpsat import _Task\n"
        "def f():\n"
        "    from ddlsched.formulations import cpsat\n"
        "    return cpsat._run_child, argparse._StoreAction, _core.model\n"
    )
    found = " ".join(private_imports(planted))
    for name in ("ddlsched.core._hidden", "import _Task", "cpsat._run_child", "argparse._Store"):
        assert name in found
    assert "_core" not in found and "__version__" not in found


def test_every_module_is_on_a_floor() -> None:
    """No module escapes the rules: every file is on a checked floor or the top floor."""
    top = {"ddlsched/__init__.py", "ddlsched/api.py"}
    top |= {"ddlsched/provenance.py", "ddlsched/sandwich.py", "ddlsched/cache.py"}
    top |= {"ddlsched/elastic.py"}
    top |= {str(p.relative_to(ROOT)) for p in sources("ddlsched/experiments")}
    top |= {str(p.relative_to(ROOT)) for p in sources("ddlsched/sweeps")}
    top |= {str(p.relative_to(ROOT)) for p in sources("ddlsched/cli")}
    top |= {str(p.relative_to(ROOT)) for p in sources("ddlsched/bench")}
    checked = {str(p.relative_to(ROOT)) for _, p in CASES}
    every = {str(p.relative_to(ROOT)) for p in sources("ddlsched")}
    assert every - checked - top == set()


@pytest.mark.parametrize(
    "path",
    [
        p
        for pkg in ("ddlsched", "formulations", "algorithms", "proofs_checks")
        for p in sources(pkg)
    ],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_matplotlib_outside_plotting(path: Path) -> None:
    """Only the plotting module imports matplotlib."""
    if path == ROOT / "ddlsched" / "plotting.py":
        return
    assert not any(m.startswith("matplotlib") for m in imported_modules(path))


def test_front_door_is_light() -> None:
    """``import ddlsched`` (and the CLI's parser) loads no heavy backend."""
    code = (
        "import sys, ddlsched, ddlsched.cli; ddlsched.cli.build_parser(); "
        "print(sorted(m for m in ('pyomo', 'highspy', 'sklearn', 'matplotlib', 'dask') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


COMMAND_MODULES = {
    f"ddlsched.cli.{name}"
    for name in (
        *("bench", "bound", "check", "compare", "data", "generate", "info"),
        *("predict", "simulate", "solve", "sweep", "verify"),
    )
}
"""The modules that declare and run a command (:data:`ddlsched.cli.commands.COMMANDS`)."""
BELOW_THE_COMMANDS = ("ddlsched.formulations", "ddlsched.algorithms", "ddlsched.experiments")
"""Solvers, policies and experiments: what only a command being run may load."""


def _modules_after(code: str) -> set[str]:
    """The modules loaded in a fresh interpreter after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)), file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stderr.split())


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m.startswith(BELOW_THE_COMMANDS) or m in COMMAND_MODULES)


def test_importing_the_command_line_loads_no_command() -> None:
    """``import ddlsched.cli`` loads no command module, solver, policy or experiment
    (``ddlsched.formulations``, ``ddlsched.algorithms``, ``ddlsched.experiments``). Catches
    the command modules imported with the package, which took every registry with them."""
    assert _heavy(_modules_after("import ddlsched.cli")) == []


def test_help_lists_the_commands_from_the_registry_alone() -> None:
    """``ddlsched --help`` loads no command module, solver, policy or experiment (it loaded
    33 of them, the elastic policies and the compare experiment among them), and prints the
    same as the parser with every command declared."""
    code = (
        "import contextlib, io\n"
        "from ddlsched.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])"
    )
    assert _heavy(_modules_after(code)) == []
    from ddlsched.cli import build_parser

    assert build_parser(only=()).format_help() == build_parser().format_help()


def test_a_command_loads_its_own_module_only() -> None:
    """``ddlsched info --help`` declares ``info`` (its module imported, its options in the
    help) and no other command; ``results`` is declared by the module of ``sweep``."""
    code = (
        "import contextlib, io\n"
        "from ddlsched.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    main(['{}', '--help'])\n"
        "assert '--json' in out.getvalue(), out.getvalue()"
    )
    info = _modules_after(code.format("info"))
    assert sorted(info & COMMAND_MODULES) == ["ddlsched.cli.info"]
    results = _modules_after(code.format("results"))
    assert sorted(results & COMMAND_MODULES) == ["ddlsched.cli.sweep"]


def test_the_command_registry_names_every_command_once() -> None:
    """:data:`ddlsched.cli.commands.COMMANDS` lists exactly the commands the modules declare,
    in their order, each with the help its module shows; and :data:`COMMAND_MODULES` above
    is the registry's list of modules."""
    import argparse

    from ddlsched.cli import build_parser
    from ddlsched.cli.commands import COMMANDS

    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(commands.choices) == [c.name for c in COMMANDS]
    for command in COMMANDS:
        assert commands.choices[command.name].description == command.help
    assert {f"ddlsched.cli.{c.module}" for c in COMMANDS} == COMMAND_MODULES


def test_front_door_exports() -> None:
    """The names a researcher needs come from ``ddlsched`` itself."""
    import ddlsched

    for name in (
        "Instance",
        "Cluster",
        "Job",
        "Schedule",
        "Result",
        "SolveStatus",
        "solve",
        "simulate",
        "read_instance",
        "ExactParams",
        "OnlineParams",
        "Problem",
    ):
        assert hasattr(ddlsched, name), name


@pytest.mark.parametrize("path", sources("ddlsched/cli"), ids=lambda p: p.name)
def test_each_command_line_module_is_short(path: Path) -> None:
    """The CLI parses, calls the façade and prints: one module per command, none over 300
    lines (STYLE: "The CLI parses, calls the façade, prints"). Catches a command that starts
    computing or aggregating in the CLI instead of in a function a Python user can call."""
    assert len(path.read_text().splitlines()) <= 300
