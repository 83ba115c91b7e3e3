"""The ``ddlsched`` command line: parsing and printing, nothing else.

One module per command (``compare``, ``generate``, ``verify``, ``solve``, ``simulate``,
``bound``, ``check``, ``predict``, ``sweep`` and ``results``, ``info``, ``data``; named in
:data:`ddlsched.cli.commands.COMMANDS`), each with an
``add(commands)`` that declares its options and a ``run(args)`` that calls the façades
(:mod:`ddlsched.api`), the experiments (:mod:`ddlsched.experiments`), the sweeps
(:mod:`ddlsched.sweeps`) or the figures (:mod:`ddlsched.plotting`) and prints. What several
commands share is defined once: converters and option groups in
:mod:`ddlsched.cli.options`, JSON, tables, progress bars and figures in
:mod:`ddlsched.cli.output`, the trace options in :mod:`ddlsched.cli.replay`. Every choice of
a name (method, policy, predictor, mapper, problem) is read from the registries, so
``--help`` lists exactly what the code knows. Only the module of the command being run is
imported (``ddlsched --help`` lists the commands from the registry alone), and heavy packages
(Pyomo, scikit-learn, matplotlib, Dask) are imported by the command that needs them, so
``ddlsched generate`` never pays for Pyomo, nor ``ddlsched --help`` for a solver.

Exit codes: 0 success, 1 a negative answer (an infeasible schedule, a violated claim, a
solver that failed), 2 bad input (one line on stderr naming the field and the value; never a
traceback), 3 an internal error (a bug: one line, the traceback with ``DDLSCHED_DEBUG=1``),
130 interrupted (Ctrl-C), 128 + the signal for SIGTERM (143) and SIGHUP (129).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import time
from collections.abc import Collection, Sequence
from typing import NoReturn

from ddlsched.cli.clock import process_age
from ddlsched.cli.commands import COMMANDS
from ddlsched.cli.options import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    Parser,
)
from ddlsched.cli.output import json_only_on_stdout, one_line
from ddlsched.core.model import InputError
from ddlsched.provenance import package_version

__all__ = ["build_parser", "main"]


def build_parser(only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``ddlsched`` (exposed for documentation and tests).

    Parameters
    ----------
    only
        The commands whose options are declared (their modules imported); the others are
        listed by name and help alone (:data:`ddlsched.cli.commands.COMMANDS`), enough for
        ``ddlsched --help``. ``None``: every command, with all its options.
    """
    parser = Parser(
        prog="ddlsched",
        description="Scheduling distributed deep-learning jobs on GPU clusters: "
        "exact optima, A-SRPT, baselines, and checks of the theory.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    wanted = {c.module for c in COMMANDS if only is None or c.name in only}
    declared: set[str] = set()
    for command in COMMANDS:
        if command.module not in wanted:
            commands.add_parser(command.name, help=command.help)
        elif command.module not in declared:
            declared.add(command.module)
            importlib.import_module(f"ddlsched.cli.{command.module}").add(commands)
    return parser


def _invoked(argv: Sequence[str]) -> set[str]:
    """The command named on the command line, if any: the first word that is no option
    (the top level's only options, ``--help`` and ``--version``, take no value)."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return {first} if first is not None else set()


_UNWINDING_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""Signals turned into a clean exit ``128 + signal`` (SIGINT is Python's KeyboardInterrupt)."""


def _terminated(signum: int, frame: object) -> NoReturn:
    print("ddlsched: terminated", file=sys.stderr)
    raise SystemExit(128 + signum)


def _stdout_to_null_if_closed() -> None:
    """A command started with its standard output closed (``>&-``) writes it to the null
    device: what it writes to files (``--out``) is still written, and neither Python's
    ``print`` nor a solver child's log (which goes where file descriptor 1 points) fails
    (``sys.stdout`` was None, and ``--json`` commands stopped with an internal error)."""
    if sys.stdout is not None:
        return
    null = os.open(os.devnull, os.O_WRONLY)
    if null != 1:
        os.dup2(null, 1)
        os.close(null)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 (for the run)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ddlsched``; returns the exit code."""
    # Limits count from the process's start when run as a command (argv None), from
    # here when called in-process (tests, notebooks).
    started = time.monotonic() - (process_age() if argv is None else 0.0)
    _stdout_to_null_if_closed()
    try:
        # Building the parser measures the terminal for every option (argparse): a Ctrl-C
        # there, in the first half second, printed a traceback instead of one line.
        words = sys.argv[1:] if argv is None else argv
        args = build_parser(only=_invoked(words)).parse_args(words)
    except KeyboardInterrupt:
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    args.started = started
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = {}
    if in_main_thread:
        # `kill` (SIGTERM) and a closed terminal or ssh session (SIGHUP) unwind like Ctrl-C,
        # so solver children are stopped, not orphaned, and partial results are kept; the
        # caller's handlers are back when main() returns (tests call it in-process).
        previous = {number: signal.signal(number, _terminated) for number in _UNWINDING_SIGNALS}
    try:
        if getattr(args, "json", False):
            with json_only_on_stdout():
                return int(args.handler(args))
        return int(args.handler(args))
    except InputError as error:
        print(f"ddlsched: error: {one_line(error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader (e.g. "| head") stopped listening: not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except OSError as error:
        # A file we were asked to read or write: name it and the reason.
        where = f"{error.filename}: " if error.filename else ""
        print(f"ddlsched: error: {where}{one_line(error.strerror or error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as error:
        if "null byte" not in str(error):
            return _internal_error(error)
        # The operating system's own refusal of a file name such as "a\x00b".
        print("ddlsched: error: a file name contains a NUL byte", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:
        return _internal_error(error)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def _internal_error(error: Exception) -> int:
    """One line for a bug (exit 3); the traceback with ``DDLSCHED_DEBUG=1``."""
    if os.environ.get("DDLSCHED_DEBUG"):
        raise error
    print(
        f"ddlsched: internal error (a bug, please report it): {type(error).__name__}: "
        f"{one_line(error)}; set DDLSCHED_DEBUG=1 for the traceback",
        file=sys.stderr,
    )
    return EXIT_INTERNAL
