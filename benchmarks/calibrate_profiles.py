"""Calibration: the alpha model against Pollux's measured step times.

For each model with a Pollux profile, takes the measured step time of 4
GPUs on one node (placement "4") and on two nodes (placement "22") at the
zoo's batch size, and compares:

- the measured slowdown ``step("22") / step("4")``;
- the model's ``alpha(2+2 split) / alpha(one server)`` for the zoo job
  (dp = 4) under the default bandwidths (20 and 1 GB/s), and the model's
  ``alpha_max / alpha_min`` (every edge cut vs none);
- the bandwidths that make the model reproduce both measurements exactly:
  ``B_intra`` from the one-node time, then ``B_inter`` from the two-node
  one (``nan`` where the measured communication is below the model's
  compute, i.e. overlapped).

Source: ``profiles/pollux_*_placements.csv`` (shipped, :mod:`ddlsched.core.data`) (Qiao et al.,
Pollux, OSDI 2021; petuum/adaptdl, Apache-2.0).

    python benchmarks/calibrate_profiles.py
"""

from __future__ import annotations

import csv
import math

from ddlsched.core.alpha import alpha, alpha_max, alpha_min
from ddlsched.core.data import data_path
from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import Cluster, Job, Parallelism
from ddlsched.core.zoo import get_profile

PROFILES = data_path("profiles", "gavel_throughputs.csv").parent
MODELS = {
    "imagenet": "resnet50",
    "bert": "bert_base",
    "deepspeech2": "deepspeech2",
    "yolov3": "yolov3",
    "cifar10": "resnet18_cifar10",
}


def measured(name: str, batch: int) -> dict[str, float]:
    times: dict[str, list[float]] = {}
    with (PROFILES / f"pollux_{name}_placements.csv").open() as stream:
        for row in csv.DictReader(stream):
            if int(row["local_bsz"]) == batch:
                times.setdefault(row["placement"], []).append(float(row["step_time"]))
    return {placement: sum(v) / len(v) for placement, v in times.items()}


def main() -> None:
    print(
        "| Pollux profile | zoo model | step 1x4 (s) | step 2x2 (s) | measured 2x2/1x4 | "
        "model 2x2/1x4 | model alpha_max/alpha_min | fitted B_intra | fitted B_inter |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, model in MODELS.items():
        profile = get_profile(model)
        steps = measured(name, profile.batch_size)
        one, two = steps["4"], steps["22"]
        compute, edges = build_job_graph(profile, Parallelism(dp=4))
        job = Job(id=name, release=0, iterations=1, compute_time=compute, gpus=4, edges=edges)
        cluster = Cluster((4, 4), 20.0, 1.0)
        together = alpha(job, cluster, (0, 0, 0, 0))
        split = alpha(job, cluster, (0, 0, 1, 1))
        spread = Cluster((2, 2), 20.0, 1.0)
        ratio = alpha_max(job, spread).value / alpha_min(job, spread).value
        total = job.total_traffic
        cut = total - sum(q for u, v, q in edges if (u < 2) == (v < 2))
        b_intra = total / (one - compute) if one > compute else math.nan
        rest = two - compute - (total - cut) / b_intra if b_intra == b_intra else math.nan
        b_inter = cut / rest if rest == rest and rest > 0 else math.nan
        print(
            f"| {name} | {model} | {one:.3f} | {two:.3f} | {two / one:.2f} | "
            f"{split / together:.2f} | {ratio:.2f} | {b_intra:.1f} | {b_inter:.2f} |"
        )


if __name__ == "__main__":
    main()
