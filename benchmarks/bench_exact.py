"""The exact backends side by side: HiGHS MILP, CP-SAT and the portfolio on the same instances.

Instances from ``GeneratorConfig.exact_friendly`` in two families: ``spread`` (Poisson
arrivals at load 1) and ``batch`` (every job released at 0, where the fluid bounds are
weakest); the methods take turns on each instance (the order rotates with the seed), the MILP and
CP-SAT one thread each, the portfolio ``exact`` both at once (two cores), the same
time limit. Per size:
how many optima each proved, the median wall time of the whole call (child process
start-up included for CP-SAT), the median gap ``(objective - bound) / objective``, and
the ratios of median times. Every gap is certified: measured from the largest valid bound
known (the solver's, the combinatorial ones and, in the portfolio, the LP;
:mod:`ddlsched.formulations.certify`), for CP-SAT alone too. ``worst over`` is the largest wall
time past the limit (a limit is a limit: it should stay under 1 s). Where two prove
optimality the optima must agree (asserted).

    python benchmarks/bench_exact.py --families spread batch --sizes 4x4:16 4x4:24 4x8:32
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time

from ddlsched import ExactParams, GeneratorConfig, generate, solve

METHODS = ("milp", "cpsat", "exact")
FAMILIES = {"spread": 1.0, "batch": None}
"""Each family's load (``None``: all jobs released at 0)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["4x4:16", "4x4:24", "4x8:32"])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--methods", nargs="+", default=["cpsat", "exact"], choices=METHODS)
    args = parser.parse_args()
    methods = tuple(args.methods)
    params = ExactParams(time_limit=args.time_limit, threads=1)
    print(
        f"# exact backends, {platform.machine()}, {time.strftime('%Y-%m-%d')}, one thread each "
        f"(exact: two), limit {args.time_limit:g} s, {args.seeds} seeds"
    )
    columns = ("proven", "median s", "median gap", "worst over s")
    head = [f"{m} {c}" for m in methods for c in columns]
    ratios = [f"{m} / cpsat median time" for m in methods if m != "cpsat" and "cpsat" in methods]
    print("| family | cluster | jobs | " + " | ".join(head + ratios) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in head + ratios) + " |")
    for family, size in ((f, s) for f in args.families for s in args.sizes):
        shape, jobs = size.split(":")
        servers, gpus = (int(x) for x in shape.split("x"))
        stats = {m: {"proven": 0, "times": [], "gaps": []} for m in methods}
        for seed in range(args.seeds):
            instance = generate(
                GeneratorConfig.exact_friendly(int(jobs), servers, gpus, FAMILIES[family]), seed
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
                f"{max(s['times']) - args.time_limit:.2f}",
            ]
        if "cpsat" in methods:
            base = statistics.median(stats["cpsat"]["times"])
            cells += [
                f"{statistics.median(stats[m]['times']) / base:.2f}"
                for m in methods
                if m != "cpsat"
            ]
        print(f"| {family} | {shape} | {jobs} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
