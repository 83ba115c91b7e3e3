"""The real data that ships with the package, and how a name finds its file.

Every trace and profile the framework reads is package data under
``ddlsched/data/`` (read through :mod:`importlib.resources`, so a plain
``pip install .`` has it as well as a checkout). A user's own folder comes
first: ``$DDLSCHED_DATA``, laid out like the package's (``traces/``,
``profiles/``, ``pollux/``), overrides any file it holds and falls back to the
package for the rest.

:data:`DATASETS` says where each file comes from and under which licence;
``ddlsched data`` prints it with each file's row count, and
``docs/guide/data.md`` is its page. The licence texts ship beside the files
(``ddlsched/data/LICENSES/``).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ddlsched.core.model import InputError

DATA_ENV = "DDLSCHED_DATA"
"""The environment variable naming a user's data folder (searched before the package's)."""

TRACE_FOLDERS = (("traces",), ("pollux", "workloads"))
"""Where a bare trace name is looked up, in each data folder, after the folder itself."""


@dataclass(frozen=True)
class Dataset:
    """One kind of shipped file: a glob under the data folder, what it is, its origin.

    Attributes
    ----------
    pattern
        Files it covers, relative to the data folder (``fnmatch`` syntax).
    what
        One line saying what a row is.
    source
        Where the data were taken from (repository, path; the paper).
    licence
        SPDX identifier of the data's licence; the text is in ``LICENSES/``.
    """

    pattern: str
    what: str
    source: str
    licence: str


ADAPTDL = "petuum/adaptdl, branch osdi21-artifact, simulator/ (Qiao et al., Pollux, OSDI 2021)"

DATASETS = (
    Dataset(
        "traces/philly_jobs.csv",
        "Microsoft Philly jobs, Sep-Dec 2017: submit time, duration, GPUs",
        "Philly trace (Jeon et al., ATC 2019) as preprocessed by " + ADAPTDL,
        "CC-BY-4.0",
    ),
    Dataset(
        "traces/muri_trace*.csv",
        "Philly-derived jobs with a model, iterations and iteration time",
        "Rivendile/Muri, simulator/trace-data (Zhao et al., SIGCOMM 2022)",
        "Apache-2.0",
    ),
    Dataset(
        "traces/tiresias_60_job.csv",
        "Tiresias's 60-job workload with iterations and models",
        "SymbioticLab/Tiresias, simulator/60_job.csv (Gu et al., NSDI 2019)",
        "Apache-2.0",
    ),
    Dataset(
        "profiles/gavel_throughputs.csv",
        "isolated throughput per GPU type, model and GPU count",
        "stanford-futuredata/gavel, scheduler/simulation_throughputs.json (Narayanan et al., "
        "OSDI 2020)",
        "MIT",
    ),
    Dataset(
        "profiles/pollux_*_placements.csv",
        "step and gradient-sync time of a model per placement and local batch",
        ADAPTDL,
        "Apache-2.0",
    ),
    Dataset(
        "pollux/scalability/*.csv",
        "step and sync time of a model on 1-16 nodes per local batch",
        ADAPTDL,
        "Apache-2.0",
    ),
    Dataset(
        "pollux/efficiency/*.csv",
        "a training run of a model at one total batch size, a row per epoch",
        ADAPTDL,
        "Apache-2.0",
    ),
    Dataset(
        "pollux/workloads/workload-*.csv",
        "one of the Pollux study's 160-job workloads (elastic jobs)",
        ADAPTDL,
        "Apache-2.0",
    ),
)
"""Every kind of shipped file, in the order ``ddlsched data`` lists them."""


def bundled_data_dir() -> Path:
    """The data folder inside the installed package (``ddlsched/data``).

    Raises
    ------
    InputError
        If the package's data is not on the file system (a zipped install).
    """
    folder = resources.files("ddlsched") / "data"
    if not isinstance(folder, Path) or not folder.is_dir():
        raise InputError(f"{folder}: the package's data folder is not a folder on disk")
    return folder


def user_data_dir() -> Path | None:
    """``$DDLSCHED_DATA`` as a path, or ``None`` when it is unset or empty."""
    configured = os.environ.get(DATA_ENV)
    return Path(configured).expanduser() if configured else None


def data_roots() -> tuple[Path, ...]:
    """The data folders in the order they are searched: the user's, then the package's."""
    user = user_data_dir()
    return (user, bundled_data_dir()) if user is not None else (bundled_data_dir(),)


def data_path(*parts: str) -> Path:
    """The file ``parts`` names under the first data folder that holds it.

    ``data_path("traces", "philly_jobs.csv")`` is the user's copy when
    ``$DDLSCHED_DATA`` has one, else the package's.

    Raises
    ------
    InputError
        If no data folder holds it, naming every place looked.
    """
    candidates = [root.joinpath(*parts) for root in data_roots()]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise InputError(f"{'/'.join(parts)}: no such data file (looked in {looked})")


def data_root(*parts: str) -> Path:
    """The first data folder holding ``parts`` (so that related files come from one place).

    Raises
    ------
    InputError
        As :func:`data_path`.
    """
    path = data_path(*parts)
    for _ in parts:
        path = path.parent
    return path


def resolve_trace(path: str | os.PathLike[str]) -> Path:
    """The trace file ``path`` names: the path itself when it exists, else the same name
    in a data folder (itself, then its ``traces/`` and ``pollux/workloads/``; ``.csv``
    may be left off), so ``philly_jobs.csv`` or ``workload-6`` work from any folder.

    Raises
    ------
    InputError
        If none exists, naming every place it looked and the setting to change.
    """
    given = Path(path)
    if given.exists() or given.is_absolute():
        if not given.exists():
            raise InputError(f"{os.fspath(path)}: no such file")
        return given
    candidates = [given]
    for root in data_roots():
        candidates += [root / given] + [root.joinpath(*sub) / given for sub in TRACE_FOLDERS]
    if not given.suffix:
        candidates += [c.with_name(c.name + ".csv") for c in candidates]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise InputError(
        f"{os.fspath(path)}: no such file (looked in {looked}; `ddlsched data` lists the "
        f"shipped traces, {DATA_ENV} names a folder of your own)"
    )


@dataclass(frozen=True)
class DataFile:
    """A shipped file as ``ddlsched data`` lists it: its name, rows, and its dataset."""

    name: str
    rows: int
    dataset: Dataset

    def as_dict(self) -> dict[str, str | int]:
        """The file's row of the listing, JSON-ready."""
        return {
            "name": self.name,
            "rows": self.rows,
            "what": self.dataset.what,
            "source": self.dataset.source,
            "licence": self.dataset.licence,
        }


def _data_rows(path: Path) -> int:
    """Rows of a CSV file: its non-blank lines after the header."""
    with path.open(encoding="utf-8-sig") as stream:
        return max(sum(1 for line in stream if line.strip()) - 1, 0)


def dataset_of(name: str) -> Dataset | None:
    """The dataset a file name (relative to the data folder, ``/``-separated) belongs to."""
    return next((d for d in DATASETS if fnmatch.fnmatchcase(name, d.pattern)), None)


def shipped_files() -> list[DataFile]:
    """Every data file inside the package, grouped by dataset, each with its row count."""
    root = bundled_data_dir()
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.csv"))
    files = []
    for dataset in DATASETS:
        for name in names:
            if dataset_of(name) is dataset:
                files.append(DataFile(name, _data_rows(root / name), dataset))
    return files
