"""The exact backends side by side: HiGHS MILP, CP-SAT and the portfolio on the same instances.

Instances from ``GeneratorConfig.exact_friendly`` (Poisson arrivals at load 1); the
methods take turns on each instance (the order rotates with the seed), the MILP and
CP-SAT one thread each, the portfolio ``exact`` both at once (two cores), the same
time limit. Per size:
how many optima each proved, the median wall time of the whole call (child process
start-up included for CP-SAT), the median gap ``(objective - bound) / objective``, and
the ratios of median times. Where two prove optimality the optima must agree (asserted).

    python benchmarks/bench_exact.py --sizes 4x4:16 4x4:20 4x4:24 --seeds 3
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time

from ddlsched import ExactParams, GeneratorConfig, generate, solve

METHODS = ("milp", "cpsat", "exact")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["4x4:16", "4x4:20", "4x4:24"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    args = parser.parse_args()
    methods = tuple(args.methods)
    params = ExactParams(time_limit=args.time_limit, threads=1)
    print(
        f"# exact backends, {platform.machine()}, {time.strftime('%Y-%m-%d')}, one thread each "
        f"(exact: two), limit {args.time_limit:g} s, {args.seeds} seeds"
    )
    head = [f"{m} {c}" for m in methods for c in ("proven", "median s", "median gap")]
    ratios = [f"{m} / cpsat median time" for m in methods if m != "cpsat" and "cpsat" in methods]
    print("| cluster | jobs | " + " | ".join(head + ratios) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in head + ratios) + " |")
    for size in args.sizes:
        shape, jobs = size.split(":")
        servers, gpus = (int(x) for x in shape.split("x"))
        stats = {m: {"proven": 0, "times": [], "gaps": []} for m in methods}
        for seed in range(args.seeds):
            instance = generate(
                GeneratorConfig.exact_friendly(int(jobs), servers, gpus, 1.0), seed
            )
            shift = seed % len(methods)
            order = methods[shift:] + methods[:shift]
            results = {}
            for method in order:
                began = time.perf_counter()
                results[method] = solve(instance, method, params=params, bound=False)
                stats[method]["times"].append(time.perf_counter() - began)
                result = results[method]
                stats[method]["proven"] += result.proven_optimal
                gap = result.gap
                stats[method]["gaps"].append(gap if math.isfinite(gap) else 1.0)
            values = [r.objective for r in results.values() if r.proven_optimal]
            if len(values) > 1:
                assert max(values) - min(values) <= 1e-6 * max(values), (size, seed, values)
        cells = []
        for method in methods:
            s = stats[method]
            cells += [
                f"{s['proven']}/{args.seeds}",
                f"{statistics.median(s['times']):.1f}",
                f"{statistics.median(s['gaps']):.3f}",
            ]
        if "cpsat" in methods:
            base = statistics.median(stats["cpsat"]["times"])
            cells += [
                f"{statistics.median(stats[m]['times']) / base:.2f}"
                for m in methods
                if m != "cpsat"
            ]
        print(f"| {shape} | {jobs} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
