"""The options ``simulate`` and ``compare`` take on a Pollux workload (elastic jobs).

Kept apart from :mod:`ddlsched.cli.elastic`, which parses and prints, so that the lists
have one home and the command module stays short.
"""

from __future__ import annotations

__all__ = ["COMPARE_OPTIONS", "ELASTIC_COMPARE_ONLY", "SIMULATE_OPTIONS"]

SIMULATE_OPTIONS = (
    "--trace",
    "--policy",
    "--servers",
    "--gpus-per-server",
    "--gpu-types",
    "--limit",
    "--out",
    "--plot",
    "--json",
)
"""The options of ``simulate`` an elastic run takes. Any other given is refused, not
ignored: the workload's own columns and times are read as they are, the elastic simulator
places and predicts nothing the user picks, and it draws nothing at random."""

COMPARE_OPTIONS = (
    "--trace",
    "--policies",
    "--servers",
    "--gpus-per-server",
    "--gpu-types",
    "--limit",
    "--out",
    "--plot",
    "--json",
)
"""The options of ``compare --trace``; the others (random instances, exact optima) are
refused."""

ELASTIC_COMPARE_ONLY = ("--policies", "--limit")
"""Options of ``compare`` that only mean something with ``--trace``."""
