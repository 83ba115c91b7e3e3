"""One minimal counterexample per verifier rule.

Each test starts from a schedule the verifier accepts, breaks it in exactly
one way and requires exactly one violation, naming that rule. The slip each
test catches is in its docstring; every one was planted by hand in
``proofs_checks/verifier.py`` and seen to fail the test. Times are chosen so
that breaches are short (0.3 s) and fall between whole seconds, where a
verifier rounding times, or comparing them with a loose tolerance, lets them
through.

The instance (:func:`_instance`), worked by hand; two servers of 2 GPUs,
``B_intra = 2``, ``B_inter = 1``, ``M = 4``:

=====  =====  ===  ============  ====  ======  ===========  ============  ======
job    r      K    c             g     w       A duration   A1 duration   A2 size
=====  =====  ===  ============  ====  ======  ===========  ============  ======
a      0      2    1, edge 2 GB  2     1/2     2 * 2 = 4    2 * 3 = 6     3
b      0.5    1    1.5           1     3/2     1.5          1.5           0.375
c      1      2    1             1     2/3     2            2             0.5
=====  =====  ===  ============  ====  ======  ===========  ============  ======

(a on one server: alpha = 1 + 2/2 = 2; all cut: 1 + 2/1 = 3; A2 size
``g K alpha_max / M``.)
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from ddlsched.proofs_checks.verifier import VerificationReport, verify

from ddlsched.core.model import Cluster, Instance, Job, Piece, Problem, Schedule, ScheduledJob


def _instance() -> Instance:
    """The three jobs of the module docstring, with fractional weights."""
    return Instance(
        Cluster((2, 2), 2.0, 1.0),
        (
            Job(
                id="a",
                release=0.0,
                iterations=2,
                compute_time=1.0,
                gpus=2,
                edges=((0, 1, 2.0),),
                weight=0.5,
            ),
            Job(id="b", release=0.5, iterations=1, compute_time=1.5, gpus=1, weight=1.5),
            Job(id="c", release=1.0, iterations=2, compute_time=1.0, gpus=1, weight=2 / 3),
        ),
    )


def _entries_a() -> dict[str, ScheduledJob]:
    """Problem A: a on server 0 [0, 4), b on server 1 [0.5, 2), c on server 1 [2, 4)."""
    return {
        "a": ScheduledJob("a", 0.0, 4.0, (0, 0)),
        "b": ScheduledJob("b", 0.5, 2.0, (1,)),
        "c": ScheduledJob("c", 2.0, 4.0, (1,)),
    }


def _schedule(
    entries: dict[str, ScheduledJob], problem: str = "A", restart: float = 0.0
) -> Schedule:
    return Schedule(tuple(entries.values()), Problem(problem), restart)


def _with(base: dict[str, ScheduledJob], **changed: ScheduledJob) -> dict[str, ScheduledJob]:
    return {**base, **changed}


def _only(report: VerificationReport, fragment: str) -> None:
    """Exactly one violation, and it names ``fragment``."""
    assert len(report.violations) == 1, report.violations
    assert fragment in report.violations[0], report.violations


def _preempted_c(
    *pieces: Piece, start: float | None = None, end: float | None = None
) -> ScheduledJob:
    """Job c as a preempted entry with ``pieces`` (start and end from them unless given)."""
    first = pieces[0].start if pieces else 2.0
    last = pieces[-1].end if pieces else 4.0
    return ScheduledJob(
        "c", first if start is None else start, last if end is None else end, None, pieces
    )


# Problem A, non-preemptive.


def test_base_schedules_are_feasible_with_weighted_totals() -> None:
    """Catches weights dropped from (or misapplied in) the recomputed objective. Hand
    totals with weights 1/2, 3/2, 2/3: A: 0.5 * 4 + 1.5 * 2 + 2/3 * 4 = 23/3, JCT
    2 + 2.25 + 2 = 6.25; A1 (a lasts 6): 3 + 3 + 8/3 = 26/3, JCT 7.25; A2 (b [0.5, 0.875),
    a [0.875, 3.875), c [3.875, 4.375)): 1.9375 + 1.3125 + 35/12 = 37/6, JCT 4.75."""
    instance = _instance()
    report = verify(instance, _schedule(_entries_a()))
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(23 / 3, rel=1e-12)
    assert report.total_jct == pytest.approx(6.25, rel=1e-12)
    assert report.completion_times == pytest.approx({"a": 4.0, "b": 2.0, "c": 4.0})
    a1 = verify(instance, _schedule(_entries_a1(), "A1"))
    assert a1.feasible, a1.violations
    assert a1.total_completion_time == pytest.approx(26 / 3, rel=1e-12)
    assert a1.total_jct == pytest.approx(7.25, rel=1e-12)
    a2 = verify(instance, _schedule(_entries_a2(), "A2"))
    assert a2.feasible, a2.violations
    assert a2.total_completion_time == pytest.approx(37 / 6, rel=1e-12)
    assert a2.total_jct == pytest.approx(4.75, rel=1e-12)


def test_missing_job_is_the_one_violation_and_total_unknown() -> None:
    """Catches a missing job going unreported or still given a total."""
    entries = _entries_a()
    del entries["c"]
    report = verify(_instance(), _schedule(entries))
    _only(report, "job 'c': not scheduled")
    assert math.isnan(report.total_completion_time) and math.isnan(report.total_jct)


def test_job_scheduled_twice() -> None:
    """Catches a duplicate entry being accepted (or its second copy counted)."""
    entries = list(_entries_a().values())
    report = verify(_instance(), Schedule((*entries, entries[1])))
    _only(report, "job 'b': scheduled more than once")


def test_unknown_job() -> None:
    """Catches an entry for a job the instance lacks going unreported."""
    entries = list(_entries_a().values())
    report = verify(_instance(), Schedule((*entries, ScheduledJob("zed", 9.0, None, (0,)))))
    _only(report, "job 'zed': not in the instance")


@pytest.mark.parametrize("start", [0.2, 0.49])
def test_start_before_release(start: float) -> None:
    """Catches a release check with slack (``start < release - 1``, rounding): b starts
    0.3 s (and 0.01 s) before its release of 0.5."""
    late = ScheduledJob("b", start, start + 1.5, (1,))
    _only(verify(_instance(), _schedule(_with(_entries_a(), b=late))), "before its release 0.5")


@pytest.mark.parametrize(
    ("mapping", "fragment"),
    [
        (None, "has no mapping"),
        ((1, 1), "mapping has 2 entries, the job has 1 nodes"),
        ((2,), "mapping uses server 2"),
    ],
)
def test_bad_mapping(mapping: tuple[int, ...] | None, fragment: str) -> None:
    """Catches a missing mapping, one of the wrong length or one naming a server the
    cluster lacks being accepted (each alone, on job b)."""
    entry = ScheduledJob("b", 0.5, 2.0, mapping)
    _only(verify(_instance(), _schedule(_with(_entries_a(), b=entry))), fragment)


@pytest.mark.parametrize("end", [2.3, 1.7, 2.0 + 1e-6])
def test_end_not_start_plus_duration(end: float) -> None:
    """Catches an end checked loosely or one way only: b's end must be 0.5 + 1.5 = 2."""
    entry = ScheduledJob("b", 0.5, end, (1,))
    _only(
        verify(_instance(), _schedule(_with(_entries_a(), b=entry))),
        "differs from start + K * alpha",
    )


def test_split_job_duration_uses_the_cut_edge() -> None:
    """Catches a duration that ignores the mapping (always B_intra): a split over both
    servers takes 2 * (1 + 2/1) = 6, so end 4 is wrong and end 6 (with c moved) right."""
    entries = _with(_entries_a(), a=ScheduledJob("a", 0.0, 4.0, (0, 1)))
    entries["b"] = ScheduledJob("b", 6.0, 7.5, (1,))
    entries["c"] = ScheduledJob("c", 7.5, 9.5, (1,))
    _only(verify(_instance(), _schedule(entries)), "end 4 differs from start + K * alpha = 6")
    entries["a"] = ScheduledJob("a", 0.0, 6.0, (0, 1))
    assert verify(_instance(), _schedule(entries)).feasible


@pytest.mark.parametrize("start", [3.7, 3.75])
def test_capacity_overlap_of_a_fraction_of_a_second(start: float) -> None:
    """Catches a capacity sweep on rounded times or with a loose tolerance: b moved to
    server 0 at 3.7 (3.75) overlaps a, which holds both its GPUs until 4, by 0.3 (0.25) s."""
    entry = ScheduledJob("b", start, start + 1.5, (0,))
    report = verify(_instance(), _schedule(_with(_entries_a(), b=entry)))
    _only(report, f"server 0: 3 GPUs in use at time {start:g}")


def test_touching_jobs_share_gpus() -> None:
    """Catches a sweep that takes intervals as closed: c starting on server 0 at 4, the
    instant a frees both its GPUs there, is no overlap."""
    entries = _with(_entries_a(), c=ScheduledJob("c", 4.0, 6.0, (0,)))
    assert verify(_instance(), _schedule(entries)).feasible


# Problem A, preempted jobs (pieces with mappings).


def _preempted_entries(*pieces: Piece, **times: float) -> dict[str, ScheduledJob]:
    return _with(_entries_a(), c=_preempted_c(*pieces, **times))


_GOOD_PIECES = (Piece(2.0, 3.0, (1,)), Piece(3.5, 4.5, (1,)))
"""c preempted: [2, 3) and [3.5, 4.5) on server 1: 2 s of work at alpha 1, K = 2."""


def test_preempted_base_is_feasible_with_weighted_total() -> None:
    """Catches a preempted job's completion taken from its first piece or unweighted:
    c completes at 4.5, total 0.5 * 4 + 1.5 * 2 + 2/3 * 4.5 = 8."""
    report = verify(_instance(), _schedule(_preempted_entries(*_GOOD_PIECES)))
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(8.0, rel=1e-12)


@pytest.mark.parametrize(
    "pieces",
    [
        (Piece(2.0, 3.3, (1,)), Piece(3.0, 3.7, (1,))),
        (Piece(2.25, 3.55, (1,)), Piece(3.25, 3.95, (1,))),
    ],
)
def test_preempted_pieces_overlapping_by_a_fraction_of_a_second(
    pieces: tuple[Piece, ...],
) -> None:
    """Catches pieces of one job allowed to overlap by less than a second (a tolerance of
    1 s, rounded times): c's pieces overlap by 0.3 s, at whole and at non-integral times;
    their work is still exactly K and server 1 has room for both, so only this rule
    breaks."""
    report = verify(_instance(), _schedule(_preempted_entries(*pieces)))
    _only(report, "job 'c': piece 1 starts before piece 0 ends")


@pytest.mark.parametrize(
    ("pieces", "fragment"),
    [
        ((Piece(2.0, 3.0, (1,)), Piece(3.5, 4.8, (1,))), "do 2.3 iterations of work, it needs 2"),
        ((Piece(2.0, 3.0, (1,)), Piece(3.5, 4.2, (1,))), "do 1.7 iterations of work, it needs 2"),
    ],
)
def test_preempted_work_must_equal_k(pieces: tuple[Piece, ...], fragment: str) -> None:
    """Catches a work check one way only (``work < K``) or loose: 2.3 and 1.7 iterations."""
    _only(verify(_instance(), _schedule(_preempted_entries(*pieces))), fragment)


def test_restart_cost_is_charged_to_later_pieces() -> None:
    """Catches the restart cost ignored (or charged to the first piece too): with 0.5 s per
    resume, [2, 3) + [3.5, 5) does 1 + (1.5 - 0.5) = 2 iterations (feasible) and
    [2, 3) + [3.5, 4.5) only 1.5."""
    longer = _preempted_entries(Piece(2.0, 3.0, (1,)), Piece(3.5, 5.0, (1,)))
    assert verify(_instance(), _schedule(longer, restart=0.5)).feasible
    short = _preempted_entries(*_GOOD_PIECES)
    _only(
        verify(_instance(), _schedule(short, restart=0.5)),
        "do 1.5 iterations of work, it needs 2",
    )


def test_preempted_piece_capacity() -> None:
    """Catches capacity not checked over pieces: c's second piece on server 0 at 3.5
    meets a (2 GPUs there until 4)."""
    pieces = (Piece(2.0, 3.0, (1,)), Piece(3.5, 4.5, (0,)))
    _only(
        verify(_instance(), _schedule(_preempted_entries(*pieces))),
        "server 0: 3 GPUs in use at time 3.5",
    )


def test_preempted_piece_before_release() -> None:
    """Catches a preempted job's pieces not checked against its release (and the fault
    reported once, not twice): c's first piece runs at 0.7, its release is 1; b shares
    server 1 then, which has room."""
    pieces = (Piece(0.7, 1.7, (1,)), Piece(3.5, 4.5, (1,)))
    _only(verify(_instance(), _schedule(_preempted_entries(*pieces))), "before its release")


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        (_preempted_c(), "has an empty list of pieces"),
        (
            dataclasses.replace(_preempted_c(*_GOOD_PIECES), mapping=(1,)),
            "a preempted job's mappings belong to its pieces",
        ),
        (_preempted_c(Piece(2.0, 3.0), _GOOD_PIECES[1]), "piece 0: has no mapping"),
        (_preempted_c(_GOOD_PIECES[0], Piece(4.5, 3.5, (1,))), "piece 1 ends before it starts"),
        (_preempted_c(*_GOOD_PIECES, start=2.3), "start 2.3 is not its first piece's start"),
        (_preempted_c(*_GOOD_PIECES, end=4.8), "end 4.8 is not its last piece's end 4.5"),
    ],
)
def test_preempted_entry_rules(entry: ScheduledJob, fragment: str) -> None:
    """Catches each structural rule of a preempted entry going unchecked: no pieces, a
    mapping on the entry, a piece without one, a piece ending before it starts, a start
    or an end that is not the first or last piece's."""
    _only(verify(_instance(), _schedule(_with(_entries_a(), c=entry))), fragment)


# Problem A1 (pooled, all-cut durations).


def _entries_a1() -> dict[str, ScheduledJob]:
    """A1: a [0, 6), b [0.5, 2), c [2, 4): at most 3 of the 4 GPUs in use."""
    return {
        "a": ScheduledJob("a", 0.0, 6.0),
        "b": ScheduledJob("b", 0.5, 2.0),
        "c": ScheduledJob("c", 2.0, 4.0),
    }


def test_a1_rules() -> None:
    """Catches A1 accepting a mapping, pieces, or a duration other than K alpha_max (a
    lasts 6, not its best A duration 4)."""
    instance = _instance()
    mapped = _with(_entries_a1(), b=ScheduledJob("b", 0.5, 2.0, (1,)))
    _only(verify(instance, _schedule(mapped, "A1")), "problem A1 takes no mapping")
    pieces = _with(_entries_a1(), b=ScheduledJob("b", 0.5, 2.0, None, (Piece(0.5, 2.0),)))
    _only(verify(instance, _schedule(pieces, "A1")), "has pieces, but problem A1")
    short = _with(_entries_a1(), a=ScheduledJob("a", 0.0, 4.0))
    _only(verify(instance, _schedule(short, "A1")), "end 4 differs from start + K * alpha = 6")


def test_a1_pooled_capacity_overlap_of_a_fraction_of_a_second() -> None:
    """Catches the pooled capacity check rounding times: two 2-GPU jobs of 1 s on one
    2-GPU server overlap by 0.3 s in A1 (x [0, 1), y [0.7, 1.7))."""
    jobs = tuple(
        Job(id=name, release=0.0, iterations=1, compute_time=1.0, gpus=2) for name in "xy"
    )
    instance = Instance(Cluster((2,), 1.0, 1.0), jobs)
    schedule = Schedule((ScheduledJob("x", 0.0, 1.0), ScheduledJob("y", 0.7, 1.7)), Problem.A1)
    _only(verify(instance, schedule), "the cluster: 4 GPUs in use at time 0.7")


# Problem A2 (one preemptive machine, sizes g K alpha_max / M).


def _entries_a2() -> dict[str, ScheduledJob]:
    """A2: b [0.5, 0.875), a [0.875, 3.875), c [3.875, 4.375)."""
    return {
        "a": ScheduledJob("a", 0.875, 3.875, pieces=(Piece(0.875, 3.875),)),
        "b": ScheduledJob("b", 0.5, 0.875, pieces=(Piece(0.5, 0.875),)),
        "c": ScheduledJob("c", 3.875, 4.375, pieces=(Piece(3.875, 4.375),)),
    }


def _a2(**changed: ScheduledJob) -> VerificationReport:
    return verify(_instance(), _schedule(_with(_entries_a2(), **changed), "A2"))


@pytest.mark.parametrize(
    "pieces",
    [
        (Piece(3.875, 4.675),),
        (Piece(3.875, 4.2), Piece(4.3, 4.775)),
    ],
)
def test_a2_pieces_doing_more_work_than_the_size(pieces: tuple[Piece, ...]) -> None:
    """Catches an A2 work check one way only (``processed < size``): c's pieces process
    0.8 in total (in one piece, or two), its size is 0.5."""
    entry = ScheduledJob("c", pieces[0].start, pieces[-1].end, pieces=pieces)
    _only(_a2(c=entry), "processed 0.8 in its pieces, its size is 0.5")


def test_a2_pieces_doing_less_work_than_the_size() -> None:
    """Catches an A2 work check that only looks for excess: c processes 0.3 of 0.5."""
    entry = ScheduledJob("c", 3.875, 4.175, pieces=(Piece(3.875, 4.175),))
    _only(_a2(c=entry), "processed 0.3 in its pieces, its size is 0.5")


@pytest.mark.parametrize("start", [3.575, 3.6])
def test_a2_jobs_overlapping_by_a_fraction_of_a_second(start: float) -> None:
    """Catches the single machine accepting overlaps under a second (rounded times, a 1 s
    tolerance): c starts 0.3 (0.275) s before a ends at 3.875."""
    entry = ScheduledJob("c", start, start + 0.5, pieces=(Piece(start, start + 0.5),))
    _only(_a2(c=entry), "jobs 'a' and 'c' overlap")


@pytest.mark.parametrize(
    "pieces",
    [
        (Piece(1.0, 2.3), Piece(2.0, 3.7)),
        (Piece(0.875, 2.675), Piece(2.375, 3.575)),
    ],
)
def test_a2_pieces_of_one_job_overlapping(pieces: tuple[Piece, ...]) -> None:
    """Catches the single machine checking only pieces of different jobs: a's own two
    pieces overlap by 0.3 s (at whole and non-integral times) while processing exactly
    its size 3 (1.3 + 1.7, 1.8 + 1.2)."""
    entry = ScheduledJob("a", pieces[0].start, pieces[-1].end, pieces=pieces)
    _only(_a2(a=entry), "jobs 'a' and 'a' overlap")


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        (ScheduledJob("c", 3.875, 4.375), "problem A2 needs pieces"),
        (
            ScheduledJob("c", 3.875, 4.375, pieces=(Piece(3.875, 4.375, (0,)),)),
            "problem A2 pieces take no mapping",
        ),
        (
            ScheduledJob("c", 3.875, 4.375, pieces=(Piece(3.875, 4.375), Piece(4.3, 4.2))),
            "piece [4.3, 4.2) ends before it starts",
        ),
        (
            ScheduledJob("c", 3.9, 4.375, pieces=(Piece(3.875, 4.375),)),
            "start 3.9 is not its first piece's start",
        ),
        (
            ScheduledJob("c", 3.875, 4.5, pieces=(Piece(3.875, 4.375),)),
            "end 4.5 is not its last piece's end 4.375",
        ),
    ],
)
def test_a2_entry_rules(entry: ScheduledJob, fragment: str) -> None:
    """Catches each structural A2 rule going unchecked: no pieces, a piece with a mapping,
    a piece ending before it starts, a start or end that is not its pieces'."""
    _only(_a2(c=entry), fragment)


def test_a2_piece_before_release_by_a_fraction() -> None:
    """Catches an A2 release check with slack: b runs from 0.2, 0.3 s before its release."""
    entry = ScheduledJob("b", 0.2, 0.575, pieces=(Piece(0.2, 0.575),))
    _only(_a2(b=entry), "runs at 0.2 before its release 0.5")
