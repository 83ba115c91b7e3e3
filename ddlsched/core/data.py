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
    """``$DDLSCHED_DATA`` as a path, or ``None`` when it is unset or empty.

    Raises
    ------
    InputError
        If it names something that is not a folder (a typo would otherwise read the
        package's files without a word).
    """
    configured = os.environ.get(DATA_ENV)
    if not configured:
        return None
    folder = Path(configured).expanduser()
    if not folder.is_dir():
        what = "not a folder" if os.path.lexists(folder) else "no such folder"
        raise InputError(f"{DATA_ENV}={configured!r}: {what}")
    return folder


def data_roots() -> tuple[Path, ...]:
    """The data folders in the order they are searched: the user's, then the package's."""
    user = user_data_dir()
    return (user, bundled_data_dir()) if user is not None else (bundled_data_dir(),)


def regular_file(path: Path, shown: str | None = None) -> Path:
    """``path`` when it is a file (or a link to one).

    Raises
    ------
    InputError
        Naming ``shown`` (default the path) and what it is instead: missing, a broken
        link, a folder or another kind of file.
    """
    shown = shown or str(path)
    if path.is_file():
        return path
    if path.is_symlink() and not path.exists():
        raise InputError(f"{shown}: a broken link (to {os.readlink(path)})")
    if path.is_dir():
        raise InputError(f"{shown}: is a folder, not a file")
    if os.path.lexists(path):
        raise InputError(f"{shown}: not a regular file")
    raise InputError(f"{shown}: no such file")


def data_path(*parts: str) -> Path:
    """The file ``parts`` names under the first data folder that has an entry of that name.

    ``data_path("traces", "philly_jobs.csv")`` is the user's copy when
    ``$DDLSCHED_DATA`` has one, else the package's. An entry that is not a file (a broken
    link, a folder) is an error, never a reason to fall back to the package's copy.

    Raises
    ------
    InputError
        If no data folder has it, naming every place looked, or if the entry found is not
        a file.
    """
    candidates = [root.joinpath(*parts) for root in data_roots()]
    for candidate in candidates:
        if os.path.lexists(candidate):
            return regular_file(candidate)
    looked = ", ".join(str(c) for c in candidates)
    raise InputError(f"{'/'.join(parts)}: no such data file (looked in {looked})")


def resolve_trace(path: str | os.PathLike[str]) -> Path:
    """The trace file ``path`` names.

    A path that exists, is absolute or climbs (``..``) is taken as it is. Every other name is
    looked up, ``.csv`` optional, in the working folder, then in each data folder
    (:func:`data_roots`): the folder itself, its ``traces/`` and ``pollux/workloads/``. So
    ``philly_jobs.csv`` or ``workload-6`` work from any folder, and a file of your own
    comes first. The first folder with an entry of that name decides: an entry there that
    is not a file, or two entries of that name in one folder, is an error.

    Raises
    ------
    InputError
        If nothing is found (naming every place looked and the setting to change), if the
        entry found is not a file, or if the name is ambiguous in a folder.
    """
    given = Path(path)
    shown = os.fspath(path)
    if os.path.lexists(given) or given.is_absolute() or ".." in given.parts:
        return regular_file(given, shown)
    names = [given] if given.suffix else [given, given.with_name(given.name + ".csv")]
    places: list[list[Path]] = [names]
    for root in data_roots():
        folders = [root, *(root.joinpath(*sub) for sub in TRACE_FOLDERS)]
        places.append([folder / name for folder in folders for name in names])
    for candidates in places:
        found = [c for c in candidates if os.path.lexists(c)]
        if len(found) > 1:
            raise InputError(f"{shown}: ambiguous ({', '.join(map(str, found))}): give a path")
        if found:
            return regular_file(found[0], f"{shown} ({found[0]})")
    looked = ", ".join(str(c) for candidates in places for c in candidates)
    raise InputError(
        f"{shown}: no such file (looked in {looked}; `ddlsched data` lists the shipped "
        f"traces, {DATA_ENV} names a folder of your own)"
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
