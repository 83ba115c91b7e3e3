"""``ddlsched generate``: write a random instance."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ddlsched.cli.options import (
    EXIT_OK,
    add_gpu_types,
    add_seed,
    add_type_settings,
    check_outputs,
    count,
    new_command,
    positive,
    servers,
)
from ddlsched.cli.output import types_text
from ddlsched.core.model import InputError
from ddlsched.core.traces import ARRIVALS, UNNAMED_RULES

DRAWN_ONLY = ("--integral", "--load", "--parallelism", "--max-job-gpus", "--gpu-types", "--config")
"""Options that shape drawn jobs: a trace's jobs are what they were."""


def add(commands: Any) -> None:
    """Register the command."""
    gen = new_command(commands, "generate", "write a random instance")
    gen.add_argument("--jobs", type=count, help="number of jobs (default 8)")
    gen.add_argument("--servers", type=count, help="servers (default 2)")
    gen.add_argument("--gpus-per-server", type=count, help="GPUs per server (default 4)")
    add_seed(gen)
    gen.add_argument(
        "--integral",
        action="store_true",
        help="make every duration a multiple of the slot (exact MILPs)",
    )
    gen.add_argument(
        "--load",
        type=positive,
        help="Poisson arrivals at this offered load (default: all jobs released at 0)",
    )
    gen.add_argument("--bandwidth-intra", type=positive, help="GB/s inside a server")
    gen.add_argument("--bandwidth-inter", type=positive, help="GB/s between servers")
    gen.add_argument("--parallelism", choices=("mixed", "dp"), help="parallelism mix")
    gen.add_argument("--max-job-gpus", type=count, help="widest job")
    add_gpu_types(
        gen,
        "a mixed cluster: servers per GPU type, e.g. v100:2,p100:2,k80:4 "
        "(sets --servers; compute times from Gavel's measurements for k80, p100, v100)",
    )
    add_type_settings(gen)
    gen.add_argument("--config", help="TOML file with a [generator] table")
    gen.add_argument(
        "--from-trace",
        metavar="TRACE",
        help="real jobs instead of drawn ones: --jobs jobs of a trace (a path or a shipped "
        "name such as philly_jobs.csv) with their recorded durations and GPU counts",
    )
    gen.add_argument(
        "--arrivals",
        choices=ARRIVALS,
        help="with --from-trace: a window of consecutive submissions (default), or jobs "
        "sampled from the whole trace released at a window's times",
    )
    gen.add_argument(
        "--unnamed",
        choices=UNNAMED_RULES,
        help="with --from-trace: the model of a row naming none (default zoo-data-parallel)",
    )
    gen.add_argument("--out", required=True, help="instance file to write")
    gen.set_defaults(handler=run)


LARGE = 100_000
"""Jobs from which ``generate`` first prints what the request will cost."""


def run(args: argparse.Namespace) -> int:
    """Generate the instance and write it to ``--out``."""
    from ddlsched.api import generate_checked
    from ddlsched.core.generators import GeneratorConfig
    from ddlsched.core.io import check_regular_file, write_instance

    check_outputs({"--out": args.out}, [args.config])
    if args.from_trace:
        return _from_trace(args)
    if args.arrivals or args.unnamed:
        raise InputError("--arrivals, --unnamed: only with --from-trace")
    if args.config:
        check_regular_file(args.config, "TOML file")
    config = GeneratorConfig.from_toml(args.config) if args.config else GeneratorConfig()
    changes: dict[str, Any] = {
        "num_jobs": args.jobs,
        "servers": args.servers,
        "gpus_per_server": args.gpus_per_server,
        "integral": args.integral or None,
        "load": args.load,
        "bandwidth_intra": args.bandwidth_intra,
        "bandwidth_inter": args.bandwidth_inter,
        "parallelism": args.parallelism,
        "max_job_gpus": args.max_job_gpus,
        "gpu_types": args.gpu_types,
        "type_bandwidth": args.type_bandwidth,
        "type_slowdown": args.type_slowdown,
    }
    if args.gpu_types:
        changes["servers"] = servers(args, GeneratorConfig.servers)
    if args.integral and args.bandwidth_intra is None and not args.config:
        # The realistic default ratio (20) would make tiny MILP instances
        # long; integral instances default to a ratio of 2.
        changes["bandwidth_intra"] = 2.0
    config = config.replace(**{k: v for k, v in changes.items() if v is not None})
    if config.num_jobs >= LARGE:
        # Measured: about 0.5 ms and 420 bytes of JSON per job (10,000 jobs on 64 x 4 GPUs,
        # 2-core machine): a million jobs take minutes, so say so before starting.
        print(
            f"generating {config.num_jobs:,} jobs: about {config.num_jobs * 420 / 1e6:,.0f} MB "
            f"of JSON and {max(1, round(config.num_jobs * 0.5e-3 / 60)):,} min or more; "
            "Ctrl-C stops it, writing nothing",
            file=sys.stderr,
        )
    instance = generate_checked(config, args.seed)
    write_instance(instance, args.out)
    print(
        f"wrote {args.out}: {instance.num_jobs} jobs on "
        f"{instance.cluster.num_servers} servers x "
        f"{instance.cluster.max_gpus_per_server} GPUs"
        f"{types_text(instance.cluster)} (seed {args.seed}"
        f"{', integral' if config.integral else ''})",
        file=sys.stderr,
    )
    return EXIT_OK


def _from_trace(args: argparse.Namespace) -> int:
    """Write ``--jobs`` real jobs of ``--from-trace`` on a uniform cluster."""
    from ddlsched.core.data import resolve_trace
    from ddlsched.core.generators import GeneratorConfig
    from ddlsched.core.io import write_instance
    from ddlsched.core.model import Cluster
    from ddlsched.core.traces import trace_sample

    given = [o for o in DRAWN_ONLY if getattr(args, o[2:].replace("-", "_"))]
    if given:
        raise InputError(f"{', '.join(given)}: not with --from-trace (a trace's jobs are real)")
    defaults = GeneratorConfig()
    cluster = Cluster.uniform(
        args.servers or defaults.servers,
        args.gpus_per_server or defaults.gpus_per_server,
        args.bandwidth_intra or defaults.bandwidth_intra,
        args.bandwidth_inter or defaults.bandwidth_inter,
    )
    trace = resolve_trace(args.from_trace)
    instance = trace_sample(
        trace,
        cluster,
        args.jobs or defaults.num_jobs,
        seed=args.seed,
        arrivals=args.arrivals or ARRIVALS[0],
        unnamed=args.unnamed or "zoo-data-parallel",
    )
    write_instance(instance, args.out)
    print(
        f"wrote {args.out}: {instance.num_jobs} jobs of {trace} ({args.arrivals or ARRIVALS[0]}, "
        f"seed {args.seed}) on {cluster.num_servers} servers x {cluster.max_gpus_per_server} GPUs",
        file=sys.stderr,
    )
    return EXIT_OK
