"""What every trace reader shares: a typed row, a row left out and why, and the rules a
reader applies to each row whatever its file's shape (:mod:`ddlsched.core.traces` reads
CSV files, :mod:`ddlsched.core.philly_raw` Microsoft's raw Philly log,
:mod:`ddlsched.core.pai` Alibaba's PAI tables).

The rules, the same in every format:

- *Times*: a date and time with a time zone (``2023-03-01 00:18:22+08:00``, Acme) is
  converted to UTC; one without (Helios, Philly) is read as UTC, so no daylight-saving
  jump distorts the gaps between submissions. A file mixing the two is refused, naming
  the line where the second kind first appears: which zone the naive times are in
  would be a guess.
- *States* (:class:`StateFilter`): with a list of states, only rows in one of them are
  kept (case aside); without, every state is kept. The rows of other states are left
  out and counted (kind ``"state"``).
- *GPUs* (:func:`gpu_count`): a row asking for no GPU is a CPU job, left out and counted
  (kind ``"cpu-only"``); a fractional count (PAI's ``plan_gpu`` of 50 is half a GPU) is
  refused with a clear line by default (:data:`FRACTIONAL_RULES`: ``"refuse"``),
  rounded up to whole GPUs (``"ceil"``), or left out and counted (``"drop"``). This
  project's model gives each job whole GPUs, so a shared GPU has no exact counterpart.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from ddlsched.core.model import MAX_GPUS, InputError

FRACTIONAL_RULES = ("refuse", "ceil", "drop")
"""What a reader does with a fractional GPU count: refuse the file (the default), round
the count up to whole GPUs, or leave the row out (counted)."""

LEFT_OUT_KINDS = ("too wide", "invalid", "cpu-only", "state", "fractional", "no run")
"""Why a row does not become a job, in the order a report counts them: more GPUs than
the cluster, a duration that is not positive, no GPU asked, a state not kept, a
fractional GPU count under ``--fractional drop``, no recorded run (a raw Philly job
that never started or was still running; a PAI job with no task that ran)."""

FeatureValue = str | int | float | bool
"""The value of a job's feature."""


@dataclass(frozen=True)
class TraceFormat:
    """How to read one kind of trace: the file column of each field, and the unit.

    ``detect`` lists the columns that identify the format (a file with all of
    them is of this format); ``columns`` maps fields to file columns (a
    field whose column the file lacks is left out; one column may serve two fields).
    """

    name: str
    detect: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]
    seconds_per_unit: float = 1.0
    dates: bool = False

    def column(self, field: str) -> str | None:
        """The file column of ``field``, or ``None``."""
        return dict(self.columns).get(field)


@dataclass(frozen=True)
class LeftOutRow:
    """A row of a trace that did not become a job: where it is and why.

    ``kind`` is one of :data:`LEFT_OUT_KINDS`; ``column`` is the file's column holding
    the reason, ``value`` its value (a duration in seconds, a GPU count, a state).
    """

    line: int
    column: str
    value: str
    kind: str
    reason: str

    def to_dict(self) -> dict[str, str | int]:
        """The JSON form: line, column, value, kind, reason."""
        return dataclasses.asdict(self)

    def message(self, path: str) -> str:
        """``FILE:LINE: COLUMN: reason``, as errors name a place in a file."""
        return f"{path}:{self.line}: {self.column}: {self.reason}"


@dataclass(frozen=True)
class TraceRow:
    """One row of a trace, typed: times in seconds from the file's origin.

    ``left_out`` says why the reader already left the row out (a state not kept, no GPU,
    a fractional count dropped, no recorded run), ``None`` for a row it keeps;
    ``host_gpus`` is the most GPUs the row's recorded run held on one host (raw Philly
    only); ``extra`` holds the format's other features of the job (``gpu_type``,
    ``workload_type``, ``retries``).
    """

    line: int
    submit: float
    duration: float
    gpus: int
    id: str | None = None
    model: str | None = None
    iterations: int | None = None
    batch_size: int | None = None
    user: str | None = None
    vc: str | None = None
    state: str | None = None
    host_gpus: int | None = None
    extra: tuple[tuple[str, FeatureValue], ...] = ()
    left_out: LeftOutRow | None = None


@dataclass(frozen=True)
class RowsRead:
    """What a reader read from a file: its format, every row in file order (those it left
    out carry their reason), and the states it kept (``None``: every state)."""

    format: TraceFormat
    rows: list[TraceRow]
    states: tuple[str, ...] | None = None

    @property
    def kept(self) -> list[TraceRow]:
        """The rows the reader keeps (none of its own reasons to leave them out)."""
        return [row for row in self.rows if row.left_out is None]

    def state_counts(self) -> dict[str, int]:
        """How many kept rows are in each state (rows without a state aside)."""
        return dict(Counter(row.state for row in self.kept if row.state is not None))


class Moments:
    """Reads the dates and times of one file in seconds since the epoch (rule *Times* of
    the module docstring), remembering whether the first one had a time zone."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.first: tuple[bool, int] | None = None

    def seconds(self, text: str, column: str, line: int) -> float:
        """``text`` in seconds since the epoch.

        Raises
        ------
        InputError
            Naming the file, line and column: not a date and time, or a time zone
            present where the file's first time had none (or the reverse).
        """
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise InputError(
                f"{self.where}:{line}: {column}: not a date and time: {text!r}"
            ) from None
        aware = moment.tzinfo is not None
        if self.first is None:
            self.first = (aware, line)
        elif self.first[0] != aware:
            has, other = ("a time zone", "none") if aware else ("no time zone", "one")
            raise InputError(
                f"{self.where}:{line}: {column}: {text!r} has {has} but the time on line "
                f"{self.first[1]} has {other}: naive and zoned times mixed in one file "
                "(give every time a zone, or none)"
            )
        return (moment if aware else moment.replace(tzinfo=UTC)).timestamp()


class StateFilter:
    """Which states a reader keeps: those listed (case aside), or every state."""

    def __init__(self, states: Iterable[str] | None) -> None:
        self.states = None if states is None else tuple(states)
        self._folded = None if self.states is None else {s.casefold() for s in self.states}

    def left_out(self, state: str | None, line: int, column: str) -> LeftOutRow | None:
        """Why a row in ``state`` is left out, or ``None`` if it is kept."""
        if self._folded is None or (state or "").casefold() in self._folded:
            return None
        kept = ",".join(self.states or ())
        reason = f"state {state or '(none)'!r} not kept (--states {kept})"
        return LeftOutRow(line, column, state or "", "state", reason)


def parse_states(text: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """``"COMPLETED,FAILED"`` (or a list of names) as a tuple; ``None`` keeps every state.

    Raises
    ------
    InputError
        On an empty list or an empty name in it.
    """
    if text is None:
        return None
    names = [part.strip() for part in (text.split(",") if isinstance(text, str) else text)]
    if not names or any(not name for name in names):
        raise InputError(f"states: expected state names separated by commas, got {text!r}")
    return tuple(names)


def check_fractional(rule: str) -> str:
    """``rule`` if it is one of :data:`FRACTIONAL_RULES`.

    Raises
    ------
    InputError
        Naming the rules.
    """
    if rule not in FRACTIONAL_RULES:
        raise InputError(
            f"fractional: expected one of {', '.join(FRACTIONAL_RULES)}, got {rule!r}"
        )
    return rule


def gpu_count(
    value: float, rule: str, place: str, column: str, line: int
) -> tuple[int, LeftOutRow | None]:
    """A row's GPU count under the fractional ``rule``, and why the row is left out
    (``None`` when it is kept): no GPU (``"cpu-only"``), or a fractional count under
    ``"drop"``.

    ``place`` is ``FILE:LINE`` of the value, named in a refusal.

    Raises
    ------
    InputError
        On a negative, non-finite or too large count, or a fractional one under
        ``"refuse"``, naming the place and column.
    """
    if not (math.isfinite(value) and 0 <= value <= MAX_GPUS):
        raise InputError(
            f"{place}: {column}: expected a whole number from 0 to {MAX_GPUS:,}, got {value!r}"
        )
    if value == 0:
        return 0, LeftOutRow(line, column, "0", "cpu-only", "no GPU asked (a CPU job, left out)")
    if value == int(value):
        return int(value), None
    if rule == "ceil":
        return math.ceil(value), None
    if rule == "drop":
        reason = f"{value:g} GPUs is fractional (row left out: --fractional drop)"
        return 0, LeftOutRow(line, column, f"{value:g}", "fractional", reason)
    raise InputError(
        f"{place}: {column}: expected a whole number of GPUs, got {value:g} (a fractional "
        "GPU: --fractional ceil rounds it up, --fractional drop leaves the row out)"
    )
