"""Every link and every named section in the README, the docs and the notebooks leads somewhere.

Read on each page (the README, ``docs/`` in Markdown and reStructuredText, and the notebooks:
their Markdown cells and the comments and strings of their code cells):

- a Markdown link ``[text](path#anchor)`` or reStructuredText link ``\\`text <path>\\`_`` names a
  file of the repository, and its anchor, if any, the slug of a heading of that file (GitHub's
  and MyST's rule) or a MyST label ``(label)=`` in it;
- a path of the repository in running text (``docs/guide/model.md#the-claims``) exists, with its
  anchor as above;
- ``{ref}`` and ``:ref:`` name a label defined in the docs; ``:doc:`` and ``{doc}`` a page;
- a quoted section title in a reference position (``see "X"``, ``"X" below``, ``under "X"``, ``the
  README's "X"``, ``PATH ("X")``, ``PATH, "X"``) is a heading, or the bold lead of a paragraph, of
  the file named just before it in the same sentence (the README, a path, a link, a label, a
  dotted module name), or of the page itself when none is named;
- "the README says" (or explains, shows) names the section that says it.

External ``http`` links are not fetched.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _pages() -> list[Path]:
    docs = [
        page
        for page in sorted(DOCS.rglob("*"))
        if page.suffix in (".md", ".rst")
        and not {"_build", "notebooks"} & set(page.relative_to(DOCS).parts)
    ]
    return [ROOT / "README.md", *docs, *sorted((ROOT / "notebooks").glob("*.ipynb"))]


PAGES = _pages()
TOP = (
    r"(?:docs|notebooks|examples|tests|ddlsched|formulations|algorithms|proofs_checks"
    r"|benchmarks|tools)"
)
"""The folders a path of the repository starts with."""
REPO_PATH = re.compile(rf"(?<![\w./-])((?:{TOP}/[\w./-]*\.[A-Za-z]\w*)|README\.md)(#[\w-]+)?")
MD_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
RST_LINK = re.compile(r"`[^`<]*<([^>`]+)>`__?")
REF_ROLE = re.compile(r"(?:\{ref\}|:ref:)`(?:[^`<]*<)?([^`>]+)>?`")
DOC_ROLE = re.compile(r"(?:\{doc\}|:doc:)`(?:[^`<]*<)?([^`>]+)>?`")
LABEL = re.compile(r"^\((?P<md>[\w-]+)\)=\s*$|^\.\. _(?P<rst>[\w-]+):\s*$", re.M)
QUOTED = re.compile(r'"([^"\n]{2,80})"')
SAYS = re.compile(r"\bREADME (?:says|explains|shows|describes)\b[^.]*")
SENTENCE_END = re.compile(r"(?:\.\s+(?=[A-Z`(*])|\n\s*\n)")
TARGET = re.compile(
    rf"(?P<readme>\bREADME\b)"
    rf"|\[[^\]]*\]\((?P<link>[^)\s#]+)(?:#[\w-]*)?\)"
    rf"|(?:\{{ref\}}|:ref:)`(?:[^`<]*<)?(?P<label>[\w-]+)>?`"
    rf"|(?P<path>(?<![\w./-]){TOP}/[\w./-]*\.\w+)"
    rf"|(?P<module>\bddlsched(?:\.\w+)+)(?![\w.(])"
)


def _markdown_headings(text: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)]


def _rst_headings(text: str) -> list[str]:
    lines = text.splitlines()
    return [
        lines[i].strip()
        for i in range(len(lines) - 1)
        if lines[i].strip()
        and re.fullmatch(r"([=\-~^\"'`#*+])\1{2,}", lines[i + 1].strip())
        and len(lines[i + 1].strip()) >= len(lines[i].strip())
    ]


def _bold_leads(text: str) -> list[str]:
    """``**Title.**`` leads of paragraphs, as ``Title``."""
    return [m.group(1).strip().rstrip(".:") for m in re.finditer(r"\*\*([^*\n]+?)\*\*", text)]


@cache
def _source(path: Path) -> str:
    """The text a reader follows: a page's text, or a notebook's Markdown cells."""
    if path.suffix == ".ipynb":
        book = nbformat.read(path, as_version=4)
        return "\n\n".join(c.source for c in book.cells if c.cell_type == "markdown")
    return path.read_text(encoding="utf-8")


def _code_prose(source: str) -> str:
    """The comments and string constants of a code cell (what it tells its reader)."""
    parts = [
        token.string.lstrip("# ")
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    parts += [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    return "\n\n".join(parts)


def prose(path: Path) -> str:
    """Everything on ``path`` that may point elsewhere."""
    if path.suffix != ".ipynb":
        return _source(path)
    book = nbformat.read(path, as_version=4)
    code = [_code_prose(c.source) for c in book.cells if c.cell_type == "code"]
    return "\n\n".join([_source(path), *code])


@cache
def titles(path: Path) -> frozenset[str]:
    """Section titles of ``path`` a sentence may quote: headings and bold paragraph leads
    (a module's docstring sections are bold leads or underlined titles)."""
    text = _source(path) if path.suffix in (".md", ".rst", ".ipynb") else path.read_text()
    found = _markdown_headings(text) + _rst_headings(text) + _bold_leads(text)
    return frozenset(" ".join(title.split()) for title in found)


def slug(title: str) -> str:
    """GitHub's (and MyST's) anchor of a heading: lower case, punctuation dropped, spaces as
    hyphens."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every ``#anchor`` that lands on ``path``: heading slugs (repeats numbered as GitHub
    does), docutils ids of reStructuredText titles, and labels."""
    text = _source(path)
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in _markdown_headings(text):
        base = slug(heading)
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    for heading in _rst_headings(text):
        found.add(re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-"))
    found |= {m.group("md") or m.group("rst") for m in LABEL.finditer(text)}
    return frozenset(found)


@cache
def labels() -> dict[str, Path]:
    """Every label the docs define, with its page."""
    found = {}
    for page in PAGES:
        if page.suffix in (".md", ".rst"):
            for match in LABEL.finditer(_source(page)):
                found[match.group("md") or match.group("rst")] = page
    return found


def _module_file(name: str) -> Path | None:
    """The file of the longest importable prefix of a dotted name."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        try:
            spec = importlib.util.find_spec(".".join(parts[:end]))
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin:
            return Path(spec.origin)
    return None


def _resolve(page: Path, target: str) -> Path:
    """A relative link's file: against the page's folder, or the repository for top paths."""
    if re.match(rf"{TOP}/|README\.md$", target) and not (page.parent / target).exists():
        return ROOT / target
    return (page.parent / target).resolve()


def _check_file(page: Path, target: str, anchor: str, what: str) -> list[str]:
    path = _resolve(page, target) if target else page
    if not path.exists() or not path.resolve().is_relative_to(ROOT):
        return [f"{what}: no file {target}"]
    if anchor and path.suffix in (".md", ".rst", ".ipynb") and anchor not in anchors(path):
        return [f"{what}: no heading or label #{anchor} in {path.relative_to(ROOT)}"]
    return []


TARGET_NEAR = 100
"""How far before a quoted title (in characters, within its sentence) the file it belongs to
may be named: "the model page, `model.md`, says why the proof carries over, under "X"."."""


def _target(page: Path, match: re.Match[str]) -> tuple[Path | None, str]:
    """The file a :data:`TARGET` match names."""
    if match.group("readme"):
        return ROOT / "README.md", "README.md"
    if match.group("link"):
        return _resolve(page, match.group("link")), match.group("link")
    if match.group("label"):
        return labels().get(match.group("label")), match.group("label")
    if match.group("path"):
        return _resolve(page, match.group("path")), match.group("path")
    return _module_file(match.group("module")), match.group("module")


def _quoted_target(page: Path, before: str, after: str) -> tuple[Path | None, str] | None:
    """The file whose section a quoted title names, or None when the quote is no reference.

    ``PATH ("X")``, ``PATH, "X"``: the file named just before; ``see "X"``, ``under "X"``,
    ``'s "X"``, ``section "X"``: the file named shortly before in the sentence, else the page
    itself; ``"X" below`` (or above, ending a clause): the page itself.
    """
    if re.match(r"\s+(?:below|above)\b(?=[).,;:]|$)", after):
        return page, "this page"
    sentence = SENTENCE_END.split(before)[-1]
    near = list(TARGET.finditer(sentence[-TARGET_NEAR:]))
    if re.search(r"(?:\bsee|\bunder|\bsection|'s)\s*$", before):
        return _target(page, near[-1]) if near else (page, "this page")
    between = sentence[-TARGET_NEAR:][near[-1].end() :] if near else ""
    if near and re.fullmatch(r"[`\s]*(?:,|\()\s*", between):
        return _target(page, near[-1])
    return None


def _quoted_titles(page: Path, text: str) -> list[str]:
    prose_only = re.sub(r"```.*?```", "", text, flags=re.S)  # code quotes values, not titles
    flat = re.sub(r"[ \t]*\n[ \t]*(?!\n)", " ", prose_only)
    problems = []
    for match in QUOTED.finditer(flat):
        found = _quoted_target(page, flat[: match.start()], flat[match.end() :])
        if found is None:
            continue
        target, name = found
        title = " ".join(match.group(1).split())
        if target is None or not target.exists():
            problems.append(f'"{title}": no file {name}')
            continue
        known = titles(target)
        if not any(t == title or t.startswith((f"{title} (", f"{title}.")) for t in known):
            problems.append(f'"{title}": no such section in {target.relative_to(ROOT)}')
    return problems


def problems(page: Path, text: str) -> list[str]:
    """Every reference in ``text`` (read on ``page``) that leads nowhere."""
    found = []
    for regex, kind in ((MD_LINK, "link"), (RST_LINK, "link")):
        for match in regex.finditer(text):
            target = match.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            found += _check_file(page, path, anchor, f"{kind} {target}")
    for match in REPO_PATH.finditer(text):
        path, anchor = match.group(1), (match.group(2) or "")[1:]
        if "*" not in path and not path.startswith(("docs/_build", "docs/notebooks")):
            found += _check_file(page, path, anchor, f"path {match.group(0)}")
    for match in REF_ROLE.finditer(text):
        if match.group(1).strip() not in labels():
            found.append(f"ref {match.group(1)}: no such label in the docs")
    for match in DOC_ROLE.finditer(text):
        target = match.group(1).strip()
        if not any(_resolve(page, target + ext).exists() for ext in ("", ".md", ".rst", ".ipynb")):
            found.append(f"doc {target}: no such page")
    for match in SAYS.finditer(text.replace("\n", " ")):
        if not QUOTED.search(match.group(0)):
            found.append(f"'{match.group(0)[:60]}': names no section of the README")
    return found + _quoted_titles(page, text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_reference_leads_somewhere(page: Path) -> None:
    """Every link, anchor, label, path and quoted section title on the page resolves."""
    missing = problems(page, prose(page))
    assert not missing, f"{page.relative_to(ROOT)}: {missing}"


GOOD = """See [the claims](model.md#the-claims) and {ref}`model-lemma1`, "When it is an equality";
the README's "Findings"; `docs/guide/model.md`, "GPU types across the code"; `examples/grid.toml`;
`formulations/lower_bounds.py` ("The preemptive model"); see "Problem A: the cluster" below."""


def test_references_that_exist_pass() -> None:
    """A sample of every kind of reference, each to something that exists, raises nothing (so
    the checks below fail for the planted fault alone)."""
    page = DOCS / "index.rst"
    assert problems(DOCS / "guide" / "model.md", GOOD) == []
    assert problems(page, "[a page](guide/theory.md) and `README.md#findings`") == []


@pytest.mark.parametrize(
    "text",
    [
        "[the claims](model.md#the-claim)",
        "[a page](guide/nowhere.md)",
        "see `docs/guide/model.md#no-such-heading`",
        "the file `examples/nowhere.toml`",
        "{ref}`model-no-such-label`",
        'see the README\'s "Lower bounds"',
        "the README says why the proof carries over",
        '`docs/guide/model.md`, "No such section"',
        '(see "How alpha compares" below)',
        '`ddlsched.formulations.lower_bounds`; see the module\'s "No such part" section',
        '`formulations/lower_bounds.py` ("The exact model")',
    ],
)
def test_a_reference_to_nothing_is_reported(text: str) -> None:
    """A wrong anchor, a missing file or path, an unknown label, a README section or quoted
    title that no heading carries, and a bare "the README says" are each reported."""
    assert problems(DOCS / "guide" / "model.md", text), text
