"""The shipped library: its size and tiers, its families regenerate its instances, its
files follow the JSON Schemas, and its optima agree with independent solves."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest

from ddlsched.bench import library as lib
from ddlsched.bench.build import regenerate
from ddlsched.core.data import bundled_data_dir

SCHEMAS = bundled_data_dir() / "bench" / "schemas"


def test_at_least_100_entries_in_the_four_tiers_of_their_sizes() -> None:
    """At least 100 entries; S has 4-12 jobs, M 16-64, L 100-200, T the Philly samples of
    500 and 5,000 jobs; S and M are proven optimal, every certificate is about problem A."""
    entries = lib.library()
    assert len(entries) >= 100
    assert set(Counter(item.tier for item in entries)) == set(lib.TIERS)
    sizes = {"S": (4, 12), "M": (16, 64), "L": (100, 200), "T": (500, 5000)}
    for item in entries:
        low, high = sizes[item.tier]
        assert low <= item.instance.num_jobs <= high, item.name
        assert item.certificate.problem == "A"
        if item.tier in ("S", "M"):
            assert item.certificate.optimum is not None, item.name
    assert {item.instance.num_jobs for item in entries if item.tier == "T"} == {500, 5000}


def test_the_library_is_small() -> None:
    """Under 5 MB on disk, so it ships inside the package."""
    folder = lib.default_library_path()
    assert sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) < 5e6


@pytest.mark.slow
def test_every_family_regenerates_its_instance() -> None:
    """Each entry's ``family`` gives back its instance exactly (generator and seed, drawn
    weights, or the trace sample at its load)."""
    for item in lib.library():
        assert regenerate(item.family) == item.instance, item.name


def _documents() -> list[tuple[str, object]]:
    folder = lib.default_library_path()
    found = []
    for path in sorted(folder.rglob("*.json*")):
        data = path.read_bytes()
        found.append(
            (path.name, json.loads(gzip.decompress(data) if path.suffix == ".gz" else data))
        )
    return found


@pytest.mark.slow
def test_every_shipped_file_follows_its_schema() -> None:
    """Every entry file validates against ``entry.schema.json`` (which holds the instance,
    schedule and certificate schemas) and every schedule and instance against its own."""
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    schemas = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.schema.json")}
    assert set(schemas) >= {
        "instance.schema.json",
        "schedule.schema.json",
        "certificate.schema.json",
    }
    registry = referencing.Registry().with_resources(
        (doc["$id"], referencing.Resource.from_contents(doc)) for doc in schemas.values()
    )

    def check(name: str, document: object) -> None:
        validator = jsonschema.Draft202012Validator(schemas[name], registry=registry)
        errors = list(validator.iter_errors(document))
        assert not errors, errors[0].message

    for file, document in _documents():
        if file == lib.INDEX_FILE:
            continue
        assert isinstance(document, dict), file
        if document["format"] == "ddlsched.bench-elastic-entry/1":
            check("elastic-entry.schema.json", document)
            continue
        check("entry.schema.json", document)
        check("instance.schema.json", document["instance"])
        check("certificate.schema.json", document["certificate"])
        check("schedule.schema.json", document["certificate"]["schedule"])


def test_the_schemas_refuse_what_the_readers_refuse() -> None:
    """The schemas are not vacuous: a job without ``iterations``, a schedule entry with a
    misspelt field and a certificate of an unknown status are refused."""
    jsonschema = pytest.importorskip("jsonschema")
    item = lib.entry("S-ef-1x4-j6-s0")
    instance = item.instance.to_dict()
    del instance["jobs"][0]["iterations"]  # type: ignore[index, union-attr]
    schedule = item.certificate.schedule.to_dict()
    schedule["jobs"][0]["strat"] = 1.0  # type: ignore[index, call-overload]
    for name, document in [("instance", instance), ("schedule", schedule)]:
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        assert not jsonschema.Draft202012Validator(schema).is_valid(document), name


INDEPENDENT = {
    "S-ef-1x4-j10-s0": "milp",
    "S-ef-2x2-j8-l1.0-s1": "milp",
    "S-efw-2x2-j6-s0": "milp",
    "S-eft-2x4-j6-l1.0-s0": "milp",
    "M-ef-4x4-j16-s2": "milp",
    "M-eft-4x4-j16-l1.0-s0": "cpsat",
    "M-efw-4x4-j16-s1": "cpsat",
    "M-ret-4x4-j16-l1.0-s0": "cpsat-continuous",
}
"""Entries solved again: batch and spread, weighted and typed, integral and realistic, by
one exact method alone (not the race that made the certificate)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(INDEPENDENT))
def test_optima_agree_with_independent_solves(name: str) -> None:
    """Regenerated from its family, the entry is solved again by one method without a time
    limit (a deterministic stop: proven optimality), and the optimum agrees with the
    certificate within the project's closed gap of the flow."""
    from ddlsched import api
    from ddlsched.core.params import ExactParams
    from ddlsched.core.result import gap_closed

    item = lib.entry(name)
    result = api.solve(
        regenerate(item.family), INDEPENDENT[name], params=ExactParams(time_limit=None)
    )
    assert result.proven_optimal
    optimum, fixed = item.certificate.upper_bound, item.release_weight
    assert gap_closed(result.objective, optimum, fixed), result.objective
    assert gap_closed(optimum, result.objective, fixed), result.objective


@pytest.mark.slow
def test_the_s_tier_verifies_with_the_brute_force() -> None:
    """Every certificate of tier S holds, the brute force confirming each optimum (what
    ``bench verify --tier S`` runs)."""
    from ddlsched.bench.verify import verify_library

    checks = verify_library(["S"])
    assert checks and all(check.holds for check in checks), [
        (c.name, c.problems) for c in checks if not c.holds
    ]


def test_the_pollux_workloads_are_elastic_entries_of_tier_t() -> None:
    """Tier T holds the Pollux workloads as elastic entries: each the shipped workload on
    the Pollux study's 16 x 4 GPUs, regenerated from its family, its stored run passing the
    independent elastic check with its total JCT as the upper bound, above the fast bound."""
    from ddlsched.bench.build import ELASTIC_WORKLOADS, regenerate_elastic
    from ddlsched.bench.verify import check_elastic_entry

    found = lib.elastic_entries()
    assert [e.name for e in found] == sorted(f"T-pollux-workload-{n}" for n in ELASTIC_WORKLOADS)
    assert len(found) >= 2
    for item in found:
        assert item.tier == "T" and item.certificate.problem == "elastic"
        assert item.instance == regenerate_elastic(item.family), item.name
        assert (item.instance.cluster.num_nodes, item.instance.cluster.gpus_per_node) == (16, 4)
        assert item.instance.num_jobs == 160
        check = check_elastic_entry(item)
        assert check.holds, (item.name, check.problems)
