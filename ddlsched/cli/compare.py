"""``ddlsched compare``, the main job: online methods against exact optima on random instances;
with ``--trace``, every policy side by side on a trace (a rigid one: a trace study, each run
against its model's lower bound; a Pollux workload: the elastic policies)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from ddlsched.cli import elastic
from ddlsched.cli.files import check_outputs, csv_output
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    add_gpu_types,
    add_json,
    add_seed,
    count,
    given,
    name_list,
    new_command,
    non_negative,
    positive,
    refuse_given,
    servers,
)
from ddlsched.cli.output import (
    figure_format,
    print_json,
    print_table,
    progress_bar,
    save_figure,
    types_text,
    write_csv,
)
from ddlsched.core.model import InputError
from ddlsched.core.traces import ARRIVALS

WORK = "exact solves: CP-SAT's deterministic time (work units, about seconds of one core)"
NODES = "exact solves: the MILP's branch-and-bound nodes"
WALL = (
    "seconds of wall-clock time per instance, shared by the online methods, rho, the lower "
    "bounds and the exact solve (which gets what is left; a phase the budget leaves no time "
    "for is skipped and named); the instance's sampling and the verifier run outside it "
    "(default none: the deterministic limits alone, the same table anywhere)"
)


def add(commands: Any) -> None:
    """Register the command."""
    from ddlsched.algorithms.registry import POLICIES, PREDICTORS
    from ddlsched.api import exact_method_names
    from ddlsched.experiments.compare import CompareConfig

    defaults = CompareConfig()
    cmp_ = new_command(commands, "compare")
    cmp_.add_argument("--jobs", type=count, default=defaults.jobs, help="jobs per instance")
    cmp_.add_argument(
        "--servers",
        type=count,
        help=f"servers (default {defaults.servers}, or the servers --gpu-types lists)",
    )
    add_gpu_types(
        cmp_,
        "a mixed cluster: servers per GPU type, e.g. v100:1,k80:1 (types k80, p100, v100; "
        "default: one type)",
    )
    per_server, instances = defaults.gpus_per_server, defaults.instances
    cmp_.add_argument("--gpus-per-server", type=count, default=per_server, help="GPUs per server")
    seeds = "instances, seeds --seed .. --seed + instances - 1"
    cmp_.add_argument("--instances", type=count, default=instances, help=seeds)
    add_seed(cmp_, default=defaults.seed, what="first seed")
    cmp_.add_argument(
        "--methods",
        default=",".join(defaults.methods),
        help=f"comma-separated online methods, some of: {', '.join(POLICIES)} (default: all)",
    )
    cmp_.add_argument("--work-limit", type=positive, default=defaults.work_limit, help=WORK)
    cmp_.add_argument("--node-limit", type=count, default=defaults.node_limit, help=NODES)
    cmp_.add_argument("--time-limit", type=positive, help=WALL)
    cmp_.add_argument(
        "--load",
        type=non_negative,
        default=defaults.load,
        help="Poisson arrival load; with --from-trace, each sample's recorded arrivals "
        "scaled to this offered load (0: generated jobs all released at time 0, a trace's "
        "as recorded)",
    )
    cmp_.add_argument(
        "--predictor",
        default=defaults.predictor,
        choices=PREDICTORS.names(),
        help="iteration predictor of the online methods",
    )
    exact = "the exact method giving the optimum"
    cmp_.add_argument("--exact", default=defaults.exact, choices=exact_method_names(), help=exact)
    cmp_.add_argument(
        "--from-trace",
        metavar="TRACE",
        help="real jobs: each instance is --jobs jobs of this trace (a path or a shipped name "
        "such as philly_jobs.csv) with their recorded durations, a row naming no model a "
        "zoo model drawn among the pure data-parallel ones (generate's --unnamed "
        "zoo-data-parallel), on the cluster asked (--gpu-types too), at --load "
        "(default: generated exact-friendly jobs)",
    )
    cmp_.add_argument(
        "--arrivals",
        choices=ARRIVALS,
        default="consecutive",
        help="with --from-trace: consecutive submissions, or jobs sampled at a window's times",
    )
    cmp_.add_argument(
        "--plot",
        help="write a figure (Gantt charts, and per method the distribution of C/OPT, or "
        "C/LB where no optimum is proven) to this .png, .pdf or .svg (default: none)",
    )
    cmp_.add_argument(
        "--out",
        metavar="ROWS.CSV",
        help="write one row per instance and method (seed, status, sum C, OPT, LB, ratios, "
        "runtime, the command regenerating the instance) to this CSV file (default: none)",
    )
    add_json(cmp_, "print JSON: the table's rows keyed by its headers, the missing optima "
             "and why, one row per instance and method")  # fmt: skip
    elastic.add_compare_options(cmp_)
    _add_study_options(cmp_)
    cmp_.set_defaults(handler=run)


STUDY_ONLY = (
    "--columns", "--time-unit", "--unnamed", "--target-load", "--workers", "--bounds",
    "--no-cache",
)  # fmt: skip
"""Options that only mean something with a rigid ``--trace`` (a trace study)."""
RANDOM_ONLY = (
    "--jobs", "--instances", "--methods", "--work-limit", "--node-limit", "--time-limit",
    "--load", "--predictor", "--exact", "--from-trace", "--arrivals",
)  # fmt: skip
"""Options of the comparison on random instances, refused in a trace study."""


def _add_study_options(command: Any) -> None:
    """How a rigid ``--trace`` is read and studied (``--servers``, ``--gpus-per-server``,
    ``--gpu-types``, ``--limit``, ``--policies``, ``--out``, ``--plot``, ``--json`` are shared)."""
    from ddlsched.core.traces import FIELDS, TIME_UNITS, UNNAMED_RULES
    from ddlsched.experiments.trace_study import BOUNDS

    trace = "with a rigid --trace (a trace study: every rigid policy, default 256 x 8 GPUs)"
    command.add_argument(
        "--columns", help=f"{trace}: map fields to columns, e.g. submit=time ({', '.join(FIELDS)})"
    )
    command.add_argument("--time-unit", choices=list(TIME_UNITS), help=f"{trace}: time unit")
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


def run(args: argparse.Namespace) -> int:
    """Run the comparison; print its table (what finished, if interrupted: exit 130)."""
    from ddlsched.experiments import compare

    if args.trace is not None and not _is_pollux(args):
        return _study(args)
    refuse_given(args, STUDY_ONLY, "only with a rigid --trace (a trace study)")
    if elastic.is_elastic_compare(args):
        return elastic.compare(args)
    check_outputs({"--plot": args.plot, "--out": args.out})
    if args.plot:
        figure_format("--plot", args.plot)
    csv_output("--out", args.out)
    if not args.from_trace:
        refuse_given(args, ("--arrivals",), "only with --from-trace")
    config = _config(args)
    progress, close = progress_bar(config.instances, "compare")
    try:
        report = compare(config, progress)
    finally:
        close()
    summary = report.summary()
    if args.plot and report.rows:
        _figure(report, args.plot)
    if args.out:
        write_csv(report.records(), args.out)
    if args.json:
        print_json(summary)
    else:
        _print(config, summary)
        for option, path in (("figure", args.plot), ("rows", args.out)):
            if path:
                print(f"{option} written to {path}")
    return EXIT_INTERRUPTED if report.interrupted else EXIT_OK


def _config(args: argparse.Namespace) -> Any:
    """The comparison the options ask for (a bad combination: one line naming it)."""
    from ddlsched.experiments import CompareConfig

    try:
        return CompareConfig(
            jobs=args.jobs,
            servers=servers(args, CompareConfig.servers),
            gpu_types=args.gpu_types or (),
            gpus_per_server=args.gpus_per_server,
            instances=args.instances,
            seed=args.seed,
            methods=name_list(args.methods, "--methods"),
            time_limit=args.time_limit,
            work_limit=args.work_limit,
            node_limit=args.node_limit,
            load=None if args.load == 0 else args.load,
            predictor=args.predictor,
            exact=args.exact,
            from_trace=args.from_trace,
            arrivals=args.arrivals,
        )
    except ValueError as error:
        raise InputError(str(error)) from None


def _print(config: Any, summary: dict[str, Any]) -> None:
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


def _figure(report: Any, path: str) -> None:
    first = next((r for r in report.rows if r.optimum.schedule is not None), None)
    if first is None:
        print("no figure: the time limit left no instance an exact schedule")
        return
    heuristic = "asrpt" if "asrpt" in first.results else next(iter(first.results))
    result = first.results[heuristic]
    proven = [r for r in report.rows if r.optimum.proven_optimal]
    save_figure(
        "comparison_figure",
        path,
        first.instance,
        first.optimum.schedule,
        f"{'optimum' if first.optimum.proven_optimal else 'MILP incumbent, not proven optimal'} "
        f"(seed {first.seed}): sum C = {first.optimum.objective:g}",
        result.schedule,
        f"{heuristic} (seed {first.seed}): sum C = {result.objective:g}",
        {
            m: [r.results[m].objective / r.optimum.objective for r in proven]
            for m in report.config.methods
        },
        {
            m: [r.certified_ratio(m) for r in report.rows if not r.optimum.proven_optimal]
            for m in report.config.methods
        },
    )


def _is_pollux(args: argparse.Namespace) -> bool:
    from ddlsched.core.data import resolve_trace

    args.trace = str(resolve_trace(args.trace))
    return elastic.is_pollux_workload(args.trace)


def _study(args: argparse.Namespace) -> int:
    """``compare --trace`` on a rigid trace: one table per load, one row per policy."""
    from ddlsched.cli.replay import option_errors, read_replay_trace
    from ddlsched.experiments.trace_study import StudySettings, at_load, run_study

    refuse_given(args, RANDOM_ONLY, "not available with a rigid --trace (a trace study)")
    check_outputs({"--out": args.out}, [args.trace])
    csv_output("--out", args.out)
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
    for word in name_list(args.target_load, "--target-load"):
        try:
            loads.append(positive(word))
        except argparse.ArgumentTypeError as error:
            raise InputError(f"--target-load: {error}") from None
    return tuple(loads)


def _heartbeat() -> tuple[Any, Any]:
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


def _print_study(args: argparse.Namespace, study: Any) -> None:
    """Per load: the trace line, each model's sandwich, the table (leading with JCT / LB)."""
    models = {"A": "problem A", "preemptive": "preemptive model"}
    for load in study.settings.target_loads:
        replay = study.replays[load]
        records = [r for r in study.records() if r["load"] == load]
        asked = "as recorded" if load is None else f"target {load:g}"
        print(
            f"{args.trace} ({replay.loaded.format}, {replay.instance.num_jobs} jobs) on "
            f"{args.servers} x {args.gpus_per_server} GPUs{types_text(replay.instance.cluster)}, "
            f"load {asked} (offered {replay.offered_load:.3g}, arrivals x"
            f"{replay.arrival_scale:.4g}){' - interrupted' if study.interrupted else ''}:"
        )
        for model, found in study.sandwiches.get(load, {}).items():
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
    for what, path in (("jobs", args.out), ("figures", args.plot)):
        if path:
            print(f"{what} written to {path}")


def _study_cell(value: Any, kind: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if kind == "s":
        return str(value)
    return format(value, kind)


def _study_figures(study: Any, prefix: str) -> None:
    """``PREFIX-jct-cdf.png``, ``PREFIX-jct-vs-load.png``, ``PREFIX-fairness.png`` (the
    format of ``PREFIX``'s extension if it names one)."""
    root, extension = os.path.splitext(prefix)
    if extension.lower() not in (".png", ".pdf", ".svg"):
        root, extension = prefix, ".png"
    jobs, table = study.jobs(), study.table()
    for name, figure in (
        ("jct-cdf", "study_jct_cdf"),
        ("jct-vs-load", "study_jct_against_load"),
        ("fairness", "study_fairness_cdf"),
    ):
        save_figure(figure, f"{root}-{name}{extension}", jobs, table)
