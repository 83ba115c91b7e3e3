"""``ddlsched predict evaluate``: the iteration predictors on a history, chronologically."""

from __future__ import annotations

import argparse

from ddlsched.cli.options import (
    EXIT_OK,
    Commands,
    add_json,
    add_seed,
    count,
    new_command,
    refuse_given,
)
from ddlsched.cli.output import print_json, print_table


def add(commands: Commands) -> None:
    """Register the command and its subcommand."""
    predict = new_command(commands, "predict")
    predict_sub = predict.add_subparsers(dest="predict_command", required=True)
    evaluate = new_command(
        predict_sub, "evaluate", "random forest vs baselines, chronological split"
    )
    evaluate.add_argument(
        "--trace", help="a CSV with the target column (default: a generated recurring history)"
    )
    evaluate.add_argument("--target", default="iterations", help="the column predicted")
    evaluate.add_argument("--jobs", type=count, default=3000, help="generated history size")
    add_seed(evaluate)
    evaluate.add_argument(
        "--retrain-every",
        type=count,
        help="refit the forest every N predicted jobs (default: 250, or 1/20 of the "
        "predicted jobs when more, so a long trace costs at most ~20 fits)",
    )
    add_json(evaluate)
    evaluate.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Fit and score the predictors; print one row each and the verdict."""
    from ddlsched.core.recurring import WorkloadConfig, recurring_history
    from ddlsched.experiments.prediction import evaluate, history_frame

    if args.trace:
        refuse_given(args, ("--jobs",), "the size of a generated history; --trace gives the jobs")
        from ddlsched.core.data import resolve_trace
        from ddlsched.core.io import check_regular_file

        args.trace = str(resolve_trace(args.trace))  # a bare name: the data folder's file
        check_regular_file(args.trace, "CSV file")
        frame = history_frame(args.trace)
        source = args.trace
    else:
        history = recurring_history(WorkloadConfig(jobs=args.jobs), args.seed)
        frame = history.drop(columns=["group"])
        source = f"generated history ({args.jobs} jobs, seed {args.seed})"
    report = evaluate(
        frame, target=args.target, retrain_every=args.retrain_every, seed=args.seed, source=source
    )
    if args.json:
        print_json(report)
        return EXIT_OK
    print(
        f"{source}: {report['train_jobs']} history jobs, {report['test_jobs']} predicted "
        f"(chronological; forest refitted every {report['retrain_every']} jobs)"
    )
    print(f"features: {', '.join(report['features'])}")
    print_table(
        ("predictor", "MAE", "median rel. error", "R^2", "within 10%", "within 25%", "within 50%"),
        [
            (name, f"{m['mae']:.4g}", f"{m['median_rel_error']:.3f}", f"{m['r2']:.3f}",
             f"{m['within_10']:.1%}", f"{m['within_25']:.1%}", f"{m['within_50']:.1%}")
            for name, m in report["predictors"].items()
        ],
    )  # fmt: skip
    print(f"verdict: {report['verdict']}")
    return EXIT_OK
