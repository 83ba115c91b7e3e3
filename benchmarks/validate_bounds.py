"""Validity of the lower bounds on many instances: every bound <= the proven optimum.

A long run of the property of ``tests/formulations/test_lower_bounds.py``: hypothesis
draws tiny instances (uneven servers, arbitrary graphs, weights 1 and 2, non-integral
releases) whose continuous optimum comes from enumeration (``tests/oracles.py``), and
integral generated instances of several shapes whose optimum the MILP proves. Every
bound, the LP included (also with windows from ``UB = OPT``), must be at most the
optimum. Prints how many instances were checked; any violation stops with the instance.

    python benchmarks/validate_bounds.py --tiny 2000 --milp 300
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ddlsched.formulations.lower_bounds import LpSettings, lower_bounds
from ddlsched.formulations.milp import solve_milp

from ddlsched import ExactParams, generate
from ddlsched.core.model import Instance
from tests.oracles import brute_force_a
from tests.strategies import TINY_INTEGRAL, hand_instances

LP = LpSettings(max_variables=5_000, time_limit=60)
COUNT = {"tiny": 0, "milp": 0, "bounds": 0}


def check(instance: Instance, optimum: float) -> None:
    found = lower_bounds(instance, lp=LP)
    found += lower_bounds(instance, names=[], lp=LP, upper_bound=optimum)
    for bound in found:
        assert bound.valid and bound.value <= optimum * (1 + 1e-9), (bound, optimum, instance)
        COUNT["bounds"] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", type=int, default=2000)
    parser.add_argument("--milp", type=int, default=300)
    args = parser.parse_args()
    began = time.perf_counter()
    options = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}

    @settings(max_examples=args.tiny, **options)
    @given(hand_instances(max_jobs=3))
    def tiny(instance: Instance) -> None:
        check(instance, brute_force_a(instance))
        COUNT["tiny"] += 1

    @settings(max_examples=args.milp, **options)
    @given(
        st.integers(0, 2**31),
        st.sampled_from([(1, 4), (2, 2), (2, 4), (3, 2), (3, 4)]),
        st.sampled_from([None, 1.0, 3.0]),
        st.integers(3, 7),
    )
    def milp(seed: int, shape: tuple[int, int], load: float | None, jobs: int) -> None:
        config = TINY_INTEGRAL.replace(
            num_jobs=jobs,
            servers=shape[0],
            gpus_per_server=shape[1],
            load=load,
            max_job_gpus=None,
        )
        instance = generate(config, seed)
        optimum = solve_milp(instance, "A", ExactParams(time_limit=60))
        if optimum.proven_optimal:
            check(instance, optimum.objective)
            COUNT["milp"] += 1

    tiny()
    milp()
    print(
        f"{COUNT['tiny']} tiny instances (enumerated optimum) and {COUNT['milp']} MILP-proven "
        f"instances: {COUNT['bounds']} bounds, none above the optimum "
        f"({time.perf_counter() - began:.0f} s)"
    )


if __name__ == "__main__":
    main()
