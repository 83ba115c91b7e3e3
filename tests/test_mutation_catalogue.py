"""The hand-picked mutants of ``tools/mutation.py`` still name code that exists.

A snippet that does not occur exactly once makes the catalogue stop at that mutant, and
the catalogue runs only by hand: a refactor that rewrites a snippet's code is caught here
instead.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_catalogue_snippet_occurs_once_and_every_test_path_exists() -> None:
    spec = importlib.util.spec_from_file_location("mutation", ROOT / "tools" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutation", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    stale = []
    for mutant in module.CATALOGUE:
        count = (ROOT / mutant.path).read_text(encoding="utf-8").count(mutant.old)
        if count != 1 or mutant.old == mutant.new:
            stale.append(f"{mutant.name}: {count} occurrences")
        stale += [f"{mutant.name}: no {t}" for t in mutant.tests if not (ROOT / t).exists()]
    assert stale == []
