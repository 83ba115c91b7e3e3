"""The notebooks: numbered in reading order, stripped, parametrised, and each with a
conclusion that is asserted from its own data.

They are run top to bottom by the docs build (``tests/test_docs.py``), which executes
each on a fresh kernel on its default (small) parameters and fails on any cell that
raises; running them here as well would double the suite's longest work.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_notebooks_are_numbered_in_reading_order() -> None:
    """1_quickstart, 2_lemmas, ... with no gap or repeat (the docs list them in this order),
    and none of the named studies is missing."""
    numbers = [int(p.stem.split("_", 1)[0]) for p in NOTEBOOKS]
    assert sorted(numbers) == list(range(1, len(NOTEBOOKS) + 1))
    names = {p.stem.split("_", 1)[1] for p in NOTEBOOKS}
    assert names >= {"quickstart", "lemmas", "mapping", "prediction", "traces",
                     "heterogeneity", "prediction_error", "sandwich"}  # fmt: skip


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stripped_and_parametrised(path: Path) -> None:
    """Outputs are stripped before commit; the parameter cell is tagged for papermill-style use."""
    book = nbformat.read(path, as_version=4)
    assert any("parameters" in c.metadata.get("tags", []) for c in book.cells)
    assert all(not c.get("outputs") for c in book.cells if c.cell_type == "code"), "strip outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_conclusion_is_derived_from_the_data(path: Path) -> None:
    """A notebook's "What it means" section is followed by a code cell that asserts its
    statements from the notebook's own results, so the prose cannot contradict the data
    (say, "relaxation ratio 1" on data that gives at most 0.845)."""
    book = nbformat.read(path, as_version=4)
    heads = [i for i, c in enumerate(book.cells) if c.source.startswith("## What it means")]
    assert len(heads) == 1, "one 'What it means' section"
    after = [c for c in book.cells[heads[0] + 1 :] if c.cell_type == "code"]
    assert after, "a code cell after the conclusion"
    assert any(line.startswith("assert ") for c in after for line in c.source.splitlines())
