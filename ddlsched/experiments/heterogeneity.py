"""What GPU heterogeneity costs and gains: every method and the optimum on mixed clusters.

For each seed an integral instance is drawn on a mixed cluster (Gavel's
measured per-type compute times, :mod:`ddlsched.core.zoo`) and the **same
jobs** are also put on a cluster of the same shape whose servers all have
the fastest type. On both, the exact optimum of problem A and every online
policy run, each schedule checked by the independent verifier. A row says
how far each method is from its own cluster's optimum, and the two optima
say what the slower GPUs cost.

``rho`` is split the same way: on the all-fast cluster it is placement only
(one type), on the mixed one placement and type together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from ddlsched.core.alpha import rho
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance
from ddlsched.core.params import ExactParams


def fastest_type(instance: Instance) -> str:
    """The type on which the jobs' total compute time is least."""
    cluster = instance.cluster
    return min(cluster.types, key=lambda t: sum(job.compute_on(t) for job in instance.jobs))


def heterogeneity_study(
    jobs: int = 10,
    gpu_types: Sequence[tuple[str, int]] = (("v100", 1), ("k80", 1)),
    gpus_per_server: int = 4,
    instances: int = 5,
    seed: int = 0,
    methods: Sequence[str] | None = None,
    time_limit: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """One row per seed, cluster (``"mixed"``, ``"all <fastest>"``) and method.

    Columns: ``seed``, ``cluster``, ``method`` (``"optimum"`` for the exact
    one), ``objective`` (sum of weighted completion times), ``ratio`` (to the
    same cluster's optimum), ``proven`` (the optimum was proven),
    ``verified`` (the verifier accepted the schedule), ``rho``.

    Raises
    ------
    ValueError
        Naming a bad setting (unknown method or type, sizes).
    """
    from ddlsched.algorithms.registry import POLICIES
    from ddlsched.api import simulate, solve
    from ddlsched.proofs_checks.verifier import verify

    names = list(methods or POLICIES.names())
    POLICIES.check(names, "methods")
    servers = sum(count for _, count in gpu_types)
    config = GeneratorConfig.exact_friendly(jobs, servers, gpus_per_server, load=1.0).replace(
        gpu_types=tuple(gpu_types)
    )
    rows = []
    for k in range(instances):
        mixed = generate(config, seed + k)
        fast = fastest_type(mixed)
        uniform = mixed.replace(
            cluster=mixed.cluster.replace(server_types=(fast,) * mixed.cluster.num_servers)
        )
        for label, instance in (("mixed", mixed), (f"all {fast}", uniform)):
            optimum = solve(instance, "exact", params=ExactParams(time_limit=time_limit))
            spread = rho(instance).rho.value
            results = {"optimum": optimum}
            results.update({name: simulate(instance, name, seed=seed + k) for name in names})
            for name, result in results.items():
                schedule = result.schedule
                rows.append(
                    {
                        "seed": seed + k,
                        "cluster": label,
                        "method": name,
                        "objective": result.objective,
                        "ratio": result.objective / optimum.objective,
                        "proven": optimum.proven_optimal,
                        "verified": schedule is not None and verify(instance, schedule).feasible,
                        "rho": spread,
                    }
                )
        if progress is not None:
            progress(k + 1, instances)
    return pd.DataFrame(rows)
