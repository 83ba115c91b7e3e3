"""Sanity checks on a trace against the cluster it is to be replayed on.

What users of the published traces ask before a replay (``ddlsched data check``, and
the lines every replay's summary prints):

- jobs wider than a server (fine: they span servers) and wider than the whole cluster
  (they cannot run: named);
- recorded placements that contradict the cluster: a raw Philly attempt holding more
  GPUs on one host than a server has (an 8-GPU job on a 2-GPU host);
- the offered load over 1, a queue that never drains: the GPU-seconds the jobs ask for
  (GPU count times recorded duration) against the GPU-seconds the cluster offers over
  the span of the submissions, and the moment from which a fluid queue of that demand
  (served at the cluster's full rate, no packing loss) never empties again before the
  last submission. A fluid queue drains at least as fast as any schedule, so a backlog
  it keeps is one every policy keeps;
- duplicate job ids, and durations that are not positive.

Findings are facts about the file, not errors: a check that ran exits 0.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ddlsched.core.jsontypes import JsonObject, JsonValue
from ddlsched.core.trace_formats import FRACTIONAL_RULES, LEFT_OUT_KINDS, LeftOutRow, TraceRow

NAMED = 3
"""How many rows (or ids) a finding names."""


@dataclass(frozen=True)
class Finding:
    """One kind of thing found in a trace: ``kind`` (``"wider than the cluster"``,
    ``"wider than a server"``, ``"host over a server"``, ``"offered load over 1"``,
    ``"duplicate id"``, ``"duration not > 0"``), how many rows it concerns, the
    sentence saying it, and the lines of the first :data:`NAMED` rows."""

    kind: str
    count: int
    message: str
    lines: tuple[int, ...] = ()

    def to_dict(self) -> JsonObject:
        """The JSON form: kind, count, message, lines."""
        return {
            "kind": self.kind,
            "count": self.count,
            "message": self.message,
            "lines": list(self.lines),
        }


@dataclass(frozen=True)
class OfferedLoad:
    """The recorded arrivals' offered load on the cluster.

    ``demand`` is the GPU-seconds the jobs ask for (sum of GPUs times duration),
    ``capacity`` the GPU-seconds the cluster offers over ``span`` (the seconds from the
    first submission to the last), ``load`` their ratio (``inf`` when every job arrives
    at once). ``backlog_from`` is the time after the first submission from which a fluid
    queue of the demand never empties before the last submission (``None`` when it is
    empty at the last submission), ``backlog`` the GPU-seconds waiting at the last one.
    """

    load: float
    demand: float
    capacity: float
    span: float
    backlog_from: float | None
    backlog: float

    def to_dict(self) -> JsonObject:
        """The JSON form (an unbounded load as ``null``)."""
        return {
            "load": self.load if math.isfinite(self.load) else None,
            "demand_gpu_seconds": self.demand,
            "capacity_gpu_seconds": self.capacity,
            "span_seconds": self.span,
            "backlog_from_seconds": self.backlog_from,
            "backlog_gpu_seconds": self.backlog,
        }


@dataclass(frozen=True)
class TraceCheck:
    """What :func:`check_rows` found in ``jobs`` rows on a cluster of ``cluster_gpus``
    GPUs in servers of ``server_gpus``."""

    jobs: int
    cluster_gpus: int
    server_gpus: int
    findings: tuple[Finding, ...]
    offered: OfferedLoad | None

    def finding(self, kind: str) -> Finding | None:
        """The finding of ``kind``, or ``None``."""
        return next((f for f in self.findings if f.kind == kind), None)

    def lines(self, skip: Iterable[str] = ()) -> list[str]:
        """Each finding as a line (those of a kind in ``skip`` left out)."""
        skipped = set(skip)
        return [f.message for f in self.findings if f.kind not in skipped]

    def to_dict(self) -> JsonObject:
        """The JSON form: the cluster, the findings, the offered load."""
        return {
            "jobs": self.jobs,
            "cluster_gpus": self.cluster_gpus,
            "server_gpus": self.server_gpus,
            "findings": [f.to_dict() for f in self.findings],
            "offered_load": None if self.offered is None else self.offered.to_dict(),
        }


def check_rows(rows: Sequence[TraceRow], cluster_gpus: int, server_gpus: int) -> TraceCheck:
    """Check ``rows`` (a trace's rows the reader kept) against a cluster of
    ``cluster_gpus`` GPUs in servers of ``server_gpus`` (see the module docstring)."""
    if cluster_gpus < 1 or server_gpus < 1:
        raise ValueError(f"cluster: expected GPUs >= 1, got {cluster_gpus} and {server_gpus}")
    fitting = [row for row in rows if 0 < row.gpus <= cluster_gpus and row.duration > 0]
    offered = offered_load(fitting, cluster_gpus)
    findings = [
        _rows_finding(
            "wider than the cluster",
            [row for row in rows if row.gpus > cluster_gpus],
            f"more GPUs than the cluster's {cluster_gpus} (cannot run)",
            lambda row: f"{row.gpus} GPUs",
        ),
        _rows_finding(
            "wider than a server",
            [row for row in rows if server_gpus < row.gpus <= cluster_gpus],
            f"more GPUs than a server's {server_gpus} (fine: spread over servers)",
            lambda row: f"{row.gpus} GPUs",
        ),
        _rows_finding(
            "host over a server",
            [row for row in rows if (row.host_gpus or 0) > server_gpus],
            f"more GPUs on one host in the recorded run than a server's {server_gpus} "
            "(the trace's hosts are larger than this cluster's servers)",
            lambda row: f"{row.host_gpus} GPUs on one host",
        ),
        _rows_finding(
            "duration not > 0",
            [row for row in rows if row.duration <= 0],
            "a duration that is not > 0 (left out of a replay)",
            lambda row: f"{row.duration:g} s",
        ),
        _duplicates(rows),
        _overload(offered, cluster_gpus),
    ]
    return TraceCheck(
        len(rows),
        cluster_gpus,
        server_gpus,
        tuple(f for f in findings if f is not None),
        offered,
    )


def offered_load(rows: Sequence[TraceRow], cluster_gpus: int) -> OfferedLoad | None:
    """The offered load of ``rows`` (each with GPUs and a positive duration) on
    ``cluster_gpus`` GPUs, and the fluid queue's backlog (:class:`OfferedLoad`);
    ``None`` without rows."""
    if not rows:
        return None
    arrivals = sorted((row.submit, row.gpus * row.duration) for row in rows)
    first, last = arrivals[0][0], arrivals[-1][0]
    span = last - first
    demand = math.fsum(work for _, work in arrivals)
    capacity = cluster_gpus * span
    backlog, previous, empty_since = 0.0, first, first
    for time, work in arrivals:
        backlog = max(0.0, backlog - cluster_gpus * (time - previous))
        if backlog == 0.0:
            empty_since = time
        backlog += work
        previous = time
    # The queue after the last submission always holds that job's own work: only a
    # backlog beyond one job's demand at the end says the queue stopped draining.
    waiting = max(0.0, backlog - arrivals[-1][1])
    return OfferedLoad(
        demand / capacity if capacity > 0 else math.inf,
        demand,
        capacity,
        span,
        empty_since - first if waiting > 0 else None,
        waiting,
    )


def _overload(offered: OfferedLoad | None, cluster_gpus: int) -> Finding | None:
    """The finding of an offered load over 1 (by how much, and from when the queue
    never drains), or ``None``."""
    if offered is None or not math.isfinite(offered.load) or offered.load <= 1:
        return None
    hours = offered.span / 3600
    since = (
        f"a fluid queue of the demand never empties after {_duration(offered.backlog_from)} "
        f"from the first submission, and holds {offered.backlog / 3600:,.4g} GPU-hours "
        f"({_duration(offered.backlog / cluster_gpus)} of the whole cluster) at the last"
        if offered.backlog_from is not None
        else "a fluid queue of the demand still empties before the last submission"
    )
    message = (
        f"offered load {offered.load:.3g} as recorded: the jobs ask for "
        f"{offered.demand / 3600:,.4g} GPU-hours, {offered.load:.3g} times the "
        f"{offered.capacity / 3600:,.4g} GPU-hours the cluster offers over the {hours:,.4g} h "
        f"of submissions; {since}"
    )
    return Finding("offered load over 1", 1, message)


def _duration(seconds: float) -> str:
    """``"3600 s (1 h)"``: seconds, with hours when over one."""
    return f"{seconds:,.0f} s" + (f" ({seconds / 3600:,.3g} h)" if seconds >= 3600 else "")


def _rows_finding(
    kind: str, rows: list[TraceRow], what: str, detail: Callable[[TraceRow], str]
) -> Finding | None:
    """A finding naming the first :data:`NAMED` of ``rows`` by line (``detail(row)``
    says what is wrong with each), or ``None`` without rows."""
    if not rows:
        return None
    named = ", ".join(f"line {row.line} ({detail(row)}{_job_id(row)})" for row in rows[:NAMED])
    more = " ..." if len(rows) > NAMED else ""
    jobs = "1 job" if len(rows) == 1 else f"{len(rows)} jobs"
    message = f"{what}: {jobs}, {named}{more}"
    return Finding(kind, len(rows), message, tuple(row.line for row in rows[:NAMED]))


def _job_id(row: TraceRow) -> str:
    return f", job {row.id}" if row.id is not None else ""


def _duplicates(rows: Sequence[TraceRow]) -> Finding | None:
    """The ids that more than one row has, each with its lines, or ``None``."""
    lines: defaultdict[str, list[int]] = defaultdict(list)
    for row in rows:
        if row.id is not None:
            lines[row.id].append(row.line)
    repeated = [(job, where) for job, where in lines.items() if len(where) > 1]
    if not repeated:
        return None
    named = ", ".join(
        f"{job!r} (lines {', '.join(map(str, where))})" for job, where in repeated[:NAMED]
    )
    more = " ..." if len(repeated) > NAMED else ""
    count = len(repeated)
    message = f"{count} job id{'s' if count > 1 else ''} on more than one row: {named}{more}"
    return Finding(
        "duplicate id", count, message, tuple(where[0] for _, where in repeated[:NAMED])
    )


@dataclass(frozen=True)
class TraceReport:
    """A trace read and checked (``ddlsched data check``): how it was read (format,
    rows, what the reader left out by kind and the first rows of each kind, the states
    kept and their counts) and the :class:`TraceCheck` of the rows kept."""

    path: str
    format: str
    rows_read: int
    left_out: tuple[LeftOutRow, ...]
    states: tuple[str, ...] | None
    state_counts: dict[str, int]
    check: TraceCheck

    def left_out_counts(self) -> dict[str, int]:
        """How many rows the reader left out for each reason."""
        counts = {kind: 0 for kind in LEFT_OUT_KINDS}
        for entry in self.left_out:
            counts[entry.kind] += 1
        return {kind: n for kind, n in counts.items() if n}

    def lines(self) -> list[str]:
        """The report as text: the reading summary, the states, each finding."""
        counts = self.left_out_counts()
        left = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "none"
        kept = self.rows_read - len(self.left_out)
        head = (
            f"{self.path} ({self.format}): {self.rows_read} rows read, {kept} kept by the reader, "
            f"left out: {left}"
        )
        lines = [head]
        for kind in counts:
            entry = next(e for e in self.left_out if e.kind == kind)
            lines.append(f"  first {kind}: {entry.message(self.path)}")
        if self.state_counts:
            kept_states = "all" if self.states is None else ",".join(self.states)
            shown = ", ".join(f"{s} {n}" for s, n in sorted(self.state_counts.items()))
            lines.append(f"states kept: {kept_states} ({shown})")
        check = self.check
        where = f"on {check.cluster_gpus} GPUs in servers of {check.server_gpus}"
        if not check.findings:
            lines.append(f"no finding {where}")
        else:
            lines.append(f"{len(check.findings)} finding(s) {where}:")
            lines += [f"  {line}" for line in check.lines()]
        return lines

    def to_dict(self) -> JsonObject:
        """The JSON form: the reading summary and the check."""
        first: list[JsonValue] = []
        for kind in self.left_out_counts():
            entry: dict[str, JsonValue] = dict(
                next(e for e in self.left_out if e.kind == kind).to_dict()
            )
            first.append(entry)
        counts: dict[str, JsonValue] = dict(self.left_out_counts())
        states: dict[str, JsonValue] = dict(self.state_counts)
        return {
            "trace": self.path,
            "format": self.format,
            "rows_read": self.rows_read,
            "rows_kept": self.rows_read - len(self.left_out),
            "left_out": counts,
            "left_out_first": first,
            "states_kept": None if self.states is None else list(self.states),
            "state_counts": states,
            "check": self.check.to_dict(),
        }


def check_trace(
    path: str | os.PathLike[str],
    servers: int,
    gpus_per_server: int,
    *,
    format: str | None = None,
    columns: dict[str, str] | None = None,
    time_unit: str | None = None,
    states: str | Iterable[str] | None = None,
    fractional: str = FRACTIONAL_RULES[0],
) -> TraceReport:
    """Read the trace at ``path`` (as :func:`~ddlsched.core.traces.read_trace_rows`) and
    check its rows on ``servers`` servers of ``gpus_per_server`` GPUs.

    Raises
    ------
    InputError
        An unreadable trace or a bad field (naming the file, line and column), or a
        bad argument.
    """
    from ddlsched.core.model import InputError, is_whole
    from ddlsched.core.traces import read_trace_rows

    for name, value in (("servers", servers), ("gpus_per_server", gpus_per_server)):
        if not is_whole(value) or value < 1:
            raise InputError(f"{name}: expected a whole number >= 1, got {value!r}")
    read = read_trace_rows(
        path,
        format=format,
        columns=columns,
        time_unit=time_unit,
        states=states,
        fractional=fractional,
    )
    kept = read.kept
    left = tuple(row.left_out for row in read.rows if row.left_out is not None)
    return TraceReport(
        os.fspath(path),
        read.format.name,
        len(read.rows),
        left,
        read.states,
        read.state_counts(),
        check_rows(kept, servers * gpus_per_server, gpus_per_server),
    )
