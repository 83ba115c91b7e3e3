"""Memory guards: each model's peak resident memory estimated from its size, checked
against a limit before the model is built.

A model is refused with :class:`ModelTooLarge` (one line naming the model, the estimate,
the limit and what to change) when its :class:`Footprint` over its size (variables,
nonzeros, (job, slot) pairs, intervals, table entries) exceeds the limit: by default
:data:`~ddlsched.core.params.DEFAULT_MEMORY_LIMIT` (2 GiB), set by
:attr:`~ddlsched.core.params.ExactParams.memory_limit` (``ddlsched solve --memory-limit``
in GiB) for the exact models and by the ``memory_limit`` of each bound's settings. A
bound that stays valid on a coarser grid coarsens instead of refusing, with a note.

**How the constants were measured.** On the 2-core, 24 GB VM, one fresh process per
size, the peak resident memory read with ``resource.getrusage(RUSAGE_SELF).ru_maxrss``
after building the model and solving it with one thread (the process's baseline with the
solver imported, 60-80 MiB, is inside ``base``). Each constant rounds the largest
measured bytes per item up, and ``base`` covers the interpreter, the solver library and
the model's fixed parts. Memory still grows with the search (HiGHS's tree, CP-SAT's
clauses), so the constants are set for searches of about a minute, with margin; the
figures behind each are in its docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ddlsched.core.model import InputError

MiB = 2**20
KiB = 2**10

DEFAULT_ADVICE_KNOB = "ExactParams.memory_limit; ddlsched solve --memory-limit GIB"
"""Where an exact model's limit is raised, as refusals name it."""


class ModelTooLarge(InputError):
    """A model refused before it was built: too many variables or slots for its grid, or
    more memory than the limit allows. Bad input for the settings given (the command
    line's exit 2, one line), never a bug: ``compare --exact milp`` on 24 batch jobs ended
    with exit 3 once its MILP was refused."""


@dataclass(frozen=True)
class Footprint:
    """A model's peak resident memory in bytes: ``base`` plus, for each kind of item of its
    size, that many bytes per item.

    Attributes
    ----------
    model
        The model's name, as refusals give it.
    base
        Bytes of a process holding the model's solver and its fixed parts.
    per_item
        ``(what, bytes)`` per kind of item: ``("(job, slot) pairs", 16 * KiB)``.
    """

    model: str
    base: int
    per_item: tuple[tuple[str, int], ...]

    def estimate(self, *counts: int) -> int:
        """The estimated peak in bytes of a model of ``counts`` items, one per kind, in the
        order of :attr:`per_item`."""
        return self.base + sum(
            count * size for count, (_, size) in zip(counts, self.per_item, strict=True)
        )

    def affordable(self, limit: int, kind: int = 0) -> int:
        """The most items of kind ``kind`` a model of no other items can have within
        ``limit`` bytes (0 when even the base exceeds it)."""
        return max(0, (limit - self.base) // self.per_item[kind][1])

    def check(
        self,
        counts: Sequence[int],
        limit: int | None,
        advice: str,
        knob: str = DEFAULT_ADVICE_KNOB,
    ) -> None:
        """Refuse a model of ``counts`` items whose estimate exceeds ``limit`` bytes
        (``None``: no limit).

        Raises
        ------
        ModelTooLarge
            In one line: the model, its size, the estimate, the limit, ``advice`` (what to
            change in the input) and ``knob`` (where the limit is raised).
        """
        if limit is None:
            return
        estimate = self.estimate(*counts)
        if estimate <= limit:
            return
        size = ", ".join(
            f"{count:,} {what}" for count, (what, _) in zip(counts, self.per_item, strict=True)
        )
        raise ModelTooLarge(
            f"{self.model}: about {estimate / MiB:,.0f} MiB estimated to build and solve "
            f"({size}), over the memory limit of {limit / MiB:,.0f} MiB; {advice}, or raise "
            f"the limit ({knob})"
        )


A2_MILP = Footprint("problem A2's MILP (HiGHS)", 200 * MiB, (("(job, slot) pairs", 64 * KiB),))
"""Pyomo's model of :mod:`ddlsched.formulations.problem_a2` (three variables and four rows
per pair) and HiGHS's search, whose tree grows with time. Measured on 4 Philly jobs on 2 x 4
GPUs, the slot enlarged, one thread: after 15 s of search 11,037 pairs 327 MiB, 22,058
pairs 484 MiB, 44,108 pairs 703 MiB; after 60 s 11,037 pairs 532 MiB (42 KiB a pair above
the 71 MiB baseline) and 22,058 pairs 495 MiB. An earlier measurement of the race at
19,611 pairs held 2.0 GiB within 60 s, HiGHS the larger part: 64 KiB a pair covers it."""

A2_CPSAT = Footprint("problem A2's CP-SAT model", 150 * MiB, (("(job, slot) pairs", 4 * KiB),))
"""CP-SAT's model of problem A2 (a boolean and an enforced linear constraint per pair,
solved without presolve). Measured as :data:`A2_MILP`, 15 s of search: 11,037 pairs 178 MiB,
22,058 pairs 206 MiB, 44,108 pairs 278 MiB (under 3 KiB a pair above about 150 MiB)."""

A2_RACE = Footprint(
    "problem A2's MILP and CP-SAT model, raced (exact)",
    A2_MILP.base + A2_CPSAT.base,
    (("(job, slot) pairs", A2_MILP.per_item[0][1] + A2_CPSAT.per_item[0][1]),),
)
"""Both models of problem A2 at once, as the portfolio ``exact`` runs them (each in a
process of its own: the sum of the two)."""

SLOTTED_MILP = Footprint(
    "the time-indexed MILP (HiGHS)",
    200 * MiB,
    (("start variables", 32 * KiB), ("nonzeros", 256)),
)
"""The time-indexed Pyomo model of problems A and A1 (:mod:`ddlsched.formulations.timeindexed`)
and HiGHS's search, which dominates: generated integral instances on 4 x 4 GPUs, 10 s of
search, 16 jobs (3,222 variables, 155,475 nonzeros) 216 MiB, 20 jobs (8,964 variables,
711,662 nonzeros) 322 MiB, of which building took 202 MiB."""

CPSAT_INTERVALS = Footprint(
    "the CP-SAT interval model", 200 * MiB, (("mode intervals", 16 * KiB),)
)
"""CP-SAT's interval models of problems A and A1, slotted (:mod:`ddlsched.formulations.cpsat`)
and in continuous time (:mod:`ddlsched.formulations.continuous`): a boolean, an optional
interval and an entry in a cumulative or two per mode, none per slot. Generated integral
instances on 4 x 4 GPUs, 10 s of search: 16 jobs (374 modes) 143 MiB, 24 jobs (617 modes)
147 MiB, nearly all of it OR-Tools itself; 16 KiB a mode is a wide margin."""

LP_BOUND = Footprint("the time-indexed LP bound (HiGHS)", 150 * MiB, (("columns", 1536),))
"""The LP of :func:`ddlsched.formulations.lower_bounds.lp_bound` (about four nonzeros a
column, built through Python lists): 200 generated jobs on 8 x 8 GPUs, 100,200 columns
175 MiB and 400,200 columns 548 MiB (1.25 KiB a column above a base of 60 MiB)."""

POOLED_BOUND = Footprint("the pooled integral bound (HiGHS)", 150 * MiB, (("columns", 4 * KiB),))
"""The same model with integral starts, solved by HiGHS's branch and bound, whose tree
grows with the search: 100,200 columns (200 generated jobs on 8 x 8 GPUs) 222 MiB after
20 s (1.7 KiB a column above a base of 60 MiB); 4 KiB a column leaves room for longer
searches."""

START_LAGRANGIAN = Footprint(
    "the start-time Lagrangian bound",
    100 * MiB,
    (
        ("least-multiplier table entries", 32),
        ("(job, block) pairs", 32),
        ("(job, block) pairs of a chunk", 100),
    ),
)
"""The tables of :mod:`ddlsched.formulations.start_lagrangian`: the sparse table of least
multipliers (a value and a position per entry, built level by level and then joined: 32
bytes at the peak), each (job, block) pair's waiting cost and range indices kept for all
rounds, and a chunk's temporaries each round. Measured on generated jobs on 8 x 8 GPUs
(3 rounds): 2,000 jobs on 100,000 slots (330 blocks) 138 MiB (estimate 244 MiB); 20,000
jobs on 200,000 slots (344 blocks) 341 MiB (estimate 483 MiB)."""

ELASTIC_LAGRANGIAN = Footprint(
    "the elastic Lagrangian bound",
    100 * MiB,
    (("(job, completion interval) pairs", 512), ("(job, block) pairs", 512)),
)
"""The pricing problems of :mod:`ddlsched.formulations.elastic_lagrangian`: per interval its
charge, need and end, per block its price and usage, and each step's temporaries. Measured
on Pollux workload 1 (160 jobs, 64 GPUs, step 15 s, block 60 s, 2 steps): 332,112
intervals and 83,374 blocks, 104 MiB at the peak against 51 MiB before (about 130 bytes a
pair); 512 bytes leaves room for the sorting temporaries of longer windows."""
