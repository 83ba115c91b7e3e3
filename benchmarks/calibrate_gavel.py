"""Calibration: the alpha model against Gavel's consolidated and spread throughputs.

Gavel (Narayanan et al., *Heterogeneity-Aware Cluster Scheduling Policies for
Deep Learning Workloads*, OSDI 2020; stanford-futuredata/gavel, MIT) measured
each job's throughput on K80, P100 and V100 GPUs with its workers on one
server ("consolidated") and spread over servers ("unconsolidated"):
``profiles/gavel_throughputs.csv`` (shipped, :mod:`ddlsched.core.data`). For every row whose model
the
zoo holds (ResNet-50 and ResNet-18; the other multi-GPU rows, Transformer and
the LSTM LM, have no zoo graph of the same size, and A3C, CycleGAN and
Recommendation were measured on one GPU only), this prints:

- the measured slowdown of spreading, ``steps/s consolidated / steps/s spread``;
- the model's ``alpha(spread) / alpha(one server)`` for the zoo job run data
  parallel on that many GPUs, with Gavel's own one-GPU step time on that type
  as the compute time and the default bandwidths (``B_intra`` 20, ``B_inter``
  1 GB/s). Spread is read as one worker per server, every edge cut *(an
  assumption: the file does not say over how many servers)*;
- the ``B_inter`` that makes the model reproduce the measured slowdown at
  ``B_intra = 20`` (``nan`` where the measured slowdown is below 1 + nothing,
  i.e. spreading cost less than the model's compute alone allows).

    python benchmarks/calibrate_gavel.py [--batch 32]

``--batch`` prints only rows of that batch size (the summary covers every row).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics

from ddlsched.core.alpha import alpha
from ddlsched.core.data import data_path
from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import Cluster, Job, Parallelism
from ddlsched.core.zoo import get_profile

B_INTRA, B_INTER = 20.0, 1.0
MODELS = {"ResNet-50": "resnet50", "ResNet-18": "resnet18_cifar10"}


def throughputs() -> dict[tuple[str, str, str, int], float]:
    """Steps per second keyed by (type, model, batch size, GPUs)."""
    with data_path("profiles", "gavel_throughputs.csv").open() as stream:
        return {
            (row["gpu_type"], row["model"], row["batch_size"], int(row["scale_factor"])): float(
                row["steps_per_second"]
            )
            for row in csv.DictReader(stream)
        }


def rows() -> list[tuple[str, str, str, int, float, float, float]]:
    """(model, batch, type, GPUs, measured slowdown, model slowdown, fitted B_inter)."""
    speed = throughputs()
    out = []
    for (kind, model, batch, gpus), together in sorted(speed.items()):
        spread = speed.get((f"{kind}_unconsolidated", model, batch, gpus))
        if model not in MODELS or gpus < 2 or spread is None or kind.endswith("unconsolidated"):
            continue
        compute = 1.0 / speed[(kind, model, batch, 1)]
        _, edges = build_job_graph(get_profile(MODELS[model]), Parallelism(dp=gpus))
        job = Job(id=model, release=0, iterations=1, compute_time=compute, gpus=gpus, edges=edges)
        one = alpha(job, Cluster((gpus,), B_INTRA, B_INTER), (0,) * gpus)
        apart = alpha(job, Cluster((1,) * gpus, B_INTRA, B_INTER), tuple(range(gpus)))
        measured = together / spread
        # measured = (c + Q / B) / (c + Q / B_intra)  =>  B = Q / (measured * one - c)
        rest = measured * one - compute
        fitted = job.total_traffic / rest if rest > 0 else math.nan
        out.append((model, batch, kind, gpus, measured, apart / one, fitted))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="alpha against Gavel's spread slowdowns")
    parser.add_argument("--batch", help="print only rows of this batch size")
    args = parser.parse_args()
    table = rows()
    print(
        "| Gavel model | batch | type | GPUs | measured consolidated/spread | "
        "model (B_intra 20, B_inter 1) | fitted B_inter (GB/s) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for model, batch, kind, gpus, measured, predicted, fitted in table:
        if args.batch is not None and batch != args.batch:
            continue
        print(
            f"| {model} | {batch} | {kind} | {gpus} | {measured:.2f} | {predicted:.2f} | "
            f"{fitted:.2f} |"
        )
    ratios = [predicted / measured for *_, measured, predicted, _ in table]
    fits = [fitted for *_, fitted in table if fitted == fitted]
    print(
        f"\n{len(table)} rows; model / measured: median {statistics.median(ratios):.2f}, "
        f"range {min(ratios):.2f}-{max(ratios):.2f}; fitted B_inter median "
        f"{statistics.median(fits):.2f} GB/s (range {min(fits):.2f}-{max(fits):.2f})"
    )


if __name__ == "__main__":
    main()
