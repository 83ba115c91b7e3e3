"""GPU types: the version-2 format, alpha on mixed clusters, and what must not change.

Independent truths: the hand-worked :data:`tests.examples.MIXED_EXAMPLE`, the
tests' own edge-by-edge ``alpha`` over every mapping (:mod:`tests.oracles`),
and the untyped model itself (one named type must give exactly what no type gave).
"""

from __future__ import annotations

import itertools
import json
import math

import pytest
from ddlsched.proofs_checks.bounds import all_cut_time, fastest_time, per_iteration_time
from hypothesis import given

from ddlsched.core.alpha import alpha, alpha_max, alpha_min, rho
from ddlsched.core.io import dumps, instance_from_dict
from ddlsched.core.model import Cluster, InputError, Instance
from tests.examples import FORMAT_EXAMPLE, MIXED_EXAMPLE
from tests.oracles import all_alphas, per_iteration_on
from tests.strategies import generated_instances, hand_instances, typed_instances


def _mixed() -> Instance:
    return instance_from_dict(json.loads(json.dumps(MIXED_EXAMPLE)))


def test_mixed_example_by_hand() -> None:
    """Both workers on the V100 server: 2; on the K80 server: 5; split: 11."""
    instance = _mixed()
    job, cluster = instance.jobs[0], instance.cluster
    for method in (alpha, per_iteration_time):
        assert method(job, cluster, (0, 0)) == pytest.approx(2.0)
        assert method(job, cluster, (1, 1)) == pytest.approx(5.0)
        assert method(job, cluster, (0, 1)) == pytest.approx(11.0)
    assert alpha_min(job, cluster) == alpha_min(job, cluster).__class__(2.0, True)
    assert alpha_max(job, cluster).value == pytest.approx(11.0)
    assert all_cut_time(job, cluster) == pytest.approx(11.0)
    assert fastest_time(job, cluster).value == pytest.approx(2.0)
    assert rho(instance).rho.value == pytest.approx(5.5)


def test_version_2_round_trip_and_version_1_unchanged() -> None:
    """A typed instance writes /2 and reads back equal; an untyped one still writes /1."""
    instance = _mixed()
    text = dumps(instance.to_dict())
    assert json.loads(text)["format"] == "ddlsched.instance/2"
    assert instance_from_dict(json.loads(text)) == instance
    plain = instance_from_dict(FORMAT_EXAMPLE)
    assert plain.to_dict()["format"] == "ddlsched.instance/1"
    assert "server_types" not in plain.to_dict()["cluster"]


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        (("cluster", "server_types"), ["v100"], "cluster.server_types: has 1 entries"),
        (("cluster", "server_types"), ["v100", ""], "cluster.server_types[1]"),
        (("cluster", "server_types"), "v100", "cluster.server_types: expected a list"),
        (("cluster", "type_bandwidth"), {"a100": 8.0}, "cluster.type_bandwidth.a100: no server"),
        (("cluster", "type_bandwidth"), {"v100": 0.5}, "must be >= bandwidth_inter"),
        (("jobs", 0, "compute_times"), {"v100": -1.0}, "compute_times.v100: must be > 0"),
        (("jobs", 0, "compute_times"), {"v100": "fast"}, "compute_times.v100: expected a number"),
        (("jobs", 0, "compute_times"), [1, 2], "compute_times[0]"),
        (
            ("jobs", 0, "compute_times"),
            {"v100": 1.0, "k8O": 3.0},
            "jobs[0].compute_times.k8O: job 'j0' gives a time for GPU type 'k8O', but the "
            "cluster has types v100, k80",
        ),
    ],
)
def test_bad_type_fields_are_named(
    where: tuple[object, ...], value: object, expected: str
) -> None:
    doc = json.loads(json.dumps(MIXED_EXAMPLE))
    target = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    with pytest.raises(InputError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        instance_from_dict(doc)


def test_a_time_for_a_type_no_server_has_is_refused_in_a_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A job's ``compute_times`` naming a type the file's cluster lacks (a typo such as
    ``k8O``, or any type on a cluster without types) is refused, naming the job, the type
    and the cluster's types; ``ddlsched info`` says so in one line, exit 2. Catches such a
    time ignored, the job running at ``compute_time``."""
    import subprocess
    import sys

    doc = json.loads(json.dumps(MIXED_EXAMPLE))
    doc["cluster"]["server_types"] = []
    doc["cluster"]["type_bandwidth"] = {}
    with pytest.raises(
        InputError, match=r"compute_times\.k80: .* but the cluster has no GPU types"
    ):
        instance_from_dict(doc)
    doc = json.loads(json.dumps(MIXED_EXAMPLE))
    doc["jobs"][0]["compute_times"] = {"v100": 1.0, "k8O": 3.0}
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", "info", str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == (
        f"ddlsched: error: {path}: jobs[0].compute_times.k8O: job 'j0' gives a time for GPU "
        "type 'k8O', but the cluster has types v100, k80 (cluster.server_types)\n"
    )


@pytest.mark.parametrize(
    ("section", "field"), [("cluster", "server_types"), ("job", "compute_times")]
)
def test_version_1_rejects_type_fields(section: str, field: str) -> None:
    """Types need version 2: in a /1 file they are unknown fields (a typo would be too)."""
    doc = json.loads(json.dumps(FORMAT_EXAMPLE))
    target = doc["cluster"] if section == "cluster" else doc["jobs"][0]
    target[field] = ["v100", "v100"] if section == "cluster" else {"v100": 1.0}
    with pytest.raises(InputError, match=f"{field}: unknown field"):
        instance_from_dict(doc)


@given(typed_instances())
def test_typed_alpha_min_and_max_equal_brute_force(instance: Instance) -> None:
    """alpha_min exact and equal to the least alpha over every map; alpha_max bounds them all
    and is attained when flagged exact; the checks floor agrees."""
    cluster = instance.cluster
    for job in instance.jobs:
        values = all_alphas(job, cluster)
        low, high = alpha_min(job, cluster), alpha_max(job, cluster)
        assert low.exact
        assert low.value == pytest.approx(min(values))
        assert high.value >= max(values) - 1e-9
        if high.exact:
            assert high.value == pytest.approx(max(values))
        assert fastest_time(job, cluster).value == pytest.approx(min(values))
        assert all_cut_time(job, cluster) == pytest.approx(high.value)


@given(typed_instances())
def test_one_type_only_is_unaffected_by_the_others(instance: Instance) -> None:
    """A mapping on servers of one type T takes exactly what it would on a cluster of
    only T's servers, with the job's T time as its compute time and T's bandwidth."""
    cluster = instance.cluster
    for job in instance.jobs:
        for kind in cluster.types:
            servers = [h for h in range(cluster.num_servers) if cluster.type_of(h) == kind]
            alone = Cluster(
                tuple(cluster.gpus_per_server[h] for h in servers),
                cluster.intra_of(kind),
                cluster.bandwidth_inter,
            )
            single = job.replace(compute_time=job.compute_on(kind), compute_times=())
            for local in itertools.islice(
                itertools.product(range(len(servers)), repeat=job.gpus), 50
            ):
                mapping = [servers[h] for h in local]
                assert alpha(job, cluster, mapping) == pytest.approx(alpha(single, alone, local))
                assert alpha(job, cluster, mapping) == pytest.approx(
                    per_iteration_on(job, cluster, mapping)
                )


@given(hand_instances())
def test_one_named_type_changes_nothing(instance: Instance) -> None:
    """Naming every server one type and giving each job that type's time equal to its
    compute time gives the untyped values exactly (version-1 results are kept)."""
    cluster = instance.cluster
    named = cluster.replace(server_types=("v100",) * cluster.num_servers)
    for job in instance.jobs:
        typed = job.replace(compute_times={"v100": job.compute_time})
        assert alpha_min(typed, named) == alpha_min(job, cluster)
        assert alpha_max(typed, named) == alpha_max(job, cluster)
        assert fastest_time(typed, named) == fastest_time(job, cluster)
        mapping = [k % cluster.num_servers for k in range(job.gpus)]
        if all(mapping.count(h) <= g for h, g in enumerate(cluster.gpus_per_server)):
            assert alpha(typed, named, mapping) == alpha(job, cluster, mapping)


@given(generated_instances(mixed=True))
def test_generated_mixed_round_trip(instance: Instance) -> None:
    """Generated mixed instances write version 2 and read back equal, byte for byte."""
    text = dumps(instance.to_dict())
    again = instance_from_dict(json.loads(text))
    assert again == instance and dumps(again.to_dict()) == text
    assert math.isfinite(rho(instance).rho.value)


def test_slow_type_wins_when_it_consolidates() -> None:
    """Two 1-GPU V100 servers and one 2-GPU K80 server; a 2-GPU job with 8 GB per
    iteration, 1 s per iteration on a V100 and 5 s on a K80, B_intra 8, B_inter 1.
    By hand: split over the V100s 1 + 8/1 = 9; both on the K80 server 5 + 8/8 = 6; one
    on each type 5 + 8 = 13. alpha_min = 6: the search may not stop at the fast level."""
    cluster = Cluster((1, 1, 2), 8.0, 1.0, server_types=("v100", "v100", "k80"))
    job = Instance(
        cluster, (_mixed().jobs[0].replace(compute_times={"v100": 1.0, "k80": 5.0}),)
    ).jobs[0]
    assert min(all_alphas(job, cluster)) == pytest.approx(6.0)
    assert alpha_min(job, cluster).value == pytest.approx(6.0) and alpha_min(job, cluster).exact
    assert fastest_time(job, cluster).value == pytest.approx(6.0)


def test_typed_alpha_min_out_of_budget_is_a_flagged_lower_bound() -> None:
    """A search stopped by its budget gives a lower bound, flagged as such, never a value
    above the true least alpha."""
    cluster = Cluster((2, 2), 8.0, 1.0, server_types=("v100", "k80"))
    ring = ((0, 1, 2.0), (1, 2, 2.0), (2, 3, 2.0), (0, 3, 2.0))
    job = Instance(cluster, (_mixed().jobs[0].replace(gpus=4, edges=ring),)).jobs[0]
    stopped = alpha_min(job, cluster, search_budget=1)
    assert not stopped.exact
    assert stopped.value <= min(all_alphas(job, cluster)) + 1e-12
    assert alpha_min(job, cluster).exact
