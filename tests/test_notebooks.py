"""The notebooks run top to bottom on their default (small) parameters.

Executed with nbclient in the notebooks' folder, on a fresh kernel each;
any cell that raises fails the test. Outputs are discarded, never written
back (committed notebooks stay stripped).
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_notebooks_are_numbered_in_reading_order() -> None:
    """1_quickstart, 2_lemmas, ... with no gap or repeat (the docs list them in this order),
    and none of the named studies is missing."""
    numbers = [int(p.stem.split("_", 1)[0]) for p in NOTEBOOKS]
    assert sorted(numbers) == list(range(1, len(NOTEBOOKS) + 1))
    names = {p.stem.split("_", 1)[1] for p in NOTEBOOKS}
    assert names >= {"quickstart", "lemmas", "mapping", "prediction", "traces",
                     "heterogeneity", "prediction_error"}  # fmt: skip


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path) -> None:
    """Every cell runs without error; the parameter cell is tagged for papermill-style use."""
    book = nbformat.read(path, as_version=4)
    assert any("parameters" in c.metadata.get("tags", []) for c in book.cells)
    assert all(not c.get("outputs") for c in book.cells if c.cell_type == "code"), "strip outputs"
    client = NotebookClient(
        book,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    errors = [
        o
        for c in book.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors, json.dumps(errors)[:2000]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_conclusion_is_derived_from_the_data(path: Path) -> None:
    """Regression (notebook 2 once concluded "relaxation ratio 1" on data that gave at most
    0.845): a notebook's "What it means" section is followed by a code cell that asserts its
    statements from the notebook's own results, so the prose cannot contradict the data."""
    book = nbformat.read(path, as_version=4)
    heads = [i for i, c in enumerate(book.cells) if c.source.startswith("## What it means")]
    assert len(heads) == 1, "one 'What it means' section"
    after = [c for c in book.cells[heads[0] + 1 :] if c.cell_type == "code"]
    assert after, "a code cell after the conclusion"
    assert any(line.startswith("assert ") for c in after for line in c.source.splitlines())
