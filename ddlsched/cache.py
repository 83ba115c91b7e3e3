"""A cache on disk for results that take minutes, keyed by what they are computed from.

An entry is found by a key that hashes (SHA-256) the instance's content, its canonical
JSON form (:meth:`~ddlsched.core.model.Instance.to_dict`, keys sorted, no spaces), together
with the entry's kind, every setting the result depends on, the project's version and
:data:`CACHE_FORMAT`: a changed job, seed, effort or release of ``ddlsched`` misses.

Where: ``$DDLSCHED_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/ddlsched``, else
``~/.cache/ddlsched`` (:func:`cache_dir`), one file per entry, ``<kind>/<key>.json``.
Entries are written atomically (a temporary file in the same folder, then
``os.replace``), so a reader never sees half of one, and an interrupted run leaves none.
Delete the folder to empty the cache.

An entry is checked before use: its body carries its own SHA-256, and a file that
does not parse, is of another format or key, or whose body does not match its hash is
ignored with a :class:`CacheWarning` (the caller recomputes and overwrites it). What a
caller can check again from the instance (a schedule, by the verifier) it checks on
loading (:mod:`ddlsched.sandwich`). The hash guards against a corrupted or hand-edited
file, not against a forgery: an entry whose lower bound was changed and its hash
recomputed is believed as long as the bound stays below the verified schedule. The cache
is the user's own folder; for a result to publish, recompute with ``--no-cache``.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from ddlsched.core.io import write_bytes_atomic
from ddlsched.core.model import InputError, Instance

CACHE_FORMAT = "ddlsched.cache/1"
"""The format of an entry; part of every key, so a new format never reads an old entry."""


class CacheWarning(UserWarning):
    """An entry of the cache ignored (unreadable, of another key, or altered)."""


def cache_dir() -> Path:
    """The cache's folder: ``$DDLSCHED_CACHE_DIR``, else ``$XDG_CACHE_HOME/ddlsched``, else
    ``~/.cache/ddlsched`` (an empty variable counts as unset)."""
    own = os.environ.get("DDLSCHED_CACHE_DIR")
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "ddlsched"
    return Path.home() / ".cache" / "ddlsched"


def _canonical(document: Any) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def instance_digest(instance: Instance) -> str:
    """SHA-256 of the instance's canonical JSON form (hex)."""
    return hashlib.sha256(_canonical(instance.to_dict())).hexdigest()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ddlsched")
    except PackageNotFoundError:
        return "unknown"


def entry_key(kind: str, instance: Instance | str, settings: dict[str, Any]) -> str:
    """The key of the entry of ``kind`` for ``instance`` (or its :func:`instance_digest`)
    under ``settings`` (JSON values), with the project's version and :data:`CACHE_FORMAT`."""
    digest = instance if isinstance(instance, str) else instance_digest(instance)
    document = {
        "format": CACHE_FORMAT,
        "kind": kind,
        "instance": digest,
        "settings": settings,
        "version": _version(),
    }
    return hashlib.sha256(_canonical(document)).hexdigest()


def entry_path(kind: str, key: str) -> Path:
    """The file of an entry."""
    return cache_dir() / kind / f"{key}.json"


def _ignored(path: Path, why: str) -> None:
    warnings.warn(f"cache entry {path} ignored: {why}", CacheWarning, stacklevel=3)


def load(kind: str, key: str) -> dict[str, Any] | None:
    """The body stored under ``key``, or ``None`` when there is none or it is ignored
    (with a :class:`CacheWarning`: unreadable, another format or key, an altered body)."""
    path = entry_path(kind, key)
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        _ignored(path, error.strerror or str(error))
        return None
    try:
        document = json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        _ignored(path, f"not JSON ({error})")
        return None
    if not isinstance(document, dict) or document.get("format") != CACHE_FORMAT:
        _ignored(path, f"not a {CACHE_FORMAT} entry")
        return None
    body = document.get("body")
    if document.get("key") != key or not isinstance(body, dict):
        _ignored(path, "another key, or no body")
        return None
    try:
        digest = hashlib.sha256(_canonical(body)).hexdigest()
    except ValueError:
        digest = None
    if digest != document.get("sha256"):
        _ignored(path, "its body does not match its hash (altered or damaged)")
        return None
    return body


def store(kind: str, key: str, body: dict[str, Any]) -> Path | None:
    """Write ``body`` (JSON values, finite numbers) under ``key``, atomically; returns the
    file, or ``None`` (with a :class:`CacheWarning`) when the folder cannot be written:
    a cache that cannot be written only costs a recomputation."""
    path = entry_path(kind, key)
    document = {
        "format": CACHE_FORMAT,
        "key": key,
        "sha256": hashlib.sha256(_canonical(body)).hexdigest(),
        "body": body,
    }
    try:
        write_bytes_atomic(path, _canonical(document))
    except InputError as error:
        warnings.warn(f"cache entry not written: {error}", CacheWarning, stacklevel=2)
        return None
    return path
