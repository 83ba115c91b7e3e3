"""Finish-time fairness ``rho``: one definition for the reports and the fair policies.

Themis (Mahajan et al., *Themis: Fair and Efficient GPU Cluster Scheduling*, NSDI
2020) measures a job's fairness as ``rho_i = T_shared / T_independent``: its completion
time in the shared cluster over its completion time alone on its fair share of it.
Gavel (Narayanan et al., OSDI 2020, its ``IsolatedPolicy``) makes the fair share ``1 /
N_i`` of the cluster, ``N_i`` the number of jobs active meanwhile. For this project's
rigid jobs (:ref:`model-problem-a`): a job of ``g_i`` GPUs given ``M / N_i`` GPUs runs a
time share ``min(1, M / (N_i g_i))`` of its fastest processing time ``p_i = K_i
alpha_i^min``, so

``T_i^iso = p_i max(1, N_i g_i / M)``  and  ``rho_i = (C_i - r_i) / T_i^iso``,

with ``N_i`` the time-average number of jobs active (released, not completed, the job
itself included) during ``[r_i, C_i]``. ``rho_i > 1``: the job did worse than on its
fair share. The trace study reports it (:func:`finish_time_fairness`); the ``themis``
policy ranks jobs by an estimate of it (:func:`isolated_time` with predicted work).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

Numbers = TypeVar("Numbers", float, np.ndarray)

__all__ = ["finish_time_fairness", "isolated_time"]


def isolated_time(processing: Numbers, active: Numbers, gpus: Numbers, num_gpus: int) -> Numbers:
    """``T_i^iso = p_i max(1, N_i g_i / M)``: the time alone on a fair share (of one job,
    or elementwise of arrays of jobs).

    Parameters
    ----------
    processing
        ``p_i``, the job's processing time at its fastest (``K_i alpha_i^min``; an
        online policy gives its prediction ``K_hat_i alpha_i^min``).
    active
        ``N_i``, the time-average number of jobs active while the job was.
    gpus
        ``g_i``, the job's GPUs.
    num_gpus
        ``M``, the cluster's GPUs.
    """
    return processing * np.maximum(1.0, active * gpus / num_gpus)


def finish_time_fairness(
    releases: np.ndarray,
    ends: np.ndarray,
    gpus: np.ndarray,
    processing: np.ndarray,
    num_gpus: int,
) -> np.ndarray:
    """Each job's finish-time fairness ``rho_i`` (module docstring): its JCT over
    :func:`isolated_time`, ``N_i`` the time-average number of jobs active during
    ``[r_i, C_i]``.

    The number active integrates in closed form: ``A(t) = sum_j [min(t, C_j) - r_j]^+``
    is the area under the count of active jobs up to ``t``, so ``N_i = (A(C_i) -
    A(r_i)) / (C_i - r_i)``.
    """
    order_r, order_c = np.sort(releases), np.sort(ends)
    sum_r = np.concatenate(([0.0], np.cumsum(order_r)))
    sum_c = np.concatenate(([0.0], np.cumsum(order_c)))

    def area(t: np.ndarray) -> np.ndarray:
        released = np.searchsorted(order_r, t, side="left")  # r_j < t
        ended = np.searchsorted(order_c, t, side="left")  # C_j < t
        return (released * t - sum_r[released]) - (ended * t - sum_c[ended])

    jct = ends - releases
    life = np.where(jct > 0, jct, 1.0)
    active = np.where(jct > 0, (area(ends) - area(releases)) / life, 1.0)
    return jct / isolated_time(processing, active, gpus, num_gpus)
