"""Typed parameters of the exact methods and the online policies.

After PyVRP's ``SolveParams``: settings are frozen dataclasses with
documented defaults that check themselves on construction and load from a
table of a TOML file (:func:`from_toml`), not dictionaries of options. The
exact methods take :class:`ExactParams`; the policies and the simulator
take :class:`OnlineParams`. Names in them (a predictor, a mapper) are
checked against the registries by the layer that owns those parts.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ddlsched.core.io import check_regular_file
from ddlsched.core.model import InputError, is_whole, replaced

P = TypeVar("P")

DEFAULT_MEMORY_LIMIT = 2 * 2**30
"""Bytes a model may take to build and solve unless told otherwise (2 GiB): the default of
:attr:`ExactParams.memory_limit` and of the bounds' settings. Estimated from the model's
size before it is built (:mod:`ddlsched.formulations.memory`)."""


def _number(value: object, name: str, minimum: float, *, strict: bool) -> None:
    """Raise a ``ValueError`` naming ``name`` unless ``value`` is finite and above ``minimum``."""
    ok = (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and (value > minimum if strict else value >= minimum)
    )
    if not ok:
        relation = ">" if strict else ">="
        raise ValueError(f"{name}: must be a finite number {relation} {minimum:g}, got {value!r}")


def _count(value: object, name: str, minimum: int) -> None:
    """Raise a ``ValueError`` naming ``name`` unless ``value`` is an integer ``>= minimum``."""
    if not is_whole(value) or value < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {value!r}")


@dataclass(frozen=True)
class ExactParams:
    """Settings of an exact method (the HiGHS MILP, CP-SAT and the portfolio ``exact``).

    Attributes
    ----------
    time_limit
        Seconds for the solve, or ``None`` for no limit (default 60).
    mip_gap
        Relative gap at which the solver may stop (default ``1e-6``); a
        result stopped at a gap is ``feasible``, never ``optimal``, unless
        the gap is closed.
    threads
        Solver threads, or ``None`` for the solver's default.
    verbose
        Show the solver's log.
    isolate
        Run the native solver in a child process (default), so that a crash
        inside it becomes an error result instead of ending the caller;
        ``False`` solves in this process (for debuggers and profilers).
    node_limit
        Most branch-and-bound nodes HiGHS explores (its ``mip_max_nodes``),
        or ``None`` (default) for no limit. HiGHS only: the MILP, and the
        mapping MILPs that the modes of problem A may need.
    solution_limit
        Most improving solutions HiGHS finds before it stops (its
        ``mip_max_improving_sols``; a MIP start counts), or ``None``
        (default). HiGHS only.
    deterministic_limit
        CP-SAT's deterministic time budget (its ``max_deterministic_time``,
        a work count in nominal seconds), or ``None`` (default). CP-SAT only.
    mode_limit
        Most modes of problem A enumerated in all (vectors of GPU counts,
        :func:`ddlsched.formulations.modes.problem_a`), or ``None`` (default): past it,
        enumeration stops as it does at the time limit, and the result cannot
        be ``optimal`` unless a lower bound on the instance meets it.
    memory_limit
        Bytes of peak resident memory a model may need (default
        :data:`DEFAULT_MEMORY_LIMIT`, 2 GiB), or ``None`` for no limit. Each model's
        memory is estimated from its size before it is built
        (:mod:`ddlsched.formulations.memory`); one estimated above the limit is refused
        with :class:`~ddlsched.formulations.memory.ModelTooLarge`. ``ddlsched solve
        --memory-limit`` sets it in GiB.

    The time limit covers the whole call: enumerating modes and building the
    model count against it, and the solver gets what remains.

    **Deterministic limits.** ``node_limit``, ``solution_limit``,
    ``deterministic_limit`` and ``mode_limit`` stop a solve after the same amount of work on
    every machine, where a time limit stops it after whatever work the
    machine managed: with one thread (``threads=1``, or ``None`` for CP-SAT,
    whose default is one worker) and a fixed seed the same call returns the
    same result anywhere. Tests that need an unfinished solve use them. A
    backend ignores the limits of the other. A solve stopped by any limit is
    ``optimal`` only when its bound meets its objective (the gap is closed);
    else ``feasible`` with an incumbent, or ``time_limit`` without one.
    """

    time_limit: float | None = 60.0
    mip_gap: float = 1e-6
    threads: int | None = None
    verbose: bool = False
    isolate: bool = True
    node_limit: int | None = None
    solution_limit: int | None = None
    deterministic_limit: float | None = None
    mode_limit: int | None = None
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT

    def __post_init__(self) -> None:
        if self.time_limit is not None:
            _number(self.time_limit, "time_limit", 0, strict=True)
        if (
            isinstance(self.mip_gap, bool)
            or not isinstance(self.mip_gap, int | float)
            or not 0 <= self.mip_gap < 1
        ):
            raise ValueError(f"mip_gap: must be in [0, 1), got {self.mip_gap!r}")
        if self.threads is not None and (not is_whole(self.threads) or self.threads < 1):
            raise ValueError(f"threads: must be a positive integer, got {self.threads!r}")
        if self.node_limit is not None:
            _count(self.node_limit, "node_limit", minimum=0)
        if self.solution_limit is not None:
            _count(self.solution_limit, "solution_limit", minimum=1)
        if self.deterministic_limit is not None:
            _number(self.deterministic_limit, "deterministic_limit", 0, strict=True)
        if self.mode_limit is not None:
            _count(self.mode_limit, "mode_limit", minimum=1)
        if self.memory_limit is not None:
            _count(self.memory_limit, "memory_limit", minimum=1)

    def limits_text(self) -> str:
        """What stops a solve with these settings, in words: CP-SAT's work units and the
        MILP's nodes (deterministic), then the wall-clock limit, if any; ``"none"``."""
        parts = []
        if self.deterministic_limit is not None:
            parts.append(f"{self.deterministic_limit:g} CP-SAT work units")
        if self.node_limit is not None:
            parts.append(f"{self.node_limit:,} MILP nodes")
        if self.time_limit is not None:
            parts.append(f"wall-clock {self.time_limit:g} s")
        return ", ".join(parts) or "none"

    def replace(self, **changes: object) -> ExactParams:
        """A copy with ``changes`` applied (validated again)."""
        return replaced(self, **changes)


PLACEMENTS = ("any", "consolidated", "prefer-consolidated")
"""The placement rules of :class:`OnlineParams` (see ``placement`` there)."""

DEFAULT_RESTART_COST = 1.0
"""Seconds of restoring when a preempted job resumes, unless the policy's
reference says otherwise."""


_PART_NAMES: dict[str, Callable[[], Sequence[str]]] = {}
"""The names of each kind of part (``"predictor"``, ``"mapper"``), bound by the top floor
(:mod:`ddlsched.api`) to the registries, which this floor may not import."""


def bind_part_names(kind: str, names: Callable[[], Sequence[str]]) -> None:
    """Let :class:`OnlineParams` check a ``kind`` name against ``names()`` on construction."""
    _PART_NAMES[kind] = names


def _check_part(kind: str, name: str | None) -> None:
    """Refuse a name that is not a registered ``kind``, saying which kind it is if any."""
    if name is None or kind not in _PART_NAMES:
        return
    known = tuple(_PART_NAMES[kind]())
    if name in known:
        return
    other = [k for k, names in _PART_NAMES.items() if k != kind and name in names()]
    hint = f"; {name!r} is a {other[0]}" if other else ""
    raise ValueError(f"{kind}: unknown {kind} {name!r} (known: {', '.join(known)}){hint}")


@dataclass(frozen=True)
class OnlineParams:
    """Settings of an online policy run in the simulator.

    Attributes
    ----------
    predictor
        Name of the iteration predictor (``ddlsched.algorithms.registry.PREDICTORS``;
        default ``"oracle"``, the exact counts Theorem 1 assumes).
    noise
        Error size of the ``"noisy"`` predictor: the standard deviation of
        ``log(K_hat / K)`` (default 0.5).
    mapper
        Name of a GPU mapper (``ddlsched.algorithms.registry.MAPPERS``) replacing the
        policy's own, or ``None`` (default) for the policy's own.
    restart_cost
        Seconds a preempted job spends restoring when it resumes, holding
        its GPUs without progress (Tiresias's checkpoint-restart cost; only
        preemptive policies pay it). ``None`` (default): the policy's
        reference value (0 for ``las-tiresias``, as Tiresias's simulator),
        else :data:`DEFAULT_RESTART_COST`.
    placement
        Where jobs may run (:data:`PLACEMENTS`): ``"any"`` (default) the
        policy's mapper on any free GPUs; ``"consolidated"`` only on the
        fewest servers that can hold the job (one server when it fits; the
        job waits otherwise, as YARN and Tiresias's ``yarn`` scheme);
        ``"prefer-consolidated"`` consolidated when possible, else any.
    outrun_factor
        The adaptive rule of A-SRPT *(choice)*: a job still running at its
        predicted end has its prediction multiplied by this (default 2).
    max_preemptions
        The most preemptions a run may make before it stops with an error (each
        keeps a piece in memory); ``None`` (default): the simulator's cap,
        ``ddlsched.algorithms.simulator.MAX_PREEMPTIONS``.
    """

    predictor: str = "oracle"
    noise: float = 0.5
    mapper: str | None = None
    restart_cost: float | None = None
    outrun_factor: float = 2.0
    placement: str = "any"
    max_preemptions: int | None = None

    def __post_init__(self) -> None:
        for kind, value in (("predictor", self.predictor), ("mapper", self.mapper)):
            if not isinstance(value, str) and (kind == "predictor" or value is not None):
                raise ValueError(
                    f"{kind}: expected a name, got {value!r}; an object goes to "
                    f"ddlsched.simulate(..., {kind}=...)"
                )
        _check_part("predictor", self.predictor)
        _check_part("mapper", self.mapper)
        _number(self.noise, "noise", 0, strict=False)
        if self.restart_cost is not None:
            _number(self.restart_cost, "restart_cost", 0, strict=False)
        if self.placement not in PLACEMENTS:
            raise ValueError(
                f"placement: expected one of {', '.join(PLACEMENTS)}, got {self.placement!r}"
            )
        _number(self.outrun_factor, "outrun_factor", 1, strict=True)
        if self.max_preemptions is not None:
            _count(self.max_preemptions, "max_preemptions", 0)

    def replace(self, **changes: object) -> OnlineParams:
        """A copy with ``changes`` applied (validated again)."""
        return replaced(self, **changes)


def read_toml(path: str | Path) -> dict[str, object]:
    """The document of a TOML file (UTF-8; a byte-order mark allowed, as editors on
    Windows write one, and as the CSV and JSON readers allow).

    Raises
    ------
    InputError
        If the file is missing, not a regular file (a folder; a pipe or a device, never
        read), not UTF-8 or not valid TOML, naming the file.
    """
    check_regular_file(path, "TOML file")
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{path}: not valid TOML (not UTF-8 text: byte {error.start}: {error.reason})"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{path}: not valid TOML ({error})") from None


def from_table(cls: type[P], table: Mapping[str, object], where: str) -> P:
    """Build the parameter dataclass ``cls`` from a TOML table.

    Unknown keys and invalid values are errors naming ``where`` and the key.
    """
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in table:
        if key not in known:
            raise InputError(f"{where}.{key}: unknown setting (known: {', '.join(sorted(known))})")
    try:
        return cls(**table)
    except (TypeError, ValueError) as error:
        raise InputError(f"{where}: {error}") from None


def from_toml(cls: type[P], path: str | Path, table: str) -> P:
    """Read ``cls`` from the ``[table]`` of the TOML file at ``path``.

    A file without that table gives the defaults. For example
    ``from_toml(ExactParams, "run.toml", "exact")`` reads::

        [exact]
        time_limit = 30
        threads = 1
    """
    document = read_toml(path)
    values = document.get(table, {})
    if not isinstance(values, dict):
        raise InputError(f"{path}: [{table}] must be a table")
    return from_table(cls, values, f"{path}: {table}")
