"""One set of numeric limits, end to end: an instance the input caps accept has only
schedules that the output format holds, so every command answers it; just beyond a cap
the input is refused, naming the field and the cap."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.api import policy_names, solve
from ddlsched.cli import main
from ddlsched.core.io import instance_from_dict, read_schedule, write_instance, write_schedule
from ddlsched.core.model import (
    BANDWIDTH_RANGE,
    MAX_COMPUTE_TIME,
    MAX_HORIZON,
    MAX_ITERATIONS,
    MAX_SCHEDULE_TIME,
    MAX_TIME,
    MAX_TRAFFIC,
    MAX_WEIGHT,
    Cluster,
    InputError,
    Instance,
    Job,
    slowest_duration,
)


def _doc(long_job: dict[str, object], inter: float = 1.0, intra: float = 10.0) -> dict:
    """A two-server instance: ``long_job`` (two GPUs, one edge unless it says otherwise)
    beside a short one-GPU job released at ``MAX_TIME``."""
    job = {"id": "k", "release": 0.0, "iterations": 1, "compute_time": 1.0, "gpus": 2}
    job |= {"edges": [[0, 1, 1.0]]} | long_job
    short = {"id": "a", "release": MAX_TIME, "iterations": 2, "compute_time": 1.0, "gpus": 1}
    return {
        "format": "ddlsched.instance/1",
        "cluster": {"gpus_per_server": [2, 2], "bandwidth_intra": intra, "bandwidth_inter": inter},
        "jobs": [job, short | {"edges": []}],
    }


_AT_THE_CAPS = {
    "release": _doc({"release": MAX_TIME}),
    "iterations": _doc({"iterations": MAX_ITERATIONS, "compute_time": 0.5, "edges": []}),
    "compute_time": _doc({"iterations": 800_000, "compute_time": MAX_COMPUTE_TIME}),
    "traffic": _doc({"iterations": 800, "edges": [[0, 1, MAX_TRAFFIC]]}),
    "bandwidth_inter": _doc({"iterations": 800_000}, BANDWIDTH_RANGE[0], 1.0),
    "bandwidth_intra": _doc({}, BANDWIDTH_RANGE[1], BANDWIDTH_RANGE[1]),
    "weight": _doc({"weight": MAX_WEIGHT}),
    # 1e11 + 2 (the short job) + 449,999,999,999 x (1 + 1) = 1e12 exactly
    "horizon": _doc({"iterations": 449_999_999_999}),
}


@pytest.mark.parametrize("name", list(_AT_THE_CAPS))
def test_an_instance_at_each_cap_is_read_and_its_horizon_fits(name: str) -> None:
    """Each family sits exactly on one cap (the horizon family on MAX_HORIZON itself): it is
    read, and its horizon is within the cap, so every schedule fits the output format."""
    instance = instance_from_dict(_AT_THE_CAPS[name])
    assert instance.horizon <= MAX_HORIZON
    if name == "horizon":
        assert instance.horizon == MAX_HORIZON


@pytest.mark.parametrize("name", list(_AT_THE_CAPS))
@pytest.mark.parametrize("method", ["fifo", "asrpt", "las-tiresias", "exact"])
def test_an_instance_at_each_cap_is_solved_written_read_and_verified(
    name: str, method: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``solve`` (an online policy, a preemptive one, the exact method) answers an instance
    on a cap, writes the schedule, and ``verify`` reads it back as feasible: its ends, past
    1e11, are within what a schedule may hold."""
    path = tmp_path / "i.json"
    path.write_text(json.dumps(_AT_THE_CAPS[name]))
    out = tmp_path / "s.json"
    code = main(["solve", "--method", method, str(path), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    schedule = read_schedule(out)
    assert max(entry.end or 0.0 for entry in schedule.jobs) >= MAX_TIME
    write_schedule(schedule, tmp_path / "again.json")
    assert read_schedule(tmp_path / "again.json") == schedule
    assert main(["verify", str(path), str(out)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("name", ["release", "iterations", "horizon"])
@pytest.mark.parametrize("command", [["check"], ["bound", "--lp"], ["info"]])
def test_check_bound_and_info_answer_an_instance_at_the_caps(
    name: str, command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check``, ``bound --lp`` and ``info`` answer instances on the time caps: ``check``
    accepts the schedules it builds for them."""
    path = tmp_path / "i.json"
    path.write_text(json.dumps(_AT_THE_CAPS[name]))
    assert main([*command, str(path)]) == 0, capsys.readouterr().err


_BEYOND = {
    "release": ("jobs", 0, "release", math.nextafter(MAX_TIME, math.inf), "release: must be <="),
    "iterations": ("jobs", 0, "iterations", MAX_ITERATIONS + 1, "iterations: must be <="),
    "compute_time": ("jobs", 0, "compute_time", MAX_COMPUTE_TIME * 1.000001, "compute_time: "),
    "horizon": ("jobs", 0, "iterations", 450_000_000_000, "jobs: the horizon"),
    "long job": ("jobs", 0, "iterations", MAX_ITERATIONS, "jobs: the horizon"),
}


@pytest.mark.parametrize("name", list(_BEYOND))
def test_just_beyond_a_cap_the_input_is_refused_naming_the_field(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One step past a cap (a release, iterations, compute time, or a horizon one job or
    the sum pushes past MAX_HORIZON) is refused when read (exit 2), naming the field, the
    value and the cap, before anything is solved."""
    *where, value, expected = _BEYOND[name]
    doc = json.loads(json.dumps(_AT_THE_CAPS["horizon"]))
    doc[where[0]][where[1]][where[2]] = value
    path = tmp_path / "i.json"
    path.write_text(json.dumps(doc))
    for command in (["solve", "--method", "fifo"], ["check"], ["bound", "--lp"], ["info"]):
        assert main([*command, str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{path}: " in err and expected in err, err
    if name in ("horizon", "long job"):
        assert f"<= {MAX_HORIZON:g} s" in err and "'k'" in err


def test_the_horizon_message_names_the_longest_job_and_the_cap() -> None:
    """A horizon past the cap names the longest job (index and id), its iterations and
    slowest duration, the horizon and the cap."""
    cluster = Cluster((1, 1), 1.0, BANDWIDTH_RANGE[0])
    jobs = (
        Job("small", 0.0, 1, 1.0, 1),
        Job("huge", 0.0, MAX_ITERATIONS, 1.0, 2, ((0, 1, MAX_TRAFFIC),)),
    )
    with pytest.raises(InputError) as caught:
        Instance(cluster, jobs)
    message = str(caught.value)
    assert message.startswith("jobs: the horizon")
    assert "jobs[1] 'huge'" in message and "1,000,000,000,000 iterations" in message
    assert "1e+27" in message and "1e+12" in message


NON_PREEMPTIVE = ("asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive")
"""The policies that never preempt (their events do not grow with the horizon)."""


@settings(max_examples=25, deadline=None)
@given(
    share=st.floats(0.01, 1.0),
    count=st.integers(1, 6),
    gpus=st.lists(st.integers(1, 4), min_size=6, max_size=6),
    late=st.booleans(),
)
def test_every_online_schedule_of_an_accepted_instance_fits_the_output(
    share: float, count: int, gpus: list[int], late: bool
) -> None:
    """Instances whose horizon fills a share of MAX_HORIZON (some released at MAX_TIME):
    every online policy's schedule ends within twice the horizon (A-SRPT waits for its
    virtual completions, which come by the horizon) plus its restart costs, far inside
    MAX_SCHEDULE_TIME. The round-based preemptive policies run only where no job waits:
    with jobs waiting they preempt every few minutes, billions of times at this scale."""
    cluster = Cluster((2, 2), 10.0, 1.0)
    budget = (MAX_HORIZON - MAX_TIME) * share / count
    jobs = []
    for k in range(count):
        per_iteration = 1.0 + (0.5 if gpus[k] > 1 else 0.0)
        edges = ((0, 1, 0.5),) if gpus[k] > 1 else ()
        iterations = max(1, int(budget / per_iteration))
        release = MAX_TIME if late and k % 2 else 0.0
        jobs.append(Job(f"j{k}", release, iterations, 1.0, gpus[k], edges))
    instance = Instance(cluster, tuple(jobs))
    assert instance.horizon <= MAX_HORIZON
    waits = sum(gpus[:count]) > cluster.num_gpus
    for policy in NON_PREEMPTIVE if waits else policy_names():
        result = solve(instance, method=policy, bound=False)
        assert result.schedule is not None
        entries = result.schedule.jobs
        restarts = sum(len(e.pieces or ()) for e in entries) * result.schedule.restart_cost
        latest = max(e.end or 0.0 for e in entries)
        assert latest <= 2 * instance.horizon * (1 + 1e-9) + restarts <= MAX_SCHEDULE_TIME


def test_slowest_duration_is_the_all_cut_alpha_times_the_iterations() -> None:
    """The horizon uses the same slowest per-iteration time as ``alpha_max``'s all-cut
    value, on every GPU type of the cluster."""
    from ddlsched.core.alpha import all_cut_alpha

    cluster = Cluster((2, 2), 10.0, 1.0, ("v100", "k80"))
    job = Job("j", 0.0, 7, 1.0, 2, ((0, 1, 3.0),), compute_times={"k80": 2.5})
    assert slowest_duration(job, cluster) == 7 * all_cut_alpha(job, cluster) == 7 * 5.5


def test_a_schedule_at_the_output_cap_round_trips(tmp_path: Path) -> None:
    """A schedule time at MAX_SCHEDULE_TIME is written and read back; one past it is
    refused naming the field and the cap."""
    from ddlsched.core.model import Piece, Schedule, ScheduledJob

    entry = ScheduledJob("a", 0.0, MAX_SCHEDULE_TIME, None, (Piece(0.0, MAX_SCHEDULE_TIME),))
    write_schedule(Schedule((entry,)), tmp_path / "s.json")
    assert read_schedule(tmp_path / "s.json").jobs == (entry,)
    with pytest.raises(InputError, match=re.escape(f"'a'.end: must be <= {MAX_SCHEDULE_TIME:g}")):
        ScheduledJob("a", 0.0, math.nextafter(MAX_SCHEDULE_TIME, math.inf))


def test_an_instance_at_the_caps_is_written_and_read_back(tmp_path: Path) -> None:
    """Every family at a cap survives a write and a read unchanged."""
    for doc in _AT_THE_CAPS.values():
        instance = instance_from_dict(doc)
        write_instance(instance, tmp_path / "i.json")
        assert instance_from_dict(json.loads((tmp_path / "i.json").read_text())) == instance


def _trace(tmp_path: Path, rows: list[str]) -> str:
    path = tmp_path / "trace.csv"
    path.write_text("submit,duration,gpus\n" + "".join(f"{row}\n" for row in rows))
    return str(path)


_CLUSTER = ["--servers", "2", "--gpus-per-server", "2"]


@pytest.mark.parametrize(
    "rows",
    [
        [f"0,{MAX_TIME:g},1", f"{MAX_TIME:g},1,1"],  # a duration and a submit time on the caps
        [f"{MAX_TIME:g},{MAX_TIME:g},1", "0,100,2"],  # both on one row
        ["0,1e10,1", "50,1e10,2", "70,1e10,4"],  # long jobs, then arrivals stretched
    ],
)
@pytest.mark.parametrize("policy", ["fifo", "asrpt"])
def test_a_trace_at_the_caps_is_simulated_bounded_and_its_schedule_read_back(
    rows: list[str], policy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate`` replays trace rows on the time caps (and a trace whose arrivals
    ``--load-factor`` stretches towards the release cap) and writes a schedule that reads
    back; ``bound --trace --lp`` answers the same trace."""
    trace = _trace(tmp_path, rows)
    stretch = ["--load-factor", "1e-9"] if rows[0] == "0,1e10,1" else []
    out = tmp_path / "s.json"
    args = ["simulate", "--trace", trace, *_CLUSTER, *stretch, "--policy", policy]
    assert main([*args, "--out", str(out)]) == 0, capsys.readouterr().err
    assert max(entry.end or 0.0 for entry in read_schedule(out).jobs) > MAX_TIME / 2
    assert main(["bound", "--trace", trace, *_CLUSTER, *stretch, "--lp"]) == 0


@pytest.mark.parametrize(
    ("rows", "option", "expected"),
    [
        (
            ["0,1,1", f"{math.nextafter(MAX_TIME, math.inf)!r},1,1"],
            [],
            "beyond the limit of 1e+11",
        ),
        (["0,1,1", "500,1,1"], ["--load-factor", "1e-9"], "--load-factor: factor: 1e-09 "),
        (["0,1,1", "500,1,1"], ["--target-load", "1e-15"], "--target-load: factor: "),
        ([f"0,{MAX_TIME:g},1"] * 10, [], "trace.csv: jobs: the horizon"),
    ],
)
@pytest.mark.parametrize("command", ["simulate", "bound"])
def test_a_trace_past_the_caps_is_refused_naming_the_option_or_field(
    rows: list[str],
    option: list[str],
    expected: str,
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A submit time past the cap, a load factor stretching arrivals past it, and a trace
    whose jobs add up past MAX_HORIZON are refused when read (exit 2), naming the file's
    field or the option, the value and the cap."""
    trace = _trace(tmp_path, rows)
    assert main([command, "--trace", trace, *_CLUSTER, *option]) == 2
    err = capsys.readouterr().err
    assert expected in err and ("beyond" in err or "must be <=" in err), err


@pytest.mark.parametrize("size", [1e-6, 0.55, 3.0, 1234.5])
@pytest.mark.parametrize("release", [MAX_TIME, MAX_TIME / 3, MAX_HORIZON / 2])
def test_mean_busy_times_stay_exact_near_the_caps(size: float, release: float) -> None:
    """A short job released near the caps has its mean busy time at the middle of its
    processing, to the clock's resolution there: a piece's rounded end divided by the
    job's small size would move it by ~10^5 s, and a lower bound would rise above a
    schedule (``solve`` would stop on a contradiction)."""
    from ddlsched.formulations.lower_bounds import preemptive_wspt_mean_busy_times

    (busy,) = preemptive_wspt_mean_busy_times([size], [release], [1.0])
    assert abs(busy - (release + size / 2)) <= 4 * math.ulp(release + size)
