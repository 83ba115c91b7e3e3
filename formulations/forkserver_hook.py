"""Quiet the fork server's children when their caller is gone before they start.

Imported only in the ``forkserver`` process (:data:`ddlsched.formulations.isolation._PRELOAD`),
never by the project otherwise. A child forked by the server first reads the process
object its caller sends; if the caller was interrupted in between (Ctrl-C during
``check`` or ``solve``: it stops, closes its end, exits 130), that read fails with
``EOFError`` and Python's fork server hands it to :data:`sys.excepthook`, which would
print a multi-line traceback on the caller's terminal after its one-line "interrupted"
(``tests/test_signals.py`` checks that none follows it). Such a child has nothing to run
and no one to report to: it ends silently. Every other exception goes to
:data:`sys.excepthook` as usual.
"""

from __future__ import annotations

import signal
import sys
import traceback
from types import TracebackType

_previous = sys.excepthook


def _hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
    if issubclass(kind, (EOFError, ConnectionError)) and _while_reading_the_task(tb):
        return
    _previous(kind, error, tb)


def _while_reading_the_task(tb: TracebackType | None) -> bool:
    """Whether the exception came from the spawn preparation read (``spawn._main``) and
    not from the task the child ran."""
    frames = [frame.name for frame in traceback.extract_tb(tb)]
    return "_main" in frames and "_bootstrap" not in frames


sys.excepthook = _hook

# The fork server ignores Ctrl-C, from its preload on: a Ctrl-C while it imported Pyomo
# (the next preload) would print a KeyboardInterrupt traceback under the caller's one line;
# Python's fork server only ignores SIGINT once its preload is done. Its children inherit
# this, and ignore Ctrl-C anyway (ddlsched.formulations.isolation._ignore_ctrl_c): the caller
# answers it and stops them.
signal.signal(signal.SIGINT, signal.SIG_IGN)
