"""Sphinx configuration: the API reference (autodoc, NumPy docstrings) and the notebooks.

Built in the test suite (``tests/test_docs.py``) with warnings as errors:
``python -m sphinx -W -b html docs out/docs``. The notebooks are executed on
their small defaults as the pages are built (myst-nb, through jupyter-cache:
a notebook unchanged since the last build into the same folder is not run
again), so the pages show their tables, figures and checked conclusions; a
cell that raises fails the build. ``DDLSCHED_DOCS_EXECUTE=off`` renders them
without outputs (for a quick look at the API pages).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "ddlsched"
author = "the ddlsched authors"
copyright = "2026, the ddlsched authors"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon", "myst_nb"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
nb_execution_mode = os.environ.get("DDLSCHED_DOCS_EXECUTE", "cache")
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600
exclude_patterns = ["_build"]
html_theme = "alabaster"
suppress_warnings = ["myst.header"]
nitpicky = False

# The notebooks live in ../notebooks (where researchers open them); Sphinx reads
# sources only under docs/, so docs/notebooks is a link to them, made on every build.
# Through the link a notebook runs in ../notebooks itself, so the relative paths it
# uses (../docs/elastic.rst) mean what they mean in Jupyter.
_notebooks = Path(__file__).parent / "notebooks"
if _notebooks.is_symlink():
    _notebooks.unlink()
elif _notebooks.exists():  # a copy left by an older conf.py
    shutil.rmtree(_notebooks)
_notebooks.symlink_to(Path("..") / "notebooks", target_is_directory=True)
