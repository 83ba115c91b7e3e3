"""The certified benchmark library: instances with proven optima or certified intervals.

The library follows the operations-research libraries that made results comparable
across papers: PSPLIB (Kolisch and Sprecher, *PSPLIB - A project scheduling problem
library*, EJOR 96(1), 1997) and Taillard's instances (Taillard, *Benchmarks for basic
scheduling problems*, EJOR 64(2), 1993): fixed instances named by how they were
generated, each with its optimum where proven, else the best known interval, which
later runs may narrow (:func:`save_certificate`, keeping the earlier certificates'
summaries as :attr:`Certificate.history`).

On disk a library is a folder holding ``index.json`` (the library's version and every
entry's name, tier and file) and one file per entry (``ddlsched.bench-entry/1``, gzipped
where named ``.json.gz``): the entry's family (what regenerates it), its instance in the
project's instance format and its certificate, whose schedule is in the project's
schedule format (:mod:`ddlsched.core.io`), so ``ddlsched verify`` and ``ddlsched solve``
read an exported entry as it is. The JSON Schemas of the three documents ship beside the
library (``ddlsched/data/bench/schemas``).

Objective: problem A's ``sum_i w_i C_i`` (:ref:`model-problem-a`); scores are taken on
the weighted flow ``sum_i w_i (C_i - r_i)``, the same value less ``sum_i w_i r_i``
(:attr:`Entry.release_weight`).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ddlsched.core.io import instance_from_dict, schedule_from_dict, write_bytes_atomic
from ddlsched.core.jsontypes import JsonObject, JsonValue
from ddlsched.core.model import InputError, Instance, Schedule

if TYPE_CHECKING:
    from ddlsched.bench.elastic import ElasticEntry

JSON = JsonValue
"""A JSON value (the settings and summaries of a certificate)."""

LIBRARY_VERSION = "1"
"""The version of the library's content and formats; a library of another version is
refused (its entries may mean something else)."""
ENTRY_FORMAT = "ddlsched.bench-entry/1"
INDEX_FORMAT = "ddlsched.bench-library/1"
INDEX_FILE = "index.json"

TIERS = ("S", "M", "L", "T")
"""The tiers, smallest first: S (4-12 jobs, optima re-checked by brute force), M (16-64
jobs, proven optima), L (100-200 jobs, certified intervals), T (trace samples,
certified intervals)."""
PROBLEMS = ("A", "elastic")
"""The problems a certificate may be about: problem A (rigid gang scheduling) or the
elastic model of the Pollux workloads."""
STATUSES = ("optimal", "interval")
"""``optimal``: the optimum is proven (the bounds meet, :func:`~ddlsched.core.result.gap_closed`);
``interval``: the optimum lies in ``[lower_bound, upper_bound]``."""

Parsed = TypeVar("Parsed")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$")


@dataclass(frozen=True)
class Certificate:
    """What is proven of one entry's optimum, and how.

    Attributes
    ----------
    problem
        ``"A"`` (problem A) or ``"elastic"`` (:data:`PROBLEMS`).
    status
        ``"optimal"`` (the lower bound meets the upper bound: within
        :data:`~ddlsched.core.result.CLOSED_GAP` of the flow, the project's closed gap) or
        ``"interval"``.
    lower_bound
        A proven lower bound on ``OPT = min sum_i w_i C_i``.
    lower_bound_name
        Which bound: a name of :mod:`ddlsched.formulations.lower_bounds` (``"job"``,
        ``"rank"``, ``"lp"``, ``"pooled"``, ...), ``"sandwich"``, or ``"exact"`` (an
        exact method's proof of optimality).
    lower_bound_settings
        What recomputes the bound (its method and limits).
    upper_bound
        ``sum_i w_i C_i`` of :attr:`schedule`.
    schedule
        A feasible schedule achieving :attr:`upper_bound`.
    command
        The command that produced the certificate (reproducible).
    version
        The ``ddlsched`` version that produced it.
    produced
        When (ISO 8601 date).
    history
        Summaries of the certificates it replaced (:meth:`summary`), oldest first.

    The constructor checks the form only (known problem and status, finite bounds, texts
    where texts belong), so that a corrupted certificate still loads and
    :func:`ddlsched.bench.verify.check_entry` names what is wrong with it (a lower bound
    above the upper one, an ``optimal`` whose bounds do not meet, a schedule whose
    objective is not the upper bound).

    Raises
    ------
    InputError
        On an unknown problem or status, a bound that is not a finite number, or a
        missing text.
    """

    problem: str
    status: str
    lower_bound: float
    lower_bound_name: str
    lower_bound_settings: dict[str, JSON]
    upper_bound: float
    schedule: Schedule
    command: str
    version: str
    produced: str
    history: tuple[dict[str, JSON], ...] = field(default=())

    def __post_init__(self) -> None:
        if self.problem not in PROBLEMS:
            raise InputError(
                f"certificate.problem: expected one of {PROBLEMS}, got {self.problem!r}"
            )
        if self.status not in STATUSES:
            raise InputError(
                f"certificate.status: expected one of {STATUSES}, got {self.status!r}"
            )
        for name in ("lower_bound", "upper_bound"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"certificate.{name}: expected a number, got {value!r}")
            if not math.isfinite(value):
                raise InputError(f"certificate.{name}: must be finite, got {value!r}")
            object.__setattr__(self, name, float(value))
        for name in ("lower_bound_name", "command", "version", "produced"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise InputError(f"certificate.{name}: expected a non-empty text")
        if not isinstance(self.schedule, Schedule):
            raise InputError(f"certificate.schedule: expected a Schedule, got {self.schedule!r}")
        if not isinstance(self.lower_bound_settings, dict):
            raise InputError("certificate.lower_bound_settings: expected an object")
        object.__setattr__(self, "history", tuple(self.history))

    @property
    def optimum(self) -> float | None:
        """``OPT``: the upper bound when proven optimal, else ``None``."""
        return self.upper_bound if self.status == "optimal" else None

    def summary(self) -> dict[str, JSON]:
        """This certificate without its schedule and history: what a newer certificate
        keeps of it in :attr:`history`."""
        return {
            "status": self.status,
            "lower_bound": self.lower_bound,
            "lower_bound_name": self.lower_bound_name,
            "lower_bound_settings": self.lower_bound_settings,
            "upper_bound": self.upper_bound,
            "command": self.command,
            "version": self.version,
            "produced": self.produced,
        }

    def to_dict(self) -> JsonObject:
        """The JSON form (``certificate.schema.json``)."""
        return {
            "problem": self.problem,
            **self.summary(),
            "schedule": self.schedule.to_dict(),
            "history": list(self.history),
        }

    @classmethod
    def from_dict(cls, doc: object) -> Certificate:
        """Read :meth:`to_dict`'s form.

        Raises
        ------
        InputError
            Naming the missing, unknown or bad field.
        """
        fields = _fields(doc, "certificate", _CERTIFICATE_FIELDS)
        history = fields["history"]
        if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
            raise InputError("certificate.history: expected a list of objects")
        settings = fields["lower_bound_settings"]
        if not isinstance(settings, dict):
            raise InputError("certificate.lower_bound_settings: expected an object")
        schedule = _parsed(schedule_from_dict, fields["schedule"], "certificate.schedule")
        return cls(
            problem=_text(fields, "problem", "certificate"),
            status=_text(fields, "status", "certificate"),
            lower_bound=_number(fields, "lower_bound"),
            lower_bound_name=_text(fields, "lower_bound_name", "certificate"),
            lower_bound_settings=settings,
            upper_bound=_number(fields, "upper_bound"),
            schedule=schedule,
            command=_text(fields, "command", "certificate"),
            version=_text(fields, "version", "certificate"),
            produced=_text(fields, "produced", "certificate"),
            history=tuple(h for h in history if isinstance(h, dict)),
        )


_CERTIFICATE_FIELDS = (
    "problem",
    "status",
    "lower_bound",
    "lower_bound_name",
    "lower_bound_settings",
    "upper_bound",
    "schedule",
    "command",
    "version",
    "produced",
    "history",
)
_ENTRY_FIELDS = ("format", "library_version", "name", "tier", "family", "instance", "certificate")


@dataclass(frozen=True)
class Entry:
    """One instance of the library with its certificate.

    Attributes
    ----------
    name
        Unique in the library (``"S-ef-2x4-j6-s0"``).
    tier
        One of :data:`TIERS`.
    family
        The generator settings or trace sample that regenerate the instance.
    instance
        The instance.
    certificate
        What is proven of its optimum.

    Raises
    ------
    InputError
        On a name that is not a plain file name or an unknown tier.
    """

    name: str
    tier: str
    family: dict[str, JSON]
    instance: Instance
    certificate: Certificate

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InputError(
                f"entry.name: expected letters, digits, '.', '_' or '-' (at most 120), "
                f"got {self.name!r}"
            )
        if self.tier not in TIERS:
            raise InputError(f"{self.name}: tier: expected one of {TIERS}, got {self.tier!r}")
        if not isinstance(self.family, dict):
            raise InputError(f"{self.name}: family: expected an object")

    @cached_property
    def release_weight(self) -> float:
        """``sum_i w_i r_i``: what separates ``sum w C`` from the flow ``sum w (C - r)``."""
        return math.fsum(job.weight * job.release for job in self.instance.jobs)

    @property
    def flow_lower_bound(self) -> float:
        """A proven lower bound on the optimal weighted flow ``sum_i w_i (C_i - r_i)``."""
        return self.certificate.lower_bound - self.release_weight

    @property
    def flow_upper_bound(self) -> float:
        """The weighted flow of the certificate's schedule."""
        return self.certificate.upper_bound - self.release_weight

    @property
    def flow_optimum(self) -> float | None:
        """The optimal weighted flow where proven, else ``None``."""
        return None if self.certificate.optimum is None else self.flow_upper_bound

    def to_dict(self) -> JsonObject:
        """The entry file's document (``ddlsched.bench-entry/1``)."""
        return {
            "format": ENTRY_FORMAT,
            "library_version": LIBRARY_VERSION,
            "name": self.name,
            "tier": self.tier,
            "family": self.family,
            "instance": self.instance.to_dict(),
            "certificate": self.certificate.to_dict(),
        }

    @classmethod
    def from_dict(cls, doc: object) -> Entry:
        """Read :meth:`to_dict`'s form.

        Raises
        ------
        InputError
            Naming the bad field (and the entry, once its name is read).
        """
        fields = _fields(doc, "entry", _ENTRY_FIELDS)
        if fields["format"] != ENTRY_FORMAT:
            raise InputError(f"entry.format: expected {ENTRY_FORMAT!r}, got {fields['format']!r}")
        _check_version(fields["library_version"], "entry.library_version")
        name = _text(fields, "name", "entry")
        family = fields["family"]
        if not isinstance(family, dict):
            raise InputError(f"{name}: family: expected an object")
        try:
            return cls(
                name=name,
                tier=_text(fields, "tier", "entry"),
                family=family,
                instance=_parsed(instance_from_dict, fields["instance"], "instance"),
                certificate=Certificate.from_dict(fields["certificate"]),
            )
        except InputError as error:
            raise InputError(f"{name}: {error}") from None


def default_library_path() -> Path:
    """The folder of the library shipped with the package (``ddlsched/data/bench/library``)."""
    folder = resources.files("ddlsched") / "data" / "bench" / "library"
    if not isinstance(folder, Path):
        raise InputError(f"{folder}: the shipped library is not a folder on disk")
    return folder


def library(path: Path | str | None = None) -> list[Entry]:
    """Every entry of the shipped library (or of the library at ``path``), sorted by tier
    (in :data:`TIERS`' order), then name.

    Raises
    ------
    InputError
        On a missing or corrupt index or entry file, naming the file.
    """
    folder = _folder(path)
    return [_read_entry(folder / file, name, tier) for name, tier, file in _index(folder)]


def entries(
    tiers: Iterable[str] | None = None,
    names: Iterable[str] | None = None,
    path: Path | str | None = None,
) -> list[Entry]:
    """The entries of the given tiers and names (``None``: all), in :func:`library`'s order.
    Only the chosen entries' files are read.

    Raises
    ------
    InputError
        On an unknown tier or name, naming it; on a missing or corrupt file.
    """
    folder = _folder(path)
    index = _index(folder)
    chosen_tiers = set(TIERS) if tiers is None else set(tiers)
    unknown_tiers = sorted(chosen_tiers - set(TIERS))
    if unknown_tiers:
        raise InputError(f"tier: expected some of {', '.join(TIERS)}, got {unknown_tiers[0]!r}")
    known = {name for name, _, _ in index}
    chosen_names = None if names is None else set(names)
    if chosen_names is not None:
        _check_names(chosen_names, known, folder, "A")
    return [
        _read_entry(folder / file, name, tier)
        for name, tier, file in index
        if tier in chosen_tiers and (chosen_names is None or name in chosen_names)
    ]


def elastic_entries(
    tiers: Iterable[str] | None = None,
    names: Iterable[str] | None = None,
    path: Path | str | None = None,
) -> list[ElasticEntry]:
    """The entries of the elastic model (:mod:`ddlsched.bench.elastic`) of the given tiers
    and names (``None``: all), in library order; :func:`library` and :func:`entries` hold
    those of problem A.

    Raises
    ------
    InputError
        On an unknown tier or name, naming it; on a missing or corrupt file.
    """
    from ddlsched.bench.elastic import ElasticEntry

    folder = _folder(path)
    rows = [(n, t, f) for n, t, f, problem in _rows(folder) if problem == "elastic"]
    chosen_tiers = set(TIERS) if tiers is None else set(tiers)
    unknown_tiers = sorted(chosen_tiers - set(TIERS))
    if unknown_tiers:
        raise InputError(f"tier: expected some of {', '.join(TIERS)}, got {unknown_tiers[0]!r}")
    chosen_names = None if names is None else set(names)
    if chosen_names is not None:
        _check_names(chosen_names, {name for name, _, _ in rows}, folder, "elastic")
    found = []
    for name, tier, file in rows:
        if tier in chosen_tiers and (chosen_names is None or name in chosen_names):
            item = _read_any(folder / file, ElasticEntry.from_dict)
            if item.name != name:
                raise InputError(
                    f"{folder / file}: holds entry {item.name!r}, the index says {name!r}"
                )
            found.append(item)
    return found


def entry_problems(path: Path | str | None = None) -> dict[str, str]:
    """Each entry's problem (``"A"`` or ``"elastic"``) by name, from the index alone."""
    return {name: problem for name, _, _, problem in _rows(_folder(path))}


def _check_names(chosen: set[str], known: set[str], folder: Path, problem: str) -> None:
    """Refuse a name not among ``known`` (the entries of ``problem``), saying so when it is
    an entry of the other problem."""
    unknown = sorted(chosen - known)
    if not unknown:
        return
    other = {name: kind for name, _, _, kind in _rows(folder)}.get(unknown[0])
    if other is not None:
        hint = "ddlsched.bench.elastic_entries" if other == "elastic" else "ddlsched.bench.entries"
        raise InputError(
            f"name: {unknown[0]!r} is an entry of problem {other!r}, not {problem!r} (read "
            f"it with {hint})"
        )
    raise InputError(f"name: no entry {unknown[0]!r} in the library {folder}")


def entry(name: str, path: Path | str | None = None) -> Entry:
    """The entry called ``name``.

    Raises
    ------
    InputError
        If there is none, naming it.
    """
    return entries(names=[name], path=path)[0]


def save_certificate(
    entry: Entry, certificate: Certificate, path: Path | str | None = None
) -> None:
    """Replace ``entry``'s certificate in the library at ``path`` (default: the shipped one)
    by ``certificate``, atomically (a temporary file renamed over the entry's file). The
    caller checks the certificate first and puts the old one's :meth:`Certificate.summary`
    in its history.

    Raises
    ------
    InputError
        If the library has no entry of that name, or the file cannot be written.
    """
    folder = _folder(path)
    files = {name: file for name, _, file in _index(folder)}
    if entry.name not in files:
        raise InputError(f"name: no entry {entry.name!r} in the library {folder}")
    updated = Entry(entry.name, entry.tier, entry.family, entry.instance, certificate)
    _write_entry(folder / files[entry.name], updated)


def write_library(chosen: Iterable[Entry], path: Path | str) -> None:
    """Write a whole library to the folder ``path``: one file per entry (by
    :func:`entry_file`), then the index.

    Raises
    ------
    InputError
        On two entries of one name, or a file that cannot be written.
    """
    items = list(chosen)
    for item in items:
        write_entry(item, path)
    write_index(items, path)


def write_entry(item: Entry, path: Path | str) -> None:
    """Write ``item``'s file into the library folder ``path`` (not its index: see
    :func:`write_index`), atomically.

    Raises
    ------
    InputError
        If the file cannot be written.
    """
    _write_entry(Path(path) / entry_file(item), item)


def write_index(
    chosen: Iterable[Entry], path: Path | str, elastic: Iterable[ElasticEntry] = ()
) -> None:
    """Write the index of the library folder ``path`` listing ``chosen`` and the ``elastic``
    entries (:mod:`ddlsched.bench.elastic`), atomically.

    Raises
    ------
    InputError
        On two entries of one name, or a file that cannot be written.
    """
    rows: list[JsonValue] = []
    seen: set[str] = set()
    listed: list[tuple[int, str, JsonObject]] = [
        (
            TIERS.index(item.tier),
            item.name,
            {"name": item.name, "tier": item.tier, "file": entry_file(item)},
        )
        for item in chosen
    ]
    listed += [
        (
            TIERS.index(item.tier),
            item.name,
            {
                "name": item.name,
                "tier": item.tier,
                "file": elastic_file(item),
                "problem": "elastic",
            },
        )
        for item in elastic
    ]
    for _, name, row in sorted(listed, key=lambda x: (x[0], x[1])):
        if name in seen:
            raise InputError(f"name: two entries called {name!r}")
        seen.add(name)
        rows.append(row)
    index: JsonObject = {
        "format": INDEX_FORMAT,
        "library_version": LIBRARY_VERSION,
        "entries": rows,
    }
    text = json.dumps(index, indent=1) + "\n"
    write_bytes_atomic(Path(path) / INDEX_FILE, text.encode())


def job_table(item: Entry) -> str:
    """``item``'s jobs as CSV for tools that read traces: ``id``, ``submit`` (the release,
    s), ``duration`` (s, at the mapping of the certificate's schedule), ``gpus`` and
    ``weight``, in the instance's order."""
    import csv
    import io

    from ddlsched.proofs_checks.verifier import verify

    completions = verify(item.instance, item.certificate.schedule).completion_times
    starts = {job.id: job.start for job in item.certificate.schedule.jobs}
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["id", "submit", "duration", "gpus", "weight"])
    for job in item.instance.jobs:
        duration = completions[job.id] - starts[job.id]
        writer.writerow([job.id, repr(job.release), repr(duration), job.gpus, repr(job.weight)])
    return text.getvalue()


GZIP_JOBS = 300
"""Entries of more jobs than this are stored gzipped (the trace samples)."""


def entry_file(item: Entry) -> str:
    """The file of ``item`` inside a library folder: ``<tier>/<name>.json``, with ``.gz``
    past :data:`GZIP_JOBS` jobs."""
    suffix = ".json.gz" if item.instance.num_jobs > GZIP_JOBS else ".json"
    return f"{item.tier}/{item.name}{suffix}"


def elastic_file(item: ElasticEntry) -> str:
    """The file of an elastic entry inside a library folder: ``<tier>/<name>.json.gz``
    (a run records every round's allocations)."""
    return f"{item.tier}/{item.name}.json.gz"


def write_elastic_entry(item: ElasticEntry, path: Path | str) -> None:
    """Write an elastic entry's file into the library folder ``path`` (not its index),
    atomically.

    Raises
    ------
    InputError
        If the file cannot be written.
    """
    _write_document(Path(path) / elastic_file(item), item.to_dict())


def _order(item: Entry) -> tuple[int, str]:
    return TIERS.index(item.tier), item.name


def _folder(path: Path | str | None) -> Path:
    return default_library_path() if path is None else Path(path)


def _index(folder: Path) -> list[tuple[str, str, str]]:
    """``(name, tier, file)`` of every entry of problem A listed in ``folder``'s index, in
    library order."""
    return [(name, tier, file) for name, tier, file, problem in _rows(folder) if problem == "A"]


def _rows(folder: Path) -> list[tuple[str, str, str, str]]:
    """``(name, tier, file, problem)`` of every entry listed in ``folder``'s index, in
    library order (a row without ``problem`` is of problem A)."""
    doc = _read_json(folder / INDEX_FILE)
    fields = _fields(doc, f"{folder / INDEX_FILE}", ("format", "library_version", "entries"))
    where = str(folder / INDEX_FILE)
    if fields["format"] != INDEX_FORMAT:
        raise InputError(f"{where}: format: expected {INDEX_FORMAT!r}, got {fields['format']!r}")
    _check_version(fields["library_version"], f"{where}: library_version")
    rows = fields["entries"]
    if not isinstance(rows, list):
        raise InputError(f"{where}: entries: expected a list")
    index = []
    for k, row in enumerate(rows):
        keys: tuple[str, ...] = ("name", "tier", "file", "problem")
        if isinstance(row, dict) and "problem" not in row:
            keys = keys[:3]
        row_fields = _fields(row, f"{where}: entries[{k}]", keys)
        name, tier, file = (row_fields[key] for key in ("name", "tier", "file"))
        problem = row_fields.get("problem", "A")
        if not all(isinstance(value, str) for value in (name, tier, file)):
            raise InputError(f"{where}: entries[{k}]: name, tier and file must be texts")
        if tier not in TIERS or Path(str(file)).is_absolute() or ".." in Path(str(file)).parts:
            raise InputError(f"{where}: entries[{k}]: bad tier {tier!r} or file {file!r}")
        if problem not in PROBLEMS:
            raise InputError(f"{where}: entries[{k}]: problem: expected one of {PROBLEMS}")
        index.append((str(name), str(tier), str(file), str(problem)))
    names = [name for name, _, _, _ in index]
    if len(set(names)) != len(names):
        raise InputError(f"{where}: an entry name is listed twice")
    return sorted(index, key=lambda row: (TIERS.index(row[1]), row[0]))


def _read_json(path: Path) -> JsonValue:
    try:
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        document: JsonValue = json.loads(data)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise InputError(f"{path}: cannot be read: {error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not valid JSON: {error}") from None
    return document


def _read_any(path: Path, read: Callable[[object], Parsed]) -> Parsed:
    """``read`` of the JSON document at ``path``, its error naming the file."""
    try:
        return read(_read_json(path))
    except InputError as error:
        message = str(error)
        raise InputError(
            message if message.startswith(str(path)) else f"{path}: {message}"
        ) from None


def _read_entry(path: Path, name: str, tier: str) -> Entry:
    """The entry in ``path``, which must be the one the index names, in the tier it says."""
    item = _read_any(path, Entry.from_dict)
    if item.name != name:
        raise InputError(f"{path}: holds entry {item.name!r}, the index says {name!r}")
    if item.tier != tier:
        raise InputError(f"{path}: entry {name!r} is of tier {item.tier}, the index says {tier}")
    return item


def _write_entry(path: Path, item: Entry) -> None:
    _write_document(path, item.to_dict())


def _write_document(path: Path, document: JsonObject) -> None:
    data = (json.dumps(document, allow_nan=False) + "\n").encode()
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    os.makedirs(path.parent, exist_ok=True)
    write_bytes_atomic(path, data)


def _fields(doc: object, where: str, names: tuple[str, ...]) -> Mapping[str, JsonValue]:
    """``doc``'s fields, exactly ``names``: a missing or an unknown one is refused."""
    if not isinstance(doc, dict):
        raise InputError(f"{where}: expected an object, got {type(doc).__name__}")
    missing = [name for name in names if name not in doc]
    if missing:
        raise InputError(f"{where}: missing field {missing[0]!r}")
    unknown = sorted(set(doc) - set(names))
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r}")
    return doc


def _text(fields: Mapping[str, JsonValue], name: str, where: str) -> str:
    value = fields[name]
    if not isinstance(value, str):
        raise InputError(f"{where}.{name}: expected a text, got {value!r}")
    return value


def _number(fields: Mapping[str, JsonValue], name: str) -> float:
    value = fields[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"certificate.{name}: expected a number, got {value!r}")
    return float(value)


def _check_version(value: JsonValue, where: str) -> None:
    if value != LIBRARY_VERSION:
        raise InputError(
            f"{where}: this ddlsched reads library version {LIBRARY_VERSION!r}, got {value!r}"
        )


def _parsed(read: Callable[[object], Parsed], doc: JsonValue, where: str) -> Parsed:
    """``read(doc)`` with its error prefixed by ``where``."""
    try:
        return read(doc)
    except InputError as error:
        raise InputError(f"{where}: {error}") from None
