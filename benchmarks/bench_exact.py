"""The exact backends side by side: HiGHS MILP and CP-SAT on the same integral instances.

Instances from ``GeneratorConfig.exact_friendly`` (Poisson arrivals at load 1); the two
methods alternate on each instance, one thread each, the same time limit. Per size:
how many optima each proved, the median wall time of the whole call (child process
start-up included for CP-SAT), the median gap ``(objective - bound) / objective``, and
the ratio of median times. Where both prove optimality the optima must agree (asserted).

    python benchmarks/bench_exact.py --sizes 4x4:16 4x4:20 4x4:24 --seeds 3
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time

from ddlsched import ExactParams, GeneratorConfig, generate, solve

METHODS = ("milp", "cpsat")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["4x4:16", "4x4:20", "4x4:24"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    params = ExactParams(time_limit=args.time_limit, threads=1)
    print(
        f"# exact backends, {platform.machine()}, {time.strftime('%Y-%m-%d')}, one thread each, "
        f"limit {args.time_limit:g} s, {args.seeds} seeds"
    )
    print(
        "| cluster | jobs | milp proven | milp median s | milp median gap | cpsat proven "
        "| cpsat median s | cpsat median gap | cpsat / milp median time |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for size in args.sizes:
        shape, jobs = size.split(":")
        servers, gpus = (int(x) for x in shape.split("x"))
        stats = {m: {"proven": 0, "times": [], "gaps": []} for m in METHODS}
        for seed in range(args.seeds):
            instance = generate(
                GeneratorConfig.exact_friendly(int(jobs), servers, gpus, 1.0), seed
            )
            order = METHODS if seed % 2 == 0 else METHODS[::-1]
            results = {}
            for method in order:
                began = time.perf_counter()
                results[method] = solve(instance, method, params=params, bound=False)
                stats[method]["times"].append(time.perf_counter() - began)
                result = results[method]
                stats[method]["proven"] += result.proven_optimal
                gap = result.gap
                stats[method]["gaps"].append(gap if math.isfinite(gap) else 1.0)
            if all(r.proven_optimal for r in results.values()):
                values = [r.objective for r in results.values()]
                assert abs(values[0] - values[1]) <= 1e-6 * max(values), (size, seed, values)
        cells = []
        for method in METHODS:
            s = stats[method]
            cells += [
                f"{s['proven']}/{args.seeds}",
                f"{statistics.median(s['times']):.1f}",
                f"{statistics.median(s['gaps']):.3f}",
            ]
        ratio = statistics.median(stats["cpsat"]["times"]) / statistics.median(
            stats["milp"]["times"]
        )
        print(f"| {shape} | {jobs} | " + " | ".join(cells) + f" | {ratio:.2f} |", flush=True)


if __name__ == "__main__":
    main()
