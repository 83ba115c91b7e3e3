"""How the library is built: an entry rebuilt by its recorded command matches the shipped
one, and a sandwich certificate passes every check, the expensive ones included."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlsched.bench import build
from ddlsched.bench import library as lib
from ddlsched.bench.verify import check_entry
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.jsontypes import JsonObject, JsonValue
from ddlsched.core.model import InputError
from ddlsched.core.result import gap_closed


@pytest.mark.slow
def test_an_s_entry_rebuilt_matches_the_shipped_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``build --only NAME`` (the command a certificate records) regenerates the same
    instance and proves the same optimum, which verify accepts. The exact solve runs
    without a time limit here (a deterministic stop)."""
    monkeypatch.setattr(build, "EXACT_TIME_LIMIT", None)
    name = "S-efw-2x2-j6-s1"
    shipped = lib.entry(name)
    assert (
        shipped.certificate.command
        == f"python -m ddlsched.bench.build --only {name} --out LIBRARY"
    )
    lines: list[str] = []
    (rebuilt,) = build.build(tmp_path, only={name}, progress=lines.append)
    assert rebuilt.instance == shipped.instance and rebuilt.family == shipped.family
    fixed = shipped.release_weight
    assert gap_closed(rebuilt.certificate.upper_bound, shipped.certificate.upper_bound, fixed)
    assert gap_closed(shipped.certificate.upper_bound, rebuilt.certificate.upper_bound, fixed)
    assert check_entry(lib.entry(name, tmp_path)).holds
    assert lines[0].startswith(f"[1/1] {name}")


def test_an_unknown_name_to_build_is_refused(tmp_path: Path) -> None:
    """``--only`` a name no family makes: exit 2 naming it, nothing written."""
    assert build.main(["--out", str(tmp_path), "--only", "S-nope"]) == 2
    with pytest.raises(InputError, match="'S-nope'"):
        build.build(tmp_path, only={"S-nope"})
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_a_sandwich_certificate_holds_under_the_full_check() -> None:
    """Problem A's sandwich on 30 spread jobs: the interval's ends are the verified
    schedule's objective and the named bound plus sum w r, which --full recomputes (the
    start-time Lagrangian with its recorded steering included)."""
    instance = generate(GeneratorConfig.exact_friendly(30, 2, 4, load=1.0), seed=3)
    certificate = build.sandwich_certificate("L-test", instance, lambda _: None)
    item = lib.Entry("L-test", "L", {"test": True}, instance, certificate)
    check = check_entry(item, full=True)
    assert check.holds and not check.skipped, check.problems
    assert certificate.lower_bound <= certificate.upper_bound


@pytest.mark.parametrize(
    ("family", "message"),
    [
        ({"generator": {"num_jobs": 4}}, "family"),
        ({"generator": {}, "seed": 0, "weights": "x"}, "weights"),
    ],
)
def test_a_family_of_neither_form_is_refused(family: JsonObject, message: str) -> None:
    """A family without its seed, or weights that are not numbers, is an InputError naming
    the field."""
    with pytest.raises(InputError, match=message):
        build.regenerate(family)


def test_a_weighted_family_draws_its_weights_from_its_seed() -> None:
    """Weights come from the listed values, the same for the same seed, and differ in some
    job from another seed's (a fixed seed is not enough to make them all equal)."""
    settings: JsonObject = {
        "preset": "exact-friendly",
        "num_jobs": 12,
        "servers": 1,
        "gpus_per_server": 4,
    }
    weights: list[JsonValue] = [1, 2, 3]
    one = build.regenerate({"generator": settings, "seed": 0, "weights": weights})
    again = build.regenerate({"generator": settings, "seed": 0, "weights": weights})
    other = build.regenerate({"generator": settings, "seed": 1, "weights": weights})
    assert one == again
    assert {job.weight for job in one.jobs} <= {1.0, 2.0, 3.0}
    assert len({job.weight for job in one.jobs}) > 1
    assert [j.weight for j in one.jobs] != [j.weight for j in other.jobs]
