"""Which code produced a result: the package version and the git revision.

A sweep stores both on every row (:mod:`ddlsched.sweeps`), so that a results file
says what made each number, and a resume refuses to mix rows of different code
unless asked to.
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass
from pathlib import Path

UNKNOWN = "unknown"
"""The version or revision when it cannot be found (not installed, not a git checkout)."""

SOURCE_ROOT = Path(__file__).resolve().parents[1]
"""The folder that holds the ``ddlsched`` package: a git checkout in an editable install."""


@dataclass(frozen=True, order=True)
class Producer:
    """The code that produced a result.

    Attributes
    ----------
    version
        The installed version of ``ddlsched`` (``importlib.metadata``), or ``"unknown"``.
    revision
        The git commit of the source tree, with ``-dirty`` when tracked files differ
        from it, or ``"unknown"`` outside a git checkout (a wheel install) or without git.
    """

    version: str
    revision: str

    def __str__(self) -> str:
        return f"ddlsched {self.version} (revision {self.revision})"


def package_version() -> str:
    """The installed version of ``ddlsched``, or ``"unknown"`` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ddlsched")
    except PackageNotFoundError:
        return UNKNOWN


def git_revision(root: str | Path = SOURCE_ROOT) -> str:
    """The commit checked out at ``root``, with ``-dirty`` if a tracked file is changed.

    ``"unknown"`` when ``root`` is not the top of a git work tree (an installed wheel
    inside someone else's repository, a virtual environment in this one, included),
    or when git is missing or fails.

    Examples
    --------
    >>> git_revision("/")
    'unknown'
    """
    root = Path(root).resolve()

    def git(*arguments: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *arguments],
                capture_output=True,
                text=True,
                check=False,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != root:
        return UNKNOWN
    commit = git("rev-parse", "HEAD")
    if not commit:
        return UNKNOWN
    changes = git("status", "--porcelain", "--untracked-files=no")
    return f"{commit}-dirty" if changes else commit


@functools.cache
def current_producer() -> Producer:
    """The :class:`Producer` of this process (found once per process)."""
    return Producer(package_version(), git_revision())
