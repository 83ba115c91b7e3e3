"""Recurring job histories: who submits what, and how many iterations it runs.

Production GPU clusters see the same user resubmit the same model, data
and configuration again and again (hyper-parameter searches, periodic
retraining): Hu et al., *Characterization and Prediction of Deep Learning
Workloads in Large-Scale GPU Datacenters* (Helios, SC 2021) find most jobs
recur and predict durations from history; Weng et al., *MLaaS in the Wild*
(Alibaba PAI, NSDI 2022) report a large majority of recurring tasks; Jeon
et al. (Philly, USENIX ATC 2019) find many jobs repeated or killed early.
The shapes below follow those descriptions *(choices, all parameters of
:class:`WorkloadConfig`)*:

- **users**: ``users`` users; each owns ``groups_per_user`` recurring
  *groups* on average (Poisson, at least one);
- **group**: a zoo model, a dataset name, a batch size and a GPU count,
  drawn once; its typical iteration count is log-normal around the model's
  ``typical_iterations`` (sigma ``group_sigma``, wide: groups differ a lot);
- **job of a group**: iterations log-normal around the group's typical
  count (sigma ``job_sigma``, narrow: the same job recurs with small
  variation), times a multiplicative **drift** that grows linearly over the
  history by ``drift`` in log space (a group's runs get longer or shorter
  over weeks; its sign is drawn per group);
- **one-off jobs**: a share ``one_off`` of jobs belong to no group: a
  fresh random configuration with iterations drawn like a new group's;
- **submission**: a group's popularity is Zipf-like (weight ``1/rank``);
  jobs arrive as a Poisson process of rate ``rate`` per hour.

Every draw comes from one seeded ``numpy.random.Generator``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import pandas as pd

from ddlsched.core.model import Cluster, InputError, Instance, is_whole, replaced
from ddlsched.core.zoo import DRAWN_MODELS, ZOO

DATASETS = ("imagenet", "cifar10", "squad", "wikitext", "coco", "librispeech", "private")


@dataclass(frozen=True)
class WorkloadConfig:
    """Parameters of :func:`recurring_history` (see the module docstring)."""

    jobs: int = 3000
    users: int = 20
    groups_per_user: float = 4.0
    group_sigma: float = 1.0
    job_sigma: float = 0.15
    drift: float = 0.3
    one_off: float = 0.15
    rate: float = 20.0
    gpu_sizes: tuple[int, ...] = (1, 2, 4, 8)

    def __post_init__(self) -> None:
        for name in ("jobs", "users"):
            value = getattr(self, name)
            if not is_whole(value) or value < 1:
                raise InputError(f"{name}: must be an integer >= 1, got {value!r}")
        for name in ("groups_per_user", "rate"):
            if not getattr(self, name) > 0:
                raise InputError(f"{name}: must be > 0, got {getattr(self, name)!r}")
        for name in ("group_sigma", "job_sigma", "drift"):
            if getattr(self, name) < 0:
                raise InputError(f"{name}: must be >= 0, got {getattr(self, name)!r}")
        if not 0 <= self.one_off <= 1:
            raise InputError(f"one_off: must be in [0, 1], got {self.one_off!r}")

    def replace(self, **changes: object) -> WorkloadConfig:
        """A copy with ``changes`` applied (validated again)."""
        return replaced(self, **changes)


class _Configuration(TypedDict):
    """What a recurring group (or a one-off job) trains: its columns of the history."""

    model: str
    dataset: str
    batch_size: int
    num_gpu: int


class _Group(_Configuration):
    """A recurring group: its configuration, user, label and iteration law."""

    user: str
    group: str
    log_typical: float
    drift_sign: float


def _configuration(rng: np.random.Generator, sizes: tuple[int, ...]) -> _Configuration:
    model = DRAWN_MODELS[int(rng.integers(len(DRAWN_MODELS)))]
    profile = ZOO[model]
    return {
        "model": model,
        "dataset": DATASETS[int(rng.integers(len(DATASETS)))],
        "batch_size": int(profile.batch_size * 2 ** int(rng.integers(-1, 3))),
        "num_gpu": int(sizes[int(rng.integers(len(sizes)))]),
    }


def recurring_history(config: WorkloadConfig, seed: int | np.random.Generator) -> pd.DataFrame:
    """A seeded job history, in submission order.

    Returns
    -------
    pandas.DataFrame
        Columns ``submit_time`` (s), ``user``, ``group`` (``""`` for one-off
        jobs; a ground-truth label, **not** a feature a predictor may use),
        ``model``, ``dataset``, ``batch_size``, ``num_gpu``, ``iterations``.
    """
    rng = np.random.default_rng(seed)
    groups: list[_Group] = []
    for user in range(config.users):
        for _ in range(max(1, int(rng.poisson(config.groups_per_user)))):
            settings = _configuration(rng, config.gpu_sizes)
            typical = ZOO[settings["model"]].typical_iterations
            groups.append(
                {
                    **settings,
                    "user": f"u{user}",
                    "group": f"g{len(groups)}",
                    "log_typical": math.log(typical) + rng.normal(0, config.group_sigma),
                    "drift_sign": float(rng.choice([-1.0, 1.0])),
                }
            )
    popularity = 1.0 / np.arange(1, len(groups) + 1)
    order = rng.permutation(len(groups))
    weights = np.empty(len(groups))
    weights[order] = popularity
    weights /= weights.sum()
    times = np.cumsum(rng.exponential(3600.0 / config.rate, size=config.jobs))
    rows = []
    for k in range(config.jobs):
        progress = k / max(1, config.jobs - 1)
        if rng.random() < config.one_off:
            settings = _configuration(rng, config.gpu_sizes)
            log_k = math.log(ZOO[settings["model"]].typical_iterations) + rng.normal(
                0, config.group_sigma
            )
            rows.append(
                {
                    **settings,
                    "user": f"u{int(rng.integers(config.users))}",
                    "group": "",
                    "log_iterations": log_k,
                }
            )
            continue
        group = groups[int(rng.choice(len(groups), p=weights))]
        log_k = (
            group["log_typical"]
            + group["drift_sign"] * config.drift * progress
            + rng.normal(0, config.job_sigma)
        )
        rows.append(
            {
                "model": group["model"],
                "dataset": group["dataset"],
                "batch_size": group["batch_size"],
                "num_gpu": group["num_gpu"],
                "user": group["user"],
                "group": group["group"],
                "log_iterations": log_k,
            }
        )
    frame = pd.DataFrame(rows)
    frame.insert(0, "submit_time", times)
    frame["iterations"] = np.maximum(1, np.round(np.exp(frame.pop("log_iterations")))).astype(
        np.int64
    )
    return frame


def instance_from_history(
    history: pd.DataFrame, cluster: Cluster, *, limit: int | None = None
) -> Instance:
    """Jobs of a history (from :func:`recurring_history`) on ``cluster``.

    Each row becomes a zoo job (:func:`ddlsched.core.traces.zoo_job`, the zoo's
    own times, the row's iterations) released at its submit time; features
    are ``user``, ``model``, ``dataset``, ``batch_size`` (the group label is
    left out: predictors must not see it). Rows wider than the cluster are
    dropped.
    """
    from ddlsched.core.traces import zoo_job

    rows = history.sort_values("submit_time", kind="stable")
    if limit is not None:
        rows = rows.head(limit)
    first = float(rows["submit_time"].iloc[0])
    jobs = [
        zoo_job(
            f"h{k}",
            row.model,
            int(row.num_gpu),
            cluster,
            float(row.submit_time) - first,
            int(row.iterations),
            None,
            {
                "user": row.user,
                "model": row.model,
                "dataset": row.dataset,
                "batch_size": int(row.batch_size),
            },
        )
        for k, row in enumerate(rows.itertuples(index=False))
        if int(row.num_gpu) <= cluster.num_gpus
    ]
    return Instance(cluster=cluster, jobs=tuple(jobs))
