"""``ddlsched generate``: write a random instance."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ddlsched.cli.files import check_outputs, output_extension
from ddlsched.cli.options import (
    EXIT_OK,
    Commands,
    add_gpu_types,
    add_seed,
    add_type_settings,
    count,
    name_list,
    new_command,
    non_negative,
    positive,
    servers,
    type_list,
)
from ddlsched.cli.output import types_text
from ddlsched.core.model import InputError
from ddlsched.core.traces import ARRIVALS, UNNAMED_RULES

if TYPE_CHECKING:
    from ddlsched.core.generators import GeneratorConfig

DRAWN_ONLY = (
    "--preset",
    "--integral",
    "--parallelism",
    "--max-job-gpus",
    "--config",
    "--size-weights",
    "--models",
    "--max-iterations",
    "--duration-slots",
    "--iteration-sigma",
    "--users",
)
"""Options that shape drawn jobs: a trace's jobs are what they were (the cluster, the slot
and ``--load``, which scales a sample's arrivals, apply to both)."""


def _pair(text: str) -> tuple[int, int]:
    """``LOW,HIGH``: two whole numbers."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH, got {text!r}")
    low, high = (count(part.strip()) for part in parts)
    return low, high


def _size_weights(text: str) -> tuple[tuple[int, float], ...]:
    """``GPUS:WEIGHT,...``: whole GPU counts with positive weights."""
    return type_list(positive, "gpus:weight", "1:0.4,8:0.15", name_of=count)(text)


def add(commands: Commands) -> None:
    """Register the command (each default is :class:`GeneratorConfig`'s, shown in the help)."""
    from ddlsched.core.generators import PRESETS, GeneratorConfig

    d = GeneratorConfig()
    gen = new_command(commands, "generate")
    gen.add_argument("--jobs", type=count, help=f"number of jobs (default {d.num_jobs})")
    gen.add_argument("--servers", type=count, help=f"servers (default {d.servers})")
    gen.add_argument(
        "--gpus-per-server", type=count, help=f"GPUs per server (default {d.gpus_per_server})"
    )
    add_seed(gen)
    gen.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        help="named settings, the same as in the API, TOML files and sweeps: integral "
        "(integral mode), exact-friendly (integral, bandwidth ratio 2: MILPs prove small "
        "instances in seconds); the options below override them (default realistic)",
    )
    gen.add_argument(
        "--integral",
        action="store_true",
        help="integral mode: every duration a multiple of the slot, so slotted MILPs are "
        "exact; the bandwidths stay as set (see --preset exact-friendly)",
    )
    gen.add_argument(
        "--load",
        type=positive,
        help="Poisson arrivals at this offered load; with --from-trace, the sample's recorded "
        "arrivals scaled to it (default: all jobs released at 0; a trace's as recorded)",
    )
    gen.add_argument(
        "--bandwidth-intra",
        type=positive,
        help=f"GB/s inside a server (default {d.bandwidth_intra:g})",
    )
    gen.add_argument(
        "--bandwidth-inter",
        type=positive,
        help=f"GB/s between servers (default {d.bandwidth_inter:g})",
    )
    gen.add_argument(
        "--parallelism", choices=("mixed", "dp"), help=f"parallelism mix (default {d.parallelism})"
    )
    gen.add_argument("--max-job-gpus", type=count, help="widest job (default: the whole cluster)")
    _add_draw_settings(gen, d)
    add_gpu_types(
        gen,
        "a mixed cluster: servers per GPU type, e.g. v100:2,p100:2,k80:4 "
        "(sets --servers; compute times from Gavel's measurements for k80, p100, v100; "
        "default: one unnamed type)",
    )
    add_type_settings(gen)
    gen.add_argument("--config", help="TOML file with a [generator] table (default: none)")
    gen.add_argument(
        "--from-trace",
        metavar="TRACE",
        help="real jobs instead of drawn ones: --jobs jobs of a trace (a path or a shipped "
        "name such as philly_jobs.csv) with their recorded durations and GPU counts "
        "(default: drawn jobs)",
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
        help="with --from-trace: the model of a row naming none, the rules of 'ddlsched "
        "simulate --help' (default zoo-data-parallel, as compare --from-trace; simulate and "
        "bound default to data-parallel)",
    )
    gen.add_argument("--out", required=True, help="instance file to write (JSON: a .json file)")
    gen.set_defaults(handler=run)


def _add_draw_settings(gen: argparse.ArgumentParser, d: GeneratorConfig) -> None:
    """The settings of how jobs are drawn (each a :class:`GeneratorConfig` field)."""
    weights = ",".join(f"{g}:{w:g}" for g, w in d.size_weights)
    gen.add_argument(
        "--size-weights",
        type=_size_weights,
        metavar="GPUS:WEIGHT,...",
        help=f"GPUs per job and their weights (default {weights})",
    )
    gen.add_argument("--models", help="zoo models to draw from, comma-separated (default: all)")
    gen.add_argument("--slot", type=positive, help=f"the slot Delta (default {d.slot:g})")
    gen.add_argument(
        "--max-iterations",
        type=count,
        help=f"integral mode: K_i uniform in 1..this (default {d.max_iterations})",
    )
    low, high = d.duration_slots
    gen.add_argument(
        "--duration-slots",
        type=_pair,
        metavar="LOW,HIGH",
        help=f"integral mode: one-server duration in slots (default {low},{high})",
    )
    gen.add_argument(
        "--iteration-sigma",
        type=non_negative,
        help=f"realistic mode: sigma of the log-normal iteration counts (default "
        f"{d.iteration_sigma:g})",
    )
    gen.add_argument(
        "--users", type=count, help=f"distinct users in job features (default {d.users})"
    )


LARGE = 100_000
"""Jobs from which ``generate`` first prints what the request will cost."""


def run(args: argparse.Namespace) -> int:
    """Generate the instance and write it to ``--out``."""
    from ddlsched.api import generate_checked
    from ddlsched.core.io import write_instance

    check_outputs({"--out": args.out}, [args.config])
    output_extension("--out", args.out, ".json", "the instance is written as JSON")
    if args.from_trace:
        return _from_trace(args)
    if args.arrivals or args.unnamed:
        raise InputError("--arrivals, --unnamed: only with --from-trace")
    config = _config(args)
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
    ratio = config.bandwidth_intra / config.bandwidth_inter
    print(
        f"wrote {args.out}: {instance.num_jobs} jobs on "
        f"{instance.cluster.num_servers} servers x "
        f"{instance.cluster.max_gpus_per_server} GPUs"
        f"{types_text(instance.cluster)} (seed {args.seed}"
        f"{', integral' if config.integral else ''}, bandwidth ratio {ratio:g}, "
        f"{'all released at 0' if config.load is None else f'load {config.load:g}'})",
        file=sys.stderr,
    )
    return EXIT_OK


def _config(args: argparse.Namespace) -> GeneratorConfig:
    """The generator settings: the preset or the ``--config`` file, then the options given."""
    from ddlsched.core.generators import GENERATE_FLAGS, GeneratorConfig
    from ddlsched.core.io import check_regular_file

    if args.config:
        if args.preset:
            raise InputError("--preset: not with --config (give preset = ... in its table)")
        check_regular_file(args.config, "TOML file")
        config = GeneratorConfig.from_toml(args.config)
    else:
        config = GeneratorConfig.preset(args.preset or "realistic")
    changes: dict[str, object] = {
        "num_jobs": args.jobs,
        "servers": args.servers,
        "gpus_per_server": args.gpus_per_server,
        "integral": args.integral or None,
        "load": args.load,
        "bandwidth_intra": args.bandwidth_intra,
        "bandwidth_inter": args.bandwidth_inter,
        "parallelism": args.parallelism,
        "max_job_gpus": args.max_job_gpus,
        "size_weights": args.size_weights,
        "models": args.models and name_list(args.models, "--models"),
        "slot": args.slot,
        "max_iterations": args.max_iterations,
        "duration_slots": args.duration_slots,
        "iteration_sigma": args.iteration_sigma,
        "users": args.users,
        "gpu_types": args.gpu_types,
        "type_bandwidth": args.type_bandwidth,
        "type_slowdown": args.type_slowdown,
    }
    if args.gpu_types:
        changes["servers"] = servers(args, GeneratorConfig.servers)
    given = {k: v for k, v in changes.items() if v is not None}
    try:
        return config.replace(**given)
    except InputError as error:  # named as the option the user gave: --slot, not slot
        name, colon, rest = str(error).partition(":")
        if name in given and name in GENERATE_FLAGS:
            raise InputError(f"{GENERATE_FLAGS[name]}{colon}{rest}") from None
        raise


def _from_trace(args: argparse.Namespace) -> int:
    """Write ``--jobs`` real jobs of ``--from-trace`` on the cluster asked, their arrivals
    scaled to ``--load`` if given (:func:`~ddlsched.core.generators.sample_trace`)."""
    from ddlsched.core.generators import GeneratorConfig, sample_trace
    from ddlsched.core.io import write_instance

    given = [o for o in DRAWN_ONLY if getattr(args, o[2:].replace("-", "_"))]
    if given:
        raise InputError(f"{', '.join(given)}: not with --from-trace (a trace's jobs are real)")
    settings = {
        "num_jobs": args.jobs,
        "servers": servers(args, GeneratorConfig.servers) if args.gpu_types else args.servers,
        "gpus_per_server": args.gpus_per_server,
        "bandwidth_intra": args.bandwidth_intra,
        "bandwidth_inter": args.bandwidth_inter,
        "slot": args.slot,
        "load": args.load,
        "gpu_types": args.gpu_types,
        "type_bandwidth": args.type_bandwidth,
        "type_slowdown": args.type_slowdown,
    }
    config = GeneratorConfig(
        from_trace=args.from_trace,
        arrivals=args.arrivals,
        **{k: v for k, v in settings.items() if v is not None},
    )
    instance = sample_trace(config, args.seed, args.unnamed or "zoo-data-parallel")
    write_instance(instance, args.out)
    cluster = instance.cluster
    load = "" if config.load is None else f", load {config.load:g}"
    print(
        f"wrote {args.out}: {instance.num_jobs} jobs of {args.from_trace} "
        f"({config.arrivals or ARRIVALS[0]}{load}, seed {args.seed}) on "
        f"{cluster.num_servers} servers x {cluster.max_gpus_per_server} GPUs"
        f"{types_text(cluster)}",
        file=sys.stderr,
    )
    return EXIT_OK
