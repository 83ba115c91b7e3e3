"""Mutation testing with mutmut 3: run it on a package or module, score it, list survivors.

The measure is mutmut's own operator-generated mutants, not the hand-picked
catalogue of ``tools/mutation.py``. The configuration is ``[tool.mutmut]`` in
``pyproject.toml``; docs/mutation.md has the commands and the last measured scores.

What this script adds to a bare ``mutmut run``:

* **A private tree.** mutmut writes ``mutants/`` (a trampolined copy of the sources
  and tests) beside the sources; this script runs it in a git worktree of one revision
  (``--worktree``, made with ``git worktree add --detach`` when missing), so that edits
  in the shared tree neither disturb a run nor get picked up half-way, and the score
  names the revision it was measured on.
* **The solver children.** The MILP and CP-SAT run in child processes
  (``formulations/isolation.py``). A child started while a mutant is under test
  inherits ``MUTANT_UNDER_TEST`` and imports ``mutants/`` (``PYTHONPATH``), so it runs
  the mutant. For mutmut's stats run (which maps tests to the functions they reach),
  ``tools/mutmut_support/`` reports the functions reached in children back to the
  test (``sitecustomize.py`` plus the pytest plugin ``mutmut_child_stats``); without
  it every function run only in a child would be "no tests".
* **The message filter** (``--keep-messages`` turns it off). A mutant is left out of
  the score when everything it changes lies in message text: the arguments of the
  exception constructed in a ``raise`` (a call of a capitalised name,
  ``ValueError(...)``), the message of an ``assert``, the arguments of
  ``print``, ``warnings.warn`` or a logging call (``logger.info``, ``log.debug``,
  ``logging.warning``, ...), or a docstring. It is decided on the AST of the original
  and the mutated function, so a mutant that changes the raised exception's type, the
  condition of an ``if`` that leads to a ``raise``, or a string used as data (a column
  name, a status) is kept.
* **Scores.** Per package and per file: score = (killed + timeout) / (killed +
  timeout + survived + no tests). A timeout counts as killed (the mutant made the tests
  hang or spin; the tests did not pass) and is shown in its own column; "no tests" (no
  test reaches the function) counts as surviving, also in its own column. Suspicious,
  skipped and not-checked mutants are outside the score.

Commands (from the repository root; everything under ``nice -n 19``, one mutant at a
time)::

    python tools/mutmut_run.py run proofs_checks/verifier.py   # quick: minutes
    python tools/mutmut_run.py run proofs_checks formulations/cpsat.py
    python tools/mutmut_run.py run all                          # hours
    python tools/mutmut_run.py report --markdown out.md         # score what has run

Targets are files or package folders among ``ddlsched/core``, ``formulations``,
``proofs_checks`` and ``algorithms`` (``all`` is the four), or mutmut's mutant-name
globs (``'ddlsched.proofs_checks.verifier.x__check_preempted*'``: one function). Results
accumulate in the
worktree's ``mutants/``: a later run names only the mutants without a result, so a
stopped full run resumes where it stopped (``--rerun`` runs them all again). mutmut
also drops the results of a function whose code changed when the worktree moves to
another revision.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import difflib
import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from mutation import installed_layout

REPO = Path(__file__).resolve().parents[1]
DEFAULT_WORKTREE = Path("/tmp/ddlsched-mutmut")
PACKAGES = ("ddlsched/core", "formulations", "proofs_checks", "algorithms")
SUPPORT = "tools/mutmut_support"

# mutmut's exit codes, as mutmut.stats.status_by_exit_code reads them.
STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    37: "caught by type check",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "timeout",  # SIGKILL one second after the CPU limit's SIGXCPU
    None: "not checked",
}
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
NOT_KILLED = {"survived", "no tests"}

LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
LOGGER_NAMES = {"log", "logger", "logging", "LOG", "LOGGER", "_log", "_logger", "warnings"}


# --------------------------------------------------------------------------- running


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=cwd, env=env)


def ensure_worktree(worktree: Path, rev: str) -> None:
    """A detached git worktree of ``rev`` at ``worktree`` (kept when it exists)."""
    if (worktree / ".git").exists():
        return
    if _run(["git", "worktree", "add", "--detach", str(worktree), rev], cwd=REPO) != 0:
        raise SystemExit(f"could not make a git worktree at {worktree}")


def target_globs(targets: list[str]) -> list[str]:
    """mutmut's mutant-name globs for files or package folders (``all``: the four)."""
    globs: list[str] = []
    for target in targets:
        if target == "all":
            globs += target_globs(list(PACKAGES))
            continue
        if (
            "*" in target
        ):  # a mutmut mutant-name glob, e.g. "ddlsched.proofs_checks.verifier.x_verify*"
            globs.append(target)
            continue
        path = target.rstrip("/")
        if not any(path == p or path.startswith(p + "/") for p in PACKAGES):
            raise SystemExit(f"{target}: not in {', '.join(PACKAGES)}")
        module = path.removesuffix(".py").replace("/", ".")
        globs.append(f"{module}.*")
    return globs


def mutmut_env(worktree: Path) -> dict[str, str]:
    hits = worktree / "mutants" / ".child-hits"
    hits.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    paths = [str(worktree / SUPPORT), str(worktree / "mutants")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["MUTMUT_CHILD_HITS"] = str(hits)
    env["PYTEST_PLUGINS"] = "mutmut_child_stats"
    if not (worktree / "mutants" / "ddlsched" / "data").is_dir():
        # mutants/ may hold only the Python sources: the worktree's shipped data, then.
        env.setdefault("DDLSCHED_DATA", str(worktree / "ddlsched" / "data"))
    (worktree / "mutants" / "ddlsched").mkdir(exist_ok=True)
    installed_layout(worktree / "mutants")  # mutants/ddlsched.formulations, not the checkout's
    docs = worktree / "mutants" / "docs"
    if not docs.exists() and (worktree / "docs").is_dir():
        docs.symlink_to(worktree / "docs")  # tests check pages against the code (data.md)
    return env


def pending(worktree: Path, globs: list[str], rerun: bool) -> list[str] | None:
    """The mutants to run: those matching ``globs`` without a stored result (all that
    match with ``rerun``); None before mutmut has made the mutants (first run).

    mutmut reruns every mutant named on its command line, so a resumed run names only
    the pending ones rather than passing the globs again."""
    import fnmatch

    metas = list((worktree / "mutants").rglob("*.py.meta"))
    if not metas:
        return None
    names = []
    for meta_path in metas:
        codes = json.loads(meta_path.read_text())["exit_code_by_key"]
        names += [
            key
            for key, code in codes.items()
            if (rerun or code is None) and any(fnmatch.fnmatch(key, g) for g in globs)
        ]
    return sorted(names)


SAMPLE_FILE = "sample.json"


def wilson(killed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95% score interval for a proportion (killed of n), e.g. a sample's score."""
    if n == 0:
        return (0.0, 1.0)
    p = killed / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def draw_sample(worktree: Path, globs: list[str], size: int, seed: int) -> list[str]:
    """A uniform random sample of ``size`` scored mutants per package (message mutants,
    which the score leaves out, are not drawn): the first ``size`` of a permutation
    seeded by ``seed`` and the package, so that a run with a larger ``size`` and the same
    seed extends the sample rather than drawing another. Written to
    ``mutants/sample.json`` so that ``report --sample`` scores exactly these."""
    import fnmatch
    import random

    by_package: dict[str, list[tuple[str, str, int | None]]] = defaultdict(list)
    for path, name, code in stored_results(worktree):
        if any(fnmatch.fnmatch(name, g) for g in globs):
            by_package[package_of(path)].append((path, name, code))
    names: list[str] = []
    for package in sorted(by_package):
        pool = sorted(by_package[package], key=lambda item: item[1])
        random.Random(f"{seed}:{package}").shuffle(pool)
        # The first `size` scored mutants of one seeded permutation: a uniform sample of the
        # scored ones, classified as they are drawn (all 12,720 take tens of minutes), and
        # a larger `size` with the same seed extends it.
        taken = 0
        for path, name, code in pool:
            if taken == size:
                break
            if not describe(worktree, path, name, code).message:
                names.append(name)
                taken += 1
    record = {"seed": seed, "size": size, "targets": globs, "names": sorted(names)}
    path = worktree / "mutants" / SAMPLE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1))
    tmp.replace(path)
    return sorted(names)


def sample_names(worktree: Path) -> list[str]:
    path = worktree / "mutants" / SAMPLE_FILE
    if not path.exists():
        raise SystemExit(f"no sample drawn in {worktree} (run --sample N first)")
    return json.loads(path.read_text())["names"]


def run(args: argparse.Namespace) -> None:
    worktree = Path(args.worktree).resolve()
    ensure_worktree(worktree, args.rev)
    globs = target_globs(args.targets)
    names = pending(worktree, globs, args.rerun)
    if args.sample is not None:
        if names is None:  # make the mutants (and the stats run) first, running none
            print("making the mutants before drawing the sample", flush=True)
            mutmut = str(Path(sys.executable).with_name("mutmut"))
            subprocess.call(
                ["nice", "-n", "19", mutmut, "run", "--max-children", "1", "none.matches.this"],
                cwd=worktree,
                env=mutmut_env(worktree),
            )
        drawn = draw_sample(worktree, globs, args.sample, args.seed)
        print(f"sample: {len(drawn)} mutants (seed {args.seed})", flush=True)
        todo = set(pending(worktree, drawn, args.rerun) or [])
        if args.survivors:  # again, at a later revision: the sample's survivors only
            todo |= {m.name for m in collect(worktree, drawn) if m.status in NOT_KILLED}
        names = [n for n in drawn if n in todo]
        globs = drawn
        if not names:
            report(args, only=globs)
            return
    if names == []:
        print("every mutant of these targets has a result (--rerun to run them again)")
        report(args, only=globs)
        return
    mutmut = str(Path(sys.executable).with_name("mutmut"))  # not "python -m mutmut"
    cmd = ["nice", "-n", "19", mutmut, "run", "--max-children", "1"]
    start = time.monotonic()
    print(f"{'all' if names is None else len(names)} mutants to run", flush=True)
    code = subprocess.call(
        cmd + (globs if names is None else names), cwd=worktree, env=mutmut_env(worktree)
    )
    elapsed = time.monotonic() - start
    print(f"\nmutmut exited {code} after {elapsed:.0f} s")
    runs = worktree / "mutants" / "runs.jsonl"
    with runs.open("a") as out:
        out.write(
            json.dumps(
                {
                    "targets": args.targets,
                    "started": dt.datetime.now().isoformat(timespec="seconds"),
                    "seconds": round(elapsed),
                    "exit": code,
                    "revision": revision(worktree),
                }
            )
            + "\n"
        )
    report(args, only=globs)


# --------------------------------------------------------------------------- the filter


def _is_docstring(node: ast.AST, parents: list[ast.AST]) -> bool:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or len(parents) < 2:
        return False
    expr, owner = parents[-1], parents[-2]
    body = getattr(owner, "body", None)
    return isinstance(expr, ast.Expr) and isinstance(body, list) and bool(body) and body[0] is expr


def _is_message_call(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in {"print", "warn"}
    if isinstance(func, ast.Attribute):
        return func.attr in LOG_METHODS and _owner(func) in LOGGER_NAMES
    return False


def _is_exception_call(node: ast.AST | None) -> bool:
    """``SomeError(...)``: a call of a capitalised name (an exception class), not
    ``raise next(iter(errors))``, whose arguments are not a message."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name[:1].isupper()


def _is_warn(call: ast.Call) -> bool:
    func = call.func
    return (isinstance(func, ast.Name) and func.id == "warn") or (
        isinstance(func, ast.Attribute) and func.attr == "warn" and _owner(func) == "warnings"
    )


def _owner(func: ast.Attribute) -> str:
    owner = func.value
    return owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")


def _in_message(node: ast.AST, parents: list[ast.AST]) -> bool:
    """Is ``node`` (with its ancestors ``parents``, outermost first) message text?"""
    if _is_docstring(node, parents):
        return True
    chain = [*parents, node]
    for i, anc in enumerate(chain[:-1]):
        child = chain[i + 1]
        if isinstance(anc, ast.Raise) and child is anc.exc:
            # inside the raised expression: only its arguments are message text
            if (
                isinstance(anc.exc, ast.Call)
                and _is_exception_call(anc.exc)
                and i + 2 < len(chain)
            ):
                grand = chain[i + 2]
                if grand in anc.exc.args or grand in [k.value for k in anc.exc.keywords]:
                    return True
            return False
        if isinstance(anc, ast.Assert) and child is anc.msg:
            return True
        if isinstance(anc, ast.Call) and _is_message_call(anc):
            if _is_warn(anc):  # warnings.warn(message, category): the message only
                return bool(anc.args) and child is anc.args[0]
            if child in anc.args or child in [k.value for k in anc.keywords]:
                return True
    return False


def _message_call_args_only(orig: ast.AST, mutant: ast.AST, parents: list[ast.AST]) -> bool:
    """A call whose argument list changed length: message text when it is the raised
    exception's constructor or a message call, with the function itself unchanged."""
    if not (isinstance(orig, ast.Call) and isinstance(mutant, ast.Call)):
        return False
    if ast.dump(orig.func) != ast.dump(mutant.func):
        return False
    if _is_message_call(orig):
        return not _is_warn(orig)
    return (
        bool(parents)
        and isinstance(parents[-1], ast.Raise)
        and parents[-1].exc is orig
        and _is_exception_call(orig)
    )


def _differences(a: ast.AST, b: ast.AST, parents: list[ast.AST], out: list) -> None:
    """The smallest differing node pairs of two ASTs, each with its ancestors in ``a``."""
    if type(a) is not type(b):
        out.append((a, b, parents))
        return
    for name, value_a in ast.iter_fields(a):
        value_b = getattr(b, name, None)
        if isinstance(value_a, ast.AST):
            if isinstance(value_b, ast.AST):
                _differences(value_a, value_b, [*parents, a], out)
            else:
                out.append((a, b, parents))
                return
        elif isinstance(value_a, list):
            if not isinstance(value_b, list) or len(value_a) != len(value_b):
                out.append((a, b, parents))
                return
            for item_a, item_b in zip(value_a, value_b, strict=True):
                if isinstance(item_a, ast.AST) and isinstance(item_b, ast.AST):
                    _differences(item_a, item_b, [*parents, a], out)
                elif item_a != item_b:
                    out.append((a, b, parents))
                    return
        elif value_a != value_b:
            out.append((a, b, parents))
            return


def is_message_mutant(orig_code: str, mutant_code: str) -> bool:
    """Does the mutant change nothing but message text (see the module docstring)?"""
    try:
        orig = ast.parse(textwrap.dedent(orig_code))
        mutant = ast.parse(textwrap.dedent(mutant_code))
    except SyntaxError:
        return False
    found: list = []
    _differences(orig, mutant, [], found)
    if not found:
        return False
    for a, b, parents in found:
        if _in_message(a, parents):
            continue
        if _message_call_args_only(a, b, parents):
            continue
        # a Constant whose value changed: the difference sits in the node itself
        return False
    return True


# --------------------------------------------------------------------------- reporting


@dataclass
class Mutant:
    name: str
    path: str
    status: str
    line: int = 0
    change: str = ""
    message: bool = False


@dataclass
class Tally:
    counts: Counter = field(default_factory=Counter)
    filtered: int = 0

    def add(self, mutant: Mutant) -> None:
        if mutant.status == "not checked":
            self.counts["not checked"] += 1
        elif mutant.message:
            self.filtered += 1
        else:
            self.counts[mutant.status] += 1

    @property
    def killed(self) -> int:
        return sum(self.counts[s] for s in KILLED)

    @property
    def not_killed(self) -> int:
        return sum(self.counts[s] for s in NOT_KILLED)

    def score(self) -> float | None:
        total = self.killed + self.not_killed
        return self.killed / total if total else None


def revision(worktree: Path) -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=worktree, capture_output=True, text=True
    )
    return out.stdout.strip()


def package_of(path: str) -> str:
    for package in PACKAGES:
        if path.startswith(package + "/"):
            return package
    return path.split("/")[0]


def _function_line(source_lines: list[str], orig_code: str) -> int:
    """Line (1-based) in the source file where the function ``orig_code`` starts."""
    first = next(
        line
        for line in orig_code.splitlines()
        if line.strip().startswith("def ") or line.strip().startswith("async def ")
    )
    want = first.strip()
    for i, line in enumerate(source_lines):
        if line.strip() == want:
            return i + 1 - orig_code.splitlines().index(first)
    return 0


def collect(worktree: Path, only: list[str] | None) -> list[Mutant]:
    """Every mutant with a result (or only those matching ``only``), filter applied."""
    import fnmatch

    exact = set(only or ()) if only and not any("*" in g for g in only) else None
    mutants: list[Mutant] = []
    for path, name, code in stored_results(worktree):
        if exact is not None:
            if name not in exact:
                continue
        elif only and not any(fnmatch.fnmatch(name, g) for g in only):
            continue
        mutants.append(describe(worktree, path, name, code))
    return mutants


def stored_results(worktree: Path) -> list[tuple[str, str, int | None]]:
    """``(source path, mutant name, exit code or None)`` of every mutant mutmut made."""
    out = []
    for meta_path in sorted((worktree / "mutants").rglob("*.py.meta")):
        path = str(meta_path.relative_to(worktree / "mutants")).removesuffix(".meta")
        meta = json.loads(meta_path.read_text())
        out += [(path, name, code) for name, code in meta["exit_code_by_key"].items()]
    return out


_SOURCE_LINES: dict[str, list[str]] = {}


def describe(worktree: Path, path: str, name: str, code: int | None) -> Mutant:
    """One mutant: its status, the line and change it makes, whether it is message text
    (parses the two functions with libcst: tens of milliseconds)."""
    import libcst as cst
    from mutmut.mutation.diff_apply import read_functions_from_index

    os.chdir(worktree)
    if str(worktree) not in sys.path:
        sys.path.insert(0, str(worktree))
    if path not in _SOURCE_LINES:
        _SOURCE_LINES[path] = (worktree / path).read_text().splitlines()
    source_lines = _SOURCE_LINES[path]
    mutant = Mutant(name=name, path=path, status=STATUS.get(code, "suspicious"))
    functions = read_functions_from_index(name, path)
    if functions is not None:
        orig_code, mutant_code = (cst.Module([f]).code for f in functions)
        mutant.message = is_message_mutant(orig_code, mutant_code)
        a, b = orig_code.splitlines(), mutant_code.splitlines()
        start = _function_line(source_lines, orig_code)
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                mutant.line = start + i1 if start else 0
                old = " / ".join(x.strip() for x in a[i1:i2])
                new = " / ".join(x.strip() for x in b[j1:j2])
                mutant.change = f"{old}  ->  {new}"
                break
    return mutant


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def render(mutants: list[Mutant], worktree: Path, notes: str = "", interval: bool = False) -> str:
    """The summary; with ``interval`` (a random sample) each score carries Wilson's 95%
    interval, the range the full run's score lies in with 95% confidence."""
    by_package: dict[str, Tally] = defaultdict(Tally)
    by_file: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    for m in mutants:
        by_package[package_of(m.path)].add(m)
        by_file[m.path].add(m)
        total.add(m)
    head = (
        "| {} | score | killed | timeout | survived | no tests | other | message (filtered) "
        "| not run yet |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
    )

    def row(label: str, t: Tally) -> str:
        waiting = t.counts["not checked"]
        other = sum(t.counts.values()) - t.killed - t.not_killed - waiting
        score = _pct(t.score())
        if interval and t.score() is not None:
            low, high = wilson(t.killed, t.killed + t.not_killed)
            score += f" ({100 * low:.0f}-{100 * high:.0f})"
        return (
            f"| {label} | {score} | {t.killed - t.counts['timeout']} | "
            f"{t.counts['timeout']} | {t.counts['survived']} | {t.counts['no tests']} | "
            f"{other} | {t.filtered} | {waiting} |\n"
        )

    lines = [
        f"Measured at revision `{revision(worktree)}` on {dt.date.today().isoformat()}, "
        f"{os.cpu_count()} cores ({platform.machine()}), mutmut "
        f"{_mutmut_version()}, Python {platform.python_version()}.{notes}\n\n",
        head.format("package"),
    ]
    lines += [row(p, t) for p, t in sorted(by_package.items())]
    lines.append(row("**all run**", total))
    lines += ["\n", head.format("file")]
    lines += [row(f"`{f}`", t) for f, t in sorted(by_file.items())]
    survivors = [m for m in mutants if m.status in NOT_KILLED and not m.message]
    lines.append(f"\n**Survivors** ({len(survivors)}; `no tests`: no test reaches the function)\n")
    current = None
    for m in sorted(survivors, key=lambda m: (m.path, m.line, m.name)):
        if m.path != current:
            current = m.path
            lines.append(f"\n`{m.path}`\n\n")
        tag = " (no tests)" if m.status == "no tests" else ""
        change = m.change.replace("|", "\\|").replace("`", "'")
        lines.append(f"- {m.path}:{m.line} `{m.name.rpartition('.')[2]}`{tag}: `{change}`\n")
    return "".join(lines)


def _mutmut_version() -> str:
    from importlib.metadata import version

    return version("mutmut")


def report(args: argparse.Namespace, only: list[str] | None = None) -> None:
    worktree = Path(args.worktree).resolve()
    if only is None and getattr(args, "targets", None):
        only = target_globs(args.targets)
    keep = getattr(args, "keep_messages", False)
    sampled = getattr(args, "sample", None) is not None
    if sampled and getattr(args, "command", "") == "report":
        only = sample_names(worktree)
    mutants = collect(worktree, only)
    if keep:
        for m in mutants:
            m.message = False
    notes = ""
    if sampled:
        record = json.loads((worktree / "mutants" / SAMPLE_FILE).read_text())
        notes = (
            f" A seeded uniform random sample (seed {record['seed']}) of {record['size']} "
            "scored mutants per package; each score carries its 95% interval (Wilson)."
        )
    text = render(mutants, worktree, notes, interval=sampled)
    print(text)
    if getattr(args, "markdown", None):
        Path(args.markdown).write_text(text)
        print(f"written to {args.markdown}")
    if getattr(args, "json", None):
        Path(args.json).write_text(json.dumps([m.__dict__ for m in mutants], indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--worktree",
        default=str(DEFAULT_WORKTREE),
        help="private git worktree to run in (made if missing)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run mutmut on targets, then report them")
    p_run.add_argument("targets", nargs="+", help="files or packages, or 'all'")
    p_run.add_argument("--rev", default="HEAD", help="revision for a new worktree")
    p_run.add_argument("--rerun", action="store_true", help="run mutants that have a result too")
    p_run.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run a seeded uniform random sample of N scored mutants per package",
    )
    p_run.add_argument("--seed", type=int, default=0, help="the sample's seed")
    p_run.add_argument(
        "--survivors",
        action="store_true",
        help="with --sample: run the sample's surviving mutants again (after new tests)",
    )
    p_rep = sub.add_parser("report", help="score the results stored in the worktree")
    p_rep.add_argument("targets", nargs="*", help="restrict to these files or packages")
    p_rep.add_argument(
        "--sample",
        action="store_const",
        const=True,
        help="score only the sample the last run --sample drew, with 95%% intervals",
    )
    for p in (p_run, p_rep):
        p.add_argument("--markdown", help="also write the summary to this file")
        p.add_argument("--json", help="also write every mutant's result to this file")
        p.add_argument(
            "--keep-messages",
            action="store_true",
            help="do not filter out mutants of message text",
        )
    args = parser.parse_args()
    if args.command == "run":
        if shutil.which("git") is None:
            raise SystemExit("git is needed for the private worktree")
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
