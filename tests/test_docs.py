"""The API reference and the rendered notebooks build with warnings as errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_docs_build_without_warnings(tmp_path: Path) -> None:
    """sphinx-build -W: a broken docstring, a missing module or a bad page fails the suite."""
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
        ".".join(path.relative_to(root).with_suffix("").parts)
        for package in ("ddlsched", "formulations", "algorithms", "proofs_checks")
        for path in (root / package).rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }
    assert modules - documented == set()
