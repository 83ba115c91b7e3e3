"""The decomposition bound against the pooled bounds at the exact method's scale.

For each family (``generate --preset exact-friendly``: ``batch``, all released at 0, or
``spread``, Poisson arrivals at load 1) and seed, the instance is solved by ``solve(...,
method="exact")`` within ``--time-limit``; its objective is the truth when proven, else the
best verified schedule (marked ``*``: then bound / truth is only a lower end of bound /
OPT). Then, with windows from that objective, each bound is computed on the same grid:
the pooled LP (``lp``), the pooled integral bound (``pooled``, HiGHS stopped at
``--pooled-nodes`` nodes: its dual bound) and the decomposition bound
(:func:`ddlsched.formulations.decomposition.decomposition_bound`, within
``--time-limit``). Prints bound / truth and seconds per bound and instance, then the median
ratio per family. Asserts only validity (no bound above a verified objective), never a time.

    python benchmarks/bench_bounds_scale.py                       # the default families
    python benchmarks/bench_bounds_scale.py --families batch:24:4x4 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from ddlsched.formulations.decomposition import decomposition_bound
from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, time_indexed_bound

from ddlsched import ExactParams, GeneratorConfig, generate, solve
from ddlsched.core.model import Instance
from ddlsched.core.result import LowerBound, SolveStatus

FAMILIES = ("batch:24:4x4", "spread:24:4x4", "batch:32:4x8", "batch:48:4x8")
"""``arrivals:jobs:servers x GPUs`` of the default run."""


def _instance(family: str, seed: int) -> Instance:
    """The family's instance of ``seed`` (as ``ddlsched generate`` writes it)."""
    arrivals, jobs, shape = family.split(":")
    servers, gpus = (int(part) for part in shape.split("x"))
    load = 1.0 if arrivals == "spread" else None
    config = GeneratorConfig.exact_friendly(int(jobs), servers, gpus, load=load)
    return generate(config, seed)


def _bounds(
    instance: Instance, truth: float, time_limit: float, pooled_nodes: int
) -> list[LowerBound]:
    """The pooled LP, the pooled integral bound and the decomposition bound, with windows
    from ``truth`` (a verified objective)."""
    inputs = BoundInputs.of(instance)
    lp_settings = LpSettings(max_variables=20_000, threads=1, time_limit=time_limit)
    lp, _ = time_indexed_bound(instance, inputs, lp_settings, truth)
    pooled_settings = LpSettings(
        max_variables=5_000,
        threads=1,
        time_limit=time_limit,
        integer=True,
        node_limit=pooled_nodes,
    )
    pooled, _ = time_indexed_bound(instance, inputs, pooled_settings, truth)
    decomposition = decomposition_bound(instance, truth, time_limit=time_limit, inputs=inputs)
    return [lp, pooled, decomposition]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--pooled-nodes", type=int, default=20_000)
    args = parser.parse_args()
    print(
        f"# bound / truth, {platform.machine()}, {os.cpu_count()} cores, "
        f"{time.strftime('%Y-%m-%d')}, exact solve and each bound within "
        f"{args.time_limit:g} s; * = truth not proven (best verified schedule)"
    )
    print(f"{'family':>14} {'seed':>4} {'truth':>9} {'lp':>13} {'pooled':>13} {'decomp':>13}")
    ratios: dict[tuple[str, str], list[float]] = {}
    for family in args.families:
        for seed in args.seeds:
            instance = _instance(family, seed)
            began = time.perf_counter()
            params = ExactParams(time_limit=args.time_limit)
            result = solve(instance, method="exact", params=params, seed=seed)
            print(
                f"  solved {family} seed {seed} in {time.perf_counter() - began:.1f} s",
                file=sys.stderr,
            )
            truth = result.objective
            proven = result.status is SolveStatus.OPTIMAL
            cells = []
            for bound in _bounds(instance, truth, args.time_limit, args.pooled_nodes):
                assert not bound.valid or bound.value <= truth * (1 + 1e-7), (bound, truth)
                ratio = bound.value / truth if bound.valid else float("nan")
                ratios.setdefault((family, bound.name), []).append(ratio)
                cells.append(f"{ratio:.4f} {bound.runtime_s:5.1f}s")
            mark = "" if proven else "*"
            print(f"{family:>14} {seed:>4} {truth:>8.1f}{mark:1} " + " ".join(cells), flush=True)
    print("# median bound / truth per family")
    for (family, name), values in ratios.items():
        print(f"{family:>14} {name:>14} {statistics.median(values):.4f}")


if __name__ == "__main__":
    main()
