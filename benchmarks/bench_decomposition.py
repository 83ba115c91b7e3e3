"""Where a policy's total JCT goes on a trace: its order, servers and placement, the rest.

For each policy, the trace is run twice in the simulator
(:func:`ddlsched.sandwich.decompose_jct`): on the real cluster, and on the same jobs
*pooled* on one server of all ``M`` GPUs (no server boundary: every edge at the
intra-server bandwidth, any job placed whole). Each total (weighted) JCT is printed over
the project's proven flow lower bound of the real cluster:

- ``pooled / LB``: the policy's order alone (servers cost nothing);
- ``real / pooled``: what servers and placement add to the same order;
- ``GPU-time``: GPU-seconds the real run held over ``sum g_i K_i alpha_i^min`` (work
  inflated by slow spread mappings and restarts);
- the last rows: the best verified schedule of each model
  (:func:`ddlsched.algorithms.offline.best_upper_bound`, no local search) over the bound,
  with the seconds it took (all candidates, each verified run included); then each of
  problem A's candidate schedules over the bound (simulated totals; the winner verified).

The pooled cluster is a relaxation (no schedule of the real cluster is faster job by job),
so ``pooled / LB`` is not an upper bound; the ``best verified`` rows are.

    python benchmarks/bench_decomposition.py                  # full Philly on 32 x 8
    python benchmarks/bench_decomposition.py --target-load 0.9
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings

from ddlsched.algorithms.offline import best_upper_bound
from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES
from ddlsched.formulations.certify import combinatorial_bound
from ddlsched.formulations.lower_bounds import BoundInputs

from ddlsched.core.data import resolve_trace
from ddlsched.core.model import Cluster, Instance
from ddlsched.core.offered_load import at_load, offered_load
from ddlsched.core.traces import load_trace
from ddlsched.sandwich import decompose_jct, schedule_times

POLICIES = ("sjf", "asrpt", "asrpt-preemptive", "srpt-area")


def _instance(servers: int, gpus: int, target_load: float | None) -> Instance:
    cluster = Cluster.uniform(servers, gpus, 20.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        instance = load_trace(str(resolve_trace("philly_jobs.csv")), cluster, seed=0).instance
    return instance if target_load is None else at_load(instance, target_load)[0]


def _gpu_time(instance: Instance, schedule) -> float:
    """GPU-seconds held by the schedule's pieces."""
    times = schedule_times(instance, schedule)
    return float((times["gpus"] * times["held"]).sum())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=32)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--target-load", type=float)
    parser.add_argument("--policies", nargs="*", default=list(POLICIES))
    parser.add_argument(
        "--models", nargs="*", choices=("A", "preemptive"), default=["A", "preemptive"]
    )
    args = parser.parse_args()
    instance = _instance(args.servers, args.gpus_per_server, args.target_load)
    bound = combinatorial_bound(instance).flow_value
    inputs = BoundInputs.of(instance)
    ideal = float((inputs.gpus * inputs.processing).sum())
    print(
        f"# where the JCT goes: philly_jobs.csv on {args.servers} x {args.gpus_per_server}, "
        f"offered load {offered_load(instance):.2f}, {platform.machine()}, "
        f"{time.strftime('%Y-%m-%d')}, one run each (deterministic)"
    )
    print("| policy | model | pooled / LB | real / LB | real / pooled | GPU-time / at alpha_min |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in args.policies:
        split = decompose_jct(instance, name, bound)
        model = "preemptive" if name in PREEMPTIVE_POLICIES else "A"
        print(
            f"| {name} | {model} | {split.pooled / bound:.2f} | {split.real / bound:.2f} | "
            f"{split.real / split.pooled:.2f} | {split.gpu_time_ratio:.2f} |",
            flush=True,
        )
    candidates: dict[str, float] = {}
    for model in args.models:
        began, cpu = time.perf_counter(), time.process_time()
        found = best_upper_bound(instance, preemptive=model == "preemptive", evaluations=0)
        seconds = (
            f"{time.perf_counter() - began:.0f} s wall, {time.process_time() - cpu:.0f} s CPU"
        )
        candidates = found.metrics if model == "A" else candidates
        print(
            f"| best verified: {found.method} ({seconds}) | {model} | | "
            f"{found.total_jct / bound:.2f} | | "
            f"{_gpu_time(instance, found.schedule) / ideal:.2f} |",
            flush=True,
        )
    print(f"\nLB: the project's flow lower bound on the real cluster, {bound:.6g} s")
    if candidates:
        print(
            "\nProblem A's candidates, total JCT / LB: "
            + ", ".join(
                f"{name.removeprefix('total_jct:')} {value / bound:.2f}"
                for name, value in sorted(candidates.items(), key=lambda item: item[1])
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
