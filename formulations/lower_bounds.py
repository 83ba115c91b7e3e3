"""Proven lower bounds on ``OPT(A)``, so that every result carries a certified gap.

``OPT(A) = min sum_i w_i C_i`` over the schedules of problem A (:ref:`model-problem-a`:
gang-scheduled, non-preemptive, one mapping per job, per-server capacity). A
valid bound ``LB <= OPT(A)`` turns any schedule's objective ``sum C`` into a
certified ratio: ``sum C / OPT <= sum C / LB``, at any scale, where no exact
optimum is known. Every bound here is computed from ``p_i = K_i alpha_i^min``,
the shortest processing time job ``i`` can have under any mapping; where
``alpha_i^min`` is only a lower bound (see :func:`ddlsched.core.alpha.least_cut`)
every bound stays valid, only weaker, and says how many such jobs there were.
Each value is finally multiplied by ``1 - 1e-9`` so that floating-point
rounding can never lift it above the optimum.

Notation: ``g_i`` GPUs, release ``r_i``, weight ``w_i``, ``M`` GPUs in all,
``p_i = K_i alpha_i^min`` and ``v_i = g_i p_i / M``.

**1. Job bound** (``"job"``), any weights: ``sum_i w_i (r_i + p_i)``, since
``C_i >= S_i + p_i >= r_i + p_i``.

**2. Squashed area** (``"squashed-area"``). Take any schedule of A and let
job ``i`` be processed at rate ``g_i / M`` while it runs: at every instant
the rates add up to at most 1 (the running jobs hold at most ``M`` GPUs), and
job ``i`` receives ``g_i p_i(x_i) / M >= v_i`` units of work by ``C_i``. This
is a preemptive (processor-sharing) schedule of one unit-speed machine with
jobs of size ``v_i`` released at ``r_i`` in which every job completes by
``C_i``. So ``OPT(A)`` is at least the optimum of ``1 | r_i, pmtn | sum w_i
C_i`` on sizes ``v_i``. With unit weights preemptive SRPT is optimal for it
(Schrage, Oper. Res. 1968): the bound is SRPT's ``sum C_i``. With weights the
problem is NP-hard, and the bound used is Goemans' mean-busy-time bound
``sum_i w_i (M_i + v_i / 2)``, where ``M_i`` are the mean busy times of the
preemptive WSPT schedule, which minimises ``sum w_i M_i`` over all
preemptive, even fractional, schedules, and ``C_i >= M_i + v_i / 2`` holds
in any schedule at rate at most 1 (Goemans, Queyranne, Schulz, Skutella,
Wang, *Single machine scheduling with release dates*, SIAM J. Discrete
Math. 15(2), 2002). ``O(n log n)``.

**3. Mean busy time in real time** (``"mean-busy-time"``), any weights, a
combination stronger than both where jobs are long and narrow. In the same
fluid schedule, run job ``i`` at rate ``g_i / M`` only over its first ``p_i``
seconds ``[S_i, S_i + p_i)``: it receives exactly ``v_i``, rates still add up
to at most 1, and its mean busy time is ``S_i + p_i / 2``. Hence ``C_i >=
S_i + p_i = M_i^fluid + p_i / 2`` and, by the theorem above,
``sum w_i C_i >= sum w_i (M_i^WSPT + p_i / 2)``. Compared with 2, the half
duration is taken in real time (``p_i``), not squashed (``v_i = g_i p_i / M``);
compared with 1, the mean busy time carries the congestion. (The same
argument is the parallel-machine "mean busy time" relaxation of Hall,
Schulz, Shmoys and Wein, Math. Oper. Res. 22(3), 1997, and of Schwiegelshohn
et al.'s bounds for ``P | size_j | sum w_j C_j``.) A per-job maximum of the
three is *not* claimed: only whole sums are compared.

**4. LP relaxation** (``"lp"``), any weights: the time-indexed model on a
coarse grid of slots of ``Delta`` seconds, with releases and durations
rounded *down* (``R_i = floor(r_i / Delta)``, ``d_i = floor(p_i / Delta)``)
and one pooled resource of ``M`` GPUs. Any schedule of A maps to it: start
job ``i`` in slot ``floor(S_i / Delta)``; every job occupying slot ``s``
then runs at the instant ``(s + 1) Delta - epsilon``, so pooled capacity
holds; its cost ``w_i (Delta floor(S_i / Delta) + p_i) <= w_i C_i``. The
horizon ``T`` covers every optimal schedule: an optimal schedule never
leaves the whole cluster idle after the last release (shifting later jobs
earlier would lower the objective), so all jobs start by ``max_i r_i +
sum_i K_i alpha_i^max``, and, given the objective ``UB`` of any feasible
schedule, job ``i`` starts by ``(UB - sum_{j != i} w_j (r_j + p_j)) / w_i -
p_i``. Variables ``X_{i,t} = P(start <= t)`` in ``[0, 1]``,
non-decreasing in ``t``; capacity ``sum_i g_i (X_{i,s} - X_{i,s - d_i}) <= M``
per slot. ``Delta`` comes from the instance: its own grid where it is
provably integral (:func:`proven_grid`; durations and releases are then
exact, rounded up), else a tenth of the shortest job; ``max_variables``
only caps the size, coarsening the slot where needed. Solved by HiGHS
(``highspy``'s matrix interface: a Pyomo model of a million variables
would take longer to build than to solve); only an optimal LP is reported valid.

**5. Lagrangian** (``"lagrangian"``), any weights: floors and fluid, job by
job. For multipliers ``0 <= lambda_i <= w_i``,

    ``LB(lambda) = sum_i (w_i - lambda_i)(r_i + p_i) + lambda_i (M_i^lambda + p_i / 2)``

where ``M^lambda`` are the mean busy times of preemptive WSPT on the
squashed machine with weights ``lambda`` (not ``w``). *Proof.* In any
schedule of A, each job has ``C_i >= r_i + p_i`` and, in the fluid schedule
of bound 3, ``C_i >= M_i + p_i / 2``; as ``w_i C_i`` is at least every
convex combination of its two lower bounds, ``w_i C_i >= (w_i - lambda_i)
(r_i + p_i) + lambda_i (M_i + p_i / 2)``. Summing, the only term depending on
the schedule is ``sum_i lambda_i M_i``, which Goemans' theorem (bound 2)
bounds below by the same sum for preemptive WSPT with weights ``lambda``
(non-negative weights; a job of weight 0 simply runs last). So
``LB(lambda) <= sum w_i C_i`` for every schedule, an optimal one included,
for *every* ``lambda`` in the box. ``lambda = w`` is bound 3, ``lambda = 0``
bound 1, and ``lambda`` in ``{0, w_i}`` splits the jobs into those charged
their floor and those charged congestion (the sub-instance argument: the
jobs of weight 0 never delay the others). ``LB`` is concave in ``lambda``;
a few projected subgradient steps (:func:`lagrangian_terms`) look for a
good one. It is never below bounds 1 and 3 (the best value tried is kept,
and both are tried); on the first 5,000 Philly jobs on 32 x 8 GPUs it
raised the flow bound by 7% over the best of them, on 24-job batch
instances by 1-2%. Per-job *maxima* of bounds are still not claimed: only
these convex combinations, which the proof covers.

**7. Pooled integral** (``"pooled"``), any weights: the model of bound 4
with integral ``X`` (each job starts in one slot), solved by HiGHS's
branch and bound. The mapping of a schedule of A into bound 4's model
above gives integral starts, so the same argument makes its optimum a lower
bound; so is HiGHS's *dual* bound when it stops early (a time or node
limit), which is what is reported (never the incumbent's objective, which
may lie above). It relaxes A in three ways only: one pooled resource of
``M`` GPUs instead of servers, every job at its fastest mode, and, off the
instance's grid, rounding. On integral instances with integral weights
every schedule on the grid has an objective that is a multiple of the slot,
``OPT(A)`` among them, so the value is rounded up to that multiple. This is
what closes batch arrivals, where the LP is weakest: on the 24-job batch
instances of ``bench_exact`` (4 x 4 GPUs, all released at 0) the LP gives
207.9 and the pooled bound 212 against a best schedule of 216 (seed 0), 215
against 216 (seed 1), 164 against the proven 165 (seed 2), each in under
2 s. (The same relaxation with a pooled resource is the time-indexed model
of Sousa and Wolsey, Math. Programming 54, 1992, with the capacity of
``P | size_j | sum w_j C_j``.)

**6.** The MILP's own dual bound, where an exact model was solved: see
:attr:`ddlsched.core.result.Result.best_bound`.

**8. Ranks** (``"rank"``), floors and SRPT combined rank by rank. Unit weights
first. Take any schedule of A and its processor-sharing schedule of bound 2, in
which every job completes by ``C_i``. Preemptive SRPT on the squashed machine
completes, by every instant, at least as many jobs as any preemptive or
processor-sharing schedule of the same sizes and releases (Schrage 1968; D. R.
Smith, Oper. Res. 26(1), 1978), so the ``k``-th smallest ``C`` is at least SRPT's
``k``-th smallest completion ``s_(k)``; it is also at least the ``k``-th smallest
floor ``a_(k)`` of ``a_i = r_i + p_i``, since ``C_i >= a_i`` job by job. Hence
``sum_i C_i >= sum_k max(a_(k), s_(k))``
(:func:`ddlsched.core.virtual.rank_combined`, which also shows that it is the
least ``sum C`` these two facts allow), at least both bound 1 and SRPT's bound 2.
Where long narrow jobs complete early on the squashed machine (small ``v_i``,
late floor), SRPT's early completions and the late floors belong to the same jobs;
matched by rank, the early completions meet the early floors and the late floors
the late completions, so the congestion of the wide jobs is charged too. With
weights, the jobs are layered by weight: with levels ``u_1 < ... <
u_L`` (the distinct weights, or :data:`RANK_WEIGHT_LEVELS` of them, each job's
weight rounded down to the largest level ``w'_i <= w_i``), ``w_i C_i = (w_i -
w'_i) C_i + sum_{l: u_l <= w'_i} (u_l - u_{l-1}) C_i`` (``u_0 = 0``). The first
part is at least ``(w_i - w'_i) a_i``; in the second, the jobs of layer ``l``
(``w'_i >= u_l``) are a sub-instance, whose processor-sharing schedule is the
whole one restricted to them (rates still add up to at most 1), so their sum
``C`` is at least the unit-weight rank bound of that layer alone (its own
SRPT). ``O(L n log n)``. Per-job maxima are still not claimed: the value is one
sum per layer, and each rank's term is a share, given to the job of the same
rank of release (see "Flow time" below). On full Philly at
32 x 8 GPUs (unit weights) it is 12% below ``lagrangian`` on the flow time (2.90e9
against 3.30e9; 16% at load 0.9, 1.22e9 against 1.45e9): there the congestion that
counts is the real-time half duration of bound 3, which ranks do not see. Two
further provable combinations were measured there and not kept: the ``k``-th
completion is at least the least ``T`` by which SRPT, run on the jobs of floor at
most ``T`` only, completes ``k`` of them (0.3% above the rank bound, for an SRPT
per ``T`` tried); and the Lagrangian's multipliers rounded down to levels, each
level's floors replaced by the ranks of its layer (0: on those jobs alone SRPT
never passes the floors).

**The preemptive model.** In the preemptive model a job may be stopped and resumed
(each piece with its own mapping, each resume first spending a restart cost ``c >=
0`` without progress); its pieces' progress adds up to ``K_i``. Its optimum may lie
below ``OPT(A)``, so a bound on ``OPT(A)`` certifies a preemptive schedule only if
it bounds that optimum too. The fast bounds do (:data:`PREEMPTIVE_BOUNDS`): job
``i`` holds its ``g_i`` GPUs over a set ``E_i`` of instants in ``[r_i, C_i]`` of
measure at least ``p_i`` (every piece runs at least ``alpha_i^min`` per
iteration; restarts only add), and at every instant the running jobs hold at
most ``M`` GPUs. Bound 1: ``C_i >= r_i + |E_i| >= r_i + p_i``. Bound 2: the
processor-sharing schedule of its proof is built from ``E_i`` exactly as from a
single run. Bound 3: keep the first ``p_i`` seconds of ``E_i`` as the fluid
schedule's processing; a set of measure ``p_i`` inside ``(-inf, C_i]`` has mean
at most ``C_i - p_i / 2``, so ``C_i >= M_i^fluid + p_i / 2`` still, and Goemans'
theorem applies unchanged. Bound 5 combines the per-job inequalities of 1 and 3,
and bound 8 ranks the completions of bound 2's processor-sharing schedule (built
from ``E_i``) against SRPT's, with bound 1's floors: both hold too. Bounds 4 and
7 and the MILP's dual bound (6) charge each job
one start and consecutive slots, which a preempted job does not have: they are
bounds on ``OPT(A)`` only, as is the start-time Lagrangian bound of
:mod:`ddlsched.formulations.start_lagrangian`.

**Flow time (total JCT).** Every bound also bounds the optimal weighted flow
time ``F* = min sum_i w_i (C_i - r_i)``: for every schedule ``sum w_i (C_i -
r_i) = sum w_i C_i - sum w_i r_i``, the constant being the same for all
schedules, so ``F* = OPT(A) - sum w_i r_i`` and ``LB - sum w_i r_i <= F*``
for every valid ``LB``. Each bound is a sum of per-job terms ``t_i``
(bound 1: ``w_i (r_i + p_i)``; 2: SRPT's ``C_i`` or ``w_i (M_i + v_i / 2)``;
3: ``w_i (M_i + p_i / 2)``; 5: the combination above; 8: the terms of each
rank, given to the job of the same rank of release, with the rounded-off weight's
floors), so its flow value
:attr:`~ddlsched.core.result.LowerBound.flow_value` is computed as
``sum_i (t_i - w_i r_i)``, each term non-negative and small (bound 8's: the
``k``-th smallest floor is at least the ``k``-th smallest release), never as a
difference of two sums near ``10^12`` (on a trace 99% of ``sum C`` are
releases, and the flow bound is what is left). Each ``t_i`` is computed in
floating point at the scale of the times, where a rounding is worth up to half
an ulp of the largest time ``T = max_i r_i + sum_i p_i + max_i p_i`` (no clock
of the bounds passes it): near ``r = 10^11`` s an ulp is ``1.5e-5`` s, so
``r_i + p_i`` with a smaller ``p_i`` may round a whole ulp up, and the clock of
preemptive WSPT or SRPT drifts by up to half an ulp at each of its ``2n``
events (releases and completions). The drift is a perturbation of the releases
and sizes by at most ``2n`` half-ulps in all, which moves each completion, mean
busy time and floor by at most as much; a few roundings more are made per term.
So every fast bound's flow value is ``max(sum_i w_i p_i, sum_i (t_i - w_i r_i)
- A)`` (each times :data:`SAFETY`), with the *rounding allowance*
``A = (n + 4) ulp(T) sum_i w_i`` (:func:`flow_allowance`; ``(2n + 8)`` half-ulps
per job), and ``sum_i w_i p_i``, free of the times, the per-job floors summed
exactly. The allowance is negligible at trace scale (the whole Philly trace:
``n = 1.1e5``, ``T < 10^8`` s, under 0.002 s per job against a flow bound of
``10^4`` s per job) and takes only what rounding could have added where the
durations are below an ulp of the releases. As sums of the same terms,
per-job floors (``sum w_i p_i``, each job's least processing time), the
fluid relaxations and the Lagrangian combination of both are all compared on flow as on
``sum C``: the largest is the best for both. The LP's flow value is its
objective minus ``sum w_i r_i`` (both computed once), made safe by the same rule.
This allowance covers the rounding of times, not a solver's tolerances: where the
objective is near ``10^12``, HiGHS's relative tolerances are worth more than a
flow bound of milliseconds, and bounds 4 and 7 are no better there than
``sum_i w_i p_i``.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from ddlsched.formulations.grid import on_grid
from ddlsched.formulations.memory import LP_BOUND, POOLED_BOUND, MiB

from ddlsched.core.alpha import all_cut_alpha, fastest_processing
from ddlsched.core.model import Instance
from ddlsched.core.params import DEFAULT_MEMORY_LIMIT
from ddlsched.core.registry import Registry
from ddlsched.core.result import LowerBound
from ddlsched.core.virtual import rank_combined, srpt

if TYPE_CHECKING:
    import highspy

SAFETY = 1.0 - 1e-9
"""Every bound is multiplied by this, so rounding never lifts it above OPT."""


@dataclass(frozen=True)
class BoundInputs:
    """What every bound needs, computed once per instance.

    Attributes
    ----------
    processing
        ``p_i = K_i alpha_i^min`` (seconds; a valid lower bound on the job's
        processing time under any mapping).
    inexact
        How many ``alpha_i^min`` are lower bounds rather than exact values.
    """

    releases: np.ndarray
    weights: np.ndarray
    gpus: np.ndarray
    processing: np.ndarray
    num_gpus: int
    inexact: int

    @classmethod
    def of(cls, instance: Instance, search_budget: int = 2_000) -> BoundInputs:
        """``p_i`` of every job (``alpha_min`` searched once per job shape)."""
        processing, inexact = fastest_processing(instance, search_budget)
        return cls(
            np.array([job.release for job in instance.jobs], dtype=float),
            np.array([job.weight for job in instance.jobs], dtype=float),
            np.array([job.gpus for job in instance.jobs], dtype=float),
            np.array(processing, dtype=float),
            instance.cluster.num_gpus,
            inexact,
        )

    @property
    def squashed(self) -> np.ndarray:
        """``v_i = g_i p_i / M``: the sizes on the squashed single machine."""
        return self.gpus * self.processing / self.num_gpus

    @property
    def release_weight(self) -> float:
        """``sum_i w_i r_i``: what separates ``sum w C`` from the flow time ``sum w (C - r)``."""
        return math.fsum(self.weights * self.releases)

    @property
    def unit_weights(self) -> bool:
        """Whether every weight is 1 (then SRPT gives the squashed optimum)."""
        return bool(np.all(self.weights == 1.0))

    def notes(self) -> tuple[str, ...]:
        """The caveat every bound of these inputs carries, if any."""
        if not self.inexact:
            return ()
        return (
            f"{self.inexact} job(s) use a lower bound of alpha_min, not its exact value "
            "(the bound stays valid, only weaker)",
        )


def job_terms(inputs: BoundInputs) -> np.ndarray:
    """Bound 1, per job: ``w_i (r_i + p_i)``."""
    return np.asarray(inputs.weights * (inputs.releases + inputs.processing), dtype=float)


def preemptive_wspt_mean_busy_times(
    sizes: Sequence[float] | np.ndarray,
    releases: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """Mean busy times of the preemptive WSPT schedule on one unit-speed machine.

    At every instant the released unfinished job of highest ``w_i / v_i``
    runs (ties: earlier release, then lower index), preempting at releases.
    ``M_i = (1 / v_i) * integral of t over the job's processing``, computed as the
    mean of the midpoints of its pieces weighted by their lengths: divided by the
    lengths as run, not by ``v_i``, since near ``10^11`` s a piece's end rounds by up to
    ``10^-5`` s, which divided by a small ``v_i`` would move ``M_i`` by 10^5 s or more.
    Jobs of size 0 have ``M_i = r_i``; a job too short to move the clock, its start.
    ``O(n log n)``.
    """
    n = len(sizes)
    order = sorted(range(n), key=lambda k: (releases[k], k))
    remaining = [float(v) for v in sizes]
    moment = [0.0] * n
    processed = [0.0] * n
    first = [float(r) for r in releases]
    ready: list[tuple[float, float, int]] = []
    now, nxt = 0.0, 0
    while nxt < n or ready:
        if not ready:
            now = max(now, releases[order[nxt]])
        while nxt < n and releases[order[nxt]] <= now:
            k = order[nxt]
            density = weights[k] / sizes[k] if sizes[k] > 0 else math.inf
            heapq.heappush(ready, (-density, releases[k], k))
            nxt += 1
        k = ready[0][2]
        until = releases[order[nxt]] if nxt < n else math.inf
        finishes = now + remaining[k] <= until
        end = now + remaining[k] if finishes else until
        if processed[k] == 0.0:
            first[k] = now
        moment[k] += (end - now) * (end + now) / 2.0
        processed[k] += end - now
        # Decided by comparison, not by the remainder reaching 0: at large times
        # float subtraction can leave a residue no step would ever consume.
        remaining[k] = 0.0 if finishes else remaining[k] - (end - now)
        now = end
        if finishes:
            heapq.heappop(ready)
    return np.array(
        [moment[k] / processed[k] if processed[k] > 0 else first[k] for k in range(n)],
        dtype=float,
    )


def squashed_area_terms(inputs: BoundInputs) -> np.ndarray:
    """Bound 2, per job: SRPT's ``C_i`` on the squashed machine (unit weights), else
    ``w_i (M_i + v_i / 2)`` of Goemans' bound on it."""
    sizes = inputs.squashed
    if inputs.unit_weights:
        completions, _ = srpt(list(sizes), list(inputs.releases))
        return np.array([completions[str(k)] for k in range(len(sizes))], dtype=float)
    busy = preemptive_wspt_mean_busy_times(sizes, inputs.releases, inputs.weights)
    return np.asarray(inputs.weights * (busy + sizes / 2.0), dtype=float)


def mean_busy_time_terms(inputs: BoundInputs) -> np.ndarray:
    """Bound 3, per job: ``w_i (M_i^WSPT + p_i / 2)`` (module docstring)."""
    busy = preemptive_wspt_mean_busy_times(inputs.squashed, inputs.releases, inputs.weights)
    return np.asarray(inputs.weights * (busy + inputs.processing / 2.0), dtype=float)


LAGRANGIAN_ROUNDS = 40
"""Most subgradient steps of the Lagrangian bound (each one preemptive WSPT, ``O(n log n)``:
about 0.025 s per 1,000 jobs on this machine)."""

LAGRANGIAN_JOB_STEPS = 1_000_000
"""Steps times jobs at most: fewer steps on large instances (12 on the whole Philly trace, about
6 s), so the fast bounds stay fast; a count of jobs, never a clock, decides."""


def lagrangian_terms(inputs: BoundInputs, rounds: int | None = None) -> np.ndarray:
    """Bound 5, per job: ``(w_i - lambda_i)(r_i + p_i) + lambda_i (M_i^lambda + p_i / 2)``
    for the best multipliers ``lambda`` found (module docstring).

    Starts from the split ``lambda_i = w_i`` where the fluid term beats the floor and
    0 elsewhere, then follows the subgradient ``M_i^lambda + p_i / 2 - r_i - p_i``,
    projected on ``[0, w_i]``, with a first step of 0.3 (relative to the mean slope),
    halved after three rounds without progress (of the settings tried on batch and trace
    instances, the most even).
    Every ``lambda`` tried gives a valid bound; the largest is kept.
    """
    if rounds is None:
        rounds = min(LAGRANGIAN_ROUNDS, LAGRANGIAN_JOB_STEPS // max(1, len(inputs.weights)))
    weights = inputs.weights
    floors = job_terms(inputs)

    def evaluate(multipliers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        busy = preemptive_wspt_mean_busy_times(inputs.squashed, inputs.releases, multipliers)
        fluid = busy + inputs.processing / 2.0
        terms = (weights - multipliers) * (inputs.releases + inputs.processing)
        return terms + multipliers * fluid, fluid - inputs.releases - inputs.processing

    best, slope = evaluate(weights)
    multipliers = np.where(slope >= 0, weights, 0.0)
    step, stalled = 0.3, 0
    for _ in range(rounds):
        terms, slope = evaluate(multipliers)
        if terms.sum() > best.sum():
            best, stalled = terms, 0
        else:
            stalled += 1
            if stalled == 3:
                step, stalled = step / 2.0, 0
        scale = float(np.mean(np.abs(slope)))
        if scale == 0.0:
            break
        multipliers = np.clip(multipliers + step * weights * slope / scale, 0.0, weights)
    return best if best.sum() > floors.sum() else floors


RANK_WEIGHT_LEVELS = 16
"""Most layers of the rank bound with weights (one SRPT each): more distinct weights are
rounded down to this many of them, evenly spread over their sorted list."""


def rank_terms(inputs: BoundInputs) -> np.ndarray:
    """Bound 8, as terms: per layer of weight, each rank's ``max(a_(k), s_(k))`` given to
    the job of that rank of release, plus each job's rounded-off weight times its floor
    (module docstring). With unit weights, one layer: :func:`rank_combined`'s terms."""
    floors = inputs.releases + inputs.processing
    levels = _weight_levels(inputs.weights)
    rounded = levels[np.searchsorted(levels, inputs.weights, side="right") - 1]
    terms = (inputs.weights - rounded) * floors
    below = 0.0
    for level in levels:
        layer = np.flatnonzero(rounded >= level)
        terms[layer] += (level - below) * _layer_ranks(inputs, layer, floors)
        below = level
    return np.asarray(terms, dtype=float)


def _weight_levels(weights: np.ndarray) -> np.ndarray:
    """The rank bound's levels: the distinct weights, ascending, or
    :data:`RANK_WEIGHT_LEVELS` of them, the least among them (every job has a level at
    most its weight)."""
    distinct = np.unique(weights)
    if len(distinct) <= RANK_WEIGHT_LEVELS:
        return distinct
    picks = np.rint(np.linspace(0, len(distinct) - 1, RANK_WEIGHT_LEVELS)).astype(int)
    return np.asarray(distinct[np.unique(picks)])


def _layer_ranks(inputs: BoundInputs, layer: np.ndarray, floors: np.ndarray) -> np.ndarray:
    """The unit-weight rank bound of the jobs ``layer`` alone (their own SRPT on the
    squashed machine), rank ``k``'s term given to the layer's ``k``-th job by release."""
    releases = inputs.releases[layer]
    completions, _ = srpt(inputs.squashed[layer].tolist(), releases.tolist())
    ranked = rank_combined(
        floors[layer].tolist(), [completions[str(k)] for k in range(len(layer))]
    )
    shares = np.empty(len(layer))
    shares[np.argsort(releases, kind="stable")] = ranked
    return shares


def _flow_terms(inputs: BoundInputs, terms: np.ndarray) -> np.ndarray:
    """``t_i - w_i r_i``: each job's share of a bound on the flow time (module docstring)."""
    return terms - inputs.weights * inputs.releases


def flow_allowance(inputs: BoundInputs) -> float:
    """``A = (n + 4) ulp(T) sum_i w_i``, with ``T = max_i r_i + sum_i p_i + max_i p_i``:
    the most floating-point rounding can add to a fast bound's flow value ("Flow time" in
    the module docstring)."""
    if not len(inputs.releases):
        return 0.0
    largest = float(
        np.max(np.abs(inputs.releases)) + np.sum(inputs.processing) + np.max(inputs.processing)
    )
    per_job = (len(inputs.releases) + 4) * float(np.spacing(largest))
    return per_job * math.fsum(inputs.weights.tolist())


def safe_flow_value(inputs: BoundInputs, flow: float) -> float:
    """A flow value computed in floating point (``flow``, before :data:`SAFETY`), made safe:
    ``max(sum_i w_i p_i, flow - A)`` times :data:`SAFETY` (:func:`flow_allowance`)."""
    floors = math.fsum((inputs.weights * inputs.processing).tolist())
    return max(floors, flow - flow_allowance(inputs)) * SAFETY


def job_bound(inputs: BoundInputs) -> float:
    """Bound 1: ``sum_i w_i (r_i + p_i)``."""
    return _total(job_terms(inputs))


def _total(terms: np.ndarray) -> float:
    """A sum of per-job terms as a bound: summed exactly, then made safe (:data:`SAFETY`)."""
    return math.fsum(terms.tolist()) * SAFETY


def proven_grid(instance: Instance) -> float | None:
    """The coarsest slot on which the instance is provably integral, or ``None``.

    The slot is ``instance.slot`` times the greatest common divisor of every
    release and every *term* of every duration, each counted in slots: per
    job, ``K_i c_i(t)`` for each GPU type ``t`` of the cluster and ``K_i q_e /
    B`` for each edge and each bandwidth ``B`` (inter-server, and intra-server
    of each type). ``K_i alpha_i(x)`` under any mapping ``x`` is the largest
    used type's compute term plus one such term per edge, so every duration
    over all mappings, like every release, is a multiple of that slot: the
    instance is integral on it (:ref:`model-time`), which is what the LP on the grid
    needs (:func:`lp_bound`). The generator's integral mode makes every term a
    multiple of the slot by construction. ``None`` when some term or release
    is not a multiple of ``instance.slot``: the test is sufficient, not
    necessary (terms off the grid may still add up to durations on it), and
    needs no mapping, so it costs ``O(edges x types)`` on any cluster.
    """
    cluster, slot = instance.cluster, instance.slot
    bandwidths = {cluster.bandwidth_inter, *(cluster.intra_of(t) for t in cluster.types)}
    divisor = 0
    for job in instance.jobs:
        values = [job.release]
        values += [job.iterations * job.compute_on(t) for t in cluster.types]
        values += [job.iterations * q / b for _, _, q in job.edges for b in bandwidths]
        for value in values:
            if not on_grid(value, slot):
                return None
            divisor = math.gcd(divisor, round(value / slot))
    return slot * max(1, divisor)


LP_SLOTS_PER_SHORTEST_JOB = 10
"""Off a proven grid, the LP's slot is the shortest least duration ``min_i p_i`` over this:
rounding each duration and release down then costs each job at most a tenth of the shortest
job's duration (a finer slot only where the variable budget would otherwise be exceeded is
never used: the budget is a cap, not a target)."""


@dataclass(frozen=True)
class LpSettings:
    """Settings of the LP bound.

    Attributes
    ----------
    max_variables
        A cap on the LP's size: the slot comes from the instance
        (:func:`lp_bound`) and is made coarser only where that slot would
        take more variables than this (default 400,000).
    time_limit
        Seconds for HiGHS; a limit reached makes the bound invalid (default 300).
    threads
        HiGHS threads (``None``: its default).
    integer
        Solve the time-indexed model with integral starts (bound 7, ``"pooled"``)
        instead of its LP relaxation (default ``False``).
    node_limit
        Branch-and-bound nodes for the integral model (HiGHS ``mip_max_nodes``;
        ``None``: no limit): a deterministic stop, whose dual bound is still valid.
    memory_limit
        Bytes the model may need (default
        :data:`~ddlsched.core.params.DEFAULT_MEMORY_LIMIT`, 2 GiB; ``None``: no limit):
        a second cap on the variables, by :data:`ddlsched.formulations.memory.LP_BOUND`
        (:data:`~ddlsched.formulations.memory.POOLED_BOUND` for the integral model). Where
        it is the tighter cap the slot is coarsened, with a note; below the model's fixed
        part the bound is skipped (reported invalid, with a note).
    """

    max_variables: int = 400_000
    time_limit: float = 300.0
    threads: int | None = None
    integer: bool = False
    node_limit: int | None = None
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT

    def __post_init__(self) -> None:
        if not isinstance(self.max_variables, int) or self.max_variables < 2:
            raise ValueError(f"max_variables: must be an integer >= 2, got {self.max_variables!r}")
        if not (math.isfinite(self.time_limit) and self.time_limit > 0):
            raise ValueError(f"time_limit: must be a finite number > 0, got {self.time_limit!r}")
        if self.node_limit is not None and (
            not isinstance(self.node_limit, int) or self.node_limit < 0
        ):
            raise ValueError(f"node_limit: must be an integer >= 0, got {self.node_limit!r}")
        if self.memory_limit is not None and (
            not isinstance(self.memory_limit, int) or self.memory_limit < 1
        ):
            raise ValueError(
                f"memory_limit: must be an integer >= 1 (bytes), got {self.memory_limit!r}"
            )


def time_indexed_bound(
    instance: Instance,
    inputs: BoundInputs,
    settings: LpSettings | None = None,
    upper_bound: float | None = None,
    slot: float | None = None,
) -> tuple[LowerBound, list[float] | None]:
    """Bound 4, the LP relaxation of the coarse time-indexed model, or bound 7, the
    same model with integral starts (``settings.integer``), and for bound 7 the starts
    (seconds, one per job) of the best integral solution HiGHS found, if any: a
    schedule of the pooled relaxation, not of A, but a good order to place jobs in.

    The slot comes from the instance. On an *integral* instance (:ref:`model-time`:
    every release and every ``K_i alpha_i(x)`` over all mappings a multiple of
    the slot) it is that grid: ``slot`` if given, else
    :func:`proven_grid`. Some optimal schedule then starts every job on that
    grid, runs it whole slots, and maps to the LP with nothing rounded, so the
    LP is a relaxation of it: both stronger and smaller than a finer grid
    (every solution of the coarse LP is one of the fine LP, slot for slot);
    releases and durations are then rounded *up* to it (the grid start of a
    job is at least its release, and its true duration, a multiple of the
    slot, at least ``p_i``). Otherwise the slot is ``min_i p_i /``
    :data:`LP_SLOTS_PER_SHORTEST_JOB`, with releases and durations rounded
    down. ``settings.max_variables`` only caps the size: a slot that would
    exceed it is coarsened to fit (off the grid, rounding down, always valid).

    ``upper_bound``, the objective of any feasible schedule, shortens each
    job's window: in every optimal schedule ``w_i C_i <= UB - sum_{j != i}
    w_j (r_j + p_j)``, so job ``i`` starts by that bound minus ``p_i``. The
    finer slot this allows makes the LP stronger; without it every job may
    start until the makespan bound ``max_i r_i + sum_i K_i alpha_i^max``.
    """
    settings = settings or LpSettings()
    began = time.perf_counter()
    name = "pooled" if settings.integer else "lp"
    capped, why = _memory_cap(settings)
    if capped is None:
        return LowerBound(math.nan, name, False, 0.0, (*inputs.notes(), why)), None
    settings = capped
    grid = time_grid(instance, inputs, settings, upper_bound, slot)
    model, rhs = _model(grid, inputs, settings)
    constant = _constant(grid, inputs)
    notes = (
        *inputs.notes(),
        f"slot {grid.delta:.6g} s, {grid.slots} slots, {grid.columns} variables",
        *((why,) if why else ()),
    )
    if upper_bound is not None:
        notes = (*notes, f"windows from an upper bound of {upper_bound:.8g}")
    if grid.columns == 0:  # every start is fixed: the LP is its constant, if capacity holds
        return _fixed_bound(constant, rhs, inputs, name, notes, began), None
    model.run()
    objective, notes = _objective(model, settings, notes)
    if objective is None:
        return LowerBound(math.nan, name, False, time.perf_counter() - began, notes), None
    objective = objective * _cost_unit(grid, inputs)
    objective = _on_grid_multiple(objective + constant, grid, inputs, settings)
    flow = safe_flow_value(inputs, objective - inputs.release_weight)
    bound = LowerBound(objective * SAFETY, name, True, time.perf_counter() - began, notes, flow)
    return bound, _integral_starts(model, grid, settings)


def _memory_cap(settings: LpSettings) -> tuple[LpSettings | None, str]:
    """``settings`` with ``max_variables`` lowered to what ``memory_limit`` affords
    (:data:`~ddlsched.formulations.memory.LP_BOUND`,
    :data:`~ddlsched.formulations.memory.POOLED_BOUND`), and a note where it was lowered
    (empty otherwise): the slot is then coarser, which keeps the bound valid. ``None``
    where the limit does not afford two variables: the model is not built."""
    if settings.memory_limit is None:
        return settings, ""
    footprint = POOLED_BOUND if settings.integer else LP_BOUND
    affordable = footprint.affordable(settings.memory_limit)
    if affordable >= settings.max_variables:
        return settings, ""
    limit = f"{settings.memory_limit / MiB:,.0f} MiB"
    if affordable < 2:
        return None, (
            f"not built: {footprint.model} needs about {footprint.base / MiB:,.0f} MiB "
            f"before its first variable, over the memory limit of {limit}"
        )
    note = (
        f"variables capped at {affordable:,} (max_variables {settings.max_variables:,}) by "
        f"the memory limit of {limit}: a coarser slot"
    )
    return dataclasses.replace(settings, max_variables=int(affordable)), note


@dataclass(frozen=True)
class TimeGrid:
    """The slots of the time-indexed model (:func:`time_indexed_bound`).

    Job ``i`` is released in slot ``release_slot[i]``, runs ``duration[i]`` slots of
    ``delta`` seconds and starts by slot ``last[i]``; its variables ``X_{i,t} = P(start
    <= t)`` for ``t`` in ``[release_slot[i], last[i])`` are the columns from
    ``first_column[i]`` on, ``columns`` in all, over ``slots`` slots. ``on_grid``: the
    slot is the instance's own grid, where releases and durations are exact.
    """

    delta: float
    on_grid: bool
    release_slot: np.ndarray
    duration: np.ndarray
    last: np.ndarray
    slots: int
    first_column: np.ndarray
    columns: int

    def term(self, i: int, t: int) -> int | float:
        """X_{i,t}: its column, or the constant 0 (before R_i) or 1 (from L_i on)."""
        if t < self.release_slot[i]:
            return 0.0
        if t >= self.last[i]:
            return 1.0
        return int(self.first_column[i] + t - self.release_slot[i])


def time_grid(
    instance: Instance,
    inputs: BoundInputs,
    settings: LpSettings,
    upper_bound: float | None,
    slot: float | None,
) -> TimeGrid:
    """The model's slots: their width (:func:`_slot_width`), each job's release, duration
    and latest start in slots, and its columns."""
    latest_start, makespan = _latest_starts(instance, inputs, upper_bound)
    delta, on_grid = _slot_width(instance, inputs, settings, latest_start, makespan, slot)
    r, p = inputs.releases, inputs.processing
    if on_grid:
        # Some optimum starts on the grid and every true duration is a multiple of the slot
        # at least p_i: releases and durations are whole numbers of slots up to the noise
        # on_grid forgives, so they round to the nearest (never a whole slot up).
        release_slot = np.rint(r / delta).astype(int)
        duration = np.rint(p / delta).astype(int)
    else:
        # Rounded down, with a bias against rounding error, so no job is made later or longer.
        release_slot = np.floor(r / delta * (1 - 1e-12)).astype(int)
        duration = np.floor(p / delta * (1 - 1e-12)).astype(int)
    # A latest start is rounded up, so no start of an optimal schedule is cut off.
    last = np.maximum(np.ceil(latest_start / delta * (1 + 1e-12)).astype(int), release_slot)
    # X_{i,t} for t in [R_i, L_i) are columns; X = 0 before R_i and 1 from L_i on.
    first_column = np.concatenate(([0], np.cumsum(last - release_slot)))
    return TimeGrid(
        delta=delta,
        on_grid=on_grid,
        release_slot=release_slot,
        duration=duration,
        last=last,
        slots=int(np.max(last)) + 1,
        first_column=first_column,
        columns=int(first_column[-1]),
    )


def _latest_starts(
    instance: Instance, inputs: BoundInputs, upper_bound: float | None
) -> tuple[np.ndarray, float]:
    """Each job's latest start in an optimal schedule (seconds), and the makespan bound
    ``max_i r_i + sum_i K_i alpha_i^max`` that caps them all: with ``upper_bound``, job
    ``i`` starts by ``(UB - sum_{j != i} w_j (r_j + p_j)) / w_i - p_i`` (never before
    its release)."""
    w, r, p = inputs.weights, inputs.releases, inputs.processing
    makespan = float(np.max(r)) + sum(
        job.iterations * all_cut_alpha(job, instance.cluster) for job in instance.jobs
    )
    latest_start = np.full(len(instance.jobs), makespan)
    if upper_bound is not None and math.isfinite(upper_bound):
        others = float(np.sum(w * (r + p))) - w * (r + p)
        latest_start = np.minimum(latest_start, (upper_bound - others) / w - p)
    return np.maximum(latest_start, r), makespan


def _slot_width(
    instance: Instance,
    inputs: BoundInputs,
    settings: LpSettings,
    latest_start: np.ndarray,
    makespan: float,
    slot: float | None,
) -> tuple[float, bool]:
    """The slot's width in seconds, and whether it is the instance's own grid (``slot``,
    else :func:`proven_grid`): that grid unless it is finer than the variable budget
    allows, else :data:`LP_SLOTS_PER_SHORTEST_JOB` slots to the shortest job."""
    r, p = inputs.releases, inputs.processing
    span = float(np.sum(latest_start - r))
    # The finest slot the variable budget allows (a cap; never more slots than it either).
    finest = max(
        span / settings.max_variables,
        float(np.max(latest_start)) / settings.max_variables,
        1e-9 * max(1.0, makespan),
    )
    if slot is None:
        slot = proven_grid(instance)
    if slot is not None and slot >= finest:
        return float(slot), True
    shortest = float(np.min(p[p > 0])) if np.any(p > 0) else makespan
    return max(finest, shortest / LP_SLOTS_PER_SHORTEST_JOB), False


def _model(
    grid: TimeGrid, inputs: BoundInputs, settings: LpSettings
) -> tuple[highspy.Highs, np.ndarray]:
    """The model in HiGHS (``highspy``'s matrix interface), and each slot's capacity row's
    right-hand side (:func:`_add_capacity_rows`)."""
    from ddlsched.core.highs import new_highs

    model = new_highs()
    model.setOptionValue("output_flag", False)
    model.setOptionValue("time_limit", float(settings.time_limit))
    if settings.threads is not None:
        # One HiGHS thread scheduler per process, sized by its first solve: reset it, or a
        # count other than the first one's fails ('Not Set'; see ddlsched.formulations.solver).
        type(model).resetGlobalScheduler(True)
        model.setOptionValue("threads", int(settings.threads))
    _add_columns(model, grid, inputs, settings)
    _add_monotone_rows(model, grid)
    return model, _add_capacity_rows(model, grid, inputs)


def _add_columns(
    model: highspy.Highs, grid: TimeGrid, inputs: BoundInputs, settings: LpSettings
) -> None:
    """The variables ``X_{i,t}`` in ``[0, 1]``, integral for bound 7, each costing ``-w_i
    delta``, in units of :func:`_cost_unit`: every slot by which job ``i`` has started
    takes ``w_i delta`` off the latest start counted in :func:`_constant`."""
    import highspy

    columns, first_column = grid.columns, grid.first_column
    costs = np.zeros(columns)
    for i in range(len(first_column) - 1):
        costs[first_column[i] : first_column[i + 1]] = -inputs.weights[i] * grid.delta
    costs /= _cost_unit(grid, inputs)
    model.addVars(columns, np.zeros(columns), np.ones(columns))
    model.changeColsCost(columns, np.arange(columns, dtype=np.int32), costs)
    if settings.integer and columns:
        model.changeColsIntegrality(
            columns,
            np.arange(columns, dtype=np.int32),
            np.full(columns, highspy.HighsVarType.kInteger),
        )
        if settings.node_limit is not None:
            model.setOptionValue("mip_max_nodes", int(settings.node_limit))


def _cost_unit(grid: TimeGrid, inputs: BoundInputs) -> float:
    """Seconds times weight of one unit of the model's objective: a slot of the heaviest
    job. HiGHS's tolerances are absolute (1e-7 on a reduced cost): costs in seconds on
    jobs of 1e-8 s would all look like zero to it, and its optimum, any point, lay above
    the instance's optimum (1.18e-6 against 7.65e-7 on five such jobs)."""
    heaviest = float(np.max(inputs.weights)) if inputs.weights.size else 1.0
    return grid.delta * heaviest


def _add_monotone_rows(model: highspy.Highs, grid: TimeGrid) -> None:
    """Monotone: X_{i,t} - X_{i,t-1} >= 0."""
    import highspy

    starts, index, value = [0], [], []
    for i in range(len(grid.last)):
        for t in range(grid.release_slot[i] + 1, grid.last[i]):
            index += [grid.term(i, t), grid.term(i, t - 1)]
            value += [1.0, -1.0]
            starts.append(len(index))
    if len(starts) > 1:
        model.addRows(
            len(starts) - 1,
            np.zeros(len(starts) - 1),
            np.full(len(starts) - 1, highspy.kHighsInf),
            len(index),
            np.array(starts[:-1], dtype=np.int32),
            np.array(index, dtype=np.int32),
            np.array(value),
        )


def _add_capacity_rows(model: highspy.Highs, grid: TimeGrid, inputs: BoundInputs) -> np.ndarray:
    """Capacity per slot: sum_i g_i (X_{i,s} - X_{i,s-d_i}) <= M, constants moved right;
    the right-hand sides."""
    import highspy

    entries, rhs = _capacity(grid, inputs)
    starts, index, value = [0], [], []
    for row in entries:
        index += list(row)
        value += list(row.values())
        starts.append(len(index))
    model.addRows(
        grid.slots,
        np.full(grid.slots, -highspy.kHighsInf),
        rhs,
        len(index),
        np.array(starts[:-1], dtype=np.int32),
        np.array(index, dtype=np.int32),
        np.array(value),
    )
    return rhs


def _capacity(grid: TimeGrid, inputs: BoundInputs) -> tuple[list[dict[int, float]], np.ndarray]:
    """The capacity rows of :func:`_add_capacity_rows`: per slot, each column's coefficient,
    and the GPUs left once the constant ``X`` (0 or 1) are moved right."""
    entries: list[dict[int, float]] = [{} for _ in range(grid.slots)]
    rhs = np.full(grid.slots, float(inputs.num_gpus))
    for i, duration in enumerate(grid.duration):
        if duration == 0:
            continue
        g = float(inputs.gpus[i])
        for s in range(grid.release_slot[i], min(grid.slots, grid.last[i] + duration)):
            for t, sign in ((s, 1.0), (s - duration, -1.0)):
                x = grid.term(i, t)
                if isinstance(x, int):
                    entries[s][x] = entries[s].get(x, 0.0) + sign * g
                else:
                    rhs[s] -= sign * g * x
    return entries, rhs


def _constant(grid: TimeGrid, inputs: BoundInputs) -> float:
    """The objective's constant: ``sum_i w_i (delta L_i + max(p_i, delta d_i))``, to which
    the columns' costs are added."""
    w, p = inputs.weights, inputs.processing
    return float(np.sum(w * (grid.delta * grid.last + np.maximum(p, grid.delta * grid.duration))))


def _fixed_bound(
    constant: float,
    rhs: np.ndarray,
    inputs: BoundInputs,
    name: str,
    notes: tuple[str, ...],
    began: float,
) -> LowerBound:
    """The bound of a model without columns (every start fixed): its constant, valid if
    capacity holds."""
    fits = bool(np.all(rhs >= -1e-9))
    fixed = constant * SAFETY if fits else math.nan
    flow = safe_flow_value(inputs, constant - inputs.release_weight) if fits else math.nan
    return LowerBound(fixed, name, fits, time.perf_counter() - began, notes, flow)


def _objective(
    model: highspy.Highs, settings: LpSettings, notes: tuple[str, ...]
) -> tuple[float | None, tuple[str, ...]]:
    """The solved model's value to trust as a bound (``None``: none) and the notes saying
    how HiGHS stopped."""
    import highspy

    status = model.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        # An integral model's "optimal" is HiGHS's within its gap tolerances: its dual
        # bound, never above the optimum, is the value to trust either way.
        found = model.getInfo().mip_dual_bound if settings.integer else None
        objective = model.getInfo().objective_function_value if found is None else found
        return objective, notes
    if settings.integer and math.isfinite(model.getInfo().mip_dual_bound):
        # Stopped early (time, nodes): the dual bound still bounds the integral optimum.
        stopped = f"HiGHS stopped ({model.modelStatusToString(status)}): its dual bound"
        return model.getInfo().mip_dual_bound, (*notes, stopped)
    return None, (*notes, f"HiGHS stopped: {model.modelStatusToString(status)}")


def _on_grid_multiple(
    objective: float, grid: TimeGrid, inputs: BoundInputs, settings: LpSettings
) -> float:
    """``objective``, rounded up to a multiple of the slot where every on-grid schedule's
    objective is one (bound 7 on the instance's own grid with integral weights)."""
    if settings.integer:
        return grid_multiple(objective, grid, inputs)
    return objective


def grid_multiple(objective: float, grid: TimeGrid, inputs: BoundInputs) -> float:
    """A bound on an integral model's optimum (``objective``), rounded up to a multiple of
    the slot where every schedule of A on the instance's own grid has such an objective
    (integral weights), ``OPT(A)`` among them; unchanged otherwise."""
    if grid.on_grid and np.all(inputs.weights == np.round(inputs.weights)):
        # With a relative allowance for HiGHS's tolerances, so a bound of 212 - 1e-7 is
        # 212, and 212 + 1e-7 is not 213.
        steps = objective / grid.delta
        return grid.delta * math.ceil(steps - 1e-6 * max(1.0, abs(steps)))
    return objective


def _integral_starts(
    model: highspy.Highs, grid: TimeGrid, settings: LpSettings
) -> list[float] | None:
    """Bound 7's starts (seconds): each job's first slot with ``X_{i,t} = 1`` in HiGHS's
    best integral solution, or ``None`` without one (or for the LP)."""
    if not (settings.integer and model.getInfo().primal_solution_status == 2):  # feasible
        return None
    values = np.asarray(model.getSolution().col_value)
    return [
        grid.delta
        * next(
            (
                t
                for t in range(grid.release_slot[i], grid.last[i])
                if values[int(grid.term(i, t))] > 0.5
            ),
            int(grid.last[i]),
        )
        for i in range(len(grid.last))
    ]


def lp_bound(
    instance: Instance,
    inputs: BoundInputs,
    settings: LpSettings | None = None,
    upper_bound: float | None = None,
    slot: float | None = None,
) -> LowerBound:
    """Bound 4, or bound 7 with ``settings.integer`` (:func:`time_indexed_bound`)."""
    return time_indexed_bound(instance, inputs, settings, upper_bound, slot)[0]


TermsFunction = Callable[[BoundInputs], np.ndarray]

BOUNDS: Registry[TermsFunction] = Registry("lower bound")
"""The fast bounds (``O(n log n)``) by name, each as its per-job terms (their sum is the
bound on ``sum w C``; minus ``w_i r_i`` each, on the flow time; bound 8's are shares by
rank of release, not per-job bounds); :func:`lp_bound` is separate (it needs settings)."""
BOUNDS.add("job", job_terms, "sum w (r + K alpha_min)")
BOUNDS.add("squashed-area", squashed_area_terms, "SRPT / mean busy time on the squashed machine")
BOUNDS.add("mean-busy-time", mean_busy_time_terms, "WSPT mean busy time plus half the duration")
BOUNDS.add("lagrangian", lagrangian_terms, "floors and mean busy time, job by job, by multipliers")
BOUNDS.add("rank", rank_terms, "floors and SRPT's completions, rank by rank, by layer of weight")

PREEMPTIVE_BOUNDS: tuple[str, ...] = (
    "job",
    "squashed-area",
    "mean-busy-time",
    "lagrangian",
    "rank",
)
"""The bounds that also bound the optimum of the preemptive model, each proved in the module
docstring: the fast ones, none of the time-indexed ones (``"lp"``, ``"pooled"``,
``"solver-dual"``, ``"start-lagrangian"``)."""


def lower_bounds(
    instance: Instance,
    names: Sequence[str] | None = None,
    lp: LpSettings | None = None,
    inputs: BoundInputs | None = None,
    upper_bound: float | None = None,
    pooled: LpSettings | None = None,
    slot: float | None = None,
) -> list[LowerBound]:
    """Every requested bound (default: the fast ones; the LP too when ``lp`` is given,
    the pooled integral bound when ``pooled`` is, both with job windows from
    ``upper_bound``, a feasible schedule's objective, if known, and on the grid ``slot``
    of an integral instance if given (see :func:`lp_bound`). Each carries its bound on
    the flow time too (:attr:`LowerBound.flow_value`)."""
    began = time.perf_counter()
    inputs = inputs or BoundInputs.of(instance)
    shared = time.perf_counter() - began
    chosen = list(names) if names is not None else list(BOUNDS.names())
    BOUNDS.check(chosen, "bounds")
    found = []
    for name in chosen:
        start = time.perf_counter()
        terms = BOUNDS[name](inputs)
        found.append(
            LowerBound(
                _total(terms),
                name,
                True,
                shared + time.perf_counter() - start,
                inputs.notes(),
                flow_value=safe_flow_value(inputs, math.fsum(_flow_terms(inputs, terms).tolist())),
            )
        )
    if lp is not None:
        lp = dataclasses.replace(lp, integer=False)
        found.append(lp_bound(instance, inputs, lp, upper_bound, slot))
    if pooled is not None:
        pooled = dataclasses.replace(pooled, integer=True)
        found.append(lp_bound(instance, inputs, pooled, upper_bound, slot))
    return found
