"""A results file read into a pandas DataFrame, each row's generator settings checked and
turned into the command that regenerates its instance."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pandas as pd

from ddlsched.core.generators import GeneratorConfig, generate_command, with_tuples
from ddlsched.core.io import check_regular_file
from ddlsched.core.model import InputError, is_whole
from ddlsched.provenance import UNKNOWN
from ddlsched.sweeps.config import Settings
from ddlsched.sweeps.store import migrated_copy
from ddlsched.sweeps.summary import with_ratios


def load_results(path: str | Path) -> pd.DataFrame:
    """The results file as a DataFrame, one row per task: generator parameters as columns
    (those that vary, and the size), ``command`` (the ``ddlsched generate`` command writing
    the row's instance, byte for byte), and the ratios of
    :func:`~ddlsched.sweeps.summary.with_ratios`.

    The file is only read: one of an older schema is migrated in memory.

    Raises
    ------
    InputError
        If the file is missing, not a results file, or of a newer ddlsched.
    """
    file = Path(path)
    check_regular_file(file, "SQLite results file")
    with migrated_copy(file, str(path)) as connection:
        frame = pd.read_sql_query(
            "SELECT rowid AS row_number, * FROM results ORDER BY finished_at", connection
        )
    # Rows written before provenance was recorded hold NULL there.
    frame = frame.fillna({"version": UNKNOWN, "revision": UNKNOWN, "mixed": 0})
    frame["mixed"] = frame["mixed"].astype(int)
    settings, commands = [], []
    for row in frame.itertuples():
        where = f"{path}: row {row.row_number} (key {row.key})"
        one, config = _row_settings(row.params, where)
        seed = _row_seed(row.seed, where)
        settings.append(one)
        commands.append(generate_command(config, seed, f"seed{seed}.json"))
    frame = frame.drop(columns=["row_number"])
    frame["command"] = commands
    params = pd.json_normalize(settings)
    shown = {"num_jobs", "servers", "gpus_per_server"} | {
        c for c in params.columns if params[c].astype(str).nunique() > 1
    }
    columns = [c for c in params.columns if c in shown]
    return with_ratios(pd.concat([frame.drop(columns=["params"]), params[columns]], axis=1))


def _row_settings(text: object, where: str) -> tuple[Settings, GeneratorConfig]:
    """A row's ``params`` cell read: the generator settings and their configuration.

    Raises
    ------
    InputError
        Naming ``where`` (the file, row and key) and ``params``: a cell that is empty, not
        JSON, not an object, or settings the generator refuses.
    """
    if text is None or (isinstance(text, float) and math.isnan(text)):  # NULL
        raise InputError(f"{where}: params: empty (expected the generator settings as JSON)")
    if not isinstance(text, str):
        raise InputError(f"{where}: params: expected JSON text, got {text!r:.60}")
    try:
        settings = json.loads(text)
    except ValueError as error:
        raise InputError(f"{where}: params: not JSON ({error})") from None
    if not isinstance(settings, dict):
        raise InputError(
            f"{where}: params: expected a JSON object of generator settings, got a "
            f"{_json_kind(settings)}"
        )
    known = {field.name for field in dataclasses.fields(GeneratorConfig)}
    unknown = sorted(name for name in settings if name not in known)
    if unknown:
        raise InputError(f"{where}: params: {unknown[0]}: not a generator setting")
    try:
        return settings, GeneratorConfig(**with_tuples(settings))
    except (ValueError, TypeError) as error:
        raise InputError(f"{where}: params: {' '.join(str(error).split())}") from None


def _json_kind(value: object) -> str:
    """The JSON name of ``value``'s type (``list``, ``string``, ``number``, ...)."""
    kinds = ((list, "list"), (str, "string"), (bool, "boolean"), (int | float, "number"))
    return next((name for kind, name in kinds if isinstance(value, kind)), "null")


def _row_seed(value: object, where: str) -> int:
    """A row's ``seed`` cell as an int.

    Raises
    ------
    InputError
        Naming ``where`` and ``seed`` when it is not a whole number from 0 to 2^63 - 1.
    """
    number: int | float | None = int(value) if is_whole(value) else None
    if isinstance(value, float) and value.is_integer():
        number = value
    if number is None or not 0 <= number < 2**63:
        raise InputError(f"{where}: seed: expected a whole number >= 0, got {value!r}")
    return int(number)
