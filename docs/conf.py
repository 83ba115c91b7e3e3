"""Sphinx configuration: the API reference (autodoc, NumPy docstrings) and the notebooks.

Built in the test suite (``tests/test_docs.py``) with warnings as errors:
``python -m sphinx -W -b html docs out/docs``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "ddlsched"
author = "the ddlsched authors"
copyright = "2026, the ddlsched authors"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_nb"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
nb_execution_mode = "off"  # notebooks are run by the test suite; pages show their text and code
exclude_patterns = ["_build"]
html_theme = "alabaster"
suppress_warnings = ["myst.header"]
nitpicky = False

# The notebooks live in ../notebooks (where researchers open them); Sphinx reads
# sources only under docs/, so a copy is made on every build.
_notebooks = Path(__file__).parent / "notebooks"
shutil.rmtree(_notebooks, ignore_errors=True)
_notebooks.mkdir()
for _book in sorted((ROOT / "notebooks").glob("*.ipynb")):
    shutil.copy(_book, _notebooks / _book.name)
