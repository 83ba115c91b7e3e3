"""Reading and writing the JSON formats (instances: versions 1 and 2; schedules: 1).

``ddlsched.instance/1``, ``/2`` and ``ddlsched.schedule/1`` are documented in the
README. Readers are strict: a missing or mistyped field, an unknown field (a
typo such as ``"relase"``) or an unknown format version raises
:class:`~ddlsched.core.model.InputError` naming the field. Writers are atomic: the
document goes to a temporary file in the same folder, is flushed to disk and
then renamed over the target, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from ddlsched.core.jsontypes import JsonValue
from ddlsched.core.model import (
    INSTANCE_FORMAT,
    INSTANCE_FORMAT_V2,
    SCHEDULE_FORMAT,
    Cluster,
    InputError,
    Instance,
    Job,
    Parallelism,
    Schedule,
    ScheduledJob,
)

FIGURE_FORMATS = ("png", "pdf", "svg")
"""The figure files the project writes (:func:`ddlsched.plotting.save_figure`), named by
their extension."""

_JOB_FIELDS = {
    "id",
    "release",
    "weight",
    "iterations",
    "compute_time",
    "gpus",
    "parallelism",
    "edges",
    "features",
}
_CLUSTER_FIELDS = {"gpus_per_server", "bandwidth_intra", "bandwidth_inter"}
_TYPED_CLUSTER_FIELDS = _CLUSTER_FIELDS | {"server_types", "type_bandwidth"}


def _object(value: object, path: str) -> Mapping[str, Any]:
    """``value`` if it is a JSON object. Its values are not checked here: each goes
    to the constructor (:class:`Cluster`, :class:`Job`, ...) that checks it and names
    the field."""
    if not isinstance(value, Mapping):
        raise InputError(f"{path}: expected a JSON object, got {value!r}")
    return value


def _required(obj: Mapping[str, Any], name: str, path: str) -> Any:
    if name not in obj:
        raise InputError(f"{path}.{name}: missing")
    return obj[name]


def _no_unknown(obj: Mapping[str, object], known: set[str], path: str) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise InputError(
            f"{path}.{unknown[0]}: unknown field (expected some of {', '.join(sorted(known))})"
        )


def _check_format(doc: Mapping[str, object], *expected: str) -> str:
    fmt = doc.get("format")
    wanted = " or ".join(repr(e) for e in expected)
    if fmt is None:
        raise InputError(f"format: missing (expected {wanted})")
    if fmt not in expected:
        raise InputError(f"format: unknown format {fmt!r} (expected {wanted})")
    return str(fmt)


def _reraise(path: str, error: InputError) -> InputError:
    """Prefix the path of a nested error with where it was read from."""
    return InputError(f"{path}: {error}")


def instance_from_dict(doc: object) -> Instance:
    """Build an :class:`Instance` from a parsed ``ddlsched.instance/1`` or ``/2``.

    Version 2 may give the cluster ``server_types`` and ``type_bandwidth``
    and each job ``compute_times``; in version 1 those fields are unknown.
    A job's ``compute_times`` may name only types the cluster's servers have.

    Raises
    ------
    InputError
        Naming the field and the value that is wrong.
    """
    doc = _object(doc, "instance")
    typed = _check_format(doc, INSTANCE_FORMAT, INSTANCE_FORMAT_V2) == INSTANCE_FORMAT_V2
    _no_unknown(doc, {"format", "cluster", "slot", "jobs"}, "instance")
    cluster_doc = _object(_required(doc, "cluster", "instance"), "cluster")
    _no_unknown(cluster_doc, _TYPED_CLUSTER_FIELDS if typed else _CLUSTER_FIELDS, "cluster")
    cluster = Cluster(
        gpus_per_server=_required(cluster_doc, "gpus_per_server", "cluster"),
        bandwidth_intra=_required(cluster_doc, "bandwidth_intra", "cluster"),
        bandwidth_inter=_required(cluster_doc, "bandwidth_inter", "cluster"),
        server_types=cluster_doc.get("server_types", ()),
        type_bandwidth=cluster_doc.get("type_bandwidth", ()),
    )
    jobs_doc = _required(doc, "jobs", "instance")
    if not isinstance(jobs_doc, list):
        raise InputError(f"jobs: expected a list, got {jobs_doc!r}")
    jobs = []
    for k, job_doc in enumerate(jobs_doc):
        try:
            jobs.append(_job_from_dict(job_doc, f"jobs[{k}]", typed))
        except InputError as error:
            if str(error).startswith("jobs["):
                raise
            raise _reraise(f"jobs[{k}]", error) from None
        _known_types(jobs[-1], cluster, f"jobs[{k}]")
    return Instance(cluster=cluster, jobs=tuple(jobs), slot=doc.get("slot", 1.0))


def _known_types(job: Job, cluster: Cluster, path: str) -> None:
    """Refuse a job's time for a GPU type no server has: in a file that is a typo
    (``"k8O"``), and the time would be ignored without a word. (The model allows it, so
    that one job list can run on clusters of several mixes.)"""
    types = cluster.server_types
    for name, _ in job.compute_times:
        if name not in types:
            has = f"has types {', '.join(cluster.types)}" if types else "has no GPU types"
            raise InputError(
                f"{path}.compute_times.{name}: job {job.id!r} gives a time for GPU type "
                f"{name!r}, but the cluster {has} (cluster.server_types)"
            )


def _job_from_dict(job_doc: object, path: str, typed: bool) -> Job:
    job_doc = _object(job_doc, path)
    _no_unknown(job_doc, _JOB_FIELDS | {"compute_times"} if typed else _JOB_FIELDS, path)
    parallelism = None
    if "parallelism" in job_doc:
        p_doc = _object(job_doc["parallelism"], f"{path}.parallelism")
        _no_unknown(p_doc, {"dp", "pp", "tp"}, f"{path}.parallelism")
        parallelism = Parallelism(
            dp=p_doc.get("dp", 1), pp=p_doc.get("pp", 1), tp=p_doc.get("tp", 1)
        )
    if "gpus" in job_doc:
        gpus = job_doc["gpus"]
    elif parallelism is not None:
        gpus = parallelism.gpus
    else:
        raise InputError(f"{path}.gpus: missing (give gpus or parallelism)")
    return Job(
        id=_required(job_doc, "id", path),
        release=_required(job_doc, "release", path),
        weight=job_doc.get("weight", 1.0),
        iterations=_required(job_doc, "iterations", path),
        compute_time=_required(job_doc, "compute_time", path),
        gpus=gpus,
        parallelism=parallelism,
        edges=job_doc.get("edges", ()),
        features=job_doc.get("features", {}),
        compute_times=job_doc.get("compute_times", ()),
    )


def schedule_from_dict(doc: object) -> Schedule:
    """Build a :class:`Schedule` from a parsed ``ddlsched.schedule/1``.

    Raises
    ------
    InputError
        Naming the field and the value that is wrong.
    """
    doc = _object(doc, "schedule")
    _check_format(doc, SCHEDULE_FORMAT)
    _no_unknown(doc, {"format", "problem", "restart_cost", "jobs"}, "schedule")
    jobs_doc = _required(doc, "jobs", "schedule")
    if not isinstance(jobs_doc, list):
        raise InputError(f"schedule.jobs: expected a list, got {jobs_doc!r}")
    entries = []
    for k, entry in enumerate(jobs_doc):
        path = f"schedule.jobs[{k}]"
        entry = _object(entry, path)
        _no_unknown(entry, {"id", "start", "end", "mapping", "pieces"}, path)
        try:
            entries.append(
                ScheduledJob(
                    id=_required(entry, "id", path),
                    start=_required(entry, "start", path),
                    end=entry.get("end"),
                    mapping=entry.get("mapping"),
                    pieces=entry.get("pieces"),
                )
            )
        except InputError as error:
            if str(error).startswith(path):
                raise
            raise _reraise(path, error) from None
    return Schedule(
        jobs=tuple(entries),
        problem=doc.get("problem", "A"),
        restart_cost=doc.get("restart_cost", 0.0),
    )


class _NonFinite(ValueError):
    """A NaN or Infinity literal, which JSON does not allow."""


def _reject_constant(name: str) -> NoReturn:
    raise _NonFinite(name)


def _no_duplicate_keys(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    document: dict[str, JsonValue] = {}
    for key, value in pairs:
        if key in document:
            raise InputError(f"duplicate key {key!r}")
        document[key] = value
    return document


def _position(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def check_regular_file(path: str | os.PathLike[str], kind: str = "file") -> None:
    """Refuse, before reading, anything but an existing regular file (or a link to one).

    A folder cannot be read; a named pipe blocks until someone writes to it;
    ``/dev/zero`` never ends (reading it fills the memory). ``kind`` names
    what was expected (``"JSON file"``).

    Raises
    ------
    InputError
        Naming the path and what it is.
    """
    name = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except OSError as error:
        raise InputError(f"{name}: cannot read ({error.strerror or error})") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{name}: is a directory, not a {kind}")
    if not stat.S_ISREG(mode):
        what = "a named pipe" if stat.S_ISFIFO(mode) else "a device or socket"
        raise InputError(f"{name}: is {what}, not a regular file (expected a {kind})")


def _load_json(path: str | os.PathLike[str]) -> JsonValue:
    name = os.fspath(path)
    check_regular_file(path, "JSON file")
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{name}: cannot read ({error})") from None
    try:
        return json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys
        )
    except json.JSONDecodeError as error:
        raise InputError(
            f"{name}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    except _NonFinite as error:
        found = re.search(r"-?Infinity|NaN", text)
        where = f" at {_position(text, found.start())}" if found else ""
        raise InputError(
            f"{name}: not valid JSON: {error} is not a number in JSON{where}"
        ) from None
    except InputError as error:
        raise InputError(f"{name}: not valid JSON: {error}") from None
    except RecursionError:
        raise InputError(f"{name}: not valid JSON: nested too deeply") from None


def read_instance(path: str | os.PathLike[str]) -> Instance:
    """Read a ``ddlsched.instance/1`` file.

    Raises
    ------
    InputError
        If the file is missing, not JSON, or any field is wrong; the message
        starts with the file name.
    """
    doc = _load_json(path)
    try:
        return instance_from_dict(doc)
    except InputError as error:
        raise InputError(f"{os.fspath(path)}: {error}") from None


def read_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Read a ``ddlsched.schedule/1`` file (see :func:`read_instance`)."""
    doc = _load_json(path)
    try:
        return schedule_from_dict(doc)
    except InputError as error:
        raise InputError(f"{os.fspath(path)}: {error}") from None


def dumps(document: Mapping[str, JsonValue]) -> str:
    """Serialise a document; floats are written so they read back exactly."""

    def check(value: object) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"cannot write non-finite number {value!r}")

    _walk(document, check)
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def _walk(value: object, visit: Callable[[object], None]) -> None:
    visit(value)
    if isinstance(value, Mapping):
        for item in value.values():
            _walk(item, visit)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _walk(item, visit)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that no reader ever sees half of it.

    The bytes go to a temporary file in the same folder, are flushed to
    disk, and the file is renamed over ``path`` (atomic on POSIX). A
    symbolic link is written through (its target is replaced, the link
    kept); the file gets the permissions a new file gets under the umask
    (or keeps those of the file it replaces). Anything that is not a
    regular file (a folder, a device, a pipe) is never replaced.

    Raises
    ------
    InputError
        When ``path`` cannot be written, naming it and why (no traceback).
    """
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file():
        kind = "a folder" if target.is_dir() else "not a regular file"
        raise InputError(f"{path}: cannot write there: it is {kind}")
    _refuse_dangling_link(path, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise InputError(f"{path}: cannot write there: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write there: {error.strerror or error}") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _refuse_dangling_link(path: str | os.PathLike[str], target: Path) -> None:
    """Refuse to create folders a dangling link points to: when ``path`` is one, or the
    nearest entry above it that exists is one, and the folder it leads to does not exist.
    The missing folders of a path without links are created (under a folder that exists);
    through a dangling link they would be made wherever it points, anywhere on disk.

    Raises
    ------
    InputError
        Naming the link and where it points.
    """
    if target.parent.is_dir():
        return
    entry = Path(os.path.abspath(path))
    while not os.path.lexists(entry) and entry != entry.parent:
        entry = entry.parent
    if entry.is_symlink() and not entry.exists():
        raise InputError(
            f"{entry}: a link to {os.readlink(entry)}, which does not exist; create its "
            "folder first (folders are never created through a link)"
        )


def _mode_for(target: Path) -> int:
    """The permissions of the file being replaced, or a new file's under the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`write_bytes_atomic`)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_instance(instance: Instance, path: str | os.PathLike[str]) -> None:
    """Write ``instance`` as ``ddlsched.instance/1`` (edges explicit)."""
    write_text_atomic(path, dumps(instance.to_dict()))


def write_schedule(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """Write ``schedule`` as ``ddlsched.schedule/1``.

    Raises
    ------
    TypeError
        If ``schedule`` is not a :class:`Schedule` (``None``: a run that found none; a
        result: its ``.schedule`` is what to write), naming what was given.
    """
    if not isinstance(schedule, Schedule):
        hint = ""
        if schedule is None:
            hint = " (None: the run gave no schedule; check result.status before writing)"
        elif hasattr(schedule, "schedule"):
            hint = "; a Result? write its .schedule"
        raise TypeError(f"schedule: expected a Schedule, got {type(schedule).__name__}{hint}")
    write_text_atomic(path, dumps(schedule.to_dict()))
