"""``ddlsched check``: check every claim of the theory on an instance, random or adversarial."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ddlsched.cli.files import check_outputs, read_instance_file
from ddlsched.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_NO,
    EXIT_OK,
    OUT,
    Commands,
    add_gpu_types,
    add_json,
    add_seed,
    count,
    new_command,
    non_negative,
    positive,
    refuse_given,
    servers,
)
from ddlsched.cli.output import print_json, print_table, progress_bar, types_text
from ddlsched.core.model import InputError

if TYPE_CHECKING:
    from ddlsched.core.model import Instance
    from ddlsched.proofs_checks.claims import ClaimRecord

GENERATOR_OPTIONS = ("--servers", "--gpu-types", "--gpus-per-server", "--jobs", "--load")
"""Options of ``check`` that shape generated instances (refused with an instance file)."""


def add(commands: Commands) -> None:
    """Register the command."""
    check = new_command(commands, "check")
    check.add_argument("instance", nargs="?", help="an instance file (or use --random)")
    check.add_argument("--random", type=count, metavar="N", help="check N generated instances")
    check.add_argument(
        "--adversarial",
        type=count,
        metavar="N",
        help="search N hypothesis examples for a high asrpt / OPT(A)",
    )
    check.add_argument(
        "--servers", type=count, help="servers (default 2, or the servers --gpu-types lists)"
    )
    add_gpu_types(check, "--random on mixed clusters: servers per GPU type, e.g. v100:1,k80:1")
    check.add_argument(
        "--gpus-per-server", type=count, default=2, help="GPUs per server (generated instances)"
    )
    check.add_argument("--jobs", type=count, default=4, help="jobs per generated instance")
    check.add_argument(
        "--load",
        type=positive,
        help="Poisson arrival load of --random instances (default: all released at 0)",
    )
    add_seed(check)
    check.add_argument(
        "--time-limit", type=positive, default=60.0, help="seconds per exact solve (OPT(A))"
    )
    check.add_argument(
        "--prediction-error",
        type=non_negative,
        metavar="E",
        help="also check A-SRPT's bound under prediction error, with predictions perturbed "
        "within a factor 1 + E (adversarially and at random; 0: exact predictions)",
    )
    check.add_argument(
        "--out-dir", default=OUT, help="where violating and adversarial instances are written"
    )
    add_json(check)
    check.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Exit 1 when a claim is violated, 0 when none is."""
    from ddlsched.experiments import check_instance

    check_outputs({"--out-dir": args.out_dir}, folders=("--out-dir",))
    modes = [
        name
        for name, chosen in (
            ("INSTANCE", args.instance is not None),
            ("--random", args.random is not None),
            ("--adversarial", args.adversarial is not None),
        )
        if chosen
    ]
    if len(modes) > 1:
        raise InputError(f"check: {' and '.join(modes)}: give one of them")
    if args.instance is not None:
        refuse_given(
            args,
            (*GENERATOR_OPTIONS, "--out-dir"),
            "only with --random or --adversarial (the instance file is checked as it is)",
        )
    if args.adversarial is not None:
        refuse_given(
            args,
            ("--prediction-error", "--time-limit", "--load"),
            "not used by --adversarial (its search sets its own)",
        )
    args.servers = servers(args, 2)
    if args.adversarial:
        if args.gpu_types:
            raise InputError(
                "check: --gpu-types is for --random (the adversarial search is single-type)"
            )
        return _adversarial(args)
    if args.random is not None:
        return _random(args)
    if args.instance is None:
        raise InputError("check: give an INSTANCE file, or --random N (or --adversarial N)")
    instance = read_instance_file(args.instance, "check")
    report = check_instance(
        instance,
        time_limit=args.time_limit,
        prediction_error=args.prediction_error,
        seed=args.seed,
    )
    if args.json:
        print_json(report.to_dict())
    else:
        values = report.values

        def shown(name: str) -> str:
            value = values[name]
            if not isinstance(value, float) or value != value:
                return f"{name} unknown"
            return f"{name} {value:.6g}{'' if report.exact.get(name) else ' (not exact)'}"

        print(
            f"{', '.join(shown(n) for n in ('opt_A', 'opt_A1', 'opt_A2', 'srpt_A2', 'rho'))}; "
            f"instance {'integral' if values['integral'] else 'NOT integral (slotted optima)'}"
        )
        for claim in report.claims:
            print(
                f"  {claim.status:>12}  {claim.name:<24} {claim.lhs:>11.6g} vs {claim.rhs:<11.6g}"
                f" {claim.statement}{'  [' + claim.detail + ']' if claim.detail else ''}"
            )
    return EXIT_NO if any(c.holds is False for c in report.claims) else EXIT_OK


def _random(args: argparse.Namespace) -> int:
    from ddlsched.core.io import write_instance
    from ddlsched.experiments import check_generator, check_random

    def save(record: ClaimRecord, instance: Instance, seed: int) -> None:
        path = f"{args.out_dir}/violation-{record.name}-seed{seed}.json"
        write_instance(instance, path)
        print(f"violation of {record.name} at seed {seed}: wrote {path}", file=sys.stderr)

    config = check_generator(args.jobs, args.servers, args.gpus_per_server, args.load)
    config = config.replace(gpu_types=args.gpu_types or ())
    progress, close = progress_bar(args.random, "check")
    try:
        found = check_random(
            config,
            args.random,
            args.seed,
            args.time_limit,
            save,
            progress,
            prediction_error=args.prediction_error,
        )
    finally:
        close()
    done = found.instances
    rows = [vars(t) for t in found.tallies.values()]
    if args.json:
        print_json({"instances": done, "interrupted": found.interrupted, "claims": rows})
    else:
        seeds = f"seeds {args.seed}..{args.seed + done - 1}" if done else "no instance finished"
        print(
            f"{done} instances, {args.servers}x{args.gpus_per_server} GPUs"
            f"{types_text(config.cluster())}, {args.jobs} jobs, {seeds} (exact-friendly, "
            f"{'all released at 0' if args.load is None else f'load {args.load:g}'})"
            f"{' (interrupted)' if found.interrupted else ''}"
        )
    if not args.json and done:
        print_table(
            ("claim", "checked", "held", "inconclusive", "violated", "worst lhs/rhs", "seed"),
            [
                (t.name, t.checked, t.held, t.inconclusive, t.violated,
                 f"{t.worst_ratio:.4f}" if t.has_ratio else "-",
                 t.worst_seed if t.has_ratio else "-")
                for t in found.tallies.values()
            ],
        )  # fmt: skip
    if found.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_NO if found.violated else EXIT_OK


def _adversarial(args: argparse.Namespace) -> int:
    from ddlsched.core.io import write_instance
    from ddlsched.experiments import adversarial_theorem1

    ratio, factor, instance = adversarial_theorem1(
        args.servers, args.gpus_per_server, args.jobs, args.adversarial, seed=args.seed
    )
    path = f"{args.out_dir}/adversarial-worst.json"
    if instance is not None:
        write_instance(instance, path)
    doc = {
        "worst_ratio_asrpt_over_opt": ratio,
        "theorem1_factor_on_it": factor,
        "examples": args.adversarial,
        "seed": args.seed,
    }
    if args.json:
        print_json(doc)
    else:
        print(
            f"worst sum C(asrpt) / OPT(A) found: {ratio:.4f} (Theorem 1 allows "
            f"{factor:.4f} on that instance) after {args.adversarial} examples (seed {args.seed})"
            f"{f'; instance written to {path}' if instance is not None else ''}"
        )
    return EXIT_OK if ratio <= factor + 1e-9 else EXIT_NO
