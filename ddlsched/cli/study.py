"""``ddlsched compare --trace`` on a rigid trace: a trace study, one table per load and one
row per policy (:mod:`ddlsched.experiments.trace_study` computes it; this module parses the
options, reports progress and prints)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ddlsched.cli import elastic
from ddlsched.cli.files import check_outputs, csv_output
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    count,
    given,
    name_list,
    positive,
    refuse_given,
    servers,
)
from ddlsched.cli.output import (
    figure_format,
    print_json,
    print_table,
    save_figure,
    types_text,
    write_csv,
)
from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from ddlsched.experiments.trace_study import StudyProgress, TraceStudy

STUDY_ONLY = (
    "--format", "--columns", "--time-unit", "--states", "--fractional", "--unnamed",
    "--target-load", "--workers", "--bounds", "--no-cache",
)  # fmt: skip
"""Options that only mean something with a rigid ``--trace`` (a trace study)."""
RANDOM_ONLY = (
    "--jobs", "--instances", "--methods", "--work-limit", "--node-limit", "--time-limit",
    "--load", "--predictor", "--exact", "--from-trace", "--arrivals",
)  # fmt: skip
"""Options of the comparison on random instances, refused in a trace study."""


def add_options(command: argparse.ArgumentParser) -> None:
    """How a rigid ``--trace`` is read and studied (``--servers``, ``--gpus-per-server``,
    ``--gpu-types``, ``--limit``, ``--policies``, ``--out``, ``--plot``, ``--json`` are shared)."""
    from ddlsched.cli.replay import add_reading_options
    from ddlsched.core.traces import UNNAMED_RULES
    from ddlsched.experiments.trace_study import BOUNDS

    trace = "with a rigid --trace (a trace study: every rigid policy, default 256 x 8 GPUs)"
    add_reading_options(command, prefix=f"{trace}: ")
    command.add_argument(
        "--unnamed", choices=UNNAMED_RULES, help=f"{trace}: rows without a known model "
        f"(default {UNNAMED_RULES[0]}, as simulate)"
    )  # fmt: skip
    command.add_argument(
        "--target-load",
        help=f"{trace}: offered loads, e.g. 0.5,0.7,0.9, one table each (default: as recorded)",
    )
    command.add_argument(
        "--workers", type=count, help=f"{trace}: worker processes (default: the cores)"
    )
    command.add_argument(
        "--bounds", choices=BOUNDS, help=f"{trace}: each model's sandwich, in full (default) "
        "or fast, or none"
    )  # fmt: skip
    command.add_argument(
        "--no-cache", action="store_true", help=f"{trace}: compute the sandwiches afresh"
    )


def is_rigid_trace(args: argparse.Namespace) -> bool:
    """Whether ``--trace`` names a rigid trace (not a Pollux workload of elastic jobs)."""
    from ddlsched.core.data import resolve_trace

    args.trace = str(resolve_trace(args.trace))
    return not elastic.is_pollux_workload(args.trace)


def run(args: argparse.Namespace) -> int:
    """``compare --trace`` on a rigid trace: one table per load, one row per policy."""
    from ddlsched.cli.replay import left_out_lines, option_errors, read_replay_trace
    from ddlsched.experiments.trace_study import StudySettings, at_load, run_study

    refuse_given(args, RANDOM_ONLY, "not available with a rigid --trace (a trace study)")
    check_outputs({"--out": args.out, "--plot": args.plot}, [args.trace])
    csv_output("--out", args.out)
    if args.plot is not None:
        figure_format("--plot", args.plot)
    chosen = given(args)
    args.servers = servers(args, 256)
    args.gpus_per_server = args.gpus_per_server if "--gpus-per-server" in chosen else 8
    settings = option_errors(
        StudySettings,
        policies=_policies(args),
        target_loads=_loads(args),
        bounds=args.bounds or "full",
        workers=args.workers or os.cpu_count() or 1,
        seed=args.seed,
        cache=not args.no_cache,
    )
    loaded, source = read_replay_trace(args)
    for line in left_out_lines(loaded, args.trace):  # rows the study leaves out, said once
        print(line, file=sys.stderr)
    replays = {
        load: option_errors(at_load, loaded, source, load) for load in settings.target_loads
    }
    progress, close = _heartbeat()
    try:
        study = run_study(replays, settings, progress)
    finally:
        close()
    if args.out:
        write_csv(study.jobs().to_dict("records"), args.out)
    if args.plot and study.runs:
        _study_figures(study, args.plot)
    if args.json:
        print_json(study.to_dict())
    else:
        _print_study(args, study)
    if study.interrupted:
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if all(r["verified"] for r in study.records()) else EXIT_NO


def _policies(args: argparse.Namespace) -> tuple[str, ...]:
    from ddlsched.algorithms.registry import POLICIES

    return POLICIES.names() if args.policies is None else name_list(args.policies, "--policies")


def _loads(args: argparse.Namespace) -> tuple[float | None, ...]:
    """``--target-load 0.5,0.9``: each a number > 0 (none given: as recorded)."""
    if args.target_load is None:
        return (None,)
    loads = []
    for word in name_list(args.target_load, "--target-load", "loads"):
        if "_" in word:  # float() reads 0_9 as 9: a slip for 0.9, not a load
            raise InputError(f"--target-load: expected a number > 0, got {word!r}")
        try:
            loads.append(positive(word))
        except argparse.ArgumentTypeError as error:
            raise InputError(f"--target-load: {error}") from None
    return tuple(loads)


def _heartbeat() -> tuple[StudyProgress, Callable[[], None]]:
    """A progress line on stderr every :data:`~ddlsched.cli.output.HEARTBEAT_S` seconds:
    the phase, runs done, seconds since the start."""
    import threading
    import time

    from ddlsched.cli.output import HEARTBEAT_S

    began, state, stop = time.monotonic(), ["starting", 0, 0], threading.Event()

    def update(phase: str, done: int, total: int) -> None:
        state[:] = [phase, done, total]

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            phase, done, total = state
            print(
                f"compare --trace: {done}/{total} runs done, {phase}; "
                f"{time.monotonic() - began:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    thread = threading.Thread(target=beat, name="trace-study-progress", daemon=True)
    thread.start()

    def close() -> None:
        stop.set()
        thread.join()

    return update, close


STUDY_COLUMNS = (
    ("policy", "policy", "s"), ("model", "model", "s"), ("JCT/LB", "jct_over_lb", ".4f"),
    ("JCT/best", "jct_over_best", ".4f"), ("best", "best_schedule", "s"),
    ("mean JCT", "mean_jct", ".6g"), ("p50", "p50_jct", ".6g"), ("p95", "p95_jct", ".6g"),
    ("p99", "p99_jct", ".6g"), ("mean wait", "mean_queueing_delay", ".6g"),
    ("makespan", "makespan", ".6g"), ("util", "gpu_utilisation", ".3f"),
    ("preempt.", "preemptions", "g"), ("rho mean", "rho_mean", ".3f"),
    ("rho max", "rho_max", ".3f"), ("user max/min", "user_jct_max_over_min", ".3f"),
    ("BSLD", "bounded_slowdown_mean", ".3f"), ("verified", "verified", "s"),
)  # fmt: skip
"""The text table's columns: header, record key, format."""


def _print_study(args: argparse.Namespace, study: TraceStudy) -> None:
    """Per load: the trace line, each model's sandwich, the table (leading with JCT / LB)."""
    models = {"A": "problem A", "preemptive": "preemptive model"}
    for load in study.settings.target_loads:
        replay = study.replays[load]
        # looked up by the keys STUDY_COLUMNS names, so read as a Mapping of them
        records: list[Mapping[str, object]] = [r for r in study.records() if r["load"] == load]
        asked = "as recorded" if load is None else f"target {load:g}"
        print(
            f"{args.trace} ({replay.loaded.format}, {replay.instance.num_jobs} jobs) on "
            f"{args.servers} x {args.gpus_per_server} GPUs{types_text(replay.instance.cluster)}, "
            f"load {asked} (offered {replay.offered_load:.3g}, arrivals x"
            f"{replay.arrival_scale:.4g}){' - interrupted' if study.interrupted else ''}:"
        )
        for model, found in study.load_sandwiches(load):
            print(
                f"  {models[model]}: optimal total JCT in [{found.lower.flow_value:.6g}, "
                f"{found.upper.total_jct:.6g}] (lower: {found.lower.name}; upper: "
                f"{found.upper_name}, verified; UB/LB {found.ratio:.4f})"
            )
        rows = [[_study_cell(r[key], kind) for _, key, kind in STUDY_COLUMNS] for r in records]
        print_table([header for header, _, _ in STUDY_COLUMNS], rows)
    print(
        "JCT/LB: total JCT over the lower bound of the policy's model (at least the distance "
        "to its optimum); JCT/best: over the best verified schedule of the model (named); rho: "
        "finish-time fairness; user max/min: largest over smallest per-user mean JCT; BSLD: "
        "bounded slowdown, 10 s threshold"
    )
    if args.out:
        print(f"jobs written to {args.out}")
    if args.plot and study.runs:
        print(f"figures written to {', '.join(figure_paths(args.plot))}")


def _study_cell(value: object, kind: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if kind == "s":
        return str(value)
    return format(value, kind)


FIGURES = (
    ("jct-cdf", "study_jct_cdf"),
    ("jct-vs-load", "study_jct_against_load"),
    ("fairness", "study_fairness_cdf"),
)
"""Each figure of a study: its file's suffix and its drawing function in
:mod:`ddlsched.plotting`."""


def figure_paths(prefix: str) -> list[str]:
    """``PREFIX-jct-cdf.png``, ``PREFIX-jct-vs-load.png``, ``PREFIX-fairness.png`` (the
    format of ``PREFIX``'s extension if it names one)."""
    root, extension = os.path.splitext(prefix)
    if extension.lower() not in (".png", ".pdf", ".svg"):
        root, extension = prefix, ".png"
    return [f"{root}-{name}{extension}" for name, _ in FIGURES]


def _study_figures(study: TraceStudy, prefix: str) -> None:
    """The study's figures, at :func:`figure_paths` of ``prefix``."""
    jobs, table = study.jobs(), study.table()
    for path, (_, figure) in zip(figure_paths(prefix), FIGURES, strict=True):
        save_figure(figure, path, jobs, table)
