"""The certified benchmark library (``ddlsched bench``): instances with proven optima or
certified intervals, re-checkable by anyone, and the scoring of a scheduler against them.

The front door of the library, as :mod:`ddlsched.elastic` is of elastic jobs::

    from ddlsched import bench

    bench.library()                       # every entry: .tier, .name, .instance, .certificate
    bench.verify_library(tiers=["S"])      # re-check certificates (schedules, bounds, optima)
    run = bench.run("asrpt-greedy", tiers=["S", "M"])   # a policy's ratios per entry and tier
    bench.leaderboard(tiers=["S", "M"])     # every built-in non-preemptive policy

The modules: :mod:`ddlsched.bench.library` (the data model and files),
:mod:`ddlsched.bench.verify` (the checks), :mod:`ddlsched.bench.score` (run, leaderboard,
improve), :mod:`ddlsched.bench.brute` (the small tier's brute force),
:mod:`ddlsched.bench.build` (how the library is built).
"""

from ddlsched.bench.library import Certificate, Entry, entries, entry, library
from ddlsched.bench.score import (
    BenchRun,
    Improvement,
    ImproveRun,
    ScoreRow,
    TierScore,
    copy_library,
    improve,
    leaderboard,
    run,
)
from ddlsched.bench.verify import EntryCheck, verify_library

__all__ = [
    "BenchRun",
    "Certificate",
    "Entry",
    "EntryCheck",
    "ImproveRun",
    "Improvement",
    "ScoreRow",
    "TierScore",
    "copy_library",
    "entries",
    "entry",
    "improve",
    "leaderboard",
    "library",
    "run",
    "verify_library",
]
