"""Reader of Microsoft's raw Philly log (``cluster_job_log`` of msr-fiddle/philly-traces).

The trace of Jeon et al., *Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN
Training Workloads* (USENIX ATC 2019), as Microsoft released it (CC BY 4.0): one JSON
list of jobs, each ``{"jobid", "user", "vc", "status", "submitted_time", "attempts":
[{"start_time", "end_time", "detail": [{"ip", "gpus": [...]}]}]}``, times as
``YYYY-MM-DD HH:MM:SS`` without a zone (read as UTC, so no daylight-saving jump
distorts a gap); a time it does not have is ``null`` or the string ``"None"``. An attempt
that ends before it starts is refused, naming it; a GPU listed twice on one host counts once.

A job becomes a row *(choices)*:

- *duration*: the sum of its attempts' run times (end minus start of every attempt that
  has both), so a job retried three times is charged what it ran, not the gaps between
  its attempts while it waited again;
- *GPUs*: the GPUs of its last attempt with a placement (the one that finished, or
  was killed), summed over its hosts; ``host_gpus`` the most GPUs any attempt held on
  one host (the check compares it with the cluster's servers);
- *features*: ``user``, ``vc`` (the virtual cluster), ``trace_state`` (``status``:
  Pass, Killed, Failed) and ``retries`` (attempts after the first);
- *left out* (kind ``"no run"``): a job with no attempt, none with a start and an end,
  or whose last attempt has no end (still running when the log was taken).

Every bad field is named by file, line (where the field is written) and its path in the
record (``attempts[1].end_time``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from ddlsched.core.model import InputError
from ddlsched.core.trace_formats import (
    FeatureValue,
    LeftOutRow,
    Moments,
    RowsRead,
    StateFilter,
    TraceFormat,
    TraceRow,
)

PHILLY_RAW = TraceFormat(
    "philly-raw",
    (),
    (
        ("submit", "submitted_time"),
        ("duration", "attempts"),
        ("gpus", "attempts"),
        ("id", "jobid"),
        ("user", "user"),
        ("vc", "vc"),
        ("state", "status"),
    ),
    dates=True,
)
"""The raw Philly log: the record keys each field is read from."""


MISSING_TIMES = ("None", "")
"""How the published ``cluster_job_log`` writes a time it does not have (an attempt still
running, a job never started), beside JSON ``null``: read as absent."""


def read_philly_raw(file: Path, keep: StateFilter, fractional: str) -> RowsRead:
    """Every job of a raw Philly log as a row (see the module docstring); ``keep`` the
    states kept (``status``). GPU counts in the log are whole, so ``fractional`` has
    nothing to round.

    Raises
    ------
    InputError
        Not UTF-8 or not a JSON list, or a bad field, naming the file, line and field.
    """
    del fractional  # every count is a number of listed GPUs
    where = os.fspath(file)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: not UTF-8 text (byte {error.start}: {error.reason})") from None
    moments = Moments(where)
    rows = [
        _Record(text, start, end, line, where).row(value, moments, keep)
        for value, start, end, line in _records(text, where)
    ]
    return RowsRead(PHILLY_RAW, rows, keep.states)


def _records(text: str, where: str) -> Iterator[tuple[object, int, int, int]]:
    """Each element of the JSON list ``text`` with its start and end offsets and the line
    it starts on."""
    decoder = json.JSONDecoder()
    position = _skip(text, 0)
    if not text.startswith("[", position):
        raise InputError(f"{where}: not a raw Philly log (expected a JSON list of jobs)")
    position, line, counted = _skip(text, position + 1), 1, 0
    while not text.startswith("]", position):
        line += text.count("\n", counted, position)
        counted = position
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise InputError(f"{where}:{error.lineno}: not JSON ({error.msg})") from None
        yield value, position, end, line
        position = _skip(text, end)
        if text.startswith(",", position):
            position = _skip(text, position + 1)
        elif not text.startswith("]", position):
            at = line + text.count("\n", counted, position)
            raise InputError(f"{where}:{at}: expected ',' or ']' after a job")


def _skip(text: str, position: int) -> int:
    """The offset of the first character at or after ``position`` that is not blank."""
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


class _Record:
    """One job's record in the log's text, to name the line of any of its fields."""

    def __init__(self, text: str, start: int, end: int, line: int, where: str) -> None:
        self.text, self.start, self.end, self.line, self.where = text, start, end, line, where

    def line_of(self, key: str, nth: int = 0) -> int:
        """The line of the ``nth`` occurrence of ``"key"`` in the record (its first line
        when the key is not written)."""
        position = self.start
        for _ in range(nth + 1):
            found = self.text.find(f'"{key}"', position, self.end)
            if found < 0:
                return self.line
            position = found + 1
        return self.line + self.text.count("\n", self.start, position)

    def fail(self, path: str, what: str, key: str, nth: int = 0) -> InputError:
        """An error naming the file, the field's line and its path in the record."""
        return InputError(f"{self.where}:{self.line_of(key, nth)}: {path}: {what}")

    def text_of(self, value: dict[str, object], key: str, required: bool = False) -> str | None:
        """The string at ``key`` (``None`` when absent or null, unless ``required``)."""
        item = value.get(key)
        if item is None and not required:
            return None
        if not isinstance(item, str):
            raise self.fail(key, f"expected a string, got {json.dumps(item)}", key)
        return item

    def row(self, value: object, moments: Moments, keep: StateFilter) -> TraceRow:
        """The job's row (see the module docstring)."""
        if not isinstance(value, dict):
            raise InputError(f"{self.where}:{self.line}: expected a job object, got {value!r:.40}")
        submitted = self.text_of(value, "submitted_time", required=True)
        submit = moments.seconds(str(submitted), "submitted_time", self.line_of("submitted_time"))
        attempts = value.get("attempts", [])
        if not isinstance(attempts, list):
            raise self.fail("attempts", "expected a list of attempts", "attempts")
        duration, gpus, hosts, no_run = self._attempts(attempts, moments)
        state = self.text_of(value, "status")
        retries: tuple[tuple[str, FeatureValue], ...] = (("retries", max(0, len(attempts) - 1)),)
        left_out = keep.left_out(state, self.line_of("status"), "status") or no_run
        if left_out is None and gpus == 0:
            reason = "no GPU in its placement (a CPU job, left out)"
            left_out = LeftOutRow(self.line, "attempts", "0", "cpu-only", reason)
        return TraceRow(
            line=self.line,
            submit=submit,
            duration=duration,
            gpus=gpus,
            id=self.text_of(value, "jobid"),
            user=self.text_of(value, "user"),
            vc=self.text_of(value, "vc"),
            state=state,
            host_gpus=hosts,
            extra=retries,
            left_out=left_out,
        )

    def _attempts(
        self, attempts: list[object], moments: Moments
    ) -> tuple[float, int, int | None, LeftOutRow | None]:
        """The job's duration, GPU count and most GPUs on one host from its attempts, and
        why it has no recorded run (``None`` when it has one)."""
        duration, gpus, hosts, timed, detail_seen = 0.0, 0, None, 0, 0
        last_end: object = None
        for k, attempt in enumerate(attempts):
            if not isinstance(attempt, dict):
                raise self.fail(f"attempts[{k}]", "expected an attempt object", "attempts")
            times = []
            for key in ("start_time", "end_time"):
                item = attempt.get(key)
                if item is not None and not isinstance(item, str):
                    raise self.fail(
                        f"attempts[{k}].{key}", f"expected a time, got {json.dumps(item)}", key, k
                    )
                if item is not None and item.strip() in MISSING_TIMES:
                    item = None  # the published log writes a missing time as "None"
                times.append(
                    None
                    if item is None
                    else moments.seconds(item, f"attempts[{k}].{key}", self.line_of(key, k))
                )
            start, end = times
            last_end = end
            if start is not None and end is not None:
                if end < start:
                    raise self.fail(
                        f"attempts[{k}].end_time",
                        f"ends before it starts ({end - start:+g} s after its start_time)",
                        "end_time",
                        k,
                    )
                duration += end - start
                timed += 1
            counts = self._placement(attempt.get("detail", []), k, detail_seen)
            detail_seen += len(counts)
            if counts:
                gpus = sum(counts)
                hosts = max(hosts or 0, *counts)
        if not attempts:
            reason = "no recorded attempt (the job never ran)"
        elif last_end is None:
            reason = "its last attempt has no end (still running when the log was taken)"
        elif not timed:
            reason = "no attempt with both a start and an end"
        else:
            return duration, gpus, hosts, None
        return (
            0.0,
            gpus,
            hosts,
            LeftOutRow(self.line, "attempts", str(len(attempts)), "no run", reason),
        )

    def _placement(self, detail: object, k: int, seen: int) -> list[int]:
        """The GPU count on each host of attempt ``k``'s ``detail`` (``seen`` hosts of
        the record come before it, to find the line of its ``gpus``)."""
        if not isinstance(detail, list):
            raise self.fail(f"attempts[{k}].detail", "expected a list of hosts", "detail", k)
        counts = []
        for h, host in enumerate(detail):
            listed = host.get("gpus") if isinstance(host, dict) else None
            if not isinstance(listed, list):
                raise self.fail(
                    f"attempts[{k}].detail[{h}].gpus", "expected a list of GPUs", "gpus", seen + h
                )
            # a GPU named twice on one host is one GPU
            counts.append(len({json.dumps(gpu, sort_keys=True) for gpu in listed}))
        return counts
