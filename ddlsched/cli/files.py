"""What commands share about files on the way in: output paths checked before any work,
and instance files read with a hint where a trace was given instead."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ddlsched.core.model import InputError, Instance


def check_outputs(
    outputs: Mapping[str, str | None],
    inputs: Sequence[str | None] = (),
    folders: Sequence[str] = (),
) -> None:
    """Refuse, before any work, output paths that cannot be right.

    ``outputs`` maps an option (``--out``) to the path given (``None``: not given); an
    option in ``folders`` names a folder (``--out-dir``), the others a file. A file path
    that is empty, ends with a slash or is an existing folder, a folder path that is an
    existing file, the same path for two outputs, and an output that is one of
    ``inputs`` (``solve in.json --out in.json`` would replace the instance with a
    schedule) are each an :class:`InputError` naming the option.
    """
    given = {option: path for option, path in outputs.items() if path is not None}
    for option, path in given.items():
        if not path.strip():
            raise InputError(f"{option}: an empty path; give a file name")
        if option in folders:
            if os.path.exists(path) and not os.path.isdir(path):
                raise InputError(f"{option} {path}: is a file, not a folder")
            continue
        if path.endswith(("/", os.sep)) or os.path.isdir(path):
            raise InputError(f"{option} {path}: is a folder; give a file name")
        for source in inputs:
            if source is not None and _same_file(path, source):
                raise InputError(
                    f"{option} {path}: is also an input of the command (it would be replaced)"
                )
        for other, other_path in given.items():
            if other != option and other not in folders and _same_file(path, other_path):
                raise InputError(f"{option} and {other}: the same file {path}")


def output_extension(option: str, path: str | None, extension: str, written: str) -> None:
    """Refuse, before any work, an output ``path`` of ``option`` that does not end in
    ``extension`` (any case): the file is written in that format only, and a wrong name (a
    figure's ``.png``, a sweep's ``.sqlite``) would be given content it does not name.
    ``written`` says what is written, for the one-line :class:`InputError`."""
    if path and not path.lower().endswith(extension):
        raise InputError(f"{option} {path}: expected a {extension} file ({written})")


def csv_output(option: str, path: str | None) -> None:
    """Refuse an output ``path`` of ``option`` that does not end in ``.csv`` (any case): rows
    are written as CSV (see :func:`output_extension`)."""
    output_extension(option, path, ".csv", "rows are written as CSV")


def _same_file(first: str, second: str) -> bool:
    """Whether two paths name one file (through links too; a missing one by its real path)."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return os.path.realpath(first) == os.path.realpath(second)


def read_instance_file(path: str, command: str) -> Instance:
    """The instance in the JSON file ``path``; a CSV file (a trace given where an instance
    belongs) is an :class:`InputError` pointing at ``--trace``, not "not valid JSON".

    ``command`` names the command in the hint (``bound`` and ``simulate`` read traces
    with ``--trace``; the others take samples of one from ``generate --from-trace``).
    """
    from ddlsched.core.io import read_instance

    if path.lower().endswith((".csv", ".csv.gz", ".tsv")):
        how = (
            f"ddlsched {command} --trace {path}"
            if command in ("bound", "simulate")
            else f"ddlsched simulate --trace {path}, or an instance of its jobs from "
            f"ddlsched generate --from-trace {path} --out instance.json"
        )
        raise InputError(f"{path}: a CSV file is a trace, not an instance (JSON); use {how}")
    return read_instance(path)
