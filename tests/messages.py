"""Reading a command's stderr around its progress lines.

Off a terminal a long command prints a progress line every few seconds
(``ddlsched.cli.output``'s heartbeat, e.g. ``fifo: 3/60 jobs done, 5 s``). How many appear
depends on the machine's speed, so a test that counts or compares the lines of stderr
reads the other lines only."""

from __future__ import annotations

import re

PROGRESS_LINE = re.compile(r"^\S+: \d+/\d+ \S+ done, \d+ s$")
"""A heartbeat line."""


def messages(err: str) -> list[str]:
    """The lines of ``err`` that are not progress lines."""
    return [line for line in err.strip().splitlines() if not PROGRESS_LINE.match(line)]
