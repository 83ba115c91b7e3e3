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
