"""The commands of ``ddlsched`` by name: which module declares each, and its one-line help.

Light on purpose (it imports nothing): ``ddlsched --help`` lists every command from here,
and only the module of the command being run is imported (its options, their choices
from the registries, and what it calls), so neither ``import ddlsched.cli`` nor ``ddlsched
--help`` loads a solver, a policy or an experiment.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One command of ``ddlsched``.

    Attributes
    ----------
    name
        What the user types (``ddlsched solve``).
    module
        The module of :mod:`ddlsched.cli` whose ``add(commands)`` declares it (one module
        may declare several: ``sweep`` and ``results``) and whose ``run(args)`` runs it.
    help
        The line ``ddlsched --help`` shows for it, also the command's own description.
    """

    name: str
    module: str
    help: str


COMMANDS: tuple[Command, ...] = (
    Command(
        "compare",
        "compare",
        "the main job: online methods against exact optima on random instances; with --trace, "
        "every policy side by side on a trace",
    ),
    Command("generate", "generate", "write a random instance"),
    Command("verify", "verify", "check a schedule against an instance"),
    Command("solve", "solve", "schedule an instance exactly or with a policy"),
    Command("simulate", "simulate", "replay a real trace with an online policy"),
    Command("bound", "bound", "proven lower bounds on OPT(A) of an instance or a trace"),
    Command("check", "check", "check every claim of the theory by computation"),
    Command("predict", "predict", "iteration prediction for recurring jobs"),
    Command("sweep", "sweep", "run a grid of experiments on Dask, results in SQLite"),
    Command("results", "sweep", "summarise a sweep's results file"),
    Command("info", "info", "describe an instance: alpha_min, alpha_max, rho"),
    Command(
        "data",
        "data",
        "list the shipped traces and profiles (rows, source, licence); check a trace",
    ),
    Command(
        "bench",
        "bench",
        "the certified benchmark library: list, export and verify its entries, score "
        "schedulers on it",
    ),
)
"""Every command, in the order ``--help`` lists them (a module's commands side by side)."""

HELP = {command.name: command.help for command in COMMANDS}
"""Each command's one-line help by name."""
