"""What ``pip install .`` installs: one top-level package, ``ddlsched``, holding every module of
the repository's four folders and the shipped data, importable as installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "ddlsched": "ddlsched",
    "formulations": "ddlsched/formulations",
    "algorithms": "ddlsched/algorithms",
    "proofs_checks": "ddlsched/proofs_checks",
}
"""Each repository folder and where its files install."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the sources (the build leaves nothing in the checkout)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = work.glob("ddlsched-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_holds_one_package_with_every_module_and_data_file(wheel: Path) -> None:
    """The wheel's only top-level package is ``ddlsched``; every Python file of the four
    folders sits at its place inside it, and every data and licence file under
    ``ddlsched/data``. Catches a folder installed at the top of site-packages (where another
    project of that name collides), a sub-package missing from the list, or data globs that
    only an editable install would hide."""
    packed = set(zipfile.ZipFile(wheel).namelist())
    tops = {name.split("/")[0] for name in packed}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"ddlsched"}
    for folder, inside in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT / folder)
            shipped = path.suffix == ".py" or relative.parts[:1] == ("data",)
            if path.is_file() and "__pycache__" not in path.parts and shipped:
                assert f"{inside}/{relative.as_posix()}" in packed


@pytest.mark.slow
def test_the_installed_layout_imports_from_itself(wheel: Path, tmp_path: Path) -> None:
    """Unpacked as pip would install it, ``ddlsched.formulations.milp`` and the shipped data
    are read from the installed copy, not from a source tree next to it (the editable
    install's or the working directory's)."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import ddlsched.formulations.milp as m, ddlsched.proofs_checks.verifier as v;"
        "from ddlsched.core.data import resolve_trace;"
        "print(m.__file__); print(v.__file__); print(resolve_trace('workload-6'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(site)], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert all(Path(line).is_relative_to(site) for line in done.stdout.split())


def test_the_package_list_names_every_folder_with_an_init() -> None:
    """``pyproject.toml`` lists every sub-package of the four folders under its installed
    name. Catches a new sub-package left out of the wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    expected = set()
    for folder, inside in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            expected.add(".".join((inside.replace("/", "."), *parts)))
    assert set(config["packages"]) == expected
    assert config["package-dir"] == {
        f"ddlsched.{name}": name for name in FOLDERS if name != "ddlsched"
    }
