"""Named registries of pluggable parts: one place maps a name to a factory.

Every kind of pluggable part (online policies, iteration predictors, GPU
mappers, exact methods) has one :class:`Registry`, filled by the layer that
owns the parts (``ddlsched.algorithms.registry``, ``ddlsched.formulations.registry``). The
command line's choices, the validation of sweep and compare settings and the
documentation are all derived from these registries, so a name is spelled
once. After the pluggable operators of ALNS (N-Wouda/ALNS), which are named
callables kept in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

F = TypeVar("F", bound=Callable[..., object])


@dataclass(frozen=True)
class Entry(Generic[F]):
    """One registered part: its name, its factory and a one-line summary."""

    name: str
    factory: F
    summary: str


class Registry(Generic[F]):
    """Names of one kind of part, each bound to a factory.

    Parameters
    ----------
    kind
        What the names are (``"policy"``, ``"predictor"``, ...): it names
        the setting in error messages.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[F]] = {}

    def add(self, name: str, factory: F, summary: str) -> F:
        """Register ``factory`` under ``name``; returns the factory.

        Raises
        ------
        ValueError
            If ``name`` is already taken (a name means one thing).
        """
        if name in self._entries:
            raise ValueError(f"{self.kind}: {name!r} is registered twice")
        self._entries[name] = Entry(name, factory, summary)
        return factory

    def register(self, name: str, summary: str) -> Callable[[F], F]:
        """Decorator form of :meth:`add`."""

        def decorate(factory: F) -> F:
            return self.add(name, factory, summary)

        return decorate

    def __getitem__(self, name: str) -> F:
        """The factory of ``name``.

        Raises
        ------
        ValueError
            Naming the kind, the unknown name and every known one.
        """
        entry = self._entries.get(name)
        if entry is None:
            raise ValueError(
                f"{self.kind}: unknown {name!r}; expected one of {', '.join(self._entries)}"
            )
        return entry.factory

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> tuple[str, ...]:
        """Every name, in registration order."""
        return tuple(self._entries)

    def entries(self) -> tuple[Entry[F], ...]:
        """Every entry, in registration order."""
        return tuple(self._entries.values())

    def check(self, names: tuple[str, ...] | list[str], setting: str) -> None:
        """Raise a ``ValueError`` naming ``setting`` if any of ``names`` is unknown."""
        unknown = [name for name in names if name not in self._entries]
        if unknown:
            raise ValueError(
                f"{setting}: unknown {self.kind} {unknown[0]!r}; expected some of "
                f"{', '.join(self._entries)}"
            )
