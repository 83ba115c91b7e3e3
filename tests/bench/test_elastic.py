"""Elastic entries of the library: built from the elastic sandwich, their stored run through
the independent elastic check, tampering caught naming the entry, the workload exported as
the elastic loader reads it."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ddlsched.bench import build
from ddlsched.bench.elastic import ElasticEntry, ElasticInstance
from ddlsched.bench.library import (
    InputError,
    elastic_entries,
    entries,
    entry,
    library,
    write_elastic_entry,
    write_index,
    write_library,
)
from ddlsched.bench.verify import check_elastic_entry
from ddlsched.cli import main
from ddlsched.core.data import bundled_data_dir
from ddlsched.core.elastic import ElasticCluster

JsonDoc = dict[str, object]
STEPS = 20
"""Lagrangian steps of the small entries (a fixed count: deterministic, and quick)."""


def _instance(workload: str, jobs: int, nodes: int) -> ElasticInstance:
    from ddlsched.elastic import load_workload

    return ElasticInstance(load_workload(workload, limit=jobs), ElasticCluster(nodes, 4))


@pytest.fixture(scope="module")
def small() -> Iterator[list[ElasticEntry]]:
    """Two small elastic entries: the first 5 jobs of workload 6 on 2 x 4 GPUs (jobs
    capped to 8 GPUs) and the first 6 of workload 3 on 3 x 4, each built as the library's
    are, with fewer Lagrangian steps."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "ELASTIC_LAGRANGIAN_STEPS", STEPS)
        made = []
        for name, instance in [
            ("T-small-w6", _instance("workload-6.csv", 5, 2)),
            ("T-small-w3", _instance("workload-3.csv", 6, 3)),
        ]:
            with pytest.warns(UserWarning) if name == "T-small-w6" else _nothing():
                certificate = build.elastic_certificate(name, instance, lambda _: None)
            made.append(ElasticEntry(name, "T", {"small": name}, instance, certificate))
        yield made


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


@pytest.fixture
def folder(tmp_path: Path, small: list[ElasticEntry]) -> Path:
    """A library of one shipped S entry and the small elastic entries."""
    first = entries(["S"])[0]
    write_library([first], tmp_path)
    for item in small:
        write_elastic_entry(item, tmp_path)
    write_index([first], tmp_path, small)
    return tmp_path


@pytest.mark.slow
def test_certificates_bound_every_checked_run(small: list[ElasticEntry]) -> None:
    """Each certificate's lower bound is at most the total JCT of independent runs of every
    registered policy on the same instance (each checked), and its upper bound is the least
    of the offline schedules' checked totals; a fresh run of the named method gives it."""
    from ddlsched import elastic

    for item in small:
        instance, certificate = item.instance, item.certificate
        with pytest.warns(UserWarning) if item.name == "T-small-w6" else _nothing():
            report = elastic.compare(
                instance.workload, cluster=instance.cluster, params=instance.params()
            )
        for run in report.runs:
            assert run.verified
            total = math.fsum(row["jct"] for row in run.jobs)
            assert certificate.lower_bound <= total * (1 + 1e-9), (item.name, run.policy)
        assert certificate.lower_bound <= certificate.upper_bound
        assert certificate.lower_bound_settings["lagrangian_steps"] == STEPS


def test_round_trip_and_verify(folder: Path, small: list[ElasticEntry]) -> None:
    """Written and read back, the entries are equal; bench verify --full exits 0 and checks
    both problems' entries."""
    read = elastic_entries(path=folder)
    assert [item.name for item in read] == sorted(item.name for item in small)
    assert {item.name: item for item in read} == {item.name: item for item in small}
    assert [e.name for e in library(folder)] == [entries(["S"])[0].name]
    check = check_elastic_entry(read[0])
    assert check.holds, check.problems
    assert check.skipped == () or "lagrangian" in check.skipped[0]
    assert main(["bench", "verify", "--library", str(folder), "--full"]) == 0


def _edit(folder: Path, name: str, change: Callable[[JsonDoc], None]) -> None:
    path = folder / "T" / f"{name}.json.gz"
    doc = json.loads(gzip.decompress(path.read_bytes()))
    change(doc["certificate"])
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))


def _upper_up(certificate: JsonDoc) -> None:
    certificate["upper_bound"] = float(certificate["upper_bound"]) * 1.01  # type: ignore[arg-type]


def _lower_above(certificate: JsonDoc) -> None:
    certificate["lower_bound"] = float(certificate["upper_bound"]) * 1.5  # type: ignore[arg-type]


def _lower_up(certificate: JsonDoc) -> None:
    certificate["lower_bound"] = float(certificate["lower_bound"]) * 1.01  # type: ignore[arg-type]


def _completion_later(certificate: JsonDoc) -> None:
    completion = certificate["run"]["completion"]  # type: ignore[index]
    first = next(iter(completion))
    completion[first] += 60.0


def _batch_changed(certificate: JsonDoc) -> None:
    rounds = certificate["run"]["rounds"]  # type: ignore[index]
    alloc = next(iter(rounds[1]["allocations"].values()))
    alloc["atomic_bsz"] = alloc["atomic_bsz"] * 2


def _gpus_beyond_a_node(certificate: JsonDoc) -> None:
    rounds = certificate["run"]["rounds"]  # type: ignore[index]
    alloc = next(iter(rounds[0]["allocations"].values()))
    alloc["placement"] = [[0, 5]]


TAMPERING = {
    "upper bound raised": _upper_up,
    "lower bound above the upper": _lower_above,
    "lower bound raised": _lower_up,
    "a completion moved": _completion_later,
    "a batch size changed": _batch_changed,
    "a node over-filled": _gpus_beyond_a_node,
}


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_elastic_certificate_fails_naming_it(
    folder: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each tampering of one entry makes bench verify --full exit 1 naming that entry, and
    only it."""
    _edit(folder, "T-small-w3", TAMPERING[how])
    code = main(["bench", "verify", "--library", str(folder), "--full"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "failing: T-small-w3" in out
    assert "T-small-w6:" not in out


def test_the_workload_exports_as_the_loader_reads_it(
    small: list[ElasticEntry], tmp_path: Path
) -> None:
    """The instance's Pollux CSV, read by the elastic loader, gives back its workload."""
    from ddlsched.elastic import load_workload

    for item in small:
        path = tmp_path / f"{item.name}.csv"
        path.write_text(item.instance.workload_csv())
        assert load_workload(path) == item.instance.workload


def test_a_rigid_reader_refuses_an_elastic_entry_by_name(folder: Path) -> None:
    """Asking the rigid readers (bench export, bench run) for an elastic entry is refused
    naming it and its problem."""
    with pytest.raises(InputError, match="'T-small-w3' is an entry of problem 'elastic'"):
        entry("T-small-w3", folder)
    code = main(
        [
            "bench",
            "export",
            "T-small-w3",
            "--out",
            str(folder / "x.json"),
            "--library",
            str(folder),
        ]
    )
    assert code == 2


def test_the_elastic_schema_takes_the_entries_and_refuses_a_bad_run(
    small: list[ElasticEntry],
) -> None:
    """``elastic-entry.schema.json`` validates the entries, and refuses a run whose round
    lacks its allocations."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(
        (bundled_data_dir() / "bench" / "schemas" / "elastic-entry.schema.json").read_text()
    )
    validator = jsonschema.Draft202012Validator(schema)
    for item in small:
        document = json.loads(json.dumps(item.to_dict()))
        errors = list(validator.iter_errors(document))
        assert not errors, errors[0].message
    del document["certificate"]["run"]["rounds"][0]["allocations"]
    assert not validator.is_valid(document)


def test_an_elastic_policy_is_scored_on_the_elastic_entries(folder: Path) -> None:
    """bench run with an elastic policy scores the elastic entries only: each row's total
    JCT is that of an independent checked run of the policy, its ratio that total over the
    certified lower bound (at least 1)."""
    from ddlsched import elastic
    from ddlsched.bench.score import run

    scored = run("asrpt-elastic", path=folder)
    assert [row.name for row in scored.rows] == ["T-small-w3", "T-small-w6"]
    for row in scored.rows:
        item = elastic_entries(names=[row.name], path=folder)[0]
        instance = item.instance
        again = elastic.simulate(
            instance.fitted(), "asrpt-elastic", cluster=instance.cluster, params=instance.params()
        )
        total = math.fsum(job["jct"] for job in again.jobs)
        assert not row.error and row.reference == "lower bound"
        assert math.isclose(row.total_jct, total, rel_tol=1e-12)
        assert math.isclose(row.ratio, total / item.certificate.lower_bound, rel_tol=1e-12)
        assert row.ratio >= 1


def test_policies_of_the_other_model_are_refused_by_name(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rigid policy on a named elastic entry, and an elastic policy on a named rigid
    entry or on tiers without elastic entries, exit 2 naming the entry or the policy; a
    rigid policy over every tier scores the rigid entries alone."""
    from ddlsched.bench.score import run

    rigid = entries(["S"], path=folder)[0].name
    library_args = ["--library", str(folder)]
    for policy, name in [("asrpt-greedy", "T-small-w6"), ("pollux", rigid)]:
        code = main(["bench", "run", "--policy", policy, "--names", name, *library_args])
        err = capsys.readouterr().err
        assert code == 2 and name in err and policy in err, err
    code = main(["bench", "run", "--policy", "pollux", "--tier", "S", *library_args])
    assert code == 2 and "'pollux' is elastic" in capsys.readouterr().err
    assert [row.name for row in run("asrpt-greedy", path=folder).rows] == [rigid]
