"""Write a benchmark's printed figures into a docs page, with where they came from.

A page marks each generated block with the command that produces it::

    <!-- figures: python benchmarks/bench_simulator.py --clusters 32x8 -->
    (replaced on every run)
    <!-- /figures -->

``python benchmarks/record.py PAGE`` runs the command of every block of PAGE (or only the
blocks whose command contains ``--only TEXT``) and replaces each block's body with the
command's standard output and a line naming the git revision, the machine and the date,
so that a figure in the docs is never typed by hand and says what measured it
(``tests/test_docs_figures.py`` checks every block names an existing script and a
committed revision). The page is written atomically, once every command has succeeded.

    python benchmarks/record.py docs/guide/online.md
    python benchmarks/record.py docs/guide/exact.md --only bench_exact
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(<!-- figures: (?P<command>.+?) -->\n)(?P<body>(?:(?!<!-- figures:).)*?)(<!-- /figures -->)",
    re.S,
)
"""A generated block: its opening marker with the command, its body, its closing marker."""


def revision(root: Path = ROOT) -> str:
    """The checked-out commit, with ``-dirty`` when the code differs from it: changes,
    staged or not, or untracked files, outside ``docs/`` and Markdown files (the pages
    being written do not count; a benchmark that is not committed does)."""

    def git(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *words], cwd=root, capture_output=True, text=True, check=False
        )

    head = git("rev-parse", "--short=12", "HEAD").stdout.strip()
    if not head:
        return "unknown"
    code = (".", ":(exclude)docs", ":(exclude)*.md")
    changed = git("status", "--porcelain", "--untracked-files=all", "--", *code).stdout.strip()
    return f"{head}-dirty" if changed else head


def check_markers(text: str, page: Path) -> None:
    """Every opening marker has its own closing one (a missing one made a block swallow
    the text up to the next block's end)."""
    depth, line = 0, 0
    for line, row in enumerate(text.splitlines(), start=1):
        if row.startswith("<!-- figures:"):
            if depth:
                raise SystemExit(f"record: {page}:{line}: a block opens before the last closed")
            depth = 1
        elif row.startswith("<!-- /figures -->"):
            if not depth:
                raise SystemExit(f"record: {page}:{line}: a block closes that was never opened")
            depth = 0
    if depth:
        raise SystemExit(f"record: {page}: the last block is never closed")


def machine() -> str:
    """The machine in one phrase: architecture, cores, memory, Python."""
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        memory = ""
    python = platform.python_version()
    return f"{platform.machine()}, {os.cpu_count()} cores{memory}, Python {python}"


def run(command: str) -> str:
    """The command's standard output (its progress on stderr is passed through)."""
    words = shlex.split(command)
    if words[:1] == ["python"]:
        words[0] = sys.executable
    done = subprocess.run(words, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"record: {command!r} exited {done.returncode}; the page is unchanged")
    return done.stdout.rstrip("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("--only", help="refresh only the blocks whose command contains this")
    args = parser.parse_args()
    text = args.page.read_text(encoding="utf-8")
    check_markers(text, args.page)
    blocks = list(BLOCK.finditer(text))
    try:  # the stamp names the page as the tests find it: from the repository's root
        named = args.page.resolve().relative_to(ROOT)
    except ValueError:
        raise SystemExit(f"record: {args.page} is not a page of this repository") from None
    if not blocks:
        raise SystemExit(f"record: {args.page} has no '<!-- figures: ... -->' block")
    where = revision(ROOT)
    if where.endswith("-dirty"):
        print(f"record: warning: the tree has uncommitted changes ({where})", file=sys.stderr)
    out, last = [], 0
    for block in blocks:
        command = block["command"]
        out.append(text[last : block.start("body")])
        if args.only is None or args.only in command:
            print(f"record: {command}", file=sys.stderr, flush=True)
            printed = run(command)
            stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            out.append(
                f"{printed}\n\n*Generated by `python benchmarks/record.py {named}` at "
                f"revision {where}, on {machine()}, {stamp}.*\n"
            )
        else:
            out.append(block["body"])
        last = block.end("body")
    out.append(text[last:])
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=args.page.parent, delete=False, suffix=".tmp"
    ) as handle:
        handle.write("".join(out))
    os.chmod(handle.name, stat.S_IMODE(args.page.stat().st_mode))  # keep the page's mode
    os.replace(handle.name, args.page)


if __name__ == "__main__":
    main()
