"""Mutation testing: plant plausible one-line bugs and see whether the tests catch them.

Each mutant of :data:`CATALOGUE` replaces one exact snippet of a critical module
(the verifier, the bounds and claims, the formulations' constraint families, the
virtual machine, the guided and greedy policies, the mapping heuristic, the lower
bounds) by a plausible bug: an off-by-one, ``<`` for ``<=``, a dropped rule, a
loosened tolerance. The mutant is applied to a copy of the source tree (the
working tree is never touched), and the tests named for it run there with
``pytest -x``; a failing test run *kills* the mutant, a passing one lets it
*survive*. A mutant known to be equivalent (it changes no observable behaviour)
says why, and is not counted against the score.

    python tools/mutation.py                 # every mutant
    python tools/mutation.py --only verifier # mutants whose name contains it
    python tools/mutation.py --list
    python tools/mutation.py --start 21      # resume a run at the 21st mutant

Prints, per module, how many non-equivalent mutants were killed, and lists every
survivor. The exit code is 1 when any non-equivalent mutant survives.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    """One planted bug: ``old`` (exactly once in ``path``) becomes ``new``."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    equivalent: str = ""  # why it changes no observable behaviour, if it does not


VERIFIER_TESTS = ("tests/proofs_checks/test_verifier.py", "tests/proofs_checks/test_claims.py")
CLAIM_TESTS = ("tests/proofs_checks/test_claims.py",)
BOUND_TESTS = ("tests/proofs_checks/test_bounds.py", *CLAIM_TESTS)
EXACT_TESTS = ("tests/formulations",)
CONFORMANCE_TESTS = ("tests/algorithms/test_conformance.py", "tests/algorithms/test_las.py")
POLICY_TESTS = (
    "tests/algorithms/test_guided_conformance.py",
    "tests/algorithms/test_policies.py",
)

ELASTIC_BOUND_TESTS = (
    "tests/elastic/test_lagrangian_terms.py",
    "tests/elastic/test_lagrangian_ascent.py",
    "tests/elastic/test_sandwich.py",
)
OFFLINE_TESTS = (
    "tests/algorithms/test_offline.py",
    "tests/algorithms/test_best_upper_bound_grid.py",
)

CATALOGUE: tuple[Mutant, ...] = (
    # proofs_checks/verifier.py
    Mutant(
        "verifier: capacity check off by one",
        "proofs_checks/verifier.py",
        "if in_use[server] > capacity[server]:",
        "if in_use[server] > capacity[server] + 1:",
        VERIFIER_TESTS,
    ),
    Mutant(
        "verifier: A2 release check dropped",
        "proofs_checks/verifier.py",
        "            if begin < job.release and not _close(begin, job.release, tol):\n"
        '                violations.append(f"{where}: runs at {begin:g} before its release',
        "            if False:\n"
        '                violations.append(f"{where}: runs at {begin:g} before its release',
        VERIFIER_TESTS,
    ),
    Mutant(
        "verifier: A2 overlap checked only against the previous piece",
        "proofs_checks/verifier.py",
        "        if finish > reach:\n            reach, reach_job = finish, job_id",
        "        reach, reach_job = finish, job_id",
        VERIFIER_TESTS,
    ),
    Mutant(
        "verifier: tolerance loosened to 1e-3",
        "proofs_checks/verifier.py",
        "DEFAULT_TOLERANCE = 1e-9",
        "DEFAULT_TOLERANCE = 1e-3",
        VERIFIER_TESTS,
    ),
    # proofs_checks/bounds.py
    Mutant(
        "bounds: alpha_min fallback without the / 2",
        "proofs_checks/bounds.py",
        "return Checked(base + penalty * parts * lam / 2, False)",
        "return Checked(base + penalty * parts * lam, False)",
        BOUND_TESTS,
    ),
    Mutant(
        "bounds: rho exact when any alpha_min is",
        "proofs_checks/bounds.py",
        "return RhoCheck(max(ratios), all(lo.exact for lo in lows), lows, highs)",
        "return RhoCheck(max(ratios), any(lo.exact for lo in lows), lows, highs)",
        BOUND_TESTS,
    ),
    # proofs_checks/claims.py
    Mutant(
        "claims: equality checked as <=",
        "proofs_checks/claims.py",
        "true = abs(lhs - rhs) <= scale if equality else lhs <= rhs + scale",
        "true = lhs <= rhs + scale",
        CLAIM_TESTS,
    ),
    Mutant(
        "claims: 1% tolerance",
        "proofs_checks/claims.py",
        "TOLERANCE = 1e-6",
        "TOLERANCE = 1e-2",
        CLAIM_TESTS,
    ),
    Mutant(
        "claims: Theorem 1 conclusive with weights",
        "proofs_checks/claims.py",
        "exact = opt_a.exact and rho.exact and report.feasible and unit and exact_counts",
        "exact = opt_a.exact and rho.exact and report.feasible and exact_counts",
        CLAIM_TESTS,
    ),
    Mutant(
        "claims: Theorem 1 conclusive with rho only a bound",
        "proofs_checks/claims.py",
        "exact = opt_a.exact and rho.exact and report.feasible and unit and exact_counts",
        "exact = opt_a.exact and report.feasible and unit and exact_counts",
        CLAIM_TESTS,
    ),
    Mutant(
        "claims: mapping bounds lower check dropped",
        "proofs_checks/claims.py",
        "if value < low.value * (1 - TOLERANCE):",
        "if False:",
        CLAIM_TESTS,
        equivalent="alpha_min is the exhaustive minimum over mappings (or a proven lower bound "
        "of it), so no mapping's alpha is ever below it: the check is defence in depth against "
        "a bug in bounds.py, whose own tests cover that",
    ),
    Mutant(
        "claims: mapping bounds ignore jobs starting at the same instant",
        "proofs_checks/claims.py",
        "if other is not job and other_start <= start < other_end:",
        "if other is not job and other_start < start < other_end:",
        CLAIM_TESTS,
    ),
    # formulations/grid.py
    Mutant(
        "grid: durations rounded to the nearest slot",
        "formulations/grid.py",
        "return max(1, math.ceil(ratio - grid_noise(ratio)))",
        "return max(1, round(ratio))",
        EXACT_TESTS,
    ),
    Mutant(
        "grid: near-integral accepted as integral",
        "formulations/grid.py",
        "return abs(ratio - round(ratio)) <= grid_noise(ratio)",
        "return abs(ratio - round(ratio)) <= 0.2 * max(1.0, abs(ratio))",
        EXACT_TESTS,
    ),
    Mutant(
        "prepared: warm start not relabelled",
        "formulations/prepared.py",
        "return Prepared(slotted, relabel_for_anchor(slotted, plan, anchors), latest, anchors)",
        "return Prepared(slotted, plan, latest, anchors)",
        EXACT_TESTS,
    ),
    Mutant(
        "slotted: second anchor sorted within whole classes, not ties",
        "formulations/slotted.py",
        "        ties = refine_classes(problem.server_classes, mode.usage)\n",
        "        ties = tuple(tuple(g) for g in problem.server_classes if len(g) > 1)\n",
        EXACT_TESTS,
    ),
    Mutant(
        "slotted: relabelling ignores the second anchor",
        "formulations/slotted.py",
        "usages = [problem.jobs[a].modes[plan[a][0]].usage for a in anchors]",
        "usages = [problem.jobs[a].modes[plan[a][0]].usage for a in anchors[:1]]",
        EXACT_TESTS,
    ),
    Mutant(
        "exact: schedules offered to the running MILP never taken",
        "formulations/milp.py",
        "        offered = received()\n",
        "        offered: list[Schedule] = []\n",
        EXACT_TESTS,
    ),
    Mutant(
        "solver: a stopped HiGHS's incumbent dropped",
        "formulations/solver.py",
        "        objective, bound = _read_interrupted(solver)\n",
        "        objective, bound = math.nan, math.nan\n",
        EXACT_TESTS,
    ),
    Mutant(
        "cpsat: improving schedules not reported",
        "formulations/cpsat.py",
        "            report(plan_of(self))\n",
        "            pass\n",
        EXACT_TESTS,
    ),
    Mutant(
        "isolation: the deadline ignored",
        "formulations/isolation.py",
        "        if deadline is not None and time.monotonic() > deadline:",
        "        if deadline is not None and time.monotonic() > deadline + 3600:",
        EXACT_TESTS,
    ),
    Mutant(
        "modes: unproven mapping counted as proven",
        "formulations/modes.py",
        "return result.mapping, result.status is SolveStatus.OPTIMAL",
        "return result.mapping, True",
        EXACT_TESTS,
    ),
    # ddlsched/core/virtual.py
    Mutant(
        "virtual: longest remaining first",
        "ddlsched/core/virtual.py",
        "return (self.remaining, self.seq) < (other.remaining, other.seq)",
        "return (-self.remaining, self.seq) < (-other.remaining, other.seq)",
        ("tests/core/test_virtual.py", *POLICY_TESTS),
    ),
    # algorithms/policies.py
    Mutant(
        "policies: guided A-SRPT backfills",
        "algorithms/policies.py",
        '        """Guided: jobs wait in strict virtual-completion order."""\n'
        "        return StrictQueue()",
        '        """Guided: jobs wait in strict virtual-completion order."""\n'
        "        return BackfillQueue()",
        POLICY_TESTS,
    ),
    Mutant(
        "policies: guided queue last-in-first-out",
        "algorithms/policies.py",
        "        self.queue.push(self._views.pop(job_id), time)",
        "        self.queue.push(self._views.pop(job_id), -time)",
        POLICY_TESTS,
    ),
    Mutant(
        "policies: virtual size with alpha_min instead of alpha_max",
        "algorithms/policies.py",
        "return virtual_size(job, self.cluster, self.predicted[job.id])",
        "return job.gpus * self.predicted[job.id] * job.compute_time / self.cluster.num_gpus",
        POLICY_TESTS,
    ),
    # algorithms/mapping.py
    Mutant(
        "mapping: partition seeded with the lightest node",
        "algorithms/mapping.py",
        "seed = int(np.flatnonzero(unplaced)[np.argmax(degree[unplaced])])",
        "seed = int(np.flatnonzero(unplaced)[np.argmin(degree[unplaced])])",
        ("tests/algorithms/test_mapping.py",),
    ),
    Mutant(
        "mapping: no best fit (first server with room)",
        "algorithms/mapping.py",
        "    server = state.best_fit(gpus)\n",
        "    server = next((h for h in range(len(state)) if state[h] >= gpus), None)\n",
        ("tests/algorithms/test_mapping.py",),
    ),
    # formulations/lower_bounds.py
    Mutant(
        "lower bounds: mean busy time with the whole duration",
        "formulations/lower_bounds.py",
        "return np.asarray(inputs.weights * (busy + inputs.processing / 2.0), dtype=float)",
        "return np.asarray(inputs.weights * (busy + inputs.processing), dtype=float)",
        ("tests/formulations/test_lower_bounds.py",),
    ),
    Mutant(
        "lower bounds: LP releases rounded up",
        "formulations/lower_bounds.py",
        "release_slot = np.floor(r / delta * (1 - 1e-12)).astype(int)",
        "release_slot = np.ceil(r / delta).astype(int)",
        ("tests/formulations/test_lower_bounds.py",),
    ),
    Mutant(
        "lower bounds: squashed sizes not divided by M",
        "formulations/lower_bounds.py",
        "return self.gpus * self.processing / self.num_gpus",
        "return self.gpus * self.processing",
        ("tests/formulations/test_lower_bounds.py",),
    ),
    Mutant(
        "lower bounds: no rounding safety factor",
        "formulations/lower_bounds.py",
        "SAFETY = 1.0 - 1e-9",
        "SAFETY = 1.0",
        ("tests/formulations/test_lower_bounds.py",),
        equivalent="the factor only absorbs floating-point rounding of about 1e-15; no test "
        "instance sits within that of its optimum, so no observable result changes",
    ),
    # algorithms/las.py and the baselines' references (tests/algorithms/test_conformance.py)
    Mutant(
        "las: preempted running jobs wait behind their queue's waiting jobs, not ahead",
        "algorithms/las.py",
        "waiting.push_front(job_id, views[job_id].gpus)",
        "waiting.push_back(job_id, views[job_id].gpus)",
        CONFORMANCE_TESTS,
    ),
    Mutant(
        "las: a preempted demoted job waits ahead of its new queue's waiting jobs",
        "algorithms/las.py",
        "for job_id in lost_tail:  # the demoted that do not fit end it\n"
        "                waiting.push_back(",
        "for job_id in reversed(lost_tail):\n                waiting.push_front(",
        CONFORMANCE_TESTS,
    ),
    Mutant(
        "las: demotion one step late (service > limit)",
        "algorithms/las.py",
        "while self._crossings and self._crossings[0][0] <= horizon:",
        "while self._crossings and self._crossings[0][0] < now:",
        CONFORMANCE_TESTS,
    ),
    Mutant(
        "fifo: ties by job id",
        "algorithms/registry.py",
        "key=lambda job, _: job.release,",
        "key=lambda job, _: (job.release, job.id),",
        CONFORMANCE_TESTS,
    ),
    Mutant(
        "sjf: float noise decides ties",
        "algorithms/policies.py",
        'return float(f"{value:.12g}")',
        "return value",
        CONFORMANCE_TESTS,
    ),
    Mutant(
        "placement: consolidated accepts any spread",
        "algorithms/mapping.py",
        "if mapping is not None and len(set(mapping)) <= need:",
        "if mapping is not None:",
        ("tests/algorithms/test_mapping.py",),
    ),
    # GPU types
    Mutant(
        "alpha: a span of types runs at the fastest type's pace",
        "ddlsched/core/alpha.py",
        "compute = max(job.compute_on(cluster.type_of(int(h))) for h in np.unique(servers))",
        "compute = min(job.compute_on(cluster.type_of(int(h))) for h in np.unique(servers))",
        ("tests/core/test_types.py", "tests/algorithms/test_policies.py"),
    ),
    Mutant(
        "alpha_min: typed levels stop one too early",
        "ddlsched/core/alpha.py",
        "        if found_levels and min(found_levels)[0] <= level:",
        "        if found_levels and min(found_levels)[0] <= 2 * level:",
        ("tests/core/test_types.py",),
    ),
    Mutant(
        "alpha_min: typed value called exact though its level ran out of budget",
        "ddlsched/core/alpha.py",
        "any(proven and value == best for value, proven in found_levels)",
        "any(value == best for value, proven in found_levels)",
        ("tests/core/test_types.py",),
    ),
    Mutant(
        "modes: a plain cut where an edge's bandwidth depends on its server's type",
        "formulations/modes.py",
        "maximize=False, keep=keep, give_up=give_up)",
        "maximize=False, give_up=give_up)",
        ("tests/formulations/test_modes.py",),
    ),
    Mutant(
        "verifier: typed time ignores the server's own bandwidth",
        "proofs_checks/bounds.py",
        "            cluster.intra_of(cluster.type_of(mapping[u]))\n",
        "            cluster.bandwidth_intra\n",
        ("tests/core/test_types.py",),
    ),
    Mutant(
        "mapper: the most alpha wins on mixed clusters",
        "algorithms/mapping.py",
        "        if best is None or value < best[0]:",
        "        if best is None or value > best[0]:",
        ("tests/algorithms/test_mapping.py",),
    ),
    Mutant(
        "gavel: fast types to the least sensitive jobs",
        "algorithms/gavel.py",
        "chosen.sort(key=lambda j: (-self._sensitivity[j], *self._key(j, now)))",
        "chosen.sort(key=lambda j: (self._sensitivity[j], *self._key(j, now)))",
        ("tests/algorithms/test_gavel.py",),
    ),
    Mutant(
        "partition: a stage may not end at the last layer",
        "ddlsched/core/graphs.py",
        "            for i in range(k - 1, j):",
        "            for i in range(k - 1, j - 1):",
        ("tests/core/test_graphs.py",),
    ),
    Mutant(
        "generator: per-type times left off the grid",
        "ddlsched/core/generators.py",
        "    typed = {t: max(1, round(c * scale)) * unit for t, c in typed.items()}",
        "    typed = {t: c * scale * unit for t, c in typed.items()}",
        ("tests/core/test_generators.py",),
    ),
    # the elastic Lagrangian bound: pricing and ascent
    Mutant(
        "elastic lagrangian: prices may go below zero",
        "formulations/elastic_lagrangian.py",
        "        prices = np.maximum(prices + (aim - value) / norm * slope, 0.0)",
        "        prices = prices + (aim - value) / norm * slope",
        ELASTIC_BOUND_TESTS,
    ),
    Mutant(
        "elastic lagrangian: the partial block's room measured from its edge",
        "formulations/elastic_lagrangian.py",
        "gpus * (job.ends[first:last] - low[m])",
        "gpus * (high[m] - low[m]) + 0 * job.ends[first:last]",
        ELASTIC_BOUND_TESTS,
    ),
    Mutant(
        "elastic lagrangian: the last value returned, not the best",
        "formulations/elastic_lagrangian.py",
        "    return best, steps\n",
        "    return value, steps\n",
        ELASTIC_BOUND_TESTS,
    ),
    Mutant(
        "elastic lagrangian: the target counts the releases",
        "formulations/elastic_lagrangian.py",
        "        aim = best + ambition * abs(best - released)",
        "        aim = best + ambition * abs(best)",
        ELASTIC_BOUND_TESTS,
    ),
    # the start-time Lagrangian's tables kept across rounds
    Mutant(
        "start-lagrangian: a block's least-price range one slot longer in the tables",
        "formulations/start_lagrangian.py",
        "            left, right = _table_ends(union_low[:, multi:], reach[:, multi:], size)",
        "            left, right = _table_ends(\n                union_low[:, multi:],\n"
        "                reach[:, multi:] + (reach[:, multi:] - union_low[:, multi:] > 1),\n"
        "                size,\n            )",
        EXACT_TESTS,
    ),
    # the grid of best_upper_bound
    Mutant(
        "offline grid: the grid outside the evaluation budget",
        "algorithms/offline.py",
        "    grid = list(grid_variants(instance).items())[:rounds]",
        "    grid = list(grid_variants(instance).items())",
        OFFLINE_TESTS,
    ),
    Mutant(
        "offline grid: the local search keeps the grid's evaluations",
        "algorithms/offline.py",
        "    rounds -= len(grid)",
        "    rounds -= 0",
        OFFLINE_TESTS,
    ),
    Mutant(
        "offline grid: the exponent multiplies the GPU count",
        "algorithms/offline.py",
        "float(count) ** beta",
        "float(count) * beta",
        OFFLINE_TESTS,
    ),
    # CP-SAT
    Mutant(
        "cpsat: the pooled cumulative one GPU short",
        "formulations/cpsat.py",
        "    model.add_cumulative(jobs, widths, sum(slotted.capacities))",
        "    model.add_cumulative(jobs, widths, sum(slotted.capacities) - 1)",
        ("tests/formulations/test_cpsat.py",),
    ),
    Mutant(
        "cpsat A2: two jobs may share a slot",
        "formulations/cpsat.py",
        "        if len(column) > 1:\n            model.add_at_most_one(column)",
        "        if len(column) > 2:\n            model.add_at_most_one(column)",
        ("tests/formulations/test_cpsat.py",),
    ),
)


PACKAGES_INSIDE = ("formulations", "algorithms", "proofs_checks")
"""The repository's folders that install inside ``ddlsched`` (``pyproject.toml``'s package-dir)."""


def installed_layout(tree: Path) -> None:
    """Make a copy of the sources at ``tree`` importable from ``PYTHONPATH`` as installed:
    ``ddlsched/formulations`` (and the others of :data:`PACKAGES_INSIDE`) link to the copy's
    folders. Without the links ``ddlsched.formulations`` would resolve, through the
    editable install, to the checkout's folder and not the copy's (a mutant never run)."""
    for name in PACKAGES_INSIDE:
        link = tree / "ddlsched" / name
        if not link.exists() and (tree / name).is_dir():
            link.symlink_to(Path("..") / name, target_is_directory=True)


def apply(mutant: Mutant, tree: Path) -> None:
    """Write the mutant into the copy at ``tree`` (the snippet must occur exactly once)."""
    target = tree / mutant.path
    text = target.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        raise SystemExit(
            f"mutant {mutant.name!r}: its snippet occurs {text.count(mutant.old)} times in "
            f"{mutant.path}; update the catalogue"
        )
    target.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")


def run(mutant: Mutant, timeout: float) -> tuple[bool, float]:
    """Whether the mutant is killed, and the seconds it took."""
    with tempfile.TemporaryDirectory(prefix="mutant-") as work:
        tree = Path(work) / "repo"
        shutil.copytree(
            ROOT,
            tree,
            ignore=shutil.ignore_patterns(
                ".git", ".ci-venv", "out", "__pycache__", ".hypothesis", "*.egg-info", "docs"
            ),
        )
        apply(mutant, tree)
        installed_layout(tree)
        env = {**os.environ, "PYTHONPATH": str(tree)}  # the copy's ddlsched/data included
        began = time.perf_counter()
        try:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-x",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "-n",
                    "2",
                    *mutant.tests,
                ],
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            killed = result.returncode != 0
        except subprocess.TimeoutExpired:
            killed = True  # a hang is caught too
        return killed, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only mutants whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the catalogue and stop")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant")
    parser.add_argument(
        "--start", type=int, default=1, help="begin at this mutant (1-based), to resume a run"
    )
    args = parser.parse_args()
    chosen = [m for m in CATALOGUE if not args.only or args.only in m.name][args.start - 1 :]
    counts = [(m, (ROOT / m.path).read_text().count(m.old)) for m in chosen]
    stale = [f"{m.name!r}: its snippet occurs {n} times in {m.path}" for m, n in counts if n != 1]
    if stale:  # checked before any mutant runs, not after twenty minutes of them
        print("update the catalogue:\n  " + "\n  ".join(stale), file=sys.stderr)
        return 2
    if args.list:
        for mutant in chosen:
            flag = f"  [equivalent: {mutant.equivalent}]" if mutant.equivalent else ""
            print(f"{mutant.name} ({mutant.path}){flag}")
        return 0
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    survivors = []
    began = time.perf_counter()
    for k, mutant in enumerate(chosen, 1):
        killed, seconds = run(mutant, args.timeout)
        verdict = (
            "killed" if killed else ("survived (equivalent)" if mutant.equivalent else "SURVIVED")
        )
        print(f"[{k}/{len(chosen)}] {verdict:>22}  {mutant.name}  ({seconds:.0f} s)", flush=True)
        if mutant.equivalent:
            continue
        tally[mutant.path][1] += 1
        tally[mutant.path][0] += killed
        if not killed:
            survivors.append(mutant)
    print("\n| module | killed | non-equivalent mutants |\n| --- | --- | --- |")
    for path, (killed, total) in sorted(tally.items()):
        print(f"| {path} | {killed} | {total} |")
    killed = sum(k for k, _ in tally.values())
    total = sum(t for _, t in tally.values())
    print(
        f"\n{killed}/{total} non-equivalent mutants killed in {time.perf_counter() - began:.0f} s"
    )
    for mutant in survivors:
        print(f"  survivor: {mutant.name} ({mutant.path})")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
