"""A Pollux workload file is read as written or refused in one line naming file, line and
column, by the reader and by ``simulate`` / ``compare --trace`` alike (bad input: exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlsched.cli import main
from ddlsched.core.elastic import load_pollux_workload
from ddlsched.core.model import MAX_TIME, InputError

HEADER = "name,time,application,num_replicas,batch_size"


def _file(tmp_path: Path, *rows: str, prefix: str = "") -> Path:
    path = tmp_path / "w.csv"
    path.write_text(prefix + "\n".join((HEADER, *rows)) + "\n", encoding="utf-8")
    return path


BAD_FILES = [
    (("j1,abc,cifar10,1,128",), "line 2: column time: not a number: 'abc'"),
    (("j1,-5,cifar10,1,128",), "line 2: column time: out of range: '-5'"),
    (("j1,0,cifar10,1,128", "j1,5,ncf,1,64"), "duplicate names ['j1']"),
    ((), "no jobs"),
    (("j1,0,cifar10",), "line 2: 3 fields, the header names 5"),
    (("j1,1e300,cifar10,1,128",), "line 2: column time: '1e300' s is past 1e+11 s"),
    (("j0,0,ncf,1,64", f"j1,{MAX_TIME * 1.5:g},ncf,1,64"), "line 3: column time:"),
    (("j1,0,cifar10,1,128,extra",), "line 2: 6 fields, the header names 5"),
    (("j1,0,cifar10,1,128", "j2,9,ncf,1,64,,"), "line 3: 7 fields, the header names 5"),
]
"""Rows the reader refuses, each with the words its one line must hold."""


@pytest.mark.parametrize(("rows", "message"), BAD_FILES)
def test_the_reader_refuses_each_bad_file_in_one_line(
    tmp_path: Path, rows: tuple[str, ...], message: str
) -> None:
    """Not-a-number, negative or too-late times (past :data:`MAX_TIME`, which a 60 s round
    no longer moves past in float arithmetic), repeated names, no rows, too few and too many
    fields: one :class:`InputError` naming the file and (for a row) its line and column."""
    path = _file(tmp_path, *rows)
    with pytest.raises(InputError) as error:
        load_pollux_workload(path)
    assert str(path) in str(error.value) and message in str(error.value)


@pytest.mark.parametrize(("rows", "message"), BAD_FILES)
@pytest.mark.parametrize("command", ["simulate", "compare", "compare-policies"])
def test_the_commands_report_a_bad_file_as_the_reader_does(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    rows: tuple[str, ...],
    message: str,
    command: str,
) -> None:
    """``simulate`` and ``compare --trace`` (with and without ``--policies``) print the
    reader's line as it is (exit 2), not dressed as a fault of another option."""
    path = _file(tmp_path, *rows)
    argv = {
        "simulate": ["simulate", "--trace", str(path), "--policy", "fifo"],
        "compare": ["compare", "--trace", str(path)],
        "compare-policies": ["compare", "--trace", str(path), "--policies", "fifo"],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ddlsched: error: {path}") and message in err
    assert len(err.splitlines()) == 1


def test_the_last_time_accepted_is_max_time(tmp_path: Path) -> None:
    """An arrival at :data:`MAX_TIME` exactly is read (the limit is inclusive) and its job
    runs, checked, in a handful of rounds: the simulator jumps over the idle gap."""
    import ddlsched

    path = _file(tmp_path, "j0,0,ncf,1,64", f"j1,{MAX_TIME!r},ncf,1,64")
    workload = load_pollux_workload(path)
    assert [job.submit_time for job in workload.jobs] == [0.0, MAX_TIME]
    run = ddlsched.simulate_elastic(workload, "fifo")
    assert run.verified and run.jobs[1]["completion"] > MAX_TIME


def test_a_byte_order_mark_is_skipped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A file saved with a UTF-8 byte-order mark (as spreadsheet programs do) is read as the
    same file without it, and ``simulate`` runs it to the same figures."""
    rows = ("j1,0,cifar10,1,128", "j2,30,ncf,1,64")
    plain = load_pollux_workload(_file(tmp_path, *rows))
    marked_path = _file(tmp_path, *rows, prefix="\ufeff")
    assert marked_path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert load_pollux_workload(marked_path) == plain
    assert main(["simulate", "--trace", str(marked_path), "--policy", "fifo", "--json"]) == 0
    assert '"jobs": 2' in capsys.readouterr().out


def test_a_simulator_failure_is_an_internal_error_not_bad_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A ``ValueError`` raised inside the simulator during ``compare --trace`` is a bug of
    ours (exit 3, 'internal error'), never reported as a bad ``--policies`` (exit 2)."""
    import ddlsched.algorithms.elastic as elastic_algorithms

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ValueError("simulate_elastic: not done after 3 rounds")

    monkeypatch.setattr(elastic_algorithms, "simulate_elastic", broken)
    path = _file(tmp_path, "j1,0,cifar10,1,128")
    assert main(["compare", "--trace", str(path), "--policies", "fifo"]) == 3
    err = capsys.readouterr().err
    assert "internal error" in err and "--policies" not in err
