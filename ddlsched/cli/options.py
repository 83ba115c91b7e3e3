"""What every command shares on the way in: converters of numbers, exit codes, option groups.

A converter turns one command-line word into a value or fails with argparse's one-line
error (exit 2, naming the option and the word); an option group adds the same options, with
the same converter and help, to every command that takes them, so they are defined once.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeAlias, TypeVar

from ddlsched.cli.commands import HELP
from ddlsched.core.model import InputError

EXIT_OK, EXIT_NO, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
OUT = "out"
"""Where commands write files the user did not name."""

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""``ddlsched``'s subcommands (argparse's subparsers), to which each command adds itself."""

Number = TypeVar("Number", int, float)
Name = TypeVar("Name")
Value = TypeVar("Value")

MAX_COUNT = 1_000_000
"""Largest count a flag accepts (jobs, servers, instances, ...)."""


def _number(
    text: str, kind: Callable[[str], Number], test: Callable[[Number], bool], what: str
) -> Number:
    """Parse a command-line number, or fail with argparse's one-line error."""
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and test(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return value


def count(text: str) -> int:
    """A whole number from 1 to :data:`MAX_COUNT`."""
    return int(
        _number(
            text, int, lambda v: 1 <= v <= MAX_COUNT, f"a whole number from 1 to {MAX_COUNT:,}"
        )
    )


def big_count(text: str) -> int:
    """A whole number from 1 to 10^9 (sizes of models)."""
    return int(_number(text, int, lambda v: 1 <= v <= 10**9, "a whole number from 1 to 10^9"))


def seed(text: str) -> int:
    """A whole number >= 0 below 2^63."""
    return int(_number(text, int, lambda v: 0 <= v < 2**63, "a whole number from 0 to 2^63 - 1"))


def threads(text: str) -> int:
    """A whole number from 1 to this machine's cores (``--threads 100000`` was accepted and
    HiGHS stalled starting its threads)."""
    cores = os.cpu_count() or 1
    return int(
        _number(
            text,
            int,
            lambda v: 1 <= v <= cores,
            f"a whole number from 1 to {cores} (this machine's cores)",
        )
    )


def positive(text: str) -> float:
    """A finite number > 0 (at most 1e12)."""
    return float(_number(text, float, lambda v: 0 < v <= 1e12, "a number > 0 (at most 1e12)"))


def non_negative(text: str) -> float:
    """A finite number >= 0 (at most 1e12)."""
    return float(_number(text, float, lambda v: 0 <= v <= 1e12, "a number >= 0 (at most 1e12)"))


def name_list(text: str, option: str, what: str = "names") -> tuple[str, ...]:
    """Items separated by commas (``fifo,asrpt``); a value with no item at all is refused,
    naming ``option``, not read as the defaults, and so is an empty item (``fifo,,sjf``,
    ``0.5,``: a slip, not a list of two). ``what`` names the items in the message."""
    parts = [part.strip() for part in text.split(",")]
    if not any(parts):
        raise InputError(
            f"{option}: expected one or more {what} separated by commas, got {text!r}"
        )
    if not all(parts):
        raise InputError(f"{option}: an empty item between commas in {text!r}")
    return tuple(parts)


def type_list(
    convert: Callable[[str], Value],
    pair: str = "type:value",
    example: str = "v100:2,k80:4",
    *,
    name_of: Callable[[str], Name],
) -> Callable[[str], tuple[tuple[Name, Value], ...]]:
    """An argparse type for ``name:value,name:value`` (GPU types, or GPU counts), names
    by ``name_of`` (``str`` for GPU types) and values by ``convert``; each name given once
    (as converted: ``1`` and ``01`` are one GPU count). ``pair`` and ``example`` word the
    error."""

    def parse(text: str) -> tuple[tuple[Name, Value], ...]:
        pairs = []
        for item in text.split(","):
            name, colon, value = item.strip().partition(":")
            if not colon or not name:
                raise argparse.ArgumentTypeError(
                    f"expected {pair} pairs separated by commas ({example}), got {item!r}"
                )
            pairs.append((name_of(name), convert(value)))
        names = [name for name, _ in pairs]
        repeated = sorted({str(name) for name in names if names.count(name) > 1})
        if repeated:
            raise argparse.ArgumentTypeError(f"{', '.join(repeated)} named more than once")
        return tuple(pairs)

    return parse


GIVEN = "given_options"
"""The namespace attribute listing the options the user typed (see :func:`given`)."""


def _recording(action: type[argparse.Action]) -> type[argparse.Action]:
    """``action`` that also adds its option to :data:`GIVEN` when the user types it, so a
    command can tell ``--seed 0`` from the default 0."""

    class Recorded(action):  # type: ignore[misc, valid-type]
        def __call__(
            self,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: object,
            option_string: str | None = None,
        ) -> None:
            super().__call__(parser, namespace, values, option_string)
            if option_string is not None:
                typed = max(self.option_strings, key=len)
                setattr(namespace, GIVEN, given(namespace) | {typed})

    return Recorded


class _DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's default in its help: argparse's ``(default: X)``, ``(default: off)``
    for a switch, ``(default: not set)`` for an option with nothing by default, unless the
    help already says it (``--jobs: number of jobs (default 8)``); ``(required)`` for a
    required option or positional argument."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if text == argparse.SUPPRESS or "default" in text or "required" in text:
            return action.help
        if action.required or (not action.option_strings and action.nargs is None):
            return f"{text} (required)"
        if not action.option_strings:
            return text if action.nargs != "?" else f"{text} (default: none)"
        if action.nargs == 0 and action.default is None:
            return action.help  # --help / --version
        if action.default is False:
            return f"{text} (default: off)"
        if action.default is None:
            return f"{text} (default: not set)"
        return super()._get_help_string(action)


def _stock_actions() -> dict[str | None, type[argparse.Action]]:
    """argparse's own action classes by the names ``add_argument`` takes (``None``: the
    default), read off a throwaway parser: their class names are private to argparse."""
    probe = argparse.ArgumentParser(add_help=False)
    store = type(probe.add_argument("--store"))
    return {
        None: store,
        "store": store,
        "store_true": type(probe.add_argument("--store-true", action="store_true")),
        "store_const": type(probe.add_argument("--store-const", action="store_const", const=0)),
    }


_RECORDED = {name: _recording(action) for name, action in _stock_actions().items()}
"""The recording versions of :func:`_stock_actions`, made once."""


class Parser(argparse.ArgumentParser):
    """argparse with one line on stderr for bad arguments (exit 2), like other bad input,
    that records which options the user gave (:func:`given`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, action in _RECORDED.items():
            self.register("action", name, action)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def given(args: argparse.Namespace) -> frozenset[str]:
    """The options the user typed (long names), defaults aside."""
    return frozenset(getattr(args, GIVEN, ()))


def refuse_given(args: argparse.Namespace, options: Sequence[str], why: str) -> None:
    """Refuse the ``options`` the user gave that the command would ignore.

    Raises
    ------
    InputError
        ``--limit, --seed: why``, naming the given ones in ``options`` order.
    """
    found = [option for option in options if option in given(args)]
    if found:
        raise InputError(f"{', '.join(found)}: {why}")


def servers(args: argparse.Namespace, default: int) -> int:
    """``--servers`` if given, else the servers ``--gpu-types`` lists, else ``default``."""
    if args.servers is not None:
        return int(args.servers)
    if args.gpu_types:
        return sum(number for _, number in args.gpu_types)
    return default


# Option groups ---------------------------------------------------------------------------


def add_json(command: argparse.ArgumentParser, what: str = "print JSON") -> None:
    """``--json``: machine-readable output on stdout (nothing else on stdout)."""
    command.add_argument("--json", action="store_true", help=what)


def add_seed(
    command: argparse.ArgumentParser, default: int = 0, what: str = "random seed"
) -> None:
    """``--seed``: every random draw of the command follows from it."""
    command.add_argument("--seed", type=seed, default=default, help=what)


def add_gpu_types(command: argparse.ArgumentParser, what: str) -> None:
    """``--gpu-types v100:2,k80:4``: a mixed cluster, servers per GPU type."""
    command.add_argument("--gpu-types", type=type_list(count, name_of=str), help=what)


def add_type_settings(command: argparse.ArgumentParser) -> None:
    """The generator's per-type settings: intra-server bandwidth and your own types' speed."""
    command.add_argument(
        "--type-bandwidth",
        type=type_list(positive, name_of=str),
        help="intra-server GB/s per type, e.g. v100:40,k80:10 (others: --bandwidth-intra)",
    )
    command.add_argument(
        "--type-slowdown",
        type=type_list(positive, name_of=str),
        help="your own types: times slower than the zoo's V100 time, e.g. t4:1.6",
    )


def add_online(command: argparse.ArgumentParser, suffix: str = "") -> None:
    """``--predictor`` and ``--mapper`` of the online policies (names from the registries)."""
    from ddlsched.algorithms.registry import MAPPERS, PREDICTORS
    from ddlsched.core.params import OnlineParams

    command.add_argument(
        "--predictor",
        default=OnlineParams().predictor,
        choices=PREDICTORS.names(),
        help=f"iteration predictor{suffix}",
    )
    command.add_argument(
        "--mapper",
        choices=MAPPERS.names(),
        help=f"GPU mapper replacing the policy's own{suffix}",
    )


def new_command(commands: Commands, name: str, what: str | None = None) -> argparse.ArgumentParser:
    """A subcommand ``name`` of ``commands`` (argparse's subparsers), defaults in its help;
    ``what`` it does, by default the command's line in
    :data:`ddlsched.cli.commands.COMMANDS` (a command of ``ddlsched`` itself)."""
    what = HELP[name] if what is None else what
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=what, description=what, formatter_class=_DefaultsShown
    )
    return parser
