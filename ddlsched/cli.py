"""The ``ddlsched`` command line: parsing and printing, nothing else.

The CLI sits on the top floor. Every command calls the façades
(:mod:`ddlsched.api`), the experiments (:mod:`ddlsched.experiments`), the
sweeps (:mod:`ddlsched.sweep`) or the figures (:mod:`ddlsched.plotting`);
every choice of a name (method, policy, predictor, mapper, problem) is read
from the registries, so ``--help`` lists exactly what the code knows. Heavy
packages (Pyomo, scikit-learn, matplotlib, Dask) are imported by the
command that needs them, so ``ddlsched generate`` never pays for Pyomo.

Exit codes: 0 success, 1 a negative answer (an infeasible schedule, a
violated claim, a solver that failed), 2 bad input (one line on stderr
naming the field and the value; never a traceback), 3 an internal error (a
bug: one line, the traceback with ``DDLSCHED_DEBUG=1``), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from algorithms.registry import MAPPERS, POLICIES, PREDICTORS
from ddlsched.api import exact_method_names, method_names, solve
from ddlsched.core.model import PROBLEMS, InputError
from ddlsched.core.params import (
    DEFAULT_RESTART_COST,
    PLACEMENTS,
    ExactParams,
    OnlineParams,
)
from ddlsched.core.result import SolveStatus

EXIT_OK, EXIT_NO, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
OUT = "out"
"""Where commands write files the user did not name."""


def _number(text: str, kind: type, test: Any, what: str) -> Any:
    """Parse a command-line number, or fail with argparse's one-line error."""
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and test(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return value


MAX_COUNT = 1_000_000
"""Largest count a flag accepts (jobs, servers, instances, ...)."""


def _count(text: str) -> int:
    return int(
        _number(
            text, int, lambda v: 1 <= v <= MAX_COUNT, f"a whole number from 1 to {MAX_COUNT:,}"
        )
    )


def _big_count(text: str) -> int:
    return int(_number(text, int, lambda v: 1 <= v <= 10**9, "a whole number from 1 to 10^9"))


def _seed(text: str) -> int:
    return int(_number(text, int, lambda v: 0 <= v < 2**63, "a whole number >= 0"))


def _positive(text: str) -> float:
    return float(_number(text, float, lambda v: 0 < v <= 1e12, "a number > 0 (at most 1e12)"))


def _type_list(convert: Callable[[str], Any]) -> Callable[[str], tuple[tuple[str, Any], ...]]:
    """An argparse type for ``name:value,name:value`` (GPU types), values by ``convert``."""

    def parse(text: str) -> tuple[tuple[str, Any], ...]:
        pairs = []
        for item in text.split(","):
            name, colon, value = item.strip().partition(":")
            if not colon or not name:
                raise argparse.ArgumentTypeError(
                    f"expected type:value pairs separated by commas (v100:2,k80:4), got {item!r}"
                )
            pairs.append((name, convert(value)))
        return tuple(pairs)

    return parse


def _non_negative(text: str) -> float:
    return float(_number(text, float, lambda v: 0 <= v <= 1e12, "a number >= 0 (at most 1e12)"))


class _Parser(argparse.ArgumentParser):
    """argparse with one line on stderr for bad arguments (exit 2), like other bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ddlsched")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _print_json(document: Any) -> None:
    """Print ``document`` as JSON; a number that is not finite (unknown, unbounded) is null."""
    print(json.dumps(_finite(document), indent=1, allow_nan=False))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _cmd_generate(args: argparse.Namespace) -> int:
    from ddlsched.core.generators import GeneratorConfig, generate
    from ddlsched.core.io import write_instance

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
        changes["servers"] = _servers(args, GeneratorConfig.servers)
    if args.integral and args.bandwidth_intra is None and not args.config:
        # The realistic default ratio (20) would make tiny MILP instances
        # long; integral instances default to a ratio of 2.
        changes["bandwidth_intra"] = 2.0
    config = config.replace(**{k: v for k, v in changes.items() if v is not None})
    instance = generate(config, args.seed)
    write_instance(instance, args.out)
    print(
        f"wrote {args.out}: {instance.num_jobs} jobs on "
        f"{instance.cluster.num_servers} servers x "
        f"{instance.cluster.max_gpus_per_server} GPUs"
        f"{_types_text(instance.cluster)} (seed {args.seed}"
        f"{', integral' if config.integral else ''})",
        file=sys.stderr,
    )
    return EXIT_OK


def _servers(args: argparse.Namespace, default: int) -> int:
    """``--servers`` if given, else the servers ``--gpu-types`` lists, else ``default``."""
    if args.servers is not None:
        return int(args.servers)
    if args.gpu_types:
        return sum(count for _, count in args.gpu_types)
    return default


def _types_text(cluster: Any) -> str:
    """`` (v100 x2, k80 x4)`` for a cluster with GPU types, else nothing."""
    if not cluster.server_types:
        return ""
    counts = {t: cluster.server_types.count(t) for t in cluster.types}
    return " (" + ", ".join(f"{t} x{n}" for t, n in counts.items()) + ")"


def _cmd_verify(args: argparse.Namespace) -> int:
    from ddlsched.core.io import read_instance, read_schedule
    from proofs_checks.verifier import verify

    instance = read_instance(args.instance)
    schedule = read_schedule(args.schedule)
    report = verify(instance, schedule)
    if args.json:
        _print_json(report.to_dict())
    else:
        if report.feasible:
            print(
                f"feasible (problem {schedule.problem}): total completion time "
                f"{report.total_completion_time:.6g}, total JCT "
                f"{report.total_jct:.6g}"
            )
        else:
            print(f"infeasible: {len(report.violations)} violation(s)")
            for line in report.violations:
                print(f"  - {line}")
    return EXIT_OK if report.feasible else EXIT_NO


def _cmd_info(args: argparse.Namespace) -> int:
    from ddlsched.core.alpha import rho
    from ddlsched.core.io import read_instance

    instance = read_instance(args.instance)
    report = rho(instance)
    rows: list[dict[str, Any]] = []
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
        _print_json(
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


def _cmd_solve(args: argparse.Namespace) -> int:
    from ddlsched.core.io import read_instance, read_schedule, write_schedule

    instance = read_instance(args.instance)
    warm = read_schedule(args.warm_start) if args.warm_start else None
    try:
        params: ExactParams | OnlineParams
        if args.method in exact_method_names():
            params = ExactParams(args.time_limit, args.mip_gap, args.threads, args.verbose)
        else:
            params = OnlineParams(predictor=args.predictor, mapper=args.mapper)
        result = solve(
            instance,
            args.method,
            problem=args.problem,
            params=params,
            seed=args.seed,
            warm_start=warm,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    if args.out and result.schedule is not None:
        write_schedule(result.schedule, args.out)
    if args.json:
        _print_json(result.summary())
    else:
        print(
            f"{result.method} on problem {result.problem.value}: {result.status.value}; "
            f"total completion time {result.objective:.6g}, total JCT {result.total_jct:.6g}; "
            f"bound {result.best_bound:.6g}, gap {result.gap:.3g}; "
            f"{result.runtime_s:.2f} s in all (building {result.build_time_s:.2f} s)"
        )
        for note in result.notes:
            print(f"  note: {note}")
        if args.out and result.schedule is not None:
            print(f"  schedule written to {args.out}")
    if result.status is SolveStatus.ERROR:
        reason = result.notes[0] if result.notes else "solver error"
        print(f"ddlsched: error: {_one_line(reason)}", file=sys.stderr)
        return EXIT_NO
    return EXIT_OK


def _progress_bar(total: int, label: str) -> tuple[Any, Any]:
    """A tqdm bar on a terminal (stderr), nothing otherwise; returns (callback, closer)."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit="job", file=sys.stderr, leave=False)

    def update(done: int, _total: int) -> None:
        bar.update(done - bar.n)

    return update, bar.close


def _load_replay(args: argparse.Namespace) -> tuple[Any, Any, float, float]:
    """The trace as an instance, at the asked load: (loaded, instance, factor, offered load)."""
    from ddlsched.core.load import at_load, offered_load, scale_arrivals
    from ddlsched.core.model import Cluster, expand_types
    from ddlsched.core.traces import load_trace, parse_columns

    try:
        cluster = Cluster.uniform(
            args.servers, args.gpus_per_server, args.bandwidth_intra, args.bandwidth_inter
        )
        if args.gpu_types:
            kinds = expand_types(args.gpu_types)
            if len(kinds) != args.servers:
                raise InputError(
                    f"--gpu-types: lists {len(kinds)} servers but --servers is {args.servers}"
                )
            cluster = cluster.replace(server_types=kinds)
        loaded = load_trace(
            args.trace,
            cluster,
            seed=args.seed,
            limit=args.limit,
            unnamed=args.unnamed,
            columns=parse_columns(args.columns) if args.columns else None,
            time_unit=args.time_unit,
        )
        instance, factor = loaded.instance, 1.0
        if args.target_load is not None:
            instance, factor = at_load(instance, args.target_load)
        elif args.load_factor is not None:
            factor = args.load_factor
            instance = scale_arrivals(instance, factor)
    except ValueError as error:
        raise InputError(str(error)) from None
    return loaded, instance, factor, offered_load(instance)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from algorithms.simulator import REPORTED_METRICS
    from ddlsched.api import simulate
    from ddlsched.core.io import write_schedule
    from ddlsched.core.traces import stretched_jobs

    loaded, instance, factor, load = _load_replay(args)
    progress, close = _progress_bar(instance.num_jobs, args.policy)
    try:
        result = simulate(
            instance,
            args.policy,
            params=OnlineParams(
                predictor=args.predictor,
                mapper=args.mapper,
                restart_cost=args.restart_cost,
                placement=args.placement,
            ),
            seed=args.seed,
            progress=progress,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    finally:
        close()
    if args.out and result.schedule is not None:
        write_schedule(result.schedule, args.out)
    if args.plot and result.schedule is not None:
        _save_figure("simulation_figure", args.plot, instance, result.schedule, args.policy)
    summary = result.summary()
    idle = result.metrics.get("mean_queueing_delay") == 0
    warning = (
        "no job ever waited: every work-conserving policy gives this same schedule; raise the "
        "load (--target-load, --load-factor) or shrink the cluster to compare policies"
        if idle
        else None
    )
    stretched = stretched_jobs(instance, result.schedule) if result.schedule is not None else None
    summary.update(
        {
            "trace_format": loaded.format,
            "jobs": instance.num_jobs,
            "rows_skipped": loaded.skipped_invalid,
            "jobs_dropped_too_wide": loaded.dropped_wide,
            "unnamed_rule": loaded.unnamed_rule,
            "jobs_without_known_model": loaded.unnamed_jobs,
            "unmatched_models": loaded.unmatched_models,
            "jobs_over_2x_recorded_duration": stretched,
            "arrival_scale": factor,
            "offered_load": load,
        }
    )
    if warning:
        summary["warning"] = warning
    if args.json:
        _print_json(summary)
    else:
        print(
            f"{args.policy} on {args.trace} ({loaded.format}, {loaded.instance.num_jobs} jobs; "
            f"{loaded.dropped_wide} too wide, {loaded.skipped_invalid} invalid rows skipped) "
            f"on {args.servers} x {args.gpus_per_server} GPUs{_types_text(instance.cluster)}, "
            f"offered load "
            f"{f'{load:.3g}' if math.isfinite(load) else 'unbounded (all jobs arrive at once)'}"
            f"{f' (arrivals compressed x{factor:.4g})' if factor != 1 else ''}:"
        )
        for key in REPORTED_METRICS:
            value = summary.get(key)
            if value is not None:
                print(f"  {key:>20}: {value:.6g}")
        print(
            f"  {loaded.unnamed_jobs} jobs had no known model ({loaded.unnamed_rule} rule); "
            f"{stretched} ran more than 2x their recorded duration"
        )
        if loaded.unmatched_models:
            names = sorted(loaded.unmatched_models.items(), key=lambda kv: -kv[1])
            shown = ", ".join(f"{name} ({count})" for name, count in names[:8])
            print(f"  model names not in the zoo: {shown}{' ...' if len(names) > 8 else ''}")
        bound = result.lower_bound
        if bound is not None:
            print(
                f"  {'lower bound on OPT':>20}: {bound.value:.6g} ({bound.name}); sum C / LB = "
                f"{bound.ratio(result.objective):.4f} (certified: sum C / OPT is at most this)"
            )
        for note in result.notes:
            print(f"  note: {note}")
        if warning:
            print(f"  warning: {warning}")
    return EXIT_INTERRUPTED if result.status is SolveStatus.ERROR else EXIT_OK


def _cmd_bound(args: argparse.Namespace) -> int:
    from ddlsched.core.io import read_instance
    from formulations.lower_bounds import LpSettings, best_lower_bound, lower_bounds

    if (args.instance is None) == (args.trace is None):
        raise InputError("bound: give an INSTANCE file or --trace FILE (one of them)")
    if args.instance is not None:
        instance, source = read_instance(args.instance), args.instance
    else:
        _, instance, _, load = _load_replay(args)
        source = f"{args.trace} on {args.servers} x {args.gpus_per_server} GPUs, load {load:.3g}"
    try:
        settings = LpSettings(args.lp_max_variables, args.lp_time_limit) if args.lp else None
    except ValueError as error:
        raise InputError(str(error)) from None
    upper = None
    if settings is not None:
        from ddlsched.api import best_policy_objective

        upper = best_policy_objective(instance)
    found = lower_bounds(instance, lp=settings, upper_bound=upper)
    best = best_lower_bound(found)
    if args.json:
        _print_json(
            {
                "source": source,
                "jobs": instance.num_jobs,
                "bounds": [b.to_dict() for b in found],
                "best": best.to_dict() if best else None,
            }
        )
        return EXIT_OK
    print(f"{source}: {instance.num_jobs} jobs; lower bounds on OPT(A) = min sum w C:")
    for b in found:
        state = "valid" if b.valid else "NOT valid"
        print(f"  {b.name:>15}: {b.value:.8g}  ({state}, {b.runtime_s:.2f} s)")
    if best is not None:
        print(f"  best: {best.name} = {best.value:.8g}")
    notes = sorted({note for b in found for note in b.notes})
    for note in notes:
        print(f"  note: {note}")
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    from ddlsched.core.io import read_instance
    from ddlsched.experiments import check_instance

    args.servers = _servers(args, 2)
    if args.adversarial:
        if args.gpu_types:
            raise InputError(
                "check: --gpu-types is for --random (the adversarial search is single-type)"
            )
        return _check_adversarial(args)
    if args.random is not None:
        return _check_random(args)
    if args.instance is None:
        raise InputError("check: give an INSTANCE file, or --random N (or --adversarial N)")
    instance = read_instance(args.instance)
    report = check_instance(instance, time_limit=args.time_limit)
    if args.json:
        _print_json(report.to_dict())
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


def _check_random(args: argparse.Namespace) -> int:
    from ddlsched.core.io import write_instance
    from ddlsched.experiments import check_generator, check_random

    def save(record: Any, instance: Any, seed: int) -> None:
        path = f"{args.out_dir}/violation-{record.name}-seed{seed}.json"
        write_instance(instance, path)
        print(f"violation of {record.name} at seed {seed}: wrote {path}", file=sys.stderr)

    config = check_generator(args.jobs, args.servers, args.gpus_per_server, args.load)
    config = config.replace(gpu_types=args.gpu_types or ())
    progress, close = _progress_bar(args.random, "check")
    try:
        found = check_random(config, args.random, args.seed, args.time_limit, save, progress)
    finally:
        close()
    done = found.instances
    rows = [vars(t) for t in found.tallies.values()]
    if args.json:
        _print_json({"instances": done, "interrupted": found.interrupted, "claims": rows})
    else:
        print(
            f"{done} instances, {args.servers}x{args.gpus_per_server} GPUs"
            f"{_types_text(config.cluster())}, {args.jobs} jobs, "
            f"seeds {args.seed}..{args.seed + done - 1}"
            f"{' (interrupted)' if found.interrupted else ''}"
        )
        print("| claim | checked | held | inconclusive | violated | worst lhs/rhs | seed |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for t in found.tallies.values():
            print(
                f"| {t.name} | {t.checked} | {t.held} | {t.inconclusive} | {t.violated} | "
                f"{t.worst_ratio:.4f} | {t.worst_seed} |"
            )
    if found.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_NO if found.violated else EXIT_OK


def _check_adversarial(args: argparse.Namespace) -> int:
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
        _print_json(doc)
    else:
        print(
            f"worst sum C(asrpt) / OPT(A) found: {ratio:.4f} (Theorem 1 allows "
            f"{factor:.4f} on that instance) after {args.adversarial} examples (seed {args.seed})"
            f"{f'; instance written to {path}' if instance is not None else ''}"
        )
    return EXIT_OK if ratio <= factor + 1e-9 else EXIT_NO


def _cmd_compare(args: argparse.Namespace) -> int:
    from ddlsched.experiments import CompareConfig, compare

    try:
        config = CompareConfig(
            jobs=args.jobs,
            servers=_servers(args, CompareConfig.servers),
            gpu_types=args.gpu_types or (),
            gpus_per_server=args.gpus_per_server,
            instances=args.instances,
            seed=args.seed,
            methods=tuple(m.strip() for m in args.methods.split(",") if m.strip()),
            time_limit=args.time_limit,
            load=None if args.load == 0 else args.load,
            predictor=args.predictor,
            exact=args.exact,
        )
    except ValueError as error:
        raise InputError(str(error)) from None
    progress, close = _progress_bar(config.instances, "compare")
    try:
        report = compare(config, progress)
    finally:
        close()
    summary = report.summary()
    if args.plot and report.rows:
        _compare_figure(report, args.plot)
    if args.json:
        _print_json(summary)
    else:
        _print_compare(config, summary)
        if args.plot:
            print(f"figure written to {args.plot}")
    return EXIT_INTERRUPTED if report.interrupted else EXIT_OK


def _print_compare(config: Any, summary: dict[str, Any]) -> None:
    last_seed = config.seed + summary["instances"] - 1
    stopped = " - interrupted" if summary["interrupted"] else ""
    print(
        f"{summary['instances']} integral instances ({config.jobs} jobs, {config.servers} x "
        f"{config.gpus_per_server} GPUs{_types_text(config.generator().cluster())}, "
        f"load {config.load}, seeds {config.seed}..{last_seed})"
        f"{stopped}"
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
    print(
        "| method | mean C/OPT | worst C/OPT | mean JCT/OPT | worst JCT/OPT | mean C/LB "
        "| mean C/LB_fast | verified | mean runtime s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for method, row in summary["methods"].items():
        print(
            f"| {method} | {row['mean_ratio']:.4f} | {row['worst_ratio']:.4f} | "
            f"{row['mean_jct_ratio']:.4f} | {row['worst_jct_ratio']:.4f} | "
            f"{row['mean_certified_ratio']:.4f} | {row['mean_fast_certified_ratio']:.4f} | "
            f"{int(row['verified'])}/{summary['instances']} | {row['mean_runtime_s']:.4f} |"
        )
    for method, row in summary["methods"].items():
        if row["flag"]:
            print(f"  note on {method}: {row['flag']}")


def _save_figure(name: str, path: str, *data: Any) -> None:
    """Draw the figure ``ddlsched.plotting.<name>(*data)`` into the PNG file ``path``."""
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")  # files only: no display needed
    from ddlsched import plotting

    plotting.save_png(getattr(plotting, name)(*data), path)


def _compare_figure(report: Any, path: str) -> None:
    first = report.rows[0]
    heuristic = "asrpt" if "asrpt" in first.results else next(iter(first.results))
    result = first.results[heuristic]
    proven = [r for r in report.rows if r.optimum.proven_optimal]
    _save_figure(
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


def _cmd_predict(args: argparse.Namespace) -> int:
    from ddlsched.core.workloads import WorkloadConfig, recurring_history
    from ddlsched.experiments.prediction import evaluate, history_frame

    if args.trace:
        frame = history_frame(args.trace)
        source = args.trace
    else:
        history = recurring_history(WorkloadConfig(jobs=args.jobs), args.seed)
        frame = history.drop(columns=["group"])
        source = f"generated history ({args.jobs} jobs, seed {args.seed})"
    report: dict[str, Any] = evaluate(
        frame, target=args.target, retrain_every=args.retrain_every, seed=args.seed, source=source
    )
    if args.json:
        _print_json(report)
        return EXIT_OK
    print(
        f"{source}: {report['train_jobs']} history jobs, {report['test_jobs']} predicted "
        f"(chronological; forest refitted every {report['retrain_every']} jobs)"
    )
    print(f"features: {', '.join(report['features'])}")
    print("| predictor | MAE | median rel. error | R^2 | within 10% | within 25% | within 50% |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, m in report["predictors"].items():
        print(
            f"| {name} | {m['mae']:.4g} | {m['median_rel_error']:.3f} | {m['r2']:.3f} | "
            f"{m['within_10']:.1%} | {m['within_25']:.1%} | {m['within_50']:.1%} |"
        )
    print(f"verdict: {report['verdict']}")
    return EXIT_OK


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ddlsched.sweep import read_sweep, run_sweep

    config = read_sweep(args.config)
    total = sum(1 for _ in config.tasks())
    progress, close = _progress_bar(total, "sweep")
    try:
        outcome = run_sweep(
            config, args.results, scheduler=args.scheduler, workers=args.workers, progress=progress
        )
    finally:
        close()
    resume = " (interrupted: finished rows are kept; run again to resume)"
    failed = (
        f", {outcome.failed} failed (their messages: ddlsched results {args.results}; a re-run "
        "retries them)"
        if outcome.failed
        else ""
    )
    print(
        f"{outcome.total} tasks: {outcome.skipped} already in {args.results}, {outcome.ran} run"
        f"{failed}{resume if outcome.interrupted else ''}"
    )
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_NO if outcome.failed else EXIT_OK


def _cmd_results(args: argparse.Namespace) -> int:
    from ddlsched.sweep import load_results, summarise

    frame = load_results(args.results)
    table = summarise(frame)
    if args.json:
        _print_json(json.loads(table.to_json(orient="records")))
    else:
        print(f"{len(frame)} rows in {args.results}")
        print(table.to_string(index=False))
        failed = frame[frame["status"] == "failed"]
        for row in failed.head(10).itertuples():
            print(f"  failed: {row.method} seed {row.seed}: {row.message}")
        if len(failed) > 10:
            print(f"  ... and {len(failed) - 10} more failed tasks")
    return EXIT_OK


def _type_arguments(parser: argparse.ArgumentParser) -> None:
    """The generator's GPU-type options."""
    parser.add_argument(
        "--gpu-types",
        type=_type_list(_count),
        help="a mixed cluster: servers per GPU type, e.g. v100:2,p100:2,k80:4 "
        "(sets --servers; compute times from Gavel's measurements for k80, p100, v100)",
    )
    parser.add_argument(
        "--type-bandwidth",
        type=_type_list(_positive),
        help="intra-server GB/s per type, e.g. v100:40,k80:10 (others: --bandwidth-intra)",
    )
    parser.add_argument(
        "--type-slowdown",
        type=_type_list(_positive),
        help="your own types: times slower than the zoo's V100 time, e.g. t4:1.6",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ddlsched`` (exposed for documentation)."""
    from ddlsched.experiments.compare import CompareConfig

    defaults = CompareConfig()
    exact, online = ExactParams(), OnlineParams()
    predictors = PREDICTORS.names()
    parser = _Parser(
        prog="ddlsched",
        description="Scheduling distributed deep-learning jobs on GPU clusters: "
        "exact optima, A-SRPT, baselines, and checks of the theory.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        return sub.add_parser(
            name, formatter_class=argparse.ArgumentDefaultsHelpFormatter, **kwargs
        )

    cmp_ = command(
        "compare", help="the main job: online methods against exact optima on random instances"
    )
    cmp_.add_argument("--jobs", type=_count, default=defaults.jobs)
    cmp_.add_argument(
        "--servers", type=_count, help=f"servers (default {defaults.servers}, or --gpu-types')"
    )
    cmp_.add_argument(
        "--gpu-types",
        type=_type_list(_count),
        help="a mixed cluster: servers per GPU type, e.g. v100:1,k80:1 (types k80, p100, v100)",
    )
    cmp_.add_argument("--gpus-per-server", type=_count, default=defaults.gpus_per_server)
    cmp_.add_argument("--instances", type=_count, default=defaults.instances)
    cmp_.add_argument("--seed", type=_seed, default=defaults.seed)
    cmp_.add_argument(
        "--methods",
        default=",".join(defaults.methods),
        help=f"comma-separated online methods, some of: {', '.join(POLICIES)}",
    )
    cmp_.add_argument(
        "--time-limit", type=_positive, default=defaults.time_limit, help="seconds per MILP"
    )
    cmp_.add_argument(
        "--load",
        type=_non_negative,
        default=defaults.load,
        help="Poisson arrival load (0: all jobs released at time 0)",
    )
    cmp_.add_argument("--predictor", default=defaults.predictor, choices=predictors)
    cmp_.add_argument(
        "--exact",
        default=defaults.exact,
        choices=exact_method_names(),
        help="the exact method giving the optimum",
    )
    cmp_.add_argument("--plot", help="write a figure (Gantt charts and ratios) to this PNG")
    cmp_.add_argument("--json", action="store_true")
    cmp_.set_defaults(handler=_cmd_compare)

    gen = command("generate", help="write a random instance")
    gen.add_argument("--jobs", type=_count, help="number of jobs (default 8)")
    gen.add_argument("--servers", type=_count, help="servers (default 2)")
    gen.add_argument("--gpus-per-server", type=_count, help="GPUs per server (default 4)")
    gen.add_argument("--seed", type=_seed, default=0, help="random seed")
    gen.add_argument(
        "--integral",
        action="store_true",
        help="make every duration a multiple of the slot (exact MILPs)",
    )
    gen.add_argument(
        "--load",
        type=_positive,
        help="Poisson arrivals at this offered load (default: all jobs released at 0)",
    )
    gen.add_argument("--bandwidth-intra", type=_positive, help="GB/s inside a server")
    gen.add_argument("--bandwidth-inter", type=_positive, help="GB/s between servers")
    gen.add_argument("--parallelism", choices=("mixed", "dp"), help="parallelism mix")
    gen.add_argument("--max-job-gpus", type=_count, help="widest job")
    _type_arguments(gen)
    gen.add_argument("--config", help="TOML file with a [generator] table")
    gen.add_argument("--out", required=True, help="instance file to write")
    gen.set_defaults(handler=_cmd_generate)

    ver = command("verify", help="check a schedule against an instance")
    ver.add_argument("instance")
    ver.add_argument("schedule")
    ver.add_argument("--json", action="store_true", help="print a JSON report")
    ver.set_defaults(handler=_cmd_verify)

    solve = command("solve", help="schedule an instance exactly or with a policy")
    solve.add_argument("instance")
    solve.add_argument("--method", default=method_names()[0], choices=method_names())
    solve.add_argument("--problem", default=PROBLEMS[0].value, choices=[p.value for p in PROBLEMS])
    solve.add_argument(
        "--time-limit", type=_positive, default=exact.time_limit, help="seconds (exact methods)"
    )
    solve.add_argument(
        "--mip-gap", type=_non_negative, default=exact.mip_gap, help="relative gap (exact methods)"
    )
    solve.add_argument("--threads", type=_count, help="solver threads (exact methods)")
    solve.add_argument("--warm-start", help="schedule file to start from (exact methods)")
    solve.add_argument(
        "--predictor",
        default=online.predictor,
        choices=predictors,
        help="iteration predictor (online methods)",
    )
    solve.add_argument(
        "--mapper",
        choices=MAPPERS.names(),
        help="GPU mapper replacing the policy's own (online methods)",
    )
    solve.add_argument("--seed", type=_seed, default=0)
    solve.add_argument("--out", help="write the schedule here")
    solve.add_argument("--json", action="store_true")
    solve.add_argument("--verbose", action="store_true", help="show the solver log")
    solve.set_defaults(handler=_cmd_solve)

    def replay_options(cmd: argparse.ArgumentParser, required: bool = True) -> None:
        from ddlsched.core.traces import FIELDS, TIME_UNITS, UNNAMED_RULES

        cmd.add_argument(
            "--trace",
            required=required,
            help="CSV trace: philly, muri, tiresias, or minimal (submit time, duration, GPUs)",
        )
        cmd.add_argument(
            "--columns",
            help=f"map fields to your columns, e.g. submit=submission_time,gpus=num_gpu "
            f"(fields: {', '.join(FIELDS)})",
        )
        cmd.add_argument(
            "--time-unit",
            choices=list(TIME_UNITS),
            help="unit of numeric submit and duration columns (default: the format's)",
        )
        cmd.add_argument(
            "--unnamed",
            choices=UNNAMED_RULES,
            default=UNNAMED_RULES[0],
            help="how rows without a known model become jobs (see the README)",
        )
        cmd.add_argument("--servers", type=_count, default=256, help="servers of the cluster")
        cmd.add_argument("--gpus-per-server", type=_count, default=8, help="GPUs per server")
        cmd.add_argument("--bandwidth-intra", type=_positive, default=20.0, help="GB/s")
        cmd.add_argument("--bandwidth-inter", type=_positive, default=1.0, help="GB/s")
        cmd.add_argument(
            "--gpu-types",
            type=_type_list(_count),
            help="a mixed cluster: servers per type adding up to --servers, e.g. "
            "v100:64,k80:192 (per-type times from Gavel's measurements)",
        )
        cmd.add_argument("--limit", type=_count, help="only the first N jobs by submit time")
        load = cmd.add_mutually_exclusive_group()
        load.add_argument(
            "--load-factor", type=_positive, help="compress inter-arrival times by this factor"
        )
        load.add_argument(
            "--target-load", type=_positive, help="compress arrivals to this offered load"
        )

    sim = command("simulate", help="replay a real trace with an online policy")
    replay_options(sim)
    sim.add_argument(
        "--policy", default=POLICIES.names()[0], choices=POLICIES.names(), help="online policy"
    )
    sim.add_argument(
        "--predictor", default=online.predictor, choices=predictors, help="iteration predictor"
    )
    sim.add_argument("--mapper", choices=MAPPERS.names(), help="replaces the policy's own")
    sim.add_argument(
        "--restart-cost",
        type=_non_negative,
        help="seconds a preempted job restores on resuming (None: the policy's reference "
        f"value: 0 for las-tiresias, else {DEFAULT_RESTART_COST:g})",
    )
    sim.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default=online.placement,
        help="any free GPUs, consolidated only (wait, as YARN), or consolidated when possible",
    )
    sim.add_argument("--seed", type=_seed, default=0)
    sim.add_argument("--out", help="write the schedule here")
    sim.add_argument("--plot", help="write a figure (JCT CDF; Gantt chart if small) to this PNG")
    sim.add_argument("--json", action="store_true")
    sim.set_defaults(handler=_cmd_simulate)

    bound = command("bound", help="proven lower bounds on OPT(A) of an instance or a trace")
    bound.add_argument("instance", nargs="?", help="an instance file (or use --trace)")
    replay_options(bound, required=False)
    bound.add_argument("--seed", type=_seed, default=0, help="model draws of trace rows")
    bound.add_argument("--lp", action="store_true", help="also the LP relaxation (slower)")
    bound.add_argument(
        "--lp-max-variables",
        type=_big_count,
        default=400_000,
        help="the LP's size (sets its slot)",
    )
    bound.add_argument("--lp-time-limit", type=_positive, default=300.0, help="seconds for the LP")
    bound.add_argument("--json", action="store_true")
    bound.set_defaults(handler=_cmd_bound)

    check = command("check", help="check every claim of the theory by computation")
    check.add_argument("instance", nargs="?", help="an instance file (or use --random)")
    check.add_argument("--random", type=_count, metavar="N", help="check N generated instances")
    check.add_argument(
        "--adversarial",
        type=_count,
        metavar="N",
        help="search N hypothesis examples for a high asrpt / OPT(A)",
    )
    check.add_argument("--servers", type=_count, help="servers (default 2, or --gpu-types')")
    check.add_argument(
        "--gpu-types",
        type=_type_list(_count),
        help="--random on mixed clusters: servers per GPU type, e.g. v100:1,k80:1",
    )
    check.add_argument("--gpus-per-server", type=_count, default=2)
    check.add_argument("--jobs", type=_count, default=4)
    check.add_argument("--load", type=_positive, default=None)
    check.add_argument("--seed", type=_seed, default=0)
    check.add_argument("--time-limit", type=_positive, default=60.0)
    check.add_argument(
        "--out-dir", default=OUT, help="where violating and adversarial instances are written"
    )
    check.add_argument("--json", action="store_true")
    check.set_defaults(handler=_cmd_check)

    predict = command("predict", help="iteration prediction for recurring jobs")
    predict_sub = predict.add_subparsers(dest="predict_command", required=True)
    evaluate = predict_sub.add_parser(
        "evaluate",
        help="random forest vs baselines, chronological split",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    evaluate.add_argument(
        "--trace", help="a CSV with the target column (default: a generated recurring history)"
    )
    evaluate.add_argument("--target", default="iterations")
    evaluate.add_argument("--jobs", type=_count, default=3000, help="generated history size")
    evaluate.add_argument("--seed", type=_seed, default=0)
    evaluate.add_argument(
        "--retrain-every",
        type=_count,
        help="refit the forest every N predicted jobs (default: 250, or 1/20 of the "
        "predicted jobs when more, so a long trace costs at most ~20 fits)",
    )
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(handler=_cmd_predict)

    sweep = command("sweep", help="run a grid of experiments on Dask, results in SQLite")
    sweep.add_argument("config", help="TOML file with a [sweep] table")
    sweep.add_argument(
        "--scheduler", help="address of a running Dask scheduler (default: start a local cluster)"
    )
    sweep.add_argument("--workers", type=_count, default=2, help="local cluster workers")
    sweep.add_argument("--results", default=f"{OUT}/results.sqlite", help="SQLite results file")
    sweep.set_defaults(handler=_cmd_sweep)

    results = command("results", help="summarise a sweep's results file")
    results.add_argument("results")
    results.add_argument("--json", action="store_true")
    results.set_defaults(handler=_cmd_results)

    info = command("info", help="describe an instance: alpha_min, alpha_max, rho")
    info.add_argument("instance")
    info.add_argument("--json", action="store_true")
    info.set_defaults(handler=_cmd_info)
    return parser


_UNWINDING_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""Signals turned into a clean exit ``128 + signal`` (SIGINT is Python's KeyboardInterrupt)."""


def _terminated(signum: int, frame: object) -> NoReturn:
    print("ddlsched: terminated", file=sys.stderr)
    raise SystemExit(128 + signum)


def _one_line(message: object) -> str:
    return " ".join(str(message).split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ddlsched``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        # `kill` (SIGTERM) and a closed terminal or ssh session (SIGHUP) unwind like Ctrl-C,
        # so solver children are stopped, not orphaned, and partial results are kept; the
        # caller's handlers are back when main() returns (tests call it in-process).
        previous = {
            number: signal.signal(number, _terminated) for number in _UNWINDING_SIGNALS
        }
    try:
        return int(args.handler(args))
    except InputError as error:
        print(f"ddlsched: error: {_one_line(error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("ddlsched: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader (e.g. "| head") stopped listening: not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except OSError as error:
        # A file we were asked to read or write: name it and the reason.
        where = f"{error.filename}: " if error.filename else ""
        print(f"ddlsched: error: {where}{_one_line(error.strerror or error)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as error:
        if "null byte" not in str(error):
            return _internal_error(error)
        # The operating system's own refusal of a file name such as "a\x00b".
        print("ddlsched: error: a file name contains a NUL byte", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:
        return _internal_error(error)
    finally:
        if in_main_thread:
            for number, handler in previous.items():
                signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def _internal_error(error: Exception) -> int:
    """One line for a bug (exit 3); the traceback with ``DDLSCHED_DEBUG=1``."""
    if os.environ.get("DDLSCHED_DEBUG"):
        raise error
    print(
        f"ddlsched: internal error (a bug, please report it): {type(error).__name__}: "
        f"{_one_line(error)}; set DDLSCHED_DEBUG=1 for the traceback",
        file=sys.stderr,
    )
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
