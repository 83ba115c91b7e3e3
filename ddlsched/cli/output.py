"""What every command shares on the way out: JSON, tables, progress bars and figures."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TextIO

from ddlsched.core.io import FIGURE_FORMATS
from ddlsched.core.model import Cluster, InputError

_json_stream: TextIO | None = None
"""Where :func:`print_json` writes while :func:`json_only_on_stdout` is active."""


def print_json(document: object) -> None:
    """Print ``document`` as JSON (anything :func:`json.dumps` writes: JSON values, tuples
    as arrays, ``TypedDict`` records); a number that is not finite (unknown, unbounded) is
    null."""
    stream = _json_stream or sys.stdout
    print(json.dumps(_finite(document), indent=1, allow_nan=False), file=stream, flush=True)


@contextlib.contextmanager
def json_only_on_stdout() -> Iterator[None]:
    """For a ``--json`` command: file descriptor 1 goes to stderr while the command runs, so
    that what native code prints there (HiGHS's banner at its first use in the process) never
    precedes the document; :func:`print_json` still writes to the real standard output."""
    global _json_stream
    sys.stdout.flush()
    try:
        real_fd1 = sys.stdout.fileno() == 1
    except (AttributeError, OSError, ValueError):  # a captured stdout (tests, notebooks)
        real_fd1 = False
    saved = os.dup(1)
    _json_stream = os.fdopen(os.dup(saved), "w", encoding="utf-8") if real_fd1 else sys.stdout
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        if real_fd1:
            _json_stream.close()
        _json_stream = None


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def print_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown table (pastes into notes and issues as it is)."""
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")


def one_line(message: object) -> str:
    """``message`` with its whitespace runs (newlines included) made single spaces."""
    return " ".join(str(message).split())


def types_text(cluster: Cluster) -> str:
    """`` (v100 x2, k80 x4)`` for a cluster with GPU types, else nothing."""
    if not cluster.server_types:
        return ""
    counts = {t: cluster.server_types.count(t) for t in cluster.types}
    return " (" + ", ".join(f"{t} x{n}" for t, n in counts.items()) + ")"


Progress = Callable[[int, int], None]
"""A progress callback: ``(done, total)``."""

HEARTBEAT_S = 5.0
"""Seconds between progress lines when stderr is not a terminal."""


def progress_bar(
    total: int, label: str, unit: str = "instance"
) -> tuple[Progress, Callable[[], None]]:
    """Progress on stderr, counting ``unit``: a tqdm bar on a terminal; otherwise a line
    every :data:`HEARTBEAT_S` seconds (done so far, seconds since the start) from a
    background thread, so a piped or logged run is never silent for long while one slow
    item runs. Returns (callback, closer); the closer stops the thread."""
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=total, desc=label, unit=unit, file=sys.stderr, leave=False)

        def update(done: int, _total: int) -> None:
            bar.update(done - bar.n)

        return update, bar.close
    return _heartbeat(total, label, unit)


def _heartbeat(total: int, label: str, unit: str) -> tuple[Progress, Callable[[], None]]:
    """Progress lines every :data:`HEARTBEAT_S` seconds until the closer is called."""
    import threading
    import time

    began = time.monotonic()
    done = [0]
    stop = threading.Event()

    def update(finished: int, _total: int) -> None:
        done[0] = finished

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            print(
                f"{label}: {done[0]}/{total} {unit}s done, {time.monotonic() - began:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    thread = threading.Thread(target=beat, name=f"{label}-progress", daemon=True)
    thread.start()

    def close() -> None:
        stop.set()
        thread.join()

    return update, close


def write_csv(rows: Sequence[Mapping[str, object]], path: str) -> None:
    """``rows`` (dicts with the same keys) as a CSV file with a header line, unknown
    numbers (``nan``, ``None``) as empty cells: ``pandas.read_csv(path)`` reads it back."""
    import csv
    import io

    from ddlsched.core.io import write_text_atomic

    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({key: _finite(cell) for key, cell in row.items()} for row in rows)
    write_text_atomic(path, buffer.getvalue())


def figure_format(option: str, path: str) -> str:
    """The format of the figure file ``path`` (its extension; PNG without one); any other
    extension is an :class:`InputError` naming ``option``, before any work."""
    name = os.path.basename(path)
    suffix = name.rsplit(".", 1)[1].lower() if "." in name else ""  # ".pdf" too
    if not suffix:
        return "png"
    if suffix not in FIGURE_FORMATS:
        raise InputError(
            f"{option} {path}: figures are written as "
            f"{', '.join('.' + f for f in FIGURE_FORMATS)} (by the extension), not .{suffix}"
        )
    return suffix


def save_figure(name: str, path: str, *data: object) -> None:
    """Draw the figure ``ddlsched.plotting.<name>(*data)`` into ``path``, in the format its
    extension names (:func:`figure_format`)."""
    file_format = figure_format("--plot", path)
    os.environ.setdefault("MPLBACKEND", "Agg")  # files only: no display needed
    from ddlsched import plotting

    plotting.save_figure(getattr(plotting, name)(*data), path, file_format)
