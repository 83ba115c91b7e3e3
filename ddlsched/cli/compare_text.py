"""The text of ``ddlsched compare``'s table on generated or trace-sampled instances: the
heading lines, where optima are missing and why, what the time budget cut, how close the
lower bounds come, one row per method and the notes (the figures of
:meth:`ddlsched.experiments.compare.CompareReport.summary`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ddlsched.cli.output import print_table, types_text

if TYPE_CHECKING:
    from ddlsched.experiments.compare import CompareConfig


def print_summary(config: CompareConfig, summary: dict[str, Any]) -> None:
    """The heading lines, the bounds, the table (keys of the JSON rows) and the notes."""
    from ddlsched.experiments.compare import METHOD_HEADERS

    last_seed = config.seed + summary["instances"] - 1
    stopped = " - interrupted" if summary["interrupted"] else ""
    at_load = f"load {config.load}"
    if config.from_trace:
        recorded = ", as recorded" if config.load is None else f" at {at_load}"
        kind, arrivals = f"samples of {config.from_trace}", f"{config.arrivals}{recorded}"
    else:
        released = "all released at 0" if config.load is None else at_load
        kind, arrivals = "exact-friendly instances", released
    print(
        f"{summary['instances']} {kind} ({config.jobs} jobs, {config.servers} x "
        f"{config.gpus_per_server} GPUs{types_text(config.generator().cluster())}, "
        f"{arrivals}, seeds {config.seed}..{last_seed}){stopped}"
    )
    print(
        f"optima proven: {summary['optima_proven']}/{summary['instances']} ({config.exact} "
        f"mean {summary['exact_mean_runtime_s']:.2f} s; {summary['exact_limits']}); rho mean "
        f"{summary['rho_mean']:.3f}, max {summary['rho_max']:.3f}; Theorem 1 bound on asrpt/OPT "
        f"(2 + M/(M-g_max+1)) * rho: up to {summary['theorem1_factor_max']:.3f}"
    )
    _print_unproven(summary)
    _print_budget_cuts(summary)
    _print_bounds(summary)
    instances = summary["instances"]
    rows = [
        [_cell(header, row[header], instances) for header in METHOD_HEADERS]
        for row in summary["methods"].values()
    ]
    print_table(METHOD_HEADERS, rows)
    if summary["preemptive_note"]:
        print(f"  {summary['preemptive_note']}")
    for method, row in summary["methods"].items():
        if row["note"]:
            print(f"  note on {method}: {row['note']}")


def _print_unproven(summary: dict[str, Any]) -> None:
    """One line saying where OPT is missing and why, and what stands in for it."""
    unproven = summary["unproven"]
    if not unproven:
        return
    whys = sorted({entry["why"] for entry in unproven})
    seeds = ", ".join(str(entry["seed"]) for entry in unproven[:10])
    more = ", ..." if len(unproven) > 10 else ""
    gaps = [entry["gap"] for entry in unproven if math.isfinite(entry["gap"])]
    gap = f", gap to the best bound up to {max(gaps):.1%}" if gaps else ""
    print(
        f"OPT not proven on {len(unproven)}/{summary['instances']} instance(s) (seeds "
        f"{seeds}{more}): {'; '.join(whys)}{gap}; "
        "C/OPT covers the proven ones only, C/LB (an upper bound on C/OPT) covers all"
    )


def _print_budget_cuts(summary: dict[str, Any]) -> None:
    """One line naming the phases the time budget cut, and on which instances."""
    cuts = summary["budget_cuts"]
    if not cuts:
        return
    seeds = ", ".join(str(entry["seed"]) for entry in cuts[:10])
    more = ", ..." if len(cuts) > 10 else ""
    phases = sorted({phase for entry in cuts for phase in entry["phases"]})
    print(
        f"time limit: phases cut on {len(cuts)}/{summary['instances']} instance(s) (seeds "
        f"{seeds}{more}): {'; '.join(phases)}; what they would give is missing (nan)"
    )


def _print_bounds(summary: dict[str, Any]) -> None:
    """How close the lower bounds come: to OPT where proven, else to the best schedule."""
    if summary["optima_proven"]:
        print(
            f"lower bounds: the best is at least {summary['lower_bound_over_opt_min']:.3f} of "
            f"OPT on every proven instance; the fast bounds alone (no MILP) reach a median of "
            f"{summary['fast_bound_over_opt_median']:.3f} "
            f"(worst {summary['fast_bound_over_opt_min']:.3f})"
        )
    else:
        print(
            "lower bounds: the best is at least "
            f"{summary['lower_bound_over_incumbent_min']:.3f} of the best schedule found on "
            f"every instance; the fast bounds alone (no MILP) at least "
            f"{summary['fast_bound_over_incumbent_min']:.3f}"
        )


def _cell(header: str, value: Any, instances: int) -> str:
    """A table cell: ratios to 4 decimals (``not proven`` where no optimum is), counts."""
    if header == "method":
        return str(value)
    if header == "verified":
        return f"{int(value)}/{instances}"
    if header == "worst seed":
        return "-" if value is None else str(value)
    if isinstance(value, float) and math.isnan(value):
        return "not proven" if "OPT" in header else "nan"
    return f"{value:.4f}"
