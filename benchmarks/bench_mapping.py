"""Benchmark: the GPU-mapping heuristic, its speed and its quality.

Speed: median time of one ``GraphMapper`` call for a 64-worker job spanning
8 servers of 8 GPUs (a (dp=8, tp=8) GPT-2 job and a 64-replica ring), over
``--calls`` calls. Quality: on random small graphs and random free GPUs,
``alpha_heuristic / alpha_optimal`` where the optimum is the exact mapping
MILP over the same free GPUs (:mod:`ddlsched.formulations.mapping`); prints the
share within 5%, the median, the 95th percentile and the worst.

    python benchmarks/bench_mapping.py
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
from ddlsched.algorithms.mapping import GraphMapper
from ddlsched.formulations.mapping import solve_mapping

from ddlsched.core.alpha import alpha
from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import Cluster, Job, Parallelism
from ddlsched.core.zoo import get_profile


def speed(calls: int) -> None:
    """A fragmented cluster: 10 servers of 8 GPUs with 7 free each, so a
    64-worker job must span 10 servers and be partitioned into 7+...+1 parts; then the
    same call again on the same mapper (a resumed job: its partition is remembered)."""
    cluster = Cluster.uniform(10, 8, 20.0, 1.0)
    free = [7] * 10
    cases = {
        "gpt2_xl (dp=8, tp=8)": ("gpt2_xl", Parallelism(dp=8, pp=1, tp=8)),
        "resnet50 (dp=64 ring)": ("resnet50", Parallelism(dp=64)),
        "megatron_8b (dp=2, pp=4, tp=8)": ("megatron_8b", Parallelism(dp=2, pp=4, tp=8)),
    }
    for name, (model, shape) in cases.items():
        compute, edges = build_job_graph(get_profile(model), shape)
        job = Job(id="j", release=0, iterations=1, compute_time=compute, gpus=64, edges=edges)
        durations, repeats = [], []
        for _ in range(calls):
            mapper = GraphMapper()  # a fresh one: its partition cache would answer at once
            began = time.perf_counter()
            mapping = mapper(job, cluster, free)
            durations.append(time.perf_counter() - began)
            began = time.perf_counter()
            mapper(job, cluster, free)  # the same job resumed on the same sizes: cached
            repeats.append(time.perf_counter() - began)
        assert mapping is not None
        print(
            f"| {name} | 64 | {statistics.median(durations) * 1e3:.3f} ms | "
            f"{statistics.median(repeats) * 1e3:.3f} ms | {alpha(job, cluster, mapping):.4g} |"
        )


def quality(graphs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    mapper = GraphMapper()
    ratios = []
    for _ in range(graphs):
        servers = int(rng.integers(2, 5))
        per_server = int(rng.integers(2, 5))
        cluster = Cluster.uniform(servers, per_server, float(rng.choice([2.0, 10.0])), 1.0)
        free = [int(rng.integers(1, per_server + 1)) for _ in range(servers)]
        gpus = int(rng.integers(2, sum(free) + 1))
        pairs = [(u, v) for u in range(gpus) for v in range(u + 1, gpus)]
        keep = rng.random(len(pairs)) < float(rng.uniform(0.2, 0.7))
        edges = tuple(
            (u, v, float(rng.choice([0.25, 1.0, 4.0])))
            for (u, v), k in zip(pairs, keep, strict=True)
            if k
        )
        job = Job(id="r", release=0, iterations=1, compute_time=1.0, gpus=gpus, edges=edges)
        mapping = mapper(job, cluster, free)
        assert mapping is not None
        exact = solve_mapping(job, cluster, free)
        ratios.append(alpha(job, cluster, mapping) / exact.alpha)
    data = np.array(ratios)
    print(
        f"{graphs} random graphs (2-4 servers of 2-4 GPUs, random free GPUs, 2..free nodes): "
        f"within 5% of optimal {np.mean(data <= 1.05):.1%}, median {np.median(data):.4f}, "
        f"p95 {np.percentile(data, 95):.4f}, worst {data.max():.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--graphs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"# GPU-mapping heuristic, {platform.machine()}, {time.strftime('%Y-%m-%d')}")
    print("| job | workers | median call | same job again (cached) | alpha (s/iteration) |")
    print("| --- | --- | --- | --- | --- |")
    speed(args.calls)
    print()
    quality(args.graphs, args.seed)


if __name__ == "__main__":
    main()
