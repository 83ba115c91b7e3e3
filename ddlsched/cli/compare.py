"""``ddlsched compare``, the main job: online methods against exact optima on random instances."""

from __future__ import annotations

import argparse
from typing import Any

from ddlsched.cli import elastic
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_gpu_types,
    add_json,
    add_seed,
    check_outputs,
    count,
    name_list,
    new_command,
    non_negative,
    positive,
    servers,
)
from ddlsched.cli.output import (
    figure_format,
    print_json,
    print_table,
    progress_bar,
    save_figure,
    types_text,
)
from ddlsched.core.model import InputError
from ddlsched.core.traces import ARRIVALS


def add(commands: Any) -> None:
    """Register the command."""
    from ddlsched.algorithms.registry import POLICIES, PREDICTORS
    from ddlsched.api import exact_method_names
    from ddlsched.experiments.compare import CompareConfig

    defaults = CompareConfig()
    cmp_ = new_command(
        commands,
        "compare",
        "the main job: online methods against exact optima on random instances",
    )
    cmp_.add_argument("--jobs", type=count, default=defaults.jobs)
    cmp_.add_argument(
        "--servers", type=count, help=f"servers (default {defaults.servers}, or --gpu-types')"
    )
    add_gpu_types(
        cmp_, "a mixed cluster: servers per GPU type, e.g. v100:1,k80:1 (types k80, p100, v100)"
    )
    cmp_.add_argument("--gpus-per-server", type=count, default=defaults.gpus_per_server)
    cmp_.add_argument("--instances", type=count, default=defaults.instances)
    add_seed(cmp_, default=defaults.seed)
    cmp_.add_argument(
        "--methods",
        default=",".join(defaults.methods),
        help=f"comma-separated online methods, some of: {', '.join(POLICIES)}",
    )
    cmp_.add_argument(
        "--time-limit", type=positive, default=defaults.time_limit, help="seconds per MILP"
    )
    cmp_.add_argument(
        "--load",
        type=non_negative,
        default=defaults.load,
        help="Poisson arrival load (0: all jobs released at time 0)",
    )
    cmp_.add_argument("--predictor", default=defaults.predictor, choices=PREDICTORS.names())
    cmp_.add_argument(
        "--exact",
        default=defaults.exact,
        choices=exact_method_names(),
        help="the exact method giving the optimum",
    )
    cmp_.add_argument(
        "--from-trace",
        metavar="TRACE",
        help="real jobs: each instance is --jobs jobs of this trace (a path or a shipped name "
        "such as philly_jobs.csv) with their recorded durations; --load does not apply",
    )
    cmp_.add_argument(
        "--arrivals",
        choices=ARRIVALS,
        default="consecutive",
        help="with --from-trace: consecutive submissions, or jobs sampled at a window's times",
    )
    cmp_.add_argument(
        "--plot", help="write a figure (Gantt charts and ratios) to this .png, .pdf or .svg"
    )
    add_json(cmp_)
    elastic.add_compare_options(cmp_)
    cmp_.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the comparison; print its table (what finished, if interrupted: exit 130)."""
    from ddlsched.experiments import CompareConfig, compare

    if elastic.is_elastic_compare(args):
        return elastic.compare(args)
    check_outputs({"--plot": args.plot})
    if args.plot:
        figure_format("--plot", args.plot)
    try:
        config = CompareConfig(
            jobs=args.jobs,
            servers=servers(args, CompareConfig.servers),
            gpu_types=args.gpu_types or (),
            gpus_per_server=args.gpus_per_server,
            instances=args.instances,
            seed=args.seed,
            methods=name_list(args.methods, "--methods"),
            time_limit=args.time_limit,
            load=None if args.load == 0 else args.load,
            predictor=args.predictor,
            exact=args.exact,
            from_trace=args.from_trace,
            arrivals=args.arrivals,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    progress, close = progress_bar(config.instances, "compare")
    try:
        report = compare(config, progress)
    finally:
        close()
    summary = report.summary()
    if args.plot and report.rows:
        _figure(report, args.plot)
    if args.json:
        print_json(summary)
    else:
        _print(config, summary)
        if args.plot:
            print(f"figure written to {args.plot}")
    return EXIT_INTERRUPTED if report.interrupted else EXIT_OK


def _print(config: Any, summary: dict[str, Any]) -> None:
    last_seed = config.seed + summary["instances"] - 1
    stopped = " - interrupted" if summary["interrupted"] else ""
    kind, arrivals = (
        (f"samples of {config.from_trace}", config.arrivals)
        if config.from_trace
        else ("integral instances", f"load {config.load}")
    )
    print(
        f"{summary['instances']} {kind} ({config.jobs} jobs, {config.servers} x "
        f"{config.gpus_per_server} GPUs{types_text(config.generator().cluster())}, "
        f"{arrivals}, seeds {config.seed}..{last_seed}){stopped}"
    )
    print(
        f"optima proven: {summary['optima_proven']}/{summary['instances']} "
        f"({config.exact} mean {summary['exact_mean_runtime_s']:.2f} s); rho mean "
        f"{summary['rho_mean']:.3f}, max {summary['rho_max']:.3f}; Theorem 1 bound on asrpt/OPT "
        f"(2 + M/(M-g_max+1)) * rho: up to {summary['theorem1_factor_max']:.3f}"
    )
    if summary["optima_proven"]:
        print(
            f"lower bounds: the best is at least {summary['lower_bound_over_opt_min']:.3f} of "
            f"OPT on every proven instance; the fast bounds alone (no MILP) reach a median of "
            f"{summary['fast_bound_over_opt_median']:.3f} "
            f"(worst {summary['fast_bound_over_opt_min']:.3f})"
        )
    header = ("method", "mean C/OPT", "worst C/OPT", "mean JCT/OPT", "worst JCT/OPT",
              "mean C/LB", "mean C/LB_fast", "mean JCT/LB", "verified",
              "mean runtime s")  # fmt: skip
    rows = [
        (
            method,
            f"{row['mean_ratio']:.4f}",
            f"{row['worst_ratio']:.4f}",
            f"{row['mean_jct_ratio']:.4f}",
            f"{row['worst_jct_ratio']:.4f}",
            f"{row['mean_certified_ratio']:.4f}",
            f"{row['mean_fast_certified_ratio']:.4f}",
            f"{row['mean_flow_ratio']:.4f}",
            f"{int(row['verified'])}/{summary['instances']}",
            f"{row['mean_runtime_s']:.4f}",
        )
        for method, row in summary["methods"].items()
    ]
    print_table(header, rows)
    for method, row in summary["methods"].items():
        if row["flag"]:
            print(f"  note on {method}: {row['flag']}")


def _figure(report: Any, path: str) -> None:
    first = report.rows[0]
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
