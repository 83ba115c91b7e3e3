"""The certified benchmark library (``ddlsched bench``): instances with proven optima or
certified intervals, re-checkable by anyone, and the scoring of a scheduler against them.

The front door of the library, as :mod:`ddlsched.elastic` is of elastic jobs::

    from ddlsched import bench

    bench.entries()                       # every entry: .tier, .name, .instance, .certificate
    bench.verify_library(tiers=["S"])      # re-check certificates (schedules, bounds, optima)
    run = bench.run("asrpt-greedy", tiers=["S", "M"])   # a policy's ratios per entry and tier
    bench.leaderboard(tiers=["S", "M"])     # every built-in non-preemptive policy
    bench.elastic_entries()                # the Pollux workloads of tier T (elastic model)
    bench.run("pollux", tiers=["T"])       # an elastic policy on them

(The module :mod:`ddlsched.bench.library` keeps its name: its function ``library`` is
``entries()`` here.) The modules: :mod:`ddlsched.bench.library` (the data model and files),
:mod:`ddlsched.bench.verify` (the checks), :mod:`ddlsched.bench.score` (run, leaderboard,
improve), :mod:`ddlsched.bench.brute` (the small tier's brute force),
:mod:`ddlsched.bench.build` (how the library is built), :mod:`ddlsched.bench.elastic` (the
elastic entries: a Pollux workload and its elastic sandwich).
"""

from ddlsched.bench.elastic import ElasticCertificate, ElasticEntry, ElasticInstance
from ddlsched.bench.library import Certificate, Entry, elastic_entries, entries, entry
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
    "ElasticCertificate",
    "ElasticEntry",
    "ElasticInstance",
    "Entry",
    "EntryCheck",
    "ImproveRun",
    "Improvement",
    "ScoreRow",
    "TierScore",
    "copy_library",
    "elastic_entries",
    "entries",
    "entry",
    "improve",
    "leaderboard",
    "run",
    "verify_library",
]
