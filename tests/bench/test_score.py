"""Scoring policies against the library (:mod:`ddlsched.bench.score`): rows against
hand-worked ratios and against the verifier's own recomputation, users' policies, the
leaderboard."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest
from ddlsched.proofs_checks.verifier import verify

from ddlsched import ExactParams, generate, simulate, solve
from ddlsched.api import lower_bounds
from ddlsched.bench import score
from ddlsched.bench.library import Certificate, Entry, write_library
from ddlsched.bench.library import entry as library_entry
from ddlsched.core.generators import GeneratorConfig
from ddlsched.core.model import InputError, Instance, Schedule, ScheduledJob
from tests.bench.conftest import two_job_entry

EXACT = ExactParams(time_limit=None, deterministic_limit=5, node_limit=500, threads=1)
"""Deterministic limits: the same certificates on any machine."""


def _weighted(instance: Instance, weights: tuple[float, ...]) -> Instance:
    return instance.replace(
        jobs=tuple(job.replace(weight=w) for job, w in zip(instance.jobs, weights, strict=True))
    )


def _solved_entry(name: str, tier: str, instance: Instance) -> Entry:
    """``instance`` with the certificate the exact solve proves (its bound and schedule)."""
    result = solve(instance, "exact", params=EXACT)
    assert result.schedule is not None and result.lower_bound is not None
    return Entry(
        name,
        tier,
        {"test": name},
        instance,
        Certificate(
            problem="A",
            status="optimal" if result.proven_optimal else "interval",
            lower_bound=result.lower_bound.value,
            lower_bound_name="exact",
            lower_bound_settings={"method": "exact"},
            upper_bound=result.objective,
            schedule=result.schedule,
            command="test",
            version="test",
            produced="2026-11-29",
        ),
    )


def _interval_entry(name: str, instance: Instance) -> Entry:
    """``instance`` with an interval: its best fast bound, and sjf's schedule above."""
    bound = max((b for b in lower_bounds(instance) if b.valid), key=lambda b: b.value)
    upper = simulate(instance, "sjf", bound=False)
    assert upper.schedule is not None
    return Entry(
        name,
        "L",
        {"test": name},
        instance,
        Certificate(
            problem="A",
            status="interval",
            lower_bound=bound.value,
            lower_bound_name=bound.name,
            lower_bound_settings={"bounds": [bound.name]},
            upper_bound=upper.objective,
            schedule=upper.schedule,
            command="test",
            version="test",
            produced="2026-11-29",
        ),
    )


@pytest.fixture(scope="module")
def family_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generated entries of every kind the library holds: batch and spread arrivals,
    integral and realistic (non-integral) times, one and two GPU types, unit and
    non-integral weights, jobs of 1 to 4 GPUs; proven optima (S, M) and an interval (L)."""
    friendly = GeneratorConfig.exact_friendly
    typed = (("v100", 1), ("k80", 1))
    chosen = [
        _solved_entry("S-batch", "S", generate(friendly(5, 2, 2), 1)),
        _solved_entry("S-typed", "S", generate(friendly(5, 2, 2).replace(gpu_types=typed), 0)),
        _solved_entry(
            "M-spread-weighted",
            "M",
            _weighted(generate(friendly(6, 2, 4, load=0.8), 0), (0.5, 2.5, 1, 3, 0.25, 1.5)),
        ),
        _solved_entry(
            "M-typed-weighted",
            "M",
            _weighted(
                generate(friendly(5, 2, 2, load=0.5).replace(gpu_types=typed), 2),
                (1.5, 0.5, 2, 1, 0.75),
            ),
        ),
        _interval_entry(
            "L-realistic",
            generate(GeneratorConfig(num_jobs=6, servers=2, gpus_per_server=2, load=1.0), 0),
        ),
    ]
    folder = tmp_path_factory.mktemp("family") / "library"
    write_library(chosen, folder)
    return folder


def test_a_row_divides_total_jct_by_the_optimal_or_bounded_one(tiny_library: Path) -> None:
    """FIFO on the hand-worked entries. Two-job entry: arrival order, ties in the queue's
    order, so ``wide`` [0, 2) then ``narrow`` [2, 3): ``sum w C = 2 + 2 * 3 = 8``, all
    released at 0, so total JCT 8 over the optimal 5: 1.6. Released entry: ``wide`` [0, 2),
    ``narrow`` at its release [4, 5): ``sum w C = 12``, total JCT ``12 - 2 * 4 = 4`` over
    the flow bound ``10 - 8 = 2``: 2.0 (on ``sum C`` it would read 12 / 10 = 1.2)."""
    rows = {row.name: row for row in score.run("fifo", path=tiny_library).rows}
    batch, released = rows["S-hand-1x2-j2"], rows["M-hand-1x2-j2-r"]
    assert (batch.reference, batch.total_jct, batch.reference_jct) == ("optimum", 8.0, 5.0)
    assert batch.ratio == pytest.approx(1.6, rel=1e-12)
    assert (released.reference, released.total_jct) == ("lower bound", 4.0)
    assert released.reference_jct == pytest.approx(2.0, rel=1e-12)
    assert released.ratio == pytest.approx(2.0, rel=1e-12)
    assert released.completion_ratio == pytest.approx(1.2, rel=1e-12)
    assert not batch.error and not released.error


@pytest.mark.parametrize("policy", score.leaderboard_policies())
def test_every_row_is_the_verifiers_total_jct_over_the_certified_one(
    family_library: Path, policy: str
) -> None:
    """On generated entries of every kind, each row's ratio is recomputed here from the
    policy's schedule through the verifier and the certificate's reference less ``sum w r``
    (summed here), and it is at least 1 against an optimum."""
    scored = score.run(policy, path=family_library)
    assert [row.name for row in scored.rows] == [
        "S-batch",
        "S-typed",
        "M-spread-weighted",
        "M-typed-weighted",
        "L-realistic",
    ]
    for row in scored.rows:
        entry = library_entry(row.name, family_library)
        instance, certificate = entry.instance, entry.certificate
        schedule = simulate(instance, policy, bound=False).schedule
        assert schedule is not None
        report = verify(instance, schedule)
        released = math.fsum(job.weight * job.release for job in instance.jobs)
        optimal = certificate.status == "optimal"
        reference = certificate.upper_bound if optimal else certificate.lower_bound
        assert not row.error, row.error
        assert row.reference == ("optimum" if optimal else "lower bound")
        assert row.total_jct == pytest.approx(report.total_jct, rel=1e-12)
        expected = max(1.0, report.total_jct / (reference - released))
        assert row.ratio == pytest.approx(expected, rel=1e-9)
        assert row.ratio >= 1.0


def wrong_optimum_entry() -> Entry:
    """The two-job entry with a certificate that calls the other order (``wide`` first,
    ``sum w C = 8``) optimal, bound and all: the true optimum is 5."""
    good = two_job_entry()
    worse = Schedule(
        (ScheduledJob("wide", 0.0, 2.0, (0, 0)), ScheduledJob("narrow", 2.0, 3.0, (0,)))
    )
    wrong = Certificate(
        problem="A",
        status="optimal",
        lower_bound=8.0,
        lower_bound_name="exact",
        lower_bound_settings={},
        upper_bound=8.0,
        schedule=worse,
        command="a wrong certificate",
        version="0.1.0",
        produced="2026-11-29",
    )
    return Entry(good.name, "S", good.family, good.instance, wrong)


def test_a_ratio_below_one_against_an_optimum_is_an_error(tmp_path: Path) -> None:
    """Against :func:`wrong_optimum_entry`'s certificate a policy reaching the true optimum
    5 is below the bound 8, a contradiction reported as the row's error with no ratio,
    never a score under 1."""
    write_library([wrong_optimum_entry()], tmp_path)
    scored = score.run("asrpt-greedy", path=tmp_path)
    (row,) = scored.rows
    assert row.total_jct == 5.0 and math.isnan(row.ratio)
    assert "ratio below 1" in row.error and scored.errors == (row,)
    assert scored.tiers()[0].errors == 1 and scored.tiers()[0].instances == 0


def test_a_preemptive_policy_is_refused_by_name(tiny_library: Path) -> None:
    """The entries are of problem A (non-preemptive): a preemptive built-in policy could beat
    their optima and is refused before any run, naming it."""
    with pytest.raises(InputError, match="'las' preempts"):
        score.run("las", path=tiny_library)
    with pytest.raises(InputError, match="'gavel' preempts"):
        score.leaderboard(["fifo", "gavel"], path=tiny_library)


USER_POLICY = """
from ddlsched.algorithms import FirstFitMapper, Policy


class NarrowFirst(Policy):
    \"\"\"Starts the waiting job of fewest GPUs that fits, then the next.\"\"\"

    name = "narrow-first"

    def __init__(self, cluster):
        self.cluster, self.waiting = cluster, []

    def on_arrival(self, job, now):
        self.waiting.append(job)

    def dispatch(self, now, free):
        for job in sorted(self.waiting, key=lambda job: (job.gpus, job.id)):
            mapping = FirstFitMapper()(job, self.cluster, free)
            if mapping is not None:
                self.waiting.remove(job)
                yield job, mapping
"""


def test_a_users_policy_in_a_file_outside_the_package_is_scored(
    tiny_library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``path.py:Class`` and ``module:Class`` load a class of the policy protocol from
    outside the package. Narrow first, worked by hand: two-job entry ``narrow`` [0, 1),
    ``wide`` [1, 3): 5, optimal, ratio 1; released entry: ``wide`` alone at 0, ``narrow``
    at 4: total JCT 4 over 2."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "narrow_first.py").write_text(textwrap.dedent(USER_POLICY))
    spec = f"{folder / 'narrow_first.py'}:NarrowFirst"
    by_file = score.run(spec, path=tiny_library)
    assert by_file.policy == spec
    assert [row.ratio for row in by_file.rows] == [1.0, 2.0]
    monkeypatch.syspath_prepend(str(folder))
    by_module = score.run("narrow_first:NarrowFirst", path=tiny_library)
    assert [row.ratio for row in by_module.rows] == [1.0, 2.0]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-such-policy", "expected a built-in name"),
        ("missing.py:Policy", "no file missing.py"),
        ("ddlsched_no_such_module:Policy", "No module named"),
        ("ddlsched.algorithms:NoSuchClass", "has no class 'NoSuchClass'"),
    ],
)
def test_a_policy_that_cannot_be_loaded_is_refused_naming_it(
    tiny_library: Path, spec: str, message: str
) -> None:
    """An unknown name, a missing file or module and a missing class: one line naming the
    policy as given."""
    with pytest.raises(InputError, match=message) as refused:
        score.run(spec, path=tiny_library)
    assert repr(spec) in str(refused.value)


def test_a_users_policy_that_raises_gets_an_error_row(tiny_library: Path, tmp_path: Path) -> None:
    """A user's policy failing on an entry is that entry's error, not the end of the run."""
    broken = tmp_path / "broken.py"
    broken.write_text(
        textwrap.dedent(USER_POLICY).replace("self.waiting.append(job)", "raise RuntimeError('x')")
    )
    scored = score.run(f"{broken}:NarrowFirst", path=tiny_library)
    assert len(scored.errors) == 2 and "RuntimeError('x')" in scored.errors[0].error


def test_the_leaderboard_scores_every_policy_on_every_tier(tiny_library: Path) -> None:
    """One row per default policy per tier, each equal to that policy's own run's tier
    summary, ranked by mean ratio within a tier. The default policies are the registry's
    that never preempt."""
    from ddlsched.algorithms.registry import POLICIES, PREEMPTIVE_POLICIES

    board = score.leaderboard(path=tiny_library)
    expected = {name for name in POLICIES.names() if name not in PREEMPTIVE_POLICIES}
    assert {"asrpt", "asrpt-greedy", "fifo", "sjf"} <= expected
    for tier in ("S", "M"):
        rows = [row for row in board if row.tier == tier]
        assert sorted(row.policy for row in rows) == sorted(expected)
        means = [row.mean_ratio for row in rows]
        assert means == sorted(means)
    for row in board:
        own = {t.tier: t for t in score.run(row.policy, path=tiny_library).tiers()}
        assert own[row.tier] == row
    assert [row.tier for row in board] == ["S"] * len(expected) + ["M"] * len(expected)


def test_the_leaderboard_refuses_a_policy_named_twice(tiny_library: Path) -> None:
    """``fifo,fifo`` is a slip, refused naming the policy."""
    with pytest.raises(InputError, match="fifo named more than once"):
        score.leaderboard(["fifo", "sjf", "fifo"], path=tiny_library)


def test_ctrl_c_keeps_the_rows_done(tiny_library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``partial``, Ctrl-C during the second entry returns the first row, marked
    interrupted; without it, the interrupt goes on."""
    real = score.score_entry
    calls = []

    def interrupted_second(*args: object, **kwargs: object) -> score.ScoreRow:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(score, "score_entry", interrupted_second)
    kept = score.run("fifo", path=tiny_library, partial=True)
    assert kept.interrupted and [row.name for row in kept.rows] == ["S-hand-1x2-j2"]
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        score.run("fifo", path=tiny_library)
