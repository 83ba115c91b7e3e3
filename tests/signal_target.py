"""``ddlsched`` with a marker file touched when a named function is first entered.

For the signal tests: ``python -m tests.signal_target MARKER module:Owner.function ARGV...``
runs ``ddlsched ARGV...`` unchanged, except that ``MARKER`` appears when the command reaches
``function`` (a simulation's event loop, say), an observable state to wait for before
pressing Ctrl-C, where a command without solver children shows nothing else.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ddlsched.cli import main


def _mark_on_entry(target: str, marker: Path) -> None:
    """Wrap ``module:Owner.function`` so that entering it touches ``marker``."""
    module_name, _, dotted = target.partition(":")
    *path, name = dotted.split(".")
    owner: Any = importlib.import_module(module_name)
    for part in path:
        owner = getattr(owner, part)
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def entered(*args: Any, **kwargs: Any) -> Any:
        marker.touch()
        return original(*args, **kwargs)

    setattr(owner, name, entered)


if __name__ == "__main__":
    _mark_on_entry(sys.argv[2], Path(sys.argv[1]))
    sys.exit(main(sys.argv[3:]))
