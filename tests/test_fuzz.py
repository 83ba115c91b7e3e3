"""A fuzzer of the command line: hostile files and arguments, through the real entry point.

Valid instances, schedules, traces and configs are mutated (fields deleted,
types swapped, extreme and non-finite numbers, duplicated keys, truncation,
random bytes), and argument lists are drawn from the commands' own flags
with odd values; output paths are drawn from the ones that cannot be right
(an input, empty, a folder, a device, ``/proc``), and the Python API's
arguments from odd types. Every case runs :func:`ddlsched.cli.main` as a user would
and must end in a documented way:

- exit code 0, 1, 2 or 130 (3 is an internal error: a bug);
- on 2, exactly one line on stderr; never a traceback;
- on 0 with ``--json``, a document without NaN or infinity; a schedule
  written with ``--out`` passes the verifier.

Bounded and derandomized under the ``ci`` profile; ``HYPOTHESIS_PROFILE=dev
pytest tests/test_fuzz.py`` (or ``FUZZ_EXAMPLES=N``) runs long campaigns
(the README reports one).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ddlsched.proofs_checks.verifier import verify
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.core.io import read_instance, read_schedule
from tests.examples import FORMAT_EXAMPLE, MIXED_EXAMPLE

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0")) or None

SCHEDULE = {
    "format": "ddlsched.schedule/1",
    "problem": "A",
    "jobs": [{"id": "j0", "start": 0.0, "end": 3.0 * 2.0, "mapping": [0, 0]}],
}
TRACE = (
    "job_id,num_gpu,submit_time,iterations,model_name,duration\n"
    "0,1,0,10,vgg16,50\n1,2,5,20,bert,80\n2,4,7,5,dqn,30\n"
)

ODD_NUMBERS = st.sampled_from(
    [0, -1, 1, 2.5, -0.0, 1e308, -1e308, 5e-324, 10**400, 2**63, float("nan"), float("inf")]
)
ODD_VALUES = st.one_of(
    ODD_NUMBERS,
    st.sampled_from(["", "x", None, True, [], {}, [1, 2], "1e999", "NaN"]),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)  # values inside files: sizes stay bounded by the files' own limits


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def mutated_json(draw: st.DrawFn, base: dict[str, Any]) -> bytes:
    """``base`` as JSON text after a few structural or value mutations."""
    document = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        paths = _paths(document)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["value", "delete", "duplicate", "wrap"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        elif action == "duplicate" and isinstance(parent, dict):
            parent[f"{path[-1]}"] = parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(draw(ODD_VALUES))  # never mutate the constants
    raw = json.dumps(document, allow_nan=True).encode()
    tail = draw(st.sampled_from(["none", "truncate", "bytes", "duplicate-key"]))
    if tail == "truncate":
        raw = raw[: draw(st.integers(min_value=0, max_value=len(raw)))]
    elif tail == "bytes":
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        raw = raw[:at] + draw(st.binary(max_size=6)) + raw[at:]
    elif tail == "duplicate-key" and raw.startswith(b"{"):
        raw = b'{"format": "x", ' + raw[1:]
    return raw


@st.composite
def mutated_csv(draw: st.DrawFn) -> bytes:
    lines = TRACE.splitlines()
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        row = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        cells = lines[row].split(",")
        action = draw(st.sampled_from(["cell", "drop-cell", "blank", "bytes", "bom"]))
        if action == "cell":
            at = draw(st.integers(min_value=0, max_value=len(cells) - 1))
            cells[at] = str(draw(ODD_VALUES)).replace(",", ";").replace("\n", " ")
        elif action == "drop-cell" and len(cells) > 1:
            cells.pop()
        elif action == "blank":
            lines.insert(row, "")
        elif action == "bytes":
            cells[0] += draw(st.binary(max_size=4)).decode("utf-8", "surrogateescape")
        else:
            lines[0] = "\ufeff" + lines[0]
        lines[row] = ",".join(cells)
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse
            code = stop.code if isinstance(stop.code, int) else 2
    return code, out.getvalue(), err.getvalue()


TALLY = os.environ.get("FUZZ_TALLY")
"""A file to which each case appends ``command exit-code`` (long campaigns report from it)."""


def check_outcome(argv: list[str], code: int, out: str, err: str) -> None:
    if TALLY:
        with open(TALLY, "a") as stream:
            stream.write(f"{argv[0]} {code}\n")
    case = f"argv={argv!r}\nstdout={out[-500:]!r}\nstderr={err[-500:]!r}"
    assert code in (0, 1, 2, 130), case
    assert "Traceback" not in err + out, case
    if code == 2:
        assert err.count("\n") == 1 and err.endswith("\n"), case
    if code == 0 and "--json" in argv and out.strip():
        json.loads(out, parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(case)))


FUZZ = settings(
    max_examples=EXAMPLES or 25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(
    st.one_of(mutated_json(FORMAT_EXAMPLE), mutated_json(MIXED_EXAMPLE)),
    st.sampled_from(["info", "solve", "bound", "verify"]),
    st.sampled_from(["fifo", "gavel", "las"]),
)
def test_hostile_instances(text: bytes, command: str, policy: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "i.json"
        path.write_bytes(text)
        schedule = Path(folder) / "s.json"
        schedule.write_text(json.dumps(SCHEDULE))
        out = Path(folder) / "out.json"
        argv = {
            "info": ["info", str(path), "--json"],
            "solve": ["solve", str(path), "--method", policy, "--json", "--out", str(out)],
            "bound": ["bound", str(path)],
            "verify": ["verify", str(path), str(schedule), "--json"],
        }[command]
        code, stdout, stderr = run(argv)
        check_outcome(argv, code, stdout, stderr)
        if code == 0 and out.exists():
            assert verify(read_instance(path), read_schedule(out)).feasible


@FUZZ
@given(mutated_json(SCHEDULE))
def test_hostile_schedules(text: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        instance = Path(folder) / "i.json"
        instance.write_text(json.dumps(FORMAT_EXAMPLE))
        path = Path(folder) / "s.json"
        path.write_bytes(text)
        argv = ["verify", str(instance), str(path), "--json"]
        check_outcome(argv, *run(argv))


@FUZZ
@given(mutated_csv(), st.sampled_from(["fifo", "las-tiresias", "asrpt-greedy"]))
def test_hostile_traces(text: bytes, policy: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        path.write_bytes(text)
        argv = [
            "simulate", "--trace", str(path), "--servers", "2", "--gpus-per-server", "4",
            "--policy", policy, "--json",
        ]  # fmt: skip
        check_outcome(argv, *run(argv))


FLAGS = {
    "generate": ["--jobs", "--servers", "--gpus-per-server", "--seed", "--load", "--out"],
    "compare": ["--jobs", "--instances", "--seed", "--time-limit", "--methods", "--load"],
    "simulate": ["--servers", "--limit", "--load-factor", "--target-load", "--restart-cost",
                 "--columns", "--time-unit", "--unnamed", "--placement", "--policy"],
    # (check --adversarial runs hypothesis itself, which refuses to nest inside this test)
    "check": ["--random", "--seed", "--time-limit"],
    "predict": ["--jobs", "--retrain-every", "--seed", "--target"],
}  # fmt: skip
ARG_VALUES = st.one_of(
    st.sampled_from(
        ["0", "-1", "1", "2.5", "nan", "inf", "-inf", "1e308", "99999999999999999999", "",
         "x", "fifo,magic", "submit", "submit=", "us", "zoo", "consolidated", "las"]
    ),
    # no digits: a legal count such as 99999 would be a (legitimately) long run
    st.text(alphabet=st.characters(blacklist_categories=["Nd"]), max_size=6),
)  # fmt: skip


@FUZZ
@given(st.sampled_from(sorted(FLAGS)), st.data())
def test_hostile_arguments(command: str, data: st.DataObject) -> None:
    flags = data.draw(st.lists(st.sampled_from(FLAGS[command]), min_size=1, max_size=2))
    argv = [command] if command != "predict" else ["predict", "evaluate"]
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "t.csv"
        trace.write_text(TRACE)
        if command == "simulate":
            argv += ["--trace", str(trace), "--gpus-per-server", "4"]
        for flag in flags:
            value = data.draw(ARG_VALUES)
            if flag == "--out":
                value = str(Path(folder) / (value or "x"))
            argv += [flag, value]
        if command in ("compare", "check"):
            argv += ["--time-limit", "5"] if "--time-limit" not in flags else []
        if command == "check" and "--random" not in flags and "--adversarial" not in flags:
            argv += ["--random", "1"]
        if command == "compare":
            argv += ["--jobs", "3"] if "--jobs" not in flags else []
        if command == "predict":
            argv += ["--jobs", "60"] if "--jobs" not in flags else []
        code, out, err = run(argv)
        check_outcome(argv, code, out, err)


def _quick(name: str, value: Any) -> Any:
    """A legal but large count (a million jobs: a minute of generating and writing, a
    legitimate long run, not a hostile input) made 50; counts beyond the generator's limit
    stay, to be refused."""
    from ddlsched.core.generators import GENERATOR_LIMITS

    most = GENERATOR_LIMITS.get(name)
    large = isinstance(value, int) and not isinstance(value, bool) and value > 50
    return 50 if most is not None and large and value <= most else value


@FUZZ
@given(mutated_json({"generator": {"num_jobs": 3, "servers": 2, "integral": True}}))
def test_hostile_generator_configs(text: bytes) -> None:
    """A config file (TOML) made of hostile values: generate refuses it in one line or works."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.toml"
        try:
            document = json.loads(text)
            table = document.get("generator") or {}
            body = "\n".join(f"{k} = {json.dumps(_quick(k, v))}" for k, v in table.items())
            path.write_text(f"[generator]\n{body}\n")
        except (ValueError, AttributeError, TypeError):
            path.write_bytes(text)
        argv = ["generate", "--config", str(path), "--out", str(Path(folder) / "g.json")]
        check_outcome(argv, *run(argv))


OUTPUT_PATHS = st.sampled_from(
    ["{input}", "", " ", "{folder}", "{folder}/", "{folder}/new/", "{folder}/a/b/o.json",
     "/dev/null", "/dev/full", "/proc/ddlsched-out", "{folder}/o.json", "{folder}/./o.json"]
)  # fmt: skip


@FUZZ
@given(OUTPUT_PATHS, st.sampled_from(["solve", "generate", "simulate", "plot", "check"]))
def test_hostile_output_paths(template: str, command: str) -> None:
    """An output path that is an input, empty, a folder, a device or unwritable: refused
    in one line (exit 2) with every input unchanged, or written as a regular file."""
    with tempfile.TemporaryDirectory() as folder:
        instance, trace = Path(folder) / "i.json", Path(folder) / "t.csv"
        config = Path(folder) / "c.toml"
        instance.write_text(json.dumps(FORMAT_EXAMPLE))
        trace.write_text(TRACE)
        config.write_text("[generator]\nnum_jobs = 2\n")
        source = {"simulate": trace, "plot": trace, "generate": config}.get(command, instance)
        out = template.format(input=source, folder=folder)
        argv = {
            "solve": ["solve", str(instance), "--method", "fifo", "--out", out],
            "generate": ["generate", "--config", str(config), "--out", out],
            "simulate": ["simulate", "--trace", str(trace), "--servers", "2", "--out", out],
            "plot": ["simulate", "--trace", str(trace), "--servers", "2", "--plot", out],
            "check": ["check", str(instance), "--time-limit", "5", "--out-dir", out],
        }[command]
        before = {path: path.read_bytes() for path in (instance, trace, config)}
        code, stdout, stderr = run(argv)
        check_outcome(argv, code, stdout, stderr)
        assert {path: path.read_bytes() for path in before} == before, argv
        if code == 0 and command != "check":
            assert Path(out).is_file(), argv


ODD_ARGUMENTS = st.one_of(
    st.sampled_from(["fifo", "graph", "oracle", "in.json", "", None, 0, -1, 2**70, 1.5]),
    st.sampled_from([float("nan"), [], {}, {"format": "ddlsched.instance/1"}, b"x", object()]),
    st.text(max_size=6),
)


@FUZZ
@given(
    st.sampled_from(["instance", "policy", "params", "seed", "predictor", "mapper", "method"]),
    ODD_ARGUMENTS,
)
def test_hostile_api_arguments(argument: str, value: Any) -> None:
    """One argument of ``simulate`` or ``solve`` replaced by an odd value: it works, or
    raises TypeError or ValueError (never AttributeError, "'str' object is not callable",
    or a crash deep inside)."""
    from ddlsched.api import simulate, solve
    from ddlsched.core.io import instance_from_dict

    instance = instance_from_dict(FORMAT_EXAMPLE)
    try:
        if argument == "method":
            solve(instance, value)
        else:
            arguments: dict[str, Any] = {"instance": instance, "policy": "fifo"}
            arguments[argument] = value
            simulate(arguments.pop("instance"), arguments.pop("policy"), **arguments)
    except (TypeError, ValueError) as error:
        assert str(error), argument
