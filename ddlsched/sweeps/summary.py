"""The numbers of a results frame: each row's ratios to the optimum and to the best bound,
the summary per method and grid point, and the samples ``results --plot`` draws."""

from __future__ import annotations

import json
import math

import pandas as pd

from ddlsched.sweeps.rows import COLUMNS, FAILED

GRID_KEYS = ("method", "num_jobs", "servers", "gpus_per_server", "load")
"""The columns :func:`summarise` groups by first (those present)."""

RESULT_COLUMNS = frozenset(COLUMNS) | {"command", "invalid", "opt", "bound", "C/OPT", "C/LB"}
"""Columns of :func:`~ddlsched.sweeps.load_results`'s frame that are not generator settings."""


def invalid_numbers(
    objective: str | bytes | float | None, bound: str | bytes | float | None
) -> str:
    """Why a row's ``objective`` and ``best_bound`` cannot be ratios, or ``""`` when they
    can: each, when recorded (not NULL), must be a finite number > 0, and the bound (a
    lower bound on the objective) at most the objective."""
    values: dict[str, float] = {}
    for name, value in (("objective", objective), ("bound", bound)):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            return f"{name} {value!r:.40} is not a number"
        if not (math.isfinite(number) and number > 0):
            return f"{name} {number:g} is not a finite number > 0"
        values[name] = number
    if len(values) == 2 and values["bound"] > values["objective"] * (1 + 1e-9):
        return f"bound {values['bound']:g} is above the objective {values['objective']:g}"
    return ""


def with_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with, per row, ``opt`` (the instance's proven optimum of problem A: the
    objective of a row of the same instance, any method, with status ``optimal``),
    ``bound``, ``C/OPT`` and ``C/LB`` (an upper bound on the ratio to the optimum of the
    row's model); ``nan`` where unknown. An instance is a ``command``.

    ``bound`` is the largest proven lower bound any row of the instance recorded, except
    on a row of a preemptive policy
    (:data:`~ddlsched.algorithms.registry.PREEMPTIVE_POLICIES`): a preemptive schedule
    may beat ``OPT(A)``, so its ``bound`` is the largest recorded by the instance's
    preemptive rows, whose ``best_bound`` is the best fast bound
    (:func:`~ddlsched.formulations.certify.combinatorial_bound`, the bounds of
    :data:`~ddlsched.formulations.lower_bounds.PREEMPTIVE_BOUNDS`). Its ``C/OPT`` is
    still the ratio to ``OPT(A)`` and may be below 1.

    ``invalid`` says why a row's numbers cannot be ratios (:func:`invalid_numbers`: an
    objective or bound that is not a finite number > 0, a bound above the objective), ``""``
    when they can: an invalid row has no ratio and gives no optimum nor bound to the
    other rows of its instance."""
    from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES

    invalid = pd.Series(
        [
            invalid_numbers(objective, bound)
            for objective, bound in zip(frame["objective"], frame["best_bound"], strict=True)
        ],
        index=frame.index,
        dtype=object,
    )
    valid = invalid == ""
    objective = pd.to_numeric(frame["objective"], errors="coerce").where(valid)
    numbers = frame.assign(objective=objective, best_bound=pd.to_numeric(
        frame["best_bound"], errors="coerce").where(valid))  # fmt: skip
    preemptive = frame["method"].isin(PREEMPTIVE_POLICIES)
    proven = numbers[numbers["status"] == "optimal"].groupby("command")["objective"].min()
    bound = numbers.groupby("command")["best_bound"].max()
    relaxed = numbers[preemptive].groupby("command")["best_bound"].max()
    out = frame.assign(
        invalid=invalid,
        opt=frame["command"].map(proven).astype(float),
        bound=frame["command"]
        .map(bound)
        .astype(float)
        .where(~preemptive, frame["command"].map(relaxed).astype(float)),
    )
    out["C/OPT"] = objective / out["opt"]
    out["C/LB"] = objective / out["bound"].where(out["bound"] > 0)
    return out


def producers(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per version and revision that produced rows of ``frame``
    (:func:`~ddlsched.sweeps.load_results`): how many rows, how many of them added as mixed.

    ``ddlsched results`` prints this table above the summary.
    """
    return (
        frame.groupby(["version", "revision"])
        .agg(rows=("key", "count"), mixed=("mixed", "sum"))
        .reset_index()
    )


def grid_settings(frame: pd.DataFrame) -> list[str]:
    """The generator settings that tell the grid points of ``frame`` apart: those of
    :data:`GRID_KEYS` present, then every other setting column
    (:func:`~ddlsched.sweeps.load_results` keeps the settings that vary)."""
    known = [c for c in GRID_KEYS[1:] if c in frame.columns]
    return known + [c for c in frame.columns if c not in RESULT_COLUMNS and c not in known]


def _hashable(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with list or dict cells of ``columns`` as JSON text, so they can be grouped."""
    return frame.assign(
        **{
            c: frame[c].map(lambda v: json.dumps(v) if isinstance(v, list | dict) else v)
            for c in columns
        }
    )


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per method and grid point (the :func:`grid_settings` of ``frame``): tasks,
    verified, proven optimal, failed, invalid (rows whose numbers cannot be ratios, see
    :func:`with_ratios`: left out of every mean), the mean objective, the ratios to the
    optimum and to the bound (mean, standard deviation and worst over the grid point's
    instances), mean runtime, and the versions that produced them (``version@revision``,
    revisions cut to 12 digits).

    ``ddlsched results`` prints this table.
    """
    settings = grid_settings(frame)
    producer = frame["version"] + "@" + frame["revision"].str.slice(0, 12)
    return (
        _hashable(frame, settings)
        .assign(
            producer=producer,
            objective=pd.to_numeric(frame["objective"], errors="coerce").where(
                frame["invalid"] == ""
            ),
        )
        .groupby(["method", *settings], dropna=False)
        .agg(
            tasks=("key", "count"),
            verified=("verified", "sum"),
            optimal=("status", lambda s: int((s == "optimal").sum())),
            failed=("status", lambda s: int((s == FAILED).sum())),
            invalid=("invalid", lambda s: int((s != "").sum())),
            mean_objective=("objective", "mean"),
            **{
                f"{ratio} {name}": (ratio, how)
                for ratio in ("C/OPT", "C/LB")
                for name, how in (("mean", "mean"), ("sd", "std"), ("worst", "max"))
            },
            mean_runtime_s=("runtime_s", "mean"),
            produced_by=("producer", lambda s: ", ".join(sorted(set(s)))),
        )
        .reset_index()
    )


def ratio_samples(frame: pd.DataFrame, ratio: str) -> dict[str, list[float]]:
    """Per method (and grid point, when there are several), the finite values of the
    column ``ratio`` (``C/OPT`` or ``C/LB``) of :func:`~ddlsched.sweeps.load_results`'s
    frame: what ``results --plot`` draws."""
    varying = [c for c in grid_settings(frame) if frame[c].astype(str).nunique() > 1]
    samples: dict[str, list[float]] = {}
    grouped = _hashable(frame, varying).groupby(["method", *varying], dropna=False, sort=False)
    for group, rows in grouped:
        values = [float(v) for v in rows[ratio] if math.isfinite(v)]
        if not values:
            continue
        parts = group if isinstance(group, tuple) else (group,)
        label = " ".join(
            [str(parts[0]), *(f"{k}={v}" for k, v in zip(varying, parts[1:], strict=True))]
        )
        samples[label] = values
    return samples
