"""``ddlsched simulate`` and ``ddlsched compare`` on a Pollux workload: elastic jobs.

A trace whose header is Pollux's workload format (``name,time,application,num_replicas,
batch_size``) holds elastic jobs (a model, an epoch budget, the GPUs and batch size the user
asked for). ``simulate`` then runs one policy of
:data:`ddlsched.algorithms.elastic.ELASTIC_POLICIES` through :func:`ddlsched.elastic.simulate`
(``--out``, a ``.json`` file, saves every job and round, ``--plot`` draws the JCT CDF and
the GPUs in use, ``--limit`` keeps the first jobs); ``compare --trace`` runs several side by
side through :func:`ddlsched.elastic.compare` (``--out``: their rows as CSV). Every run is
checked by the independent :func:`ddlsched.proofs_checks.elastic.check_elastic`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ddlsched.cli.elastic_options import COMPARE_OPTIONS, ELASTIC_COMPARE_ONLY, SIMULATE_OPTIONS
from ddlsched.cli.files import check_outputs, csv_output, output_extension
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    count,
    given,
    name_list,
    refuse_given,
)
from ddlsched.cli.output import (
    figure_format,
    print_json,
    print_table,
    progress_bar,
    save_figure,
    write_csv,
)
from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from ddlsched.core.elastic import ElasticCluster
    from ddlsched.experiments.elastic import ComparisonSummary, ElasticRun, RunSummary


def explain_cluster_defaults(command: argparse.ArgumentParser) -> None:
    """Say in the help of ``command``'s ``--servers``, ``--gpus-per-server`` and
    ``--gpu-types`` (added for rigid traces, with their defaults) what they mean on a Pollux
    workload (:func:`_cluster`): the Pollux study's nodes by default, ``--gpu-types`` giving
    nodes per type, ``--servers`` refused beside it."""
    from ddlsched.core.elastic import ElasticCluster

    default = ElasticCluster()
    notes = {
        "--servers": f"on a Pollux workload {default.num_nodes} nodes, and refused with "
        "--gpu-types",
        "--gpus-per-server": f"on a Pollux workload {default.gpus_per_node}",
        "--gpu-types": f"on a Pollux workload: nodes per type of {default.gpus_per_node} "
        "GPUs (or --gpus-per-server), e.g. v100:6,p100:5,k80:5, without --servers",
    }
    for action in command._actions:  # argparse keeps no public lookup by option
        note = next((notes[o] for o in action.option_strings if o in notes), None)
        if note is not None:
            shown = "not set" if action.default is None else action.default
            action.help = f"{action.help} (default: {shown}; {note})"


def _refuse_others(args: argparse.Namespace, allowed: tuple[str, ...], why: str) -> None:
    """Refuse, in one line naming them, the options given that are not ``allowed``."""
    refuse_given(args, sorted(given(args) - set(allowed)), why)


def is_pollux_workload(path: str) -> bool:
    """Whether the file's first line is the Pollux workload header (read from a regular file
    only: a pipe or a device is refused first, one line, never read)."""
    from ddlsched.core.elastic import WORKLOAD_COLUMNS
    from ddlsched.core.io import check_regular_file

    check_regular_file(path, "CSV trace")
    with open(path, "rb") as handle:
        header = handle.readline(4096).decode("utf-8-sig", errors="replace").strip()
    return tuple(name.strip() for name in header.split(",")) == WORKLOAD_COLUMNS


def _cluster(args: argparse.Namespace) -> ElasticCluster:
    """The elastic cluster the options describe: ``--servers`` nodes of ``--gpus-per-server``
    GPUs, each the Pollux study's (16 x 4) when not given; with ``--gpu-types``, that many
    nodes of each type."""
    from ddlsched.core.elastic import ElasticCluster

    default = ElasticCluster()
    chosen = given(args)
    if getattr(args, "gpu_types", None):
        refuse_given(args, ("--servers",), "not with --gpu-types (it gives the nodes per type)")
        gpus = args.gpus_per_server if "--gpus-per-server" in chosen else default.gpus_per_node
        try:
            return ElasticCluster.from_type_counts(args.gpu_types, gpus)
        except ValueError as error:
            raise InputError(f"--gpu-types: {error}") from None
    return ElasticCluster(
        args.servers if "--servers" in chosen else default.num_nodes,
        args.gpus_per_server if "--gpus-per-server" in chosen else default.gpus_per_node,
    )


def _outputs(args: argparse.Namespace, out: str | None) -> None:
    """Refuse bad output paths and figure formats before any work."""
    check_outputs({"--out": out, "--plot": args.plot}, [args.trace])
    if args.plot:
        figure_format("--plot", args.plot)


def _figure(runs: Sequence[ElasticRun], path: str) -> None:
    """``--plot``: every run's JCT CDF and GPUs in use over time, into ``path``."""
    save_figure(
        "elastic_figure",
        path,
        {run.policy: [row["jct"] for row in run.jobs] for run in runs},
        {run.policy: run.gpus_in_use() for run in runs},
        runs[0].result.cluster.total_gpus,
    )


def run(args: argparse.Namespace) -> int:
    """``simulate``: the workload under the elastic policy; its figures, the check, and
    the files asked for."""
    from ddlsched import elastic
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES

    if args.policy not in ELASTIC_POLICIES:
        raise InputError(
            f"--policy: {args.policy!r} is a rigid policy; a Pollux workload ({args.trace}) "
            f"needs one of {', '.join(ELASTIC_POLICIES.names())}"
        )
    _refuse_others(args, SIMULATE_OPTIONS, f"not available for elastic jobs ({args.trace})")
    _outputs(args, args.out)
    output_extension("--out", args.out, ".json", "the run is written as JSON")
    jobs = len(elastic.load_workload(args.trace).jobs)  # read again by the run: milliseconds
    total = min(jobs, args.limit) if args.limit else jobs
    progress, close = progress_bar(total, args.policy, unit="job")
    try:
        done = elastic.simulate(
            args.trace, args.policy, cluster=_cluster(args), limit=args.limit, progress=progress
        )
    finally:
        close()
    if args.out:
        done.write(args.out)
    if args.plot:
        _figure([done], args.plot)
    summary = done.summary()
    if args.json:
        print_json({**summary, "trace_format": "pollux-workload"})
    else:
        _print(args, summary, len(done.violations))
    return EXIT_OK if done.verified else EXIT_NO


def _print(args: argparse.Namespace, summary: RunSummary, violations: int) -> None:
    print(
        f"{args.policy} on {args.trace} (Pollux workload, {summary['jobs']} elastic jobs) on "
        f"{summary['cluster']} GPUs, {summary['rounds']} rounds:"
    )
    for key in ("mean_jct", "p50_jct", "p95_jct", "p99_jct", "makespan", "restarts",
                "gpu_seconds"):  # fmt: skip
        print(f"  {key:>20}: {summary[key]:.6g}")
    if summary["flow_ratio"] is not None:
        print(
            f"  {'flow_ratio':>20}: {summary['flow_ratio']:.4g} (total JCT over a lower "
            f"bound, {summary['flow_lower_bound']:.6g} s, valid for any run of this simulator)"
        )
    state = "passes" if summary["verified"] else f"FAILS ({violations} violations, up to 10 below)"
    print(f"  the run {state} the independent check (capacity, progress, JCTs)")
    for line in summary["violations"]:
        print(f"  - {line}")
    if args.out:
        print(f"run (every job and round) written to {args.out}")
    if args.plot:
        print(f"figure written to {args.plot}")


def add_compare_options(command: argparse.ArgumentParser) -> None:
    """``compare --trace WORKLOAD [--policies ...] [--limit N]``: elastic policies side by
    side on a Pollux workload."""
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES

    command.add_argument(
        "--trace",
        help="a Pollux workload (e.g. workload-6.csv): elastic policies side by side on it, "
        "each run checked, instead of random instances",
    )
    command.add_argument(
        "--policies",
        help="with --trace: comma-separated elastic policies (default all: "
        f"{','.join(ELASTIC_POLICIES.names())})",
    )
    command.add_argument("--limit", type=count, help="with --trace: only the first N jobs")


def is_elastic_compare(args: argparse.Namespace) -> bool:
    """Whether ``compare`` was asked for elastic policies on a workload (``--trace``).

    Raises
    ------
    InputError
        On ``--policies`` or ``--limit`` without ``--trace``.
    """
    if args.trace is None:
        refuse_given(args, ELASTIC_COMPARE_ONLY, "only with --trace (a Pollux workload)")
    return args.trace is not None


def compare(args: argparse.Namespace) -> int:
    """``compare --trace`` on a Pollux workload (a rigid trace is a trace study,
    :mod:`ddlsched.cli.study`, routed there first): one row per elastic policy; exit 1 if any
    run fails the check."""
    from ddlsched import elastic
    from ddlsched.core.data import resolve_trace

    _refuse_others(args, COMPARE_OPTIONS, "not available with --trace (elastic policies)")
    args.trace = str(resolve_trace(args.trace))
    _outputs(args, args.out)
    csv_output("--out", args.out)
    asked = None if args.policies is None else name_list(args.policies, "--policies")
    try:
        policies = elastic.policy_names(asked)
    except ValueError as error:  # an unknown or repeated name; the message names "policies"
        raise InputError(f"--{error}") from None
    cluster = _cluster(args)
    progress, close = progress_bar(len(policies), "compare", unit="policy run")
    try:
        report = elastic.compare(
            args.trace, policies, cluster=cluster, limit=args.limit, progress=progress
        )
    finally:
        close()
    if args.out:
        write_csv(report.rows(), args.out)
    if args.plot and report.runs:
        _figure(report.runs, args.plot)
    summary = report.summary()
    if args.json:
        print_json(summary)
    else:
        _print_rows(args, summary)
    if report.interrupted:
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if all(run.verified for run in report.runs) else EXIT_NO


def _print_rows(args: argparse.Namespace, summary: ComparisonSummary) -> None:
    stopped = " - interrupted" if summary["interrupted"] else ""
    print(
        f"{len(summary['policies'])} elastic policies on {args.trace} "
        f"({summary['settings']['jobs']} jobs) on {summary['cluster']} GPUs, each run checked "
        f"independently{stopped}:"
    )
    header = ("policy", "mean JCT s", "p50 JCT s", "p95 JCT s", "p99 JCT s", "makespan s",
              "restarts", "GPU-hours", "flow ratio", "checked")  # fmt: skip
    rows = [
        (
            row["policy"],
            *(f"{row[key]:.0f}" for key in ("mean_jct", "p50_jct", "p95_jct", "p99_jct")),
            f"{row['makespan']:.0f}",
            row["restarts"],
            f"{row['gpu_seconds'] / 3600:.1f}",
            "-" if row["flow_ratio"] is None else f"{row['flow_ratio']:.3f}",
            "yes" if row["verified"] else "FAILS",
        )
        for row in summary["policies"]
    ]
    print_table(header, rows)
    if args.out:
        print(f"rows (one per policy) written to {args.out}")
    if args.plot:
        print(f"figure written to {args.plot}")
