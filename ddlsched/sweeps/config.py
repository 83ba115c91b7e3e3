"""A sweep file read and checked: the grid, its tasks and each task's key."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from ddlsched.api import generate_checked, method_names
from ddlsched.core.generators import GeneratorConfig, with_preset, with_tuples
from ddlsched.core.model import InputError, is_whole
from ddlsched.core.params import PLACEMENTS, ExactParams, read_toml

Scalar: TypeAlias = bool | int | float | str | None
Setting: TypeAlias = Scalar | list["Setting"] | tuple["Setting", ...]
"""A generator setting's value as TOML and JSON give it (numbers, names, lists of pairs)."""

Settings: TypeAlias = dict[str, Setting]
"""Generator settings by name (:class:`~ddlsched.core.generators.GeneratorConfig`'s fields)."""

KEY_VERSION = 1
"""Hashed into every task's key: changing it would make every stored row run again."""

MAX_TASKS = 100_000
"""Most tasks a sweep file may ask for (methods x seeds x grid points): beyond it a typo
(``seeds = 100000000``) would spend minutes listing tasks before the first one runs."""

LATER_FIELDS = ("gpu_types", "type_bandwidth", "type_slowdown", "from_trace", "arrivals")
"""Generator settings added after result files existed: left out of a task's key when empty."""

SWEEP_KEYS = ("methods", "seeds", "time_limit", "work_limit", "node_limit", "grid", "placement")
"""The keys a ``[sweep]`` table may hold."""


@dataclass(frozen=True)
class Task:
    """One method on one generated instance."""

    method: str
    generator: Settings
    seed: int
    time_limit: float | None
    placement: str = "any"
    work_limit: float | None = None
    node_limit: int | None = None

    def exact_params(self) -> ExactParams:
        """An exact method's settings: the deterministic limits, and the time limit if any."""
        return ExactParams(
            time_limit=self.time_limit,
            deterministic_limit=self.work_limit,
            node_limit=self.node_limit,
        )

    @property
    def limits(self) -> str:
        """What stopped an exact method, in words (a row's ``limits``)."""
        return self.exact_params().limits_text()

    @property
    def key(self) -> str:
        """SHA-256 of the canonical JSON of the inputs (and :data:`KEY_VERSION`).

        The default placement, absent limits and the generator settings of
        :data:`LATER_FIELDS` left empty are left out, so files written before
        those existed keep their keys (and resume).
        """
        document = {"version": KEY_VERSION, **dataclasses.asdict(self)}
        if self.placement == "any":
            del document["placement"]
        for limit in ("work_limit", "node_limit"):
            if document[limit] is None:
                del document[limit]
        document["generator"] = {
            name: value
            for name, value in self.generator.items()
            if not (name in LATER_FIELDS and not value)
        }
        text = json.dumps(document, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class SweepConfig:
    """A parsed sweep file: ``grid`` maps a generator setting to the values it takes,
    ``fixed`` holds the settings of ``[generator]``."""

    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    time_limit: float | None
    grid: dict[str, list[Setting]]
    fixed: Settings
    placement: str = "any"
    work_limit: float | None = 60.0
    node_limit: int | None = 20_000

    def tasks(self) -> Iterator[Task]:
        """Every task of the grid, in a fixed order."""
        names = sorted(self.grid)
        for values in itertools.product(*(self.grid[n] for n in names)):
            settings = {**self.fixed, **dict(zip(names, values, strict=True))}
            generator: Settings = dataclasses.asdict(generator_config(settings))
            for seed in self.seeds:
                for method in self.methods:
                    yield Task(
                        method,
                        generator,
                        seed,
                        self.time_limit,
                        self.placement,
                        self.work_limit,
                        self.node_limit,
                    )


def generator_config(settings: Settings) -> GeneratorConfig:
    """The generator settings of a grid point (a ``preset`` expanded, lists as tuples)."""
    return GeneratorConfig(**with_tuples(with_preset(settings, "generator.preset")))


def read_sweep(path: str | Path) -> SweepConfig:
    """Read and validate a sweep file.

    Raises
    ------
    InputError
        Naming the table and key that is wrong, or the size of a grid of more
        than :data:`MAX_TASKS` tasks.
    """
    doc = read_toml(path)
    sweep = doc.get("sweep")
    if not isinstance(sweep, dict):
        raise InputError(f"{path}: missing [sweep] table")
    unknown = set(sweep) - set(SWEEP_KEYS)
    if unknown:
        raise InputError(f"{path}: sweep.{sorted(unknown)[0]}: unknown key")
    methods = _methods(sweep.get("methods", ["milp", "asrpt"]), path)
    seeds = _seeds(sweep.get("seeds", 3), path)
    time_limit = _limit(sweep, "time_limit", None, path, "seconds")
    work_limit = _limit(sweep, "work_limit", 60.0, path, "CP-SAT work units")
    node_limit = _limit(sweep, "node_limit", 20_000, path, "MILP nodes")
    if node_limit is not None and node_limit != int(node_limit):
        raise InputError(f"{path}: sweep.node_limit: expected a whole number, got {node_limit!r}")
    grid, fixed = _generator_tables(doc, path)
    placement = _placement(sweep.get("placement", "any"), path)
    nodes = None if node_limit is None else int(node_limit)
    config = SweepConfig(methods, seeds, time_limit, grid, fixed, placement, work_limit, nodes)
    _refuse_too_many(config, path)
    try:
        list(config.tasks())  # every grid point's generator settings, validated
        _try_each_setting(config)
    except (ValueError, TypeError) as error:
        raise InputError(f"{path}: {' '.join(str(error).split())}") from None
    return config


def _methods(methods: object, path: str | Path) -> tuple[str, ...]:
    """``sweep.methods``: a non-empty list of names :func:`~ddlsched.api.solve` accepts."""
    known = method_names()
    if (
        not isinstance(methods, list)
        or not methods
        or not all(isinstance(m, str) for m in methods)
    ):
        raise InputError(
            f"{path}: sweep.methods: expected a non-empty list of method names, got {methods!r}"
        )
    for method in methods:
        if method not in known:
            raise InputError(
                f"{path}: sweep.methods: unknown method {method!r} "
                f"(expected some of {', '.join(known)})"
            )
    return tuple(methods)


def _placement(placement: object, path: str | Path) -> str:
    """``sweep.placement``: one of :data:`~ddlsched.core.params.PLACEMENTS`."""
    if not isinstance(placement, str) or placement not in PLACEMENTS:
        raise InputError(
            f"{path}: sweep.placement: expected one of {', '.join(PLACEMENTS)}, got {placement!r}"
        )
    return placement


def _limit(
    sweep: Mapping[str, object], name: str, default: float | None, path: str | Path, unit: str
) -> float | None:
    """``sweep.<name>``: a number > 0 (at most 1e12), or ``default`` when absent."""
    value = sweep.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1e12:
        raise InputError(
            f"{path}: sweep.{name}: expected {unit} > 0 (at most 1e12), got {value!r}"
        )
    return float(value)


def _generator_tables(
    doc: Mapping[str, object], path: str | Path
) -> tuple[dict[str, list[Setting]], Settings]:
    """``[sweep.grid]`` (each a non-empty list) and ``[generator]``, every key a generator
    setting, no setting given different values in the two."""
    sweep = doc["sweep"]
    grid = sweep.get("grid", {}) if isinstance(sweep, dict) else {}
    fixed = doc.get("generator", {})
    if not isinstance(grid, dict):
        raise InputError(f"{path}: sweep.grid: expected a table")
    if not isinstance(fixed, dict):
        raise InputError(f"{path}: generator: expected a table")
    fields = {f.name for f in dataclasses.fields(GeneratorConfig)} | {"preset"}
    for table, keys in (("sweep.grid", grid), ("generator", fixed)):
        for key in keys:
            if key not in fields:
                raise InputError(f"{path}: {table}.{key}: not a generator setting")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise InputError(f"{path}: sweep.grid.{key}: expected a non-empty list")
    _refuse_set_twice(path, grid, fixed)
    return dict(grid), dict(fixed)


def _refuse_set_twice(
    path: str | Path, grid: Mapping[str, list[Setting]], fixed: Mapping[str, Setting]
) -> None:
    """Refuse a setting fixed in ``[generator]`` to a value its ``[sweep.grid]`` list
    differs from: one of the two would be silently ignored (the same value twice agrees)."""
    for key in sorted(set(grid) & set(fixed)):
        if grid[key] == [fixed[key]]:
            continue
        raise InputError(
            f"{path}: generator.{key} = {fixed[key]!r} contradicts sweep.grid.{key} = "
            f"{grid[key]!r}: set {key} in one of the two tables"
        )


def _refuse_too_many(config: SweepConfig, path: str | Path) -> None:
    """Refuse a sweep of more than :data:`MAX_TASKS` tasks, naming its three factors."""
    points = math.prod(len(values) for values in config.grid.values())
    methods, seeds = len(config.methods), len(config.seeds)
    total = methods * seeds * points
    if total > MAX_TASKS:
        raise InputError(
            f"{path}: {total:,} tasks ({methods} methods x {seeds:,} seeds x "
            f"{points:,} grid points), more than {MAX_TASKS:,}: split the sweep"
        )


def _try_each_setting(config: SweepConfig) -> None:
    """Generate a small instance with each value of each setting, so that a value only the
    generator refuses (a negative ``iteration_sigma``) is named here, not on every worker."""
    first = {name: values[0] for name, values in config.grid.items()}
    tried: list[Settings] = [first]
    tried += [{**first, name: v} for name, values in config.grid.items() for v in values[1:]]
    for point in tried:
        settings = generator_config({**config.fixed, **point})
        generate_checked(settings.replace(num_jobs=min(settings.num_jobs, 4)), config.seeds[0])


def _seeds(value: object, path: str | Path) -> tuple[int, ...]:
    """``sweep.seeds``: a count (seeds 0 to count - 1) or a list of distinct seeds."""
    if is_whole(value) and value > MAX_TASKS:
        raise InputError(f"{path}: sweep.seeds: at most {MAX_TASKS:,}, got {value:,}")
    if is_whole(value) and value >= 1:
        return tuple(range(value))
    if isinstance(value, list) and value and all(is_whole(v) and 0 <= v < 2**63 for v in value):
        repeated = sorted({seed for seed in value if value.count(seed) > 1})
        if repeated:
            raise InputError(
                f"{path}: sweep.seeds: repeats {', '.join(map(str, repeated))} (each seed "
                "would run the same tasks twice)"
            )
        return tuple(value)
    raise InputError(
        f"{path}: sweep.seeds: expected a count >= 1 or a non-empty list of seeds >= 0, "
        f"got {value!r}"
    )
