"""``ddlsched compare``, the main job: online methods against exact optima on random instances;
with ``--trace``, every policy side by side on a trace (a rigid one: a trace study, each run
against its model's lower bound; a Pollux workload: the elastic policies)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ddlsched.cli import elastic, study
from ddlsched.cli.compare_text import print_summary
from ddlsched.cli.files import check_outputs, csv_output
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    Commands,
    add_gpu_types,
    add_json,
    add_seed,
    count,
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
    progress_bar,
    save_figure,
    write_csv,
)
from ddlsched.core.model import InputError
from ddlsched.core.traces import ARRIVALS

if TYPE_CHECKING:
    from ddlsched.experiments.compare import CompareConfig, CompareReport

WORK = "exact solves: CP-SAT's deterministic time (work units, about seconds of one core)"
NODES = "exact solves: the MILP's branch-and-bound nodes"
WALL = (
    "seconds of wall-clock time per instance, shared by the online methods, rho, the lower "
    "bounds and the exact solve (which gets what is left; a phase the budget leaves no time "
    "for is skipped and named); the instance's sampling and the verifier run outside it "
    "(default none: the deterministic limits alone, the same table anywhere)"
)


def add(commands: Commands) -> None:
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
    study.add_options(cmp_)
    cmp_.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the comparison; print its table (what finished, if interrupted: exit 130)."""
    from ddlsched.experiments import compare

    if args.trace is not None and study.is_rigid_trace(args):
        return study.run(args)
    refuse_given(args, study.STUDY_ONLY, "only with a rigid --trace (a trace study)")
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
        print_summary(config, summary)
        for option, path in (("figure", args.plot), ("rows", args.out)):
            if path:
                print(f"{option} written to {path}")
    return EXIT_INTERRUPTED if report.interrupted else EXIT_OK


def _config(args: argparse.Namespace) -> CompareConfig:
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


def _figure(report: CompareReport, path: str) -> None:
    """Gantt charts of the first instance with an exact schedule, and the ratios per method."""
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
