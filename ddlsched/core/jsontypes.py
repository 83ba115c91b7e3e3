"""The types of a JSON document, as :mod:`json` reads and writes it.

Every function that builds or reads a JSON document (the instance and schedule
formats, the CLI's ``--json`` output, sweep rows) names its values with these
aliases rather than an unchecked type, so that a value JSON cannot hold (a tuple key, a set,
an object) is a type error where the document is built.
"""

from __future__ import annotations

from typing import TypeAlias

JsonScalar: TypeAlias = str | int | float | bool | None
"""A JSON string, number, ``true``/``false`` or ``null``."""

JsonValue: TypeAlias = JsonScalar | list["JsonValue"] | dict[str, "JsonValue"]
"""A JSON value of every kind: a scalar, an array or an object, nested to any depth."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object (a whole document, or one record of it) as it is built."""
