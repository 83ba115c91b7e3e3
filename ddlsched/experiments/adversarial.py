"""A hypothesis search for instances where guided A-SRPT is far from the optimum.

``hypothesis.target`` steers the search towards a high ``sum C(asrpt) /
OPT(A)``, to be compared with what Theorem 1 allows on the instance found.
"""

from __future__ import annotations

import tempfile

from ddlsched.api import simulate
from ddlsched.core.graphs import ring_edges
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams


def adversarial_theorem1(
    servers: int, gpus_per_server: int, jobs: int, examples: int, seed: int = 0
) -> tuple[float, float, Instance | None]:
    """Search for instances where guided A-SRPT is far from OPT(A).

    Hypothesis draws integral instances (data-parallel ring jobs with
    drawn sizes, iteration counts, compute and traffic on the slot grid,
    and releases) and is steered by ``hypothesis.target`` towards a high
    ``sum C(asrpt) / OPT(A)``. Returns ``(worst ratio, Theorem 1 factor
    (2 + M/(M - g_max + 1)) * rho on that instance, the instance)``. The
    search is reproducible: seeded by ``seed`` (never derandomized, whose seed is a digest
    of the search function's source text, so that an edit of its code alone would change
    the instances found); it keeps no example database (nothing is written to the
    working directory).
    """
    from ddlsched.core.extras import require

    require("hypothesis", "the adversarial search")
    from hypothesis import HealthCheck, given, settings, target
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    from ddlsched.formulations.milp import solve_milp
    from ddlsched.proofs_checks.bounds import rho_of, theorem1_constant

    cluster = Cluster.uniform(servers, gpus_per_server, 2.0, 1.0)
    # (ratio, factor, instance) of the worst instance found so far
    worst: list[tuple[float, float, Instance | None]] = [(0.0, 0.0, None)]

    @st.composite
    def instances(draw: st.DrawFn) -> Instance:
        made = []
        for k in range(jobs):
            gpus = draw(st.integers(1, cluster.num_gpus))
            iterations = draw(st.integers(1, 3))
            unit = 1.0 / iterations
            compute = draw(st.integers(1, 4)) * unit
            traffic = draw(st.integers(1, 3)) * unit * cluster.bandwidth_intra
            made.append(
                Job(
                    id=f"j{k}",
                    release=float(draw(st.integers(0, 6))),
                    iterations=iterations,
                    compute_time=compute,
                    gpus=gpus,
                    edges=ring_edges(gpus, traffic),
                )
            )
        return Instance(cluster, tuple(made))

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(instances())
    def search(instance: Instance) -> None:
        optimum = solve_milp(instance, "A", ExactParams(time_limit=30))
        if not optimum.proven_optimal:
            return
        online = simulate(instance, "asrpt")
        ratio = online.objective / optimum.objective
        target(ratio, label="asrpt / OPT(A)")
        if ratio > worst[0][0]:
            constant = theorem1_constant(cluster.num_gpus, instance.max_job_gpus)
            worst[0] = (ratio, constant * rho_of(instance).rho, instance)

    import hypothesis.configuration as configuration

    previous = getattr(configuration, "__hypothesis_home_directory", None)
    with tempfile.TemporaryDirectory(prefix="ddlsched-hypothesis-") as scratch:
        # Hypothesis caches constants under ./.hypothesis: keep the user's folder clean.
        configuration.set_hypothesis_home_dir(scratch)
        try:
            seeded(seed)(search)()
        finally:
            configuration.set_hypothesis_home_dir(previous)
    return worst[0]
