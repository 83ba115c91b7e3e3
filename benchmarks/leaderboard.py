"""The leaderboard page's table (``docs/guide/leaderboard.md``): every non-preemptive
built-in policy scored on tiers S and M of the shipped library, printed as ``ddlsched bench
leaderboard --tier S,M`` prints it (the same function, :func:`ddlsched.bench.score.leaderboard`,
and the same printing, :func:`ddlsched.cli.bench_score.print_scores`);
``tests/bench/test_score_docs.py`` checks the page against the command itself.

    python benchmarks/record.py docs/guide/leaderboard.md
"""

from __future__ import annotations

from ddlsched.bench.score import leaderboard
from ddlsched.cli.bench_score import print_scores

TIERS = ("S", "M")
"""The tiers the page shows: those of proven optima."""

if __name__ == "__main__":
    print_scores(leaderboard(tiers=TIERS))
