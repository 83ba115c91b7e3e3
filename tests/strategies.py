"""Hypothesis strategies, in one place (STYLE "Tests").

Instances come from two sources: the project's generator with drawn
settings and seeds (so its whole parameter space is exercised), and
hand-rolled tiny jobs with arbitrary graphs (so the model is tested on
graphs the zoo would never build).
"""

from __future__ import annotations

from hypothesis import strategies as st

from ddlsched.core.elastic import (
    ELASTIC_GPU_TYPES,
    MODELS,
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
)
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job

TINY_INTEGRAL = GeneratorConfig(
    num_jobs=4,
    servers=2,
    gpus_per_server=2,
    integral=True,
    bandwidth_intra=2.0,
    max_iterations=2,
    duration_slots=(1, 3),
)
"""Tiny integral instances (2 x 2 GPUs, short jobs): small enough for the brute-force
oracles and for exact MILPs in milliseconds; ``.replace()`` what a test varies."""


@st.composite
def clusters(draw: st.DrawFn, max_servers: int = 3, max_gpus: int = 4) -> Cluster:
    """Small clusters, possibly with servers of different sizes."""
    servers = draw(st.integers(1, max_servers))
    gpus = tuple(draw(st.integers(1, max_gpus)) for _ in range(servers))
    inter = draw(st.sampled_from([0.5, 1.0, 2.0]))
    ratio = draw(st.sampled_from([1.0, 2.0, 3.0, 4.0, 10.0]))
    return Cluster(gpus, bandwidth_intra=inter * ratio, bandwidth_inter=inter)


@st.composite
def jobs(draw: st.DrawFn, max_gpus: int, job_id: str = "j") -> Job:
    """A job of up to ``max_gpus`` nodes with an arbitrary simple graph."""
    gpus = draw(st.integers(1, max_gpus))
    pairs = [(u, v) for u in range(gpus) for v in range(u + 1, gpus)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    edges = tuple((u, v, draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0]))) for u, v in chosen)
    return Job(
        id=job_id,
        release=draw(st.sampled_from([0.0, 1.0, 2.5])),
        iterations=draw(st.integers(1, 5)),
        compute_time=draw(st.sampled_from([0.5, 1.0, 2.0])),
        gpus=gpus,
        edges=edges,
        weight=draw(st.sampled_from([1.0, 2.0])),
    )


@st.composite
def hand_instances(draw: st.DrawFn, max_jobs: int = 4) -> Instance:
    """Tiny instances with arbitrary job graphs."""
    cluster = draw(clusters())
    count = draw(st.integers(1, max_jobs))
    widest = min(cluster.num_gpus, 6)
    return Instance(
        cluster=cluster,
        jobs=tuple(draw(jobs(widest, job_id=f"j{k}")) for k in range(count)),
    )


@st.composite
def generator_configs(draw: st.DrawFn, integral: bool | None = None) -> GeneratorConfig:
    """Generator settings across its parameter space (small sizes)."""
    is_integral = draw(st.booleans()) if integral is None else integral
    inter = draw(st.sampled_from([0.5, 1.0, 2.0]))
    return GeneratorConfig(
        num_jobs=draw(st.integers(1, 6)),
        servers=draw(st.integers(1, 3)),
        gpus_per_server=draw(st.sampled_from([1, 2, 4, 8])),
        bandwidth_intra=inter * draw(st.sampled_from([1, 2, 4, 20])),
        bandwidth_inter=inter,
        integral=is_integral,
        load=draw(st.sampled_from([None, 0.5, 1.0, 2.0])),
        parallelism=draw(st.sampled_from(["mixed", "dp"])),
        slot=draw(st.sampled_from([1.0, 0.5, 2.0])),
        max_iterations=draw(st.integers(1, 4)),
    )


@st.composite
def generated_instances(
    draw: st.DrawFn, integral: bool | None = None, mixed: bool = False
) -> Instance:
    """Instances from :func:`ddlsched.core.generators.generate`; ``mixed``: on
    clusters of two or three of Gavel's GPU types, one type maybe with its own
    (integral-compatible) bandwidth."""
    config = draw(generator_configs(integral=integral))
    if mixed:
        kinds = draw(
            st.lists(st.sampled_from(["k80", "p100", "v100"]), min_size=2, max_size=3, unique=True)
        )
        counts = [draw(st.integers(1, 2)) for _ in kinds]
        own = draw(st.sampled_from([None, 1, 2]))
        bandwidth = () if own is None else ((kinds[0], config.bandwidth_intra / own),)
        if bandwidth and bandwidth[0][1] < config.bandwidth_inter:
            bandwidth = ()
        config = config.replace(
            servers=sum(counts),
            gpu_types=tuple(zip(kinds, counts, strict=True)),
            type_bandwidth=bandwidth,
        )
    return generate(config, draw(st.integers(0, 2**32 - 1)))


GPU_TYPES = ("fast", "slow", "mid")


@st.composite
def typed_clusters(
    draw: st.DrawFn, max_servers: int = 3, max_gpus: int = 3, integral: bool = False
) -> Cluster:
    """Small clusters whose servers have GPU types (two or three), some with their own bandwidth.

    Integral: ``B_inter = 1`` and every bandwidth 1 or 2, so edges of 2 or 4 GB
    take whole seconds.
    """
    servers = draw(st.integers(2, max_servers))
    gpus = tuple(draw(st.integers(1, max_gpus)) for _ in range(servers))
    kinds = list(draw(st.permutations([GPU_TYPES[h % 2] for h in range(servers)])))
    if servers > 2 and draw(st.booleans()):
        kinds[-1] = "mid"
    inter = 1.0 if integral else draw(st.sampled_from([0.5, 1.0]))
    factors = [1.0, 2.0] if integral else [1.0, 2.0, 4.0]
    intra = inter * draw(st.sampled_from(factors))
    own = draw(st.sampled_from([None, *factors]))
    bandwidth = {} if own is None else {kinds[0]: inter * own}
    return Cluster(gpus, intra, inter, server_types=tuple(kinds), type_bandwidth=bandwidth)


@st.composite
def typed_instances(draw: st.DrawFn, max_jobs: int = 3, integral: bool = False) -> Instance:
    """Tiny instances on :func:`typed_clusters`, jobs with per-type compute times.

    Integral: whole-second compute times and releases, edges of 2 or 4 GB,
    so every duration lies on the 1 s grid and exact solvers prove optima.
    """
    cluster = draw(typed_clusters(integral=integral))
    count = draw(st.integers(1, max_jobs))
    widest = min(cluster.num_gpus, 3 if integral else 4)
    times = [1.0, 2.0, 3.0] if integral else [0.25, 0.5, 1.0, 3.0]
    chosen = []
    for k in range(count):
        job = draw(jobs(widest, job_id=f"j{k}"))
        listed = draw(st.lists(st.sampled_from(GPU_TYPES), unique=True))
        changes: dict[str, object] = {
            "compute_times": {t: draw(st.sampled_from(times)) for t in listed}
        }
        if integral:
            changes["compute_time"] = draw(st.sampled_from(times))
            changes["release"] = float(draw(st.integers(0, 2)))
            changes["iterations"] = draw(st.integers(1, 2))
            changes["edges"] = tuple(
                (u, v, draw(st.sampled_from([2.0, 4.0]))) for u, v, _ in job.edges
            )
        chosen.append(job.replace(**changes))
    return Instance(cluster=cluster, jobs=tuple(chosen))


FRACTIONAL_WEIGHTS = (0.5, 2.0 / 3.0, 1.0, 1.5)
"""Weights that are not integers, some below 1: a bound that drops or misplaces a
weight, or takes equal weights for unit ones, overshoots the optimum with them."""


@st.composite
def same_shape_jobs(
    draw: st.DrawFn, cluster: Cluster, max_jobs: int = 4, max_gpus: int = 5
) -> list[Job]:
    """Jobs that share a GPU count and an edge set but differ in everything else.

    Each sequence varies one thing or all: the traffic per edge alone (one job
    may be another scaled by a factor, the case a cache may legitimately
    share), the compute times alone (``compute_time`` and per-type
    ``compute_times``), or all of them per job. A cache keyed without any one
    of them meets, in the first two, jobs differing in that alone. Types are
    those of ``cluster``.
    """
    gpus = draw(st.integers(min(2, cluster.num_gpus), min(max_gpus, cluster.num_gpus)))
    pairs = [(u, v) for u in range(gpus) for v in range(u + 1, gpus)]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, unique=True)) if pairs else []
    traffic = st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0])
    times = st.sampled_from([0.25, 0.5, 1.0, 3.0])
    kinds = sorted({t for t in cluster.server_types if t})

    def draw_compute() -> tuple[float, dict[str, float]]:
        listed = draw(st.lists(st.sampled_from(kinds), unique=True)) if kinds else []
        return draw(times), {t: draw(times) for t in listed}

    varied = draw(st.sampled_from(["traffic", "compute", "all"]))
    fixed_edges = tuple((u, v, draw(traffic)) for u, v in chosen)
    compute, per_type = draw_compute()
    made: list[Job] = []
    for k in range(draw(st.integers(2, max_jobs))):
        edges = fixed_edges
        if varied != "compute":
            if made and draw(st.booleans()):
                factor = draw(st.sampled_from([0.5, 2.0, 3.0]))
                edges = tuple((u, v, q * factor) for u, v, q in made[-1].edges)
            else:
                edges = tuple((u, v, draw(traffic)) for u, v in chosen)
        if varied != "traffic":
            compute, per_type = draw_compute()
        made.append(
            Job(
                id=f"s{k}",
                release=0.0,
                iterations=draw(st.integers(1, 3)),
                compute_time=compute,
                gpus=gpus,
                edges=edges,
                compute_times=per_type,
            )
        )
    return made


@st.composite
def weighted_instances(draw: st.DrawFn, max_jobs: int = 3, typed: bool = False) -> Instance:
    """Tiny instances with fractional weights (:data:`FRACTIONAL_WEIGHTS`),
    non-integral releases and multi-GPU jobs; ``typed``: on :func:`typed_clusters`
    with per-type compute times."""
    base = draw(typed_instances(max_jobs=max_jobs) if typed else hand_instances(max_jobs))
    jobs_ = tuple(
        job.replace(
            weight=draw(st.sampled_from(FRACTIONAL_WEIGHTS)),
            release=draw(st.sampled_from([0.0, 0.3, 1.0, 2.5])),
        )
        for job in base.jobs
    )
    return base.replace(jobs=jobs_)


@st.composite
def exact_family_instances(draw: st.DrawFn, integral: bool = True) -> Instance:
    """Tiny instances of the hard families for the exact methods: fractional weights
    (:data:`FRACTIONAL_WEIGHTS`: 1/2 and 2/3 together), multi-GPU jobs, on plain or typed
    clusters (``ddlsched.instance/2``); integral durations, so that the exact methods
    prove optima and the brute-force oracles (A2's included) apply.

    Not ``integral``: one job's release moves by 0.3 s, off the slot grid of A and A1
    and off A2's grid of ``Delta / M`` for every ``M`` below 10.
    """
    typed = draw(st.booleans())
    if typed:
        instance = draw(typed_instances(max_jobs=3, integral=True))
    else:
        instance = generate(TINY_INTEGRAL.replace(num_jobs=3), draw(st.integers(0, 10_000)))
    jobs = [job.replace(weight=draw(st.sampled_from(FRACTIONAL_WEIGHTS))) for job in instance.jobs]
    if not integral:
        k = draw(st.integers(0, len(jobs) - 1))
        jobs[k] = jobs[k].replace(release=jobs[k].release + 0.3)
    return instance.replace(jobs=tuple(jobs))


@st.composite
def fragmenting_instances(draw: st.DrawFn) -> Instance:
    """Uneven servers of 1-4 GPUs and 3-8 jobs of 1 to (largest server + 2) GPUs,
    released in a batch at 0 and spread at non-integral instants: jobs that span
    servers leave GPUs free on several servers, where the ``consolidated`` rule
    refuses a head that the free total would hold. Compute times are far from
    each other's multiples, so a partly processed job seldom ties with an
    arrival on the virtual machine (SRPT's tie-breaking is free)."""
    servers = draw(st.integers(2, 4))
    gpus = tuple(draw(st.integers(1, 4)) for _ in range(servers))
    cluster = Cluster(gpus, 2.0, 1.0)
    widest = min(sum(gpus), max(gpus) + 2)
    count = draw(st.integers(3, 8))
    return Instance(
        cluster,
        tuple(
            Job(
                id=f"j{k}",
                release=draw(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.5, 4.0])),
                iterations=draw(st.integers(1, 6)),
                compute_time=draw(st.sampled_from([0.37, 1.13, 2.71])),
                gpus=draw(st.integers(1, widest)),
                weight=draw(st.sampled_from([1.0, 0.5, 2.5])),
            )
            for k in range(count)
        ),
    )


@st.composite
def typed_elastic_clusters(draw: st.DrawFn) -> ElasticCluster:
    """Two or three of Gavel's GPU types, one or two nodes each, of 2 or 4 GPUs."""
    types = draw(st.lists(st.sampled_from(ELASTIC_GPU_TYPES), min_size=2, max_size=3, unique=True))
    counts = [(name, draw(st.integers(1, 2))) for name in types]
    return ElasticCluster.from_type_counts(counts, draw(st.sampled_from((2, 4))))


@st.composite
def small_elastic_workloads(
    draw: st.DrawFn, max_jobs: int = 4, models: tuple[str, ...] = MODELS
) -> ElasticWorkload:
    """One-epoch jobs of ``models``, asking 1-8 GPUs, arriving together (batch) or spread
    over the first few rounds."""
    count = draw(st.integers(1, max_jobs))
    spread = draw(st.booleans())
    jobs = []
    for k in range(count):
        model = draw(st.sampled_from(models))
        batch = 32768 if model == "ncf" else draw(st.sampled_from((64, 128, 256)))
        arrival = draw(st.floats(0.0, 200.0)) if spread else 0.0
        jobs.append(ElasticJob(f"{model}-{k}", model, arrival, draw(st.integers(1, 8)), batch, 1))
    return ElasticWorkload(tuple(jobs))


@st.composite
def edgeless_instances(draw: st.DrawFn) -> Instance:
    """Up to 3 edgeless jobs of 1-4 GPUs and 1-3 s on 1-2 servers, weights fractional or
    not, releases batch (all 0) or spread over 0-3 s."""
    servers = draw(st.integers(1, 2))
    cluster = Cluster((2,) * servers, bandwidth_intra=1.0, bandwidth_inter=1.0)
    batch = draw(st.booleans())
    jobs = tuple(
        Job(
            id=f"j{k}",
            release=0.0 if batch else float(draw(st.integers(0, 3))),
            iterations=draw(st.integers(1, 3)),
            compute_time=1.0,
            gpus=draw(st.integers(1, cluster.num_gpus)),
            weight=draw(st.sampled_from((1.0, 2.0, *FRACTIONAL_WEIGHTS))),
        )
        for k in range(draw(st.integers(1, 3)))
    )
    return Instance(cluster=cluster, jobs=jobs)
