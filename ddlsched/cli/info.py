"""``ddlsched info``: describe an instance: each job's alpha_min and alpha_max, and rho."""

from __future__ import annotations

import argparse
from typing import TypedDict

from ddlsched.cli.files import read_instance_file
from ddlsched.cli.options import EXIT_OK, Commands, add_json, new_command
from ddlsched.cli.output import print_json
from ddlsched.core.jsontypes import JsonObject
from ddlsched.core.model import FeatureValue


def add(commands: Commands) -> None:
    """Register the command."""
    info = new_command(commands, "info")
    info.add_argument("instance", help="instance file (JSON)")
    add_json(info)
    info.set_defaults(handler=run)


class _JobRow(TypedDict):
    """One job as ``info`` shows it (and writes it with ``--json``)."""

    id: str
    release: float
    gpus: int
    parallelism: JsonObject | None
    model: FeatureValue | None
    iterations: int
    alpha_min: float
    alpha_min_exact: bool
    alpha_max: float
    alpha_max_exact: bool


def run(args: argparse.Namespace) -> int:
    """Print the cluster, one row per job and rho (with whether each value is exact)."""
    from ddlsched.core.alpha import rho

    instance = read_instance_file(args.instance, "info")
    report = rho(instance)
    rows: list[_JobRow] = []
    for job, lo, hi in zip(instance.jobs, report.alpha_min, report.alpha_max, strict=True):
        p = job.parallelism
        rows.append(
            {
                "id": job.id,
                "release": job.release,
                "gpus": job.gpus,
                "parallelism": p.to_dict() if p else None,
                "model": job.features.get("model"),
                "iterations": job.iterations,
                "alpha_min": lo.value,
                "alpha_min_exact": lo.exact,
                "alpha_max": hi.value,
                "alpha_max_exact": hi.exact,
            }
        )
    if args.json:
        print_json(
            {
                "jobs": rows,
                "rho": report.rho.value,
                "rho_exact": report.rho.exact,
                "num_gpus": instance.cluster.num_gpus,
            }
        )
        return EXIT_OK
    c = instance.cluster
    print(
        f"cluster: {c.num_servers} servers, GPUs {list(c.gpus_per_server)}, "
        f"B_intra {c.bandwidth_intra:g} GB/s, B_inter {c.bandwidth_inter:g} GB/s; "
        f"slot {instance.slot:g}"
    )
    print(
        f"{'job':>6} {'release':>9} {'gpus':>4} {'dp.pp.tp':>8} {'model':>17} "
        f"{'K':>8} {'alpha_min':>11} {'alpha_max':>11}"
    )
    for row in rows:
        shape = row["parallelism"]
        config = f"{shape['dp']}.{shape['pp']}.{shape['tp']}" if shape else "-"
        star = "" if row["alpha_min_exact"] else "*"
        print(
            f"{row['id']:>6} {row['release']:>9.4g} {row['gpus']:>4} {config:>8} "
            f"{row['model'] or '-'!s:>17} {row['iterations']:>8} "
            f"{row['alpha_min']:>10.4g}{star:1} {row['alpha_max']:>11.4g}"
        )
    kind = "exact" if report.rho.exact else "upper bound (* alpha_min is a lower bound)"
    print(f"rho = {report.rho.value:.6g} ({kind}), attained by {instance.jobs[report.argmax].id}")
    return EXIT_OK
