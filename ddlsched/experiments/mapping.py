"""How good is a GPU mapper? Each against the exact mapping MILP.

Zoo job graphs of growing size are mapped onto randomly fragmented free
GPUs by every mapper of :data:`ddlsched.algorithms.registry.MAPPERS` and by the
exact capacitated min-cut (:func:`ddlsched.formulations.mapping.solve_mapping`);
the ratio ``alpha(mapper) / alpha(exact)`` is 1 for an optimal mapping.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ddlsched.core.alpha import alpha
from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import Cluster, Job, Parallelism
from ddlsched.core.result import SolveStatus
from ddlsched.core.zoo import get_profile


def _shapes(gpus: int) -> list[tuple[str, Parallelism]]:
    """Three kinds of job of ``gpus`` workers: tensor groups, a data-parallel ring, 3D."""
    shapes = [
        ("bert_base", Parallelism(dp=max(1, gpus // 2), tp=2)),
        ("resnet50", Parallelism(dp=gpus)),
        ("gpt2_xl", Parallelism(dp=max(1, gpus // 4), pp=min(2, max(1, gpus // 2)), tp=2)),
    ]
    return [(model, shape) for model, shape in shapes if shape.gpus == gpus]


def mapping_quality(
    sizes: Sequence[int],
    seed: int = 0,
    cluster: Cluster | None = None,
    mappers: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per job size, model and mapper: ``alpha / alpha_exact`` and the time taken.

    Parameters
    ----------
    sizes
        Job sizes (workers) to try.
    seed
        Seeds the free GPUs and the random mapper.
    cluster
        Default: 6 servers of 4 GPUs, 20 and 1 GB/s.
    mappers
        Names of :data:`ddlsched.algorithms.registry.MAPPERS` (default: all).
    """
    from ddlsched.algorithms.registry import MAPPERS
    from ddlsched.formulations.mapping import solve_mapping

    rng = np.random.default_rng(seed)
    cluster = cluster or Cluster.uniform(6, 4, 20.0, 1.0)
    names = list(mappers or MAPPERS.names())
    MAPPERS.check(names, "mappers")
    built = {name: MAPPERS[name](rng) for name in names}
    rows = []
    for gpus in sizes:
        for model, shape in _shapes(gpus):
            compute, edges = build_job_graph(get_profile(model), shape)
            job = Job(
                id=model, release=0, iterations=1, compute_time=compute, gpus=gpus, edges=edges
            )
            free = [
                int(x)
                for x in rng.integers(1, cluster.max_gpus_per_server + 1, size=cluster.num_servers)
            ]
            if sum(free) < gpus:
                free = list(cluster.gpus_per_server)
            exact = solve_mapping(job, cluster, free)
            for name, mapper in built.items():
                began = time.perf_counter()
                mapping = mapper(job, cluster, free)
                if mapping is None:  # pragma: no cover - the free GPUs always fit the job
                    raise RuntimeError(f"mapper {name!r} found no GPUs for {model}")
                elapsed = time.perf_counter() - began
                rows.append(
                    {
                        "gpus": gpus,
                        "model": model,
                        "mapper": name,
                        "ratio": alpha(job, cluster, mapping) / exact.alpha,
                        "exact_proven": exact.status is SolveStatus.OPTIMAL,
                        "ms": elapsed * 1e3,
                        "exact_s": exact.runtime_s,
                    }
                )
    return pd.DataFrame(rows)
