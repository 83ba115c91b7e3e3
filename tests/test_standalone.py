"""The repository stands alone: nothing it holds reaches for a folder outside the checkout."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OUTSIDE = re.compile(
    r"\.\./+shared|shared/(?:data|SPEC)|SPEC\.md|parents\[\d+\]\s*/\s*[\"']shared"
)
"""A path to the folder beside the checkout that held the data and the model: by a relative
path, by its sub-folders, by the model's file name, or built from this file's parents."""


def tracked_files() -> list[Path]:
    """The repository's files: git's list in a checkout, else every file under the root
    except virtual environments, caches and build output."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode == 0 and listed.stdout:
        return [ROOT / name for name in listed.stdout.decode().split("\0") if name]
    skip = {".git", ".ci-venv", ".venv", "__pycache__", "build", "out", "_build", ".hypothesis"}
    return [p for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.parts)]


def test_no_file_refers_to_a_folder_outside_the_repository() -> None:
    """Code, tests, docs, notebooks, README and CI name no path outside the checkout: a user's
    clone has nothing beside it. Catches a loader, test, notebook or page that still reads
    the old data folder or the model file kept next to the checkout."""
    offenders = []
    for path in tracked_files():
        if path.suffix in {".csv", ".png", ".gz"} or not path.exists():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if OUTSIDE.search(line) and path != Path(__file__):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not offenders, "\n".join(offenders)


def test_the_pattern_sees_each_way_of_reaching_outside() -> None:
    """The pattern above matches each spelling it is meant to catch and not the word
    'shared' in prose. Catches a pattern that silently matches nothing."""
    for reach in (
        "see .." + "/shared/SPEC.md",  # split, so that git grep finds no such path here
        'Path(__file__).resolve().parents[3] / "shared" / "data"',
        "DDLSCHED_DATA=../.." + "/shared/data",
        "the model (SPEC.md)",
        "from shared/data/traces/philly_jobs.csv",
    ):
        assert OUTSIDE.search(reach), reach
    for prose in ("2 cores shared with other work", "shared by every policy", "shared_memory"):
        assert not OUTSIDE.search(prose), prose
