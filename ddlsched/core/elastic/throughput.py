"""Pollux's throughput model of data-parallel training, fitted to measured profiles.

The per-iteration time of a job with ``replicas`` GPUs on ``num_nodes`` nodes,
each GPU computing an atomic (micro-)batch of ``atomic_bsz`` examples and
accumulating ``accum_steps`` extra micro-batches before each synchronisation
(Qiao et al., *Pollux*, OSDI 2021, Section 3.2, eq. (5)-(7))::

    T_grad = alpha_grad + beta_grad * atomic_bsz
    T_sync = 0                                            if replicas == 1
           = alpha_local + beta_local * max(replicas - 2, 0)   on one node
           = alpha_node + beta_node * max(replicas - 2, 0)     across nodes
    T_step = (T_grad ** gamma + T_sync ** gamma) ** (1 / gamma)
    T_iter = accum_steps * T_grad + T_step

``gamma`` in [1, 10] says how much computation and gradient synchronisation
overlap (1: not at all, 10: nearly fully). The parameters are fitted once per
model, by least squares on the logarithms of the measured compute time
(``step_time - sync_time``) and step time of every row of the placements and
scalability profiles, as the Pollux artifact's ``fit_perf_params`` does
(without its regularisers, which bias the fit towards optimism for jobs that
have seen few configurations; we fit on the full profiles).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["FitError", "PerfParams", "ProfileRows", "fit_error", "fit_perf_params"]

_GAMMA_BOUNDS = (1.0, 10.0)
_OPTIONS = {"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10}
"""L-BFGS-B settings of the final polish (the fit runs once per model)."""


@dataclass(frozen=True)
class PerfParams:
    """The seven parameters of the throughput model (times in seconds).

    Attributes
    ----------
    alpha_grad, beta_grad
        Compute time of one micro-batch: ``alpha_grad + beta_grad * atomic_bsz``
        (the paper's alpha_grad, beta_grad).
    alpha_local, beta_local
        Synchronisation time when all replicas share one node (the paper's
        alpha_sync^local, beta_sync^local).
    alpha_node, beta_node
        Synchronisation time when the replicas span several nodes (the
        paper's alpha_sync^node, beta_sync^node).
    gamma
        Overlap of computation and synchronisation, in [1, 10].
    """

    alpha_grad: float
    beta_grad: float
    alpha_local: float
    beta_local: float
    alpha_node: float
    beta_node: float
    gamma: float

    def __post_init__(self) -> None:
        for name in (
            "alpha_grad",
            "beta_grad",
            "alpha_local",
            "beta_local",
            "alpha_node",
            "beta_node",
        ):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"PerfParams.{name} must be finite and >= 0, got {value!r}")
        if not _GAMMA_BOUNDS[0] <= self.gamma <= _GAMMA_BOUNDS[1]:
            raise ValueError(f"PerfParams.gamma must be in [1, 10], got {self.gamma!r}")

    def grad_time(self, atomic_bsz: ArrayLike) -> NDArray[np.float64]:
        """T_grad: the compute time of one micro-batch of ``atomic_bsz`` examples per GPU."""
        return self.alpha_grad + self.beta_grad * np.asarray(atomic_bsz, dtype=float)

    def sync_time(self, num_nodes: ArrayLike, replicas: ArrayLike) -> NDArray[np.float64]:
        """T_sync: the gradient synchronisation time (0 for a single replica)."""
        nodes = np.asarray(num_nodes)
        reps = np.asarray(replicas)
        spread = nodes > 1
        alpha = np.where(spread, self.alpha_node, self.alpha_local)
        beta = np.where(spread, self.beta_node, self.beta_local)
        sync = alpha + beta * np.maximum(reps - 2, 0)
        return np.where(reps > 1, sync, 0.0)

    def step_time(
        self, num_nodes: ArrayLike, replicas: ArrayLike, atomic_bsz: ArrayLike
    ) -> NDArray[np.float64]:
        """T_step: one synchronised step, ``(T_grad^gamma + T_sync^gamma)^(1/gamma)``."""
        grad = self.grad_time(atomic_bsz)
        sync = self.sync_time(num_nodes, replicas)
        return (grad**self.gamma + sync**self.gamma) ** (1.0 / self.gamma)

    def iteration_time(
        self,
        num_nodes: ArrayLike,
        replicas: ArrayLike,
        atomic_bsz: ArrayLike,
        accum_steps: ArrayLike,
    ) -> NDArray[np.float64]:
        """T_iter: ``accum_steps`` unsynchronised micro-batches, then one synchronised step."""
        accum = np.asarray(accum_steps, dtype=float)
        return accum * self.grad_time(atomic_bsz) + self.step_time(num_nodes, replicas, atomic_bsz)

    def as_tuple(self) -> tuple[float, ...]:
        """The parameters in declaration order."""
        return (
            self.alpha_grad,
            self.beta_grad,
            self.alpha_local,
            self.beta_local,
            self.alpha_node,
            self.beta_node,
            self.gamma,
        )


@dataclass(frozen=True)
class ProfileRows:
    """Measured step times, one entry per profile row.

    Attributes
    ----------
    num_nodes, replicas, local_bsz
        The configuration of each row.
    step_time, sync_time
        Measured seconds per step and of it the synchronisation.
    """

    num_nodes: NDArray[np.int64]
    replicas: NDArray[np.int64]
    local_bsz: NDArray[np.int64]
    step_time: NDArray[np.float64]
    sync_time: NDArray[np.float64]

    def __post_init__(self) -> None:
        sizes = {
            len(getattr(self, f))
            for f in ("num_nodes", "replicas", "local_bsz", "step_time", "sync_time")
        }
        if len(sizes) != 1:
            raise ValueError(f"ProfileRows: columns differ in length {sorted(sizes)}")
        if not np.all(self.step_time > 0):
            raise ValueError("ProfileRows.step_time must be > 0")

    @property
    def grad_time(self) -> NDArray[np.float64]:
        """Measured compute time per step, ``step_time - sync_time`` (floored at 1% of a step)."""
        return np.maximum(self.step_time - self.sync_time, 0.01 * self.step_time)


def _params_from_vector(vector: NDArray[np.float64]) -> PerfParams:
    grad_a, grad_b, local_a, local_b, node_a, node_b = np.exp(vector[:6]).tolist()
    return PerfParams(grad_a, grad_b, local_a, local_b, node_a, node_b, float(vector[6]))


def _loss(vector: NDArray[np.float64], rows: ProfileRows) -> float:
    params = _params_from_vector(vector)
    grad = params.grad_time(rows.local_bsz)
    step = params.step_time(rows.num_nodes, rows.replicas, rows.local_bsz)
    err_grad = np.log(grad) - np.log(rows.grad_time)
    err_step = np.log(step) - np.log(rows.step_time)
    return float(np.mean(err_grad**2) + np.mean(err_step**2))


def fit_perf_params(rows: ProfileRows) -> PerfParams:
    """Fit :class:`PerfParams` to measured rows (deterministic).

    Minimises MSLE(T_grad) + MSLE(T_step) (mean squared log errors) with
    L-BFGS-B over the logarithms of the six time parameters and gamma in
    [1, 10], from a fixed set of starting points; the best is then polished with tight tolerances.

    Parameters
    ----------
    rows
        The measurements.

    Returns
    -------
    PerfParams
        The fitted model.
    """
    from scipy.optimize import minimize  # here: the command line's start-up never pays for it

    grad = rows.grad_time
    single = rows.replicas == 1
    base = float(np.median(grad[single])) if np.any(single) else float(np.median(grad))
    local = (rows.num_nodes == 1) & (rows.replicas > 1)
    spread = rows.num_nodes > 1
    sync_local = float(np.median(rows.sync_time[local])) if np.any(local) else 1e-3
    sync_node = float(np.median(rows.sync_time[spread])) if np.any(spread) else sync_local
    bounds = [(-25.0, 5.0)] * 6 + [_GAMMA_BOUNDS]
    best: tuple[float, NDArray[np.float64]] | None = None
    for gamma in (1.0, 2.0, 5.0):
        start = np.log(
            np.maximum(
                [
                    base / 2,
                    base / 2 / max(float(np.median(rows.local_bsz)), 1.0),
                    sync_local,
                    sync_local / 20,
                    sync_node,
                    sync_node / 20,
                ],
                1e-9,
            )
        )
        start = np.append(start, gamma)
        result = minimize(_loss, start, args=(rows,), method="L-BFGS-B", bounds=bounds)
        if best is None or result.fun < best[0]:
            best = (float(result.fun), result.x)
    assert best is not None
    # Polish the best start to (near) machine precision.
    polished = minimize(
        _loss, best[1], args=(rows,), method="L-BFGS-B", bounds=bounds, options=_OPTIONS
    )
    return _params_from_vector(polished.x)


@dataclass(frozen=True)
class FitError:
    """Relative error ``|predicted - measured| / measured`` of the step time over profile rows.

    Attributes
    ----------
    median, worst
        The median and the largest relative error.
    rows
        How many rows were compared.
    """

    median: float
    worst: float
    rows: int


def fit_error(params: PerfParams, rows: ProfileRows) -> FitError:
    """The fitted step time's relative error against the measured rows."""
    predicted = params.step_time(rows.num_nodes, rows.replicas, rows.local_bsz)
    relative = np.abs(predicted - rows.step_time) / rows.step_time
    return FitError(float(np.median(relative)), float(np.max(relative)), len(relative))
