"""Seeded random instances.

:func:`generate` draws jobs from the model zoo with a parallelism mix and an
arrival process, in one of two modes:

- **realistic** (default): times in seconds from the zoo, iteration counts
  log-normal around each model's ``typical_iterations`` (median, sigma
  :attr:`GeneratorConfig.iteration_sigma`);
- **integral** (:ref:`model-time`): every release, every ``K_i * alpha_i(x)`` over
  all mappings ``x``, and ``K_i * alpha_i^max`` are multiples of the slot
  ``Delta``, so that slotted MILPs are exact. The argument: with grid unit
  ``u_i = Delta / K_i``, the generator makes ``c_i`` and every
  ``q_e / B_intra`` a positive integer multiple of ``u_i`` and requires
  ``B_intra / B_inter`` to be an integer ``r``; then ``q_e / B_inter = r *
  q_e / B_intra`` is one too, and ``alpha_i(x)``, a sum of such terms, is a
  multiple of ``u_i``, so ``K_i * alpha_i(x)`` is a multiple of ``Delta``.
  To get there, each job's zoo times are scaled so that its one-server
  duration is a target drawn from :attr:`GeneratorConfig.duration_slots`,
  then each term is rounded to the nearest multiple of ``u_i`` (at least
  one, so no edge disappears). The shape of the job (which edges are
  heavy) survives; absolute times do not, by design.

**Mixed clusters** (:attr:`GeneratorConfig.gpu_types`, for example
``(("v100", 2), ("p100", 2), ("k80", 4))``): servers of several GPU types,
each job with per-type compute times from the zoo and Gavel's measured
slowdowns (:func:`ddlsched.core.zoo.type_compute_times`). In integral mode
every type's compute time is rounded onto the grid as ``c_i`` is, and edges
are multiples of ``u_i`` times the largest bandwidth, which must be an
integer multiple of every other (so each ``q_e / B`` stays on the grid).

Every draw comes from one ``numpy.random.Generator`` seeded by the caller:
the same configuration and seed give the same instance, byte for byte, and
:func:`generate_command` prints the ``ddlsched generate`` command that writes it.

**Presets** (:data:`PRESETS`) name a few settings once, with one meaning in the API
(:meth:`GeneratorConfig.preset`), on the command line (``generate --preset``), in TOML
files and sweeps (``preset = "exact-friendly"`` in a ``[generator]`` table).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from ddlsched.core.alpha import alpha_from_cut
from ddlsched.core.graphs import build_job_graph
from ddlsched.core.model import (
    MAX_COMPUTE_TIME,
    SLOT_RANGE,
    Cluster,
    Edge,
    FeatureValue,
    InputError,
    Instance,
    Job,
    Parallelism,
    expand_types,
    is_whole,
    replaced,
)
from ddlsched.core.params import from_table, read_toml
from ddlsched.core.zoo import DRAWN_MODELS, MEASURED_TYPES, ZOO, ModelProfile, type_compute_times

DEFAULT_SIZE_WEIGHTS = ((1, 0.4), (2, 0.25), (4, 0.2), (8, 0.15))
"""GPUs per job and their weights *(choice)*. Production traces are
dominated by 1-GPU jobs (Jeon et al., *Analysis of Large-Scale Multi-Tenant
GPU Clusters for DNN Training Workloads*, USENIX ATC 2019, on Philly); the
multi-GPU share is raised here because placement only matters for them."""


GENERATOR_LIMITS = {
    "num_jobs": 1_000_000,
    "servers": 100_000,
    "gpus_per_server": 1_024,
    "max_iterations": 1_000_000,
    "users": 1_000_000,
}
"""Largest value of each count a generator accepts."""


PRESETS: dict[str, dict[str, bool | float]] = {
    "realistic": {},
    "integral": {"integral": True},
    "exact-friendly": {"integral": True, "bandwidth_intra": 2.0, "bandwidth_inter": 1.0},
}
"""Named settings, defined here once. ``realistic``: the defaults (zoo times, log-normal
iteration counts, ``B_intra / B_inter = 20``); ``integral``: integral mode, the bandwidths
unchanged; ``exact-friendly``: integral with ``B_intra / B_inter = 2``, small instances
the MILPs prove in seconds (the setting of ``compare`` and ``check --random``)."""


def with_preset(settings: Mapping[str, object], where: str = "preset") -> dict[str, Any]:
    """``settings`` with its ``preset`` key (if any) replaced by that preset's settings;
    the settings given beside it win. The values are not checked here: the answer is the
    keyword arguments of :class:`GeneratorConfig`, which checks them.

    Raises
    ------
    InputError
        On an unknown preset, naming ``where``.
    """
    if "preset" not in settings:
        return dict(settings)
    rest = {key: value for key, value in settings.items() if key != "preset"}
    name = settings["preset"]
    if not isinstance(name, str) or name not in PRESETS:
        raise InputError(f"{where}: expected one of {', '.join(PRESETS)}, got {name!r}")
    return {**PRESETS[name], **rest}


@dataclass(frozen=True)
class GeneratorConfig:
    """What :func:`generate` draws. Loadable from TOML (:meth:`from_toml`).

    Attributes
    ----------
    num_jobs, servers, gpus_per_server
        Instance size and cluster shape.
    bandwidth_intra, bandwidth_inter
        GB/s. In integral mode their ratio must be an integer.
    integral
        Make the instance integral (see the module docstring).
    load
        ``None``: every job released at 0 (a trace's jobs: as recorded). Otherwise
        Poisson arrivals whose offered load ``lambda * E[g_i * K_i * alpha_min_i] / M``
        equals ``load`` (estimated from the drawn jobs); with ``from_trace``, the
        sample's recorded arrivals scaled to offered load ``load``
        (:func:`~ddlsched.core.offered_load.at_load`).
    size_weights
        ``(gpus, weight)`` pairs, each size once; sizes above ``max_job_gpus``
        or the cluster are dropped and the rest renormalised.
    max_job_gpus
        Widest job drawn (default: the whole cluster).
    models
        Zoo keys to draw from, uniformly.
    parallelism
        ``"mixed"``: any ``(dp, pp, tp)`` within the model's ``max_tp`` and
        ``max_pp``, uniformly; ``"dp"``: data parallelism only.
    slot
        ``Delta``.
    max_iterations
        Integral mode: ``K_i`` uniform in ``1..max_iterations``.
    duration_slots
        Integral mode: target one-server duration, uniform in this range.
    iteration_sigma
        Realistic mode: sigma of the log-normal iteration counts.
    users
        Number of distinct users named in job features.
    gpu_types
        ``(type, servers)`` pairs: a mixed cluster with that many servers of
        each type, in order (``servers`` must equal their total). Empty: one
        unnamed type. Types other than ``k80``, ``p100`` and ``v100`` need
        a ``type_slowdown``.
    type_bandwidth
        ``(type, GB/s)`` pairs: intra-server bandwidth of a type (others use
        ``bandwidth_intra``).
    type_slowdown
        ``(type, factor)`` pairs, each type once: a user's own type computes
        every model ``factor`` times slower than the zoo's (V100) time.
    from_trace
        A trace (a path or a shipped name such as ``philly_jobs.csv``): the instance is
        ``num_jobs`` real jobs of it on :meth:`cluster`
        (:func:`~ddlsched.core.traces.trace_sample`) instead of drawn ones; the settings
        that shape drawn jobs do not apply, and ``integral`` must be false. The cluster's
        settings (``gpu_types`` and the type settings included), ``slot``, ``load`` and
        ``arrivals`` do (:func:`sample_trace`).
    arrivals
        With ``from_trace``: ``"consecutive"`` (the default, ``None``) or ``"sampled"``.
    """

    num_jobs: int = 8
    servers: int = 2
    gpus_per_server: int = 4
    bandwidth_intra: float = 20.0
    bandwidth_inter: float = 1.0
    integral: bool = False
    load: float | None = None
    size_weights: tuple[tuple[int, float], ...] = DEFAULT_SIZE_WEIGHTS
    max_job_gpus: int | None = None
    models: tuple[str, ...] = DRAWN_MODELS
    parallelism: str = "mixed"
    slot: float = 1.0
    max_iterations: int = 3
    duration_slots: tuple[int, int] = (1, 4)
    iteration_sigma: float = 0.8
    users: int = 4
    gpu_types: tuple[tuple[str, int], ...] = ()
    type_bandwidth: tuple[tuple[str, float], ...] = ()
    type_slowdown: tuple[tuple[str, float], ...] = ()
    from_trace: str | None = None
    arrivals: str | None = None

    def _check_trace(self) -> None:
        """``from_trace`` a non-empty name, ``arrivals`` known and only with it."""
        if self.from_trace is not None and not (
            isinstance(self.from_trace, str) and self.from_trace.strip()
        ):
            raise InputError(
                f"from_trace: expected a trace's path or name, got {self.from_trace!r}"
            )
        if self.arrivals is not None:
            if self.from_trace is None:
                raise InputError("arrivals: only with from_trace")
            if self.arrivals not in ("consecutive", "sampled"):
                raise InputError(
                    f"arrivals: expected 'consecutive' or 'sampled', got {self.arrivals!r}"
                )
        if self.from_trace is not None and self.integral:
            raise InputError("integral: not with from_trace (a trace's durations are real)")
        if self.from_trace is not None and self.load is not None and self.num_jobs < 2:
            raise InputError(
                "load: needs at least 2 jobs from a trace (one job's arrivals have no span "
                "to scale)"
            )

    def cluster(self) -> Cluster:
        """The cluster this configuration draws jobs for (validated)."""
        return Cluster(
            (self.gpus_per_server,) * self.servers,
            self.bandwidth_intra,
            self.bandwidth_inter,
            server_types=expand_types(self.gpu_types),
            type_bandwidth=self.type_bandwidth,
        )

    def __post_init__(self) -> None:
        if not isinstance(self.integral, bool | np.bool_):
            # A TOML string "false" is truthy: it generated integral instances.
            raise InputError(f"integral: must be true or false, got {self.integral!r}")
        for name, most in GENERATOR_LIMITS.items():
            value = getattr(self, name)
            if not is_whole(value) or value < 1:
                raise InputError(f"{name}: must be an integer >= 1, got {value!r}")
            if value > most:
                raise InputError(f"{name}: must be at most {most:,}, got {value:,}")
            object.__setattr__(self, name, int(value))  # a NumPy integer kept as an int
        for name in ("load", "slot", "iteration_sigma"):
            value = getattr(self, name)
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(f"{name}: must be finite, got {value!r}")
        self._check_types()
        if isinstance(self.iteration_sigma, bool) or not (
            isinstance(self.iteration_sigma, int | float) and self.iteration_sigma >= 0
        ):
            raise InputError(
                f"iteration_sigma: must be a number >= 0 (the spread of log K), "
                f"got {self.iteration_sigma!r}"
            )
        self._check_trace()
        cluster = self.cluster()
        if self.load is not None and not (
            isinstance(self.load, (int, float)) and 0 < self.load < math.inf
        ):
            raise InputError(f"load: must be a number > 0, got {self.load!r}")
        if self.parallelism not in ("mixed", "dp"):
            raise InputError(f"parallelism: expected 'mixed' or 'dp', got {self.parallelism!r}")
        self._check_draw_settings()
        for model in self.models:
            if model not in ZOO:
                raise InputError(
                    f"models: unknown model {model!r}; the zoo has {', '.join(sorted(ZOO))}"
                )
        if not self.models:
            raise InputError("models: needs at least one model")
        if not (isinstance(self.slot, (int, float)) and self.slot > 0):
            raise InputError(f"slot: must be > 0, got {self.slot!r}")
        low, high = self.duration_slots
        if not (1 <= low <= high):
            raise InputError(f"duration_slots: need 1 <= low <= high, got {self.duration_slots!r}")
        if self.integral:
            base = _grid_bandwidth(cluster)
            for name, value in (
                ("bandwidth_inter", cluster.bandwidth_inter),
                *((f"type_bandwidth.{t}", cluster.intra_of(t)) for t in cluster.types),
            ):
                ratio = base / value
                if not math.isclose(ratio, round(ratio), rel_tol=0, abs_tol=1e-12):
                    raise InputError(
                        f"{name}: integral mode needs the largest intra-server bandwidth "
                        f"({base:g}) to be an integer multiple of {value:g} (ratio {ratio:g})"
                    )
        if not self._sizes():
            raise InputError("size_weights: no job size fits the cluster and max_job_gpus")

    def _check_draw_settings(self) -> None:
        """``models`` a list of names, ``size_weights`` (GPUs, weight) pairs, each size once,
        ``duration_slots`` a pair of whole numbers, ``slot`` within the model's range and,
        in integral mode, short enough that a job's compute time stays within its limit;
        each error names the setting (a TOML value of the wrong shape failed deep inside)."""
        if isinstance(self.models, str) or not all(isinstance(m, str) for m in self.models):
            raise InputError(f"models: expected a list of model names, got {self.models!r}")
        for pair in self.size_weights:
            if not (
                isinstance(pair, tuple)
                and len(pair) == 2
                and is_whole(pair[0])
                and pair[0] >= 1
                and _real_number(pair[1])
                and pair[1] >= 0
            ):
                raise InputError(
                    f"size_weights: expected (GPUs >= 1, weight >= 0) pairs, got {pair!r}"
                )
        repeated = _repeated([size for size, _ in self.size_weights])
        if repeated:
            raise InputError(
                f"size_weights: GPU size {repeated[0]} listed more than once; "
                "give each size one weight"
            )
        slots = self.duration_slots
        if not (isinstance(slots, tuple) and len(slots) == 2 and all(map(is_whole, slots))):
            raise InputError(
                f"duration_slots: expected two whole numbers [low, high], got {slots!r}"
            )
        low_slot, high_slot = SLOT_RANGE
        if _real_number(self.slot) and not low_slot <= self.slot <= high_slot:
            raise InputError(
                f"slot: must be from {low_slot:g} to {high_slot:g}, got {self.slot!r}"
            )
        longest = slots[1] * self.slot if _real_number(self.slot) else 0.0
        if self.integral and longest > MAX_COMPUTE_TIME:
            raise InputError(
                f"slot: integral jobs last up to duration_slots' {slots[1]} slots of "
                f"{self.slot:g} s = {longest:g} s per iteration, above {MAX_COMPUTE_TIME:g} s; "
                "give a smaller slot"
            )

    def _check_types(self) -> None:
        pairs = {"gpu_types": self.gpu_types, "type_slowdown": self.type_slowdown}
        for name, value in pairs.items():
            if isinstance(value, (str, bytes)) or not all(
                isinstance(pair, tuple) and len(pair) == 2 for pair in value
            ):
                raise InputError(f"{name}: expected (type, number) pairs, got {value!r}")
        repeated = _repeated([name for name, _ in self.type_slowdown])
        if repeated:
            raise InputError(
                f"type_slowdown: GPU type {repeated[0]!r} listed more than once; "
                "give each type one factor"
            )
        if not self.gpu_types:
            return
        for name, count in self.gpu_types:
            if not is_whole(count) or count < 1:
                raise InputError(
                    f"gpu_types.{name}: servers must be an integer >= 1, got {count!r}"
                )
        total = sum(count for _, count in self.gpu_types)
        if total != self.servers:
            raise InputError(
                f"servers: {self.servers}, but gpu_types lists {total} servers "
                "(give one of them, or make them agree)"
            )
        slowdown = dict(self.type_slowdown)
        for name, _ in self.gpu_types:
            if name not in MEASURED_TYPES and name not in slowdown:
                raise InputError(
                    f"gpu_types.{name}: no measured compute times for this type (measured: "
                    f"{', '.join(MEASURED_TYPES)}); give it a type_slowdown"
                )
        for name, factor in self.type_slowdown:
            if (
                isinstance(factor, bool)
                or not isinstance(factor, (int, float))
                or not (0 < factor < math.inf)
            ):
                raise InputError(f"type_slowdown.{name}: must be a number > 0, got {factor!r}")

    def _sizes(self) -> list[tuple[int, float]]:
        widest = self.servers * self.gpus_per_server
        if self.max_job_gpus is not None:
            widest = min(widest, self.max_job_gpus)
        return [(g, w) for g, w in self.size_weights if 1 <= g <= widest and w > 0]

    @classmethod
    def preset(cls, name: str, **settings: object) -> GeneratorConfig:
        """The preset ``name`` of :data:`PRESETS` with ``settings`` on top.

        Raises
        ------
        InputError
            On an unknown preset name or a bad setting.
        """
        return cls(**with_preset({"preset": name, **settings}))

    @classmethod
    def exact_friendly(
        cls, num_jobs: int, servers: int, gpus_per_server: int, load: float | None = None
    ) -> GeneratorConfig:
        """Small integral instances the MILPs prove in seconds: the ``exact-friendly``
        preset of :data:`PRESETS`, behind ``compare`` and ``check --random``.

        Integral, with ``B_intra / B_inter = 2`` (the realistic default ratio
        of 20 makes tiny exact instances long to solve).
        """
        return cls.preset(
            "exact-friendly",
            num_jobs=num_jobs,
            servers=servers,
            gpus_per_server=gpus_per_server,
            load=load,
        )

    def command(self, seed: int, out: str = "instance.json") -> str:
        """The ``ddlsched generate`` command writing :func:`generate`'s instance of ``seed``
        (see :func:`generate_command`)."""
        return generate_command(self, seed, out)

    def replace(self, **changes: object) -> GeneratorConfig:
        """A copy with ``changes`` applied (validated again)."""
        return replaced(self, **changes)

    @classmethod
    def from_toml(cls, path: str | Path) -> GeneratorConfig:
        """Read a configuration from the ``[generator]`` table of a TOML file."""
        doc = read_toml(path)
        table = doc.get("generator", doc)
        if not isinstance(table, dict):
            raise InputError(f"{path}: [generator] must be a table")
        where = f"{path}: generator"
        return from_table(cls, with_tuples(with_preset(table, f"{where}.preset")), where)


def _repeated(keys: list[object]) -> list[object]:
    """The keys listed more than once, in the order of their second listing."""
    return [key for index, key in enumerate(keys) if key in keys[:index]]


def _real_number(value: object) -> bool:
    """Whether ``value`` is a finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


TUPLE_FIELDS = (
    "size_weights",
    "models",
    "duration_slots",
    "gpu_types",
    "type_bandwidth",
    "type_slowdown",
)
"""Settings that are tuples (of pairs): TOML and JSON give them as lists."""


def with_tuples(settings: Mapping[str, object]) -> dict[str, Any]:
    """``settings`` with the lists of :data:`TUPLE_FIELDS` (and their inner lists) as tuples:
    keyword arguments of :class:`GeneratorConfig` (which checks them)."""
    out = dict(settings)
    for key in TUPLE_FIELDS:
        value = out.get(key)
        if isinstance(value, list):
            out[key] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return out


GENERATE_FLAGS = {
    "num_jobs": "--jobs",
    "servers": "--servers",
    "gpus_per_server": "--gpus-per-server",
    "bandwidth_intra": "--bandwidth-intra",
    "bandwidth_inter": "--bandwidth-inter",
    "integral": "--integral",
    "load": "--load",
    "size_weights": "--size-weights",
    "max_job_gpus": "--max-job-gpus",
    "models": "--models",
    "parallelism": "--parallelism",
    "slot": "--slot",
    "max_iterations": "--max-iterations",
    "duration_slots": "--duration-slots",
    "iteration_sigma": "--iteration-sigma",
    "users": "--users",
    "gpu_types": "--gpu-types",
    "type_bandwidth": "--type-bandwidth",
    "type_slowdown": "--type-slowdown",
    "from_trace": "--from-trace",
    "arrivals": "--arrivals",
}
"""The ``ddlsched generate`` option of each :class:`GeneratorConfig` setting."""


def _flag_value(value: object) -> str:
    """A setting as ``generate`` reads it back exactly (floats by ``repr``, which
    round-trips; pairs as ``name:value``, lists with commas)."""
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            return ",".join(f"{_flag_value(a)}:{_flag_value(b)}" for a, b in value)
        return ",".join(_flag_value(item) for item in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def generate_command(config: GeneratorConfig, seed: int, out: str = "instance.json") -> str:
    """The one ``ddlsched generate`` command that writes ``generate(config, seed)``, byte for
    byte, to ``out``: every setting that differs from :class:`GeneratorConfig`'s default,
    then the seed.

    Examples
    --------
    >>> from ddlsched.core.generators import GeneratorConfig, generate_command
    >>> generate_command(GeneratorConfig(num_jobs=6, integral=True, load=1.0), seed=1)
    'ddlsched generate --jobs 6 --integral --load 1.0 --seed 1 --out instance.json'
    """
    import shlex

    default = GeneratorConfig()
    words = ["ddlsched", "generate"]
    for name, flag in GENERATE_FLAGS.items():
        value = getattr(config, name)
        if value == getattr(default, name):
            continue
        words += [flag] if name == "integral" else [flag, _flag_value(value)]
    words += ["--seed", str(int(seed)), "--out", out]
    return " ".join(shlex.quote(word) for word in words)


def _choose_parallelism(
    profile: ModelProfile, gpus: int, mode: str, rng: np.random.Generator
) -> Parallelism:
    if mode == "dp":
        return Parallelism(dp=gpus)
    options = [
        Parallelism(dp=gpus // (pp * tp), pp=pp, tp=tp)
        for tp in range(1, min(profile.max_tp, gpus) + 1)
        for pp in range(1, min(profile.max_pp, profile.layers, gpus) + 1)
        if gpus % (pp * tp) == 0
    ]
    return options[int(rng.integers(len(options)))]


def _grid_bandwidth(cluster: Cluster) -> float:
    """The largest intra-server bandwidth: integral edges are multiples of it."""
    return max(cluster.intra_of(t) for t in cluster.types)


def _integral_terms(
    compute: float,
    typed: dict[str, float],
    edges: tuple[tuple[int, int, float], ...],
    iterations: int,
    cluster: Cluster,
    slot: float,
    target_slots: int,
) -> tuple[float, dict[str, float], tuple[tuple[int, int, float], ...]]:
    """Scale and round a job's times (and per-type times) onto the grid ``slot / iterations``."""
    unit = slot / iterations
    base = _grid_bandwidth(cluster)
    intra_times = [q / base for _, _, q in edges]
    one_server = compute + sum(intra_times)
    # Units per second of the original job so that the one-server duration
    # K * alpha is target_slots slots, i.e. alpha is target_slots units.
    scale = target_slots / one_server
    grid_edges = tuple(
        (u, v, max(1, round(t * scale)) * unit * base)
        for (u, v, _), t in zip(edges, intra_times, strict=True)
    )
    typed = {t: max(1, round(c * scale)) * unit for t, c in typed.items()}
    return max(1, round(compute * scale)) * unit, typed, grid_edges


def sample_trace(
    config: GeneratorConfig,
    seed: int | np.random.Generator,
    unnamed: str = "zoo-data-parallel",
) -> Instance:
    """``config.num_jobs`` real jobs of ``config.from_trace`` on :meth:`~GeneratorConfig.
    cluster` (:func:`~ddlsched.core.traces.trace_sample`, with the configuration's
    arrivals, slot, load and type slowdowns); what :func:`generate` gives for a trace, and
    ``generate --from-trace`` with its ``--unnamed`` rule (a generator seed is turned into
    an integer one by one draw).

    Raises
    ------
    InputError
        No ``from_trace``, an unreadable trace, too few usable jobs, or a ``load`` for a
        sample whose jobs all arrive at once.
    """
    from ddlsched.core.data import resolve_trace
    from ddlsched.core.traces import trace_sample

    if config.from_trace is None:
        raise InputError("from_trace: not given (the trace to sample)")
    whole = int(seed.integers(2**32)) if isinstance(seed, np.random.Generator) else int(seed)
    return trace_sample(
        resolve_trace(str(config.from_trace)),
        config.cluster(),
        config.num_jobs,
        seed=whole,
        arrivals=config.arrivals or "consecutive",
        unnamed=unnamed,
        slot=config.slot,
        load=config.load,
        slowdown=dict(config.type_slowdown),
    )


def generate(config: GeneratorConfig, seed: int | np.random.Generator) -> Instance:
    """Draw a random instance.

    Parameters
    ----------
    config
        What to draw.
    seed
        An integer seed or a ``numpy.random.Generator`` (then consumed).

    Returns
    -------
    Instance
        Jobs ``j0 .. j{n-1}`` in release order.

    Raises
    ------
    TypeError
        If ``config`` is not a :class:`GeneratorConfig` or ``seed`` neither a whole
        number nor a generator.
    ValueError
        If ``seed`` is negative.

    Examples
    --------
    >>> from ddlsched import GeneratorConfig, generate
    >>> instance = generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0)
    >>> instance.num_jobs, instance.cluster.gpus_per_server
    (4, (2, 2))
    >>> # the same seed gives the same instance
    >>> generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0) == instance
    True
    """
    if not isinstance(config, GeneratorConfig):
        raise TypeError(f"config: expected a GeneratorConfig, got {type(config).__name__}")
    if not isinstance(seed, np.random.Generator):
        if not is_whole(seed):
            raise TypeError(
                f"seed: expected a whole number or a numpy Generator, got {type(seed).__name__}"
            )
        if seed < 0:
            raise ValueError(f"seed: expected a whole number >= 0, got {seed}")
        seed = int(seed)
    if config.from_trace is not None:
        return sample_trace(config, seed)
    rng = np.random.default_rng(seed)
    cluster = config.cluster()
    slowdown = dict(config.type_slowdown)
    sizes = config._sizes()
    size_values = np.array([g for g, _ in sizes])
    size_probs = np.array([w for _, w in sizes], dtype=float)
    size_probs /= size_probs.sum()

    drafts: list[_JobDraft] = []
    for _ in range(config.num_jobs):
        profile = ZOO[config.models[int(rng.integers(len(config.models)))]]
        gpus = int(rng.choice(size_values, p=size_probs))
        parallelism = _choose_parallelism(profile, gpus, config.parallelism, rng)
        compute, edges = build_job_graph(profile, parallelism)
        typed: dict[str, float] = {}
        if cluster.server_types:
            every = type_compute_times(profile.name, compute, slowdown)
            typed = {t: every[t] for t in cluster.types}
        if config.integral:
            iterations = int(rng.integers(1, config.max_iterations + 1))
            target = int(rng.integers(config.duration_slots[0], config.duration_slots[1] + 1))
            compute, typed, edges = _integral_terms(
                compute, typed, edges, iterations, cluster, config.slot, target
            )
        else:
            draw = rng.lognormal(math.log(profile.typical_iterations), config.iteration_sigma)
            iterations = max(1, round(draw))
        drafts.append(
            {
                "iterations": iterations,
                "compute_time": compute,
                "gpus": gpus,
                "parallelism": parallelism,
                "edges": edges,
                "features": {
                    "model": profile.name,
                    "batch_size": profile.batch_size,
                    "user": f"u{int(rng.integers(config.users))}",
                },
                "compute_times": tuple(typed.items()),
            }
        )

    releases = _releases(config, cluster, drafts, rng)
    jobs = tuple(
        Job(id=f"j{k}", release=release, **draft)
        for k, (release, draft) in enumerate(zip(releases, drafts, strict=True))
    )
    return Instance(cluster=cluster, jobs=jobs, slot=config.slot)


class _JobDraft(TypedDict):
    """A drawn job before its release time: the keyword arguments of :class:`Job`
    besides ``id`` and ``release``."""

    iterations: int
    compute_time: float
    gpus: int
    parallelism: Parallelism
    edges: tuple[Edge, ...]
    features: dict[str, FeatureValue]
    compute_times: tuple[tuple[str, float], ...]


def _releases(
    config: GeneratorConfig,
    cluster: Cluster,
    drafts: list[_JobDraft],
    rng: np.random.Generator,
) -> list[float]:
    if config.load is None:
        return [0.0] * len(drafts)
    # Offered work per job: GPUs times the one-server (fastest possible when
    # it fits) duration; a lower estimate for jobs wider than a server.
    work = [
        draft["gpus"]
        * draft["iterations"]
        * _one_server(Job(id="draft", release=0.0, **draft), cluster)
        for draft in drafts
    ]
    rate = config.load * cluster.num_gpus / float(np.mean(work))
    gaps = rng.exponential(1.0 / rate, size=len(drafts))
    gaps[0] = 0.0
    times = np.cumsum(gaps)
    if config.integral:
        times = np.ceil(times / config.slot - 1e-9) * config.slot
    # "+ 0.0" turns the -0.0 that ceil(-tiny) gives into 0.0.
    return [float(t) + 0.0 for t in times]


def _one_server(job: Job, cluster: Cluster) -> float:
    """``alpha`` with no edge cut; on several types, with the fastest type and bandwidth
    (a lower estimate, as for jobs wider than a server)."""
    if not cluster.heterogeneous:
        return alpha_from_cut(job, cluster, 0.0)
    fastest = min(job.compute_on(t) for t in cluster.types)
    return fastest + job.total_traffic / _grid_bandwidth(cluster)
