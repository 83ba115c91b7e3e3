"""The code that produced a result: version and git revision, "unknown" when not found."""

from __future__ import annotations

import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

from ddlsched.provenance import UNKNOWN, current_producer, git_revision, package_version


def _git(root: Path, *arguments: str) -> str:
    command = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *arguments]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository of one commit holding one tracked file, ``a.txt``."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "a.txt").write_text("one\n")
    _git(root, "add", "a.txt")
    _git(root, "commit", "-q", "-m", "first")
    return root


def test_the_revision_is_the_commit_checked_out(repository: Path) -> None:
    """The revision is git's own HEAD; an untracked file does not make it dirty."""
    (repository / "untracked.txt").write_text("x\n")
    assert git_revision(repository) == _git(repository, "rev-parse", "HEAD")


def test_a_changed_tracked_file_marks_the_revision_dirty(repository: Path) -> None:
    """Rows made by uncommitted code are not attributed to the commit alone."""
    (repository / "a.txt").write_text("two\n")
    assert git_revision(repository) == _git(repository, "rev-parse", "HEAD") + "-dirty"


def test_unknown_outside_the_top_of_a_work_tree(repository: Path, tmp_path: Path) -> None:
    """Not a checkout, or a folder inside someone else's (an installed package in a virtual
    environment kept in a repository): the enclosing repository's commit is not ours."""
    inner = repository / "venv" / "site-packages"
    inner.mkdir(parents=True)
    assert git_revision(inner) == UNKNOWN
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_revision(plain) == UNKNOWN


def test_unknown_without_git(repository: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No git on the PATH: "unknown", not an exception."""
    monkeypatch.setenv("PATH", "")
    assert git_revision(repository) == UNKNOWN


def test_the_version_is_the_installed_one() -> None:
    """The package metadata's version, the one ``ddlsched --version`` prints."""
    assert package_version() == version("ddlsched") == current_producer().version
