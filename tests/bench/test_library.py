"""The library's files: reading, choosing entries, replacing a certificate."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from ddlsched.bench import library as lib
from ddlsched.core.model import InputError
from tests.bench.conftest import released_entry, two_job_entry


def test_a_written_library_reads_back_equal_in_tier_order(tiny_library: Path) -> None:
    """Entries come back equal to what was written (instance, schedule, certificate),
    sorted by tier then name whatever the order they were written in."""
    read = lib.library(tiny_library)
    assert [item.name for item in read] == ["S-hand-1x2-j2", "M-hand-1x2-j2-r"]
    assert read[0] == two_job_entry()
    assert read[1] == released_entry()


def test_flow_bounds_subtract_the_weighted_releases(tiny_library: Path) -> None:
    """The flow interval is the certificate's less ``sum w r`` (worked by hand: narrow,
    weight 2, released at 4, so 8 less), and an optimum only where proven."""
    optimal, interval = lib.library(tiny_library)
    assert optimal.flow_optimum == 5.0
    assert (interval.release_weight, interval.flow_lower_bound) == (8.0, 2.0)
    assert (interval.flow_upper_bound, interval.flow_optimum) == (4.0, None)
    assert interval.certificate.optimum is None


def test_entries_choose_by_tier_and_name_and_refuse_unknown_ones(tiny_library: Path) -> None:
    """A tier or a name not in the library is refused, naming it; the others choose."""
    assert [e.name for e in lib.entries(["M"], path=tiny_library)] == ["M-hand-1x2-j2-r"]
    assert lib.entry("S-hand-1x2-j2", tiny_library).tier == "S"
    with pytest.raises(InputError, match="'X'"):
        lib.entries(["S", "X"], path=tiny_library)
    with pytest.raises(InputError, match="'nope'"):
        lib.entry("nope", tiny_library)


def test_save_certificate_replaces_only_that_entry(tiny_library: Path) -> None:
    """A new certificate is read back in place of the old, with its history; the other
    entry is untouched and no temporary file is left behind."""
    old = lib.entry("M-hand-1x2-j2-r", tiny_library)
    better = dataclasses.replace(
        old.certificate,
        status="optimal",
        lower_bound=12.0,
        history=(old.certificate.summary(),),
    )
    lib.save_certificate(old, better, tiny_library)
    again = lib.entry("M-hand-1x2-j2-r", tiny_library)
    assert again.certificate == better
    assert again.certificate.history[0]["lower_bound"] == 10.0
    assert lib.entry("S-hand-1x2-j2", tiny_library) == two_job_entry()
    assert not list(tiny_library.rglob("*.tmp"))


def test_a_big_entry_is_stored_gzipped(tmp_path: Path) -> None:
    """Past GZIP_JOBS jobs the entry's file is gzip (and still read back)."""
    small = two_job_entry()
    jobs = tuple(small.instance.jobs[1].replace(id=f"j{k}") for k in range(lib.GZIP_JOBS + 1))
    instance = small.instance.replace(jobs=jobs)
    item = dataclasses.replace(small, instance=instance)
    lib.write_library([item], tmp_path)
    file = tmp_path / lib.entry_file(item)
    assert file.name.endswith(".json.gz")
    assert json.loads(gzip.decompress(file.read_bytes()))["name"] == item.name
    assert lib.entry(item.name, tmp_path).instance == instance


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: (p / "S" / "S-hand-1x2-j2.json").unlink(), "no such file"),
        (lambda p: (p / "S" / "S-hand-1x2-j2.json").write_text("{"), "not valid JSON"),
        (lambda p: (p / lib.INDEX_FILE).write_text('{"format": 1}'), "missing field"),
        (
            lambda p: (p / "S" / "S-hand-1x2-j2.json").write_text(
                (p / "M" / "M-hand-1x2-j2-r.json").read_text()
            ),
            "the index says",
        ),
    ],
)
def test_a_missing_or_corrupt_file_is_one_clear_error(
    tiny_library: Path, damage: object, message: str
) -> None:
    """A deleted, truncated, misnamed or wrongly formatted file is an InputError naming
    the file, never a traceback from deep inside."""
    assert callable(damage)
    damage(tiny_library)
    with pytest.raises(InputError, match=message):
        lib.library(tiny_library)


def test_a_library_of_another_version_is_refused(tiny_library: Path) -> None:
    """An index of another library version is refused, naming the version read."""
    index = tiny_library / lib.INDEX_FILE
    doc = json.loads(index.read_text())
    doc["library_version"] = "0"
    index.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="library version '1', got '0'"):
        lib.library(tiny_library)
