"""Figures, one function each: ``(data, ..., ax=None) -> Axes``.

After PyVRP's ``plotting``: every function draws on the ``ax`` it is given
(or a new one), returns it, and never calls ``plt.show()``; only this
module imports matplotlib. It imports only the ground floor
(:mod:`ddlsched.core`). :func:`comparison_figure` and
:func:`simulation_figure` lay out the command line's figures;
:func:`save_figure` writes one (PNG, PDF or SVG). Use the Agg backend for files
(``matplotlib.use("Agg")``), as the command line does.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ddlsched.core.extras import require
from ddlsched.core.io import FIGURE_FORMATS, write_bytes_atomic
from ddlsched.core.model import Instance, Schedule

# matplotlib is the [plot] extra: a miss names it, instead of a bare ModuleNotFoundError.
plt = require("matplotlib.pyplot", "plotting")
Rectangle = require("matplotlib.patches", "plotting").Rectangle

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from pandas import DataFrame


def _axes(ax: Axes | None) -> Axes:
    if ax is None:
        _, ax = plt.subplots()
    return ax


Segment = tuple[str, float, float, list[tuple[int, int]]]


def gpu_lanes(instance: Instance, schedule: Schedule) -> list[Segment]:
    """Each running segment of each job with the ``(server, GPU)`` lanes it holds.

    A job runs as one segment, or one per piece if it was preempted (each
    piece with its own mapping). Segments are taken by start time; on each
    server a segment takes the lowest lanes free at its start, which a
    feasible schedule always has.

    Raises
    ------
    ValueError
        If an entry has no mapping (only problem-A schedules are drawn).
    """
    raw: list[tuple[float, float, str, tuple[int, ...]]] = []
    for entry in schedule.jobs:
        if entry.pieces:
            for piece in entry.pieces:
                if piece.mapping is None:
                    raise ValueError(f"job {entry.id!r}: pieces without mappings are not drawn")
                raw.append((piece.start, piece.end, entry.id, piece.mapping))
        elif entry.mapping is None or entry.end is None:
            raise ValueError(f"job {entry.id!r} has no mapping or end: only A schedules are drawn")
        else:
            raw.append((entry.start, entry.end, entry.id, entry.mapping))
    free_at: dict[int, list[float]] = {
        h: [0.0] * g for h, g in enumerate(instance.cluster.gpus_per_server)
    }
    segments: list[Segment] = []
    for start, end, job_id, mapping in sorted(raw):
        taken = []
        for server in sorted(set(mapping)):
            free = [k for k, t in enumerate(free_at[server]) if t <= start + 1e-9]
            for lane in free[: mapping.count(server)]:
                free_at[server][lane] = end
                taken.append((server, lane))
        segments.append((job_id, start, end, taken))
    return segments


def gantt(
    instance: Instance, schedule: Schedule, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """A Gantt chart: one row per GPU (grouped by server), one colour per job.

    Segments spanning servers are hatched; a preempted job shows one box
    per piece.
    """
    ax = _axes(ax)
    colours = plt.get_cmap("tab20")
    colour_of = {job.id: colours(k % 20) for k, job in enumerate(instance.jobs)}
    offsets = np.cumsum([0, *instance.cluster.gpus_per_server])
    end_time = 0.0
    for job_id, start, end, lanes in gpu_lanes(instance, schedule):
        spanning = len({server for server, _ in lanes}) > 1
        for server, lane in lanes:
            ax.add_patch(
                Rectangle(
                    (start, offsets[server] + lane),
                    end - start,
                    0.9,
                    facecolor=colour_of[job_id],
                    edgecolor="black",
                    linewidth=0.5,
                    hatch="//" if spanning else None,
                )
            )
        server, lane = lanes[0]
        ax.text(
            (start + end) / 2,
            offsets[server] + lane + 0.45,
            job_id,
            ha="center",
            va="center",
            fontsize=7,
        )
        end_time = max(end_time, end)
    for boundary in offsets[1:-1]:
        ax.axhline(boundary - 0.05, color="grey", linewidth=1)
    ax.set_xlim(0, end_time * 1.02 if end_time > 0 else 1)
    ax.set_ylim(0, offsets[-1])
    ax.set_yticks(
        [o + g / 2 for o, g in zip(offsets[:-1], instance.cluster.gpus_per_server, strict=True)]
    )
    ax.set_yticklabels([f"server {h}" for h in range(instance.cluster.num_servers)])
    ax.set_xlabel("time (s)")
    ax.set_title(title or "schedule (hatched: spans servers)")
    return ax


def ratio_distribution(
    ratios: Mapping[str, Sequence[float]], ax: Axes | None = None, label: str = "C / OPT"
) -> Axes:
    """Box plots of each method's ratio to the optimum, points overlaid."""
    ax = _axes(ax)
    names = list(ratios)
    ax.boxplot([list(ratios[n]) for n in names], showfliers=False)
    rng = np.random.default_rng(0)  # jitter only, fixed for identical figures
    for k, name in enumerate(names, start=1):
        values = np.asarray(ratios[name], dtype=float)
        ax.scatter(k + rng.uniform(-0.12, 0.12, len(values)), values, s=8, alpha=0.6)
    ax.set_xticks(range(1, len(names) + 1))
    ax.set_xticklabels(names, rotation=20)
    ax.axhline(1.0, color="grey", linestyle=":")
    ax.set_ylabel(label)
    ax.set_title(f"{label} per method")
    return ax


def jct_cdf(
    jcts: Mapping[str, Sequence[float]], ax: Axes | None = None, log_x: bool | None = None
) -> Axes:
    """Empirical CDFs of job completion times (``log_x``: a log time axis; ``None``: when
    they span over two decades)."""
    ax = _axes(ax)
    for name, values in jcts.items():
        data = np.sort(np.asarray(values, dtype=float))
        ax.step(data, np.arange(1, len(data) + 1) / len(data), where="post", label=name)
    positive = [min(v) for v in jcts.values() if len(v) and min(v) > 0]
    largest = [max(v) for v in jcts.values() if len(v)]
    spans = bool(positive and largest and max(largest) / min(positive) > 100)
    if log_x or (log_x is None and spans):
        ax.set_xscale("log")
    ax.set_xlabel("JCT (s)")
    ax.set_ylabel("share of jobs")
    ax.legend()
    ax.set_title("JCT CDF")
    return ax


def prediction_error(errors: Mapping[str, Sequence[float]], ax: Axes | None = None) -> Axes:
    """Share of jobs whose relative prediction error is at most x, per predictor."""
    ax = _axes(ax)
    for name, values in errors.items():
        data = np.sort(np.abs(np.asarray(values, dtype=float)))
        ax.step(data * 100, np.arange(1, len(data) + 1) / len(data), where="post", label=name)
    ax.set_xlabel("absolute relative error (%)")
    ax.set_ylabel("share of jobs")
    ax.set_xlim(0, 200)
    ax.legend()
    ax.set_title("prediction error")
    return ax


def jct_vs_error(
    sigmas: Sequence[float], jct: Mapping[str, Sequence[float]], ax: Axes | None = None
) -> Axes:
    """Total JCT (relative to the oracle's) against prediction-error size."""
    ax = _axes(ax)
    for name, values in jct.items():
        ax.plot(sigmas, values, marker="o", label=name)
    ax.axhline(1.0, color="grey", linestyle=":")
    ax.set_xlabel("prediction error (sigma of log error)")
    ax.set_ylabel("total JCT / with oracle")
    ax.legend()
    ax.set_title("what prediction errors cost")
    return ax


def comparison_figure(
    instance: Instance,
    optimum: Schedule,
    optimum_label: str,
    heuristic: Schedule,
    heuristic_label: str,
    ratios: Mapping[str, Sequence[float]],
    certified: Mapping[str, Sequence[float]] | None = None,
) -> Figure:
    """``compare --plot``: the optimal and one heuristic Gantt chart, and every ratio.

    Parameters
    ----------
    instance
        The instance both schedules are for.
    optimum, heuristic
        Its optimal schedule and a method's schedule.
    optimum_label, heuristic_label
        Their titles.
    ratios
        Per method, ``sum C / OPT`` on every instance with a proven optimum.
    certified
        Per method, ``sum C / LB`` (a certified upper bound on the ratio) on the
        instances without a proven optimum; drawn in a fourth panel if any.
    """
    extra = certified is not None and any(len(v) for v in certified.values())
    figure, axes = plt.subplots(4 if extra else 3, 1, figsize=(10, 14 if extra else 11))
    gantt(instance, optimum, axes[0], title=optimum_label)
    gantt(instance, heuristic, axes[1], title=heuristic_label)
    ratio_distribution(ratios, axes[2])
    if extra and certified is not None:
        ratio_distribution(certified, axes[3], label="C / LB (certified, optimum not proven)")
    figure.tight_layout()
    return figure


def ratios_figure(
    ratios: Mapping[str, Sequence[float]], certified: Mapping[str, Sequence[float]]
) -> Figure:
    """``results --plot``: per method, the distribution of ``C / OPT`` over the instances
    with a proven optimum, and of ``C / LB`` (a certified upper bound on it) over all;
    a panel is left out when it has no value.

    Parameters
    ----------
    ratios, certified
        Per method (label), the ratios to the optimum and to the lower bound.
    """
    panels = [
        (values, label)
        for values, label in ((ratios, "C / OPT"), (certified, "C / LB (certified)"))
        if any(len(v) for v in values.values())
    ]
    figure, axes = plt.subplots(max(1, len(panels)), 1, figsize=(10, 4 * max(1, len(panels))),
                                squeeze=False)  # fmt: skip
    for (values, label), row in zip(panels, axes, strict=False):
        ratio_distribution(values, row[0], label=label)
    if not panels:
        axes[0][0].set_title("no ratio known: no proven optimum and no bound")
    figure.tight_layout()
    return figure


def simulation_figure(instance: Instance, schedule: Schedule, label: str) -> Figure:
    """``simulate --plot``: the JCT CDF of a run, and its Gantt chart if the instance is small."""
    releases = {job.id: job.release for job in instance.jobs}
    jcts = [float(entry.end or entry.start) - releases[entry.id] for entry in schedule.jobs]
    small = instance.num_jobs <= 60 and instance.cluster.num_gpus <= 64
    figure, axes = plt.subplots(
        2 if small else 1, 1, figsize=(10, 9 if small else 4), squeeze=False
    )
    jct_cdf({label: jcts}, axes[0][0])
    if small:
        gantt(instance, schedule, axes[1][0], title=f"{label} schedule")
    figure.tight_layout()
    return figure


def gpus_in_use(
    usage: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    total_gpus: int,
    ax: Axes | None = None,
) -> Axes:
    """GPUs held over time, one step line per run, with the cluster's size dashed.

    Parameters
    ----------
    usage
        Per run, ``(times, gpus)``: ``gpus[k]`` held from ``times[k]`` to ``times[k + 1]``
        (:meth:`ddlsched.experiments.elastic.ElasticRun.gpus_in_use`).
    total_gpus
        The cluster's GPUs.
    """
    ax = _axes(ax)
    for name, (times, gpus) in usage.items():
        ax.step(np.asarray(times) / 3600, gpus, where="post", label=name)
    ax.axhline(total_gpus, color="grey", linestyle="--", label="cluster")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("GPUs in use")
    ax.legend()
    ax.set_title("GPUs in use")
    return ax


def elastic_figure(
    jcts: Mapping[str, Sequence[float]],
    usage: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    total_gpus: int,
) -> Figure:
    """``simulate --plot`` and ``compare --plot`` on a Pollux workload: the runs' JCT CDFs
    (:func:`jct_cdf`) above their GPUs in use over time (:func:`gpus_in_use`)."""
    figure, axes = plt.subplots(2, 1, figsize=(10, 8))
    jct_cdf(jcts, axes[0])
    gpus_in_use(usage, total_gpus, axes[1])
    figure.tight_layout()
    return figure


def save_figure(figure: Figure, path: str, file_format: str = "png", dpi: int = 110) -> None:
    """Write ``figure`` to ``path`` in ``file_format`` (one of
    :data:`ddlsched.core.io.FIGURE_FORMATS`),
    atomically, and close it."""
    if file_format not in FIGURE_FORMATS:
        raise ValueError(f"figure format {file_format!r}: expected one of {FIGURE_FORMATS}")
    buffer = io.BytesIO()
    figure.savefig(buffer, format=file_format, dpi=dpi)
    plt.close(figure)
    write_bytes_atomic(path, buffer.getvalue())


def jct_against_bound(
    summary: DataFrame, ax: Axes | None = None, xlabel: str = "release period"
) -> Axes:
    """A schedule's total JCT by group against a lower bound's share of the same jobs.

    One bar per group (a row of :func:`ddlsched.sandwich.by_period` or
    :func:`ddlsched.sandwich.by_gpus`): the bound's share below, the schedule's excess
    over it stacked above (below the axis where the share exceeds the schedule's JCT,
    which a share, not being a per-job bound, may).

    Parameters
    ----------
    summary
        A table with columns ``bound_share`` and ``excess``, indexed by group.
    xlabel
        What the groups are.
    """
    ax = _axes(ax)
    positions = np.arange(len(summary))
    share = np.asarray(summary["bound_share"], dtype=float)
    excess = np.asarray(summary["excess"], dtype=float)
    ax.bar(positions, share, color="tab:grey", label="lower bound's share")
    ax.bar(positions, excess, bottom=share, color="tab:red", label="excess over it")
    step = max(1, len(positions) // 20)
    ax.set_xticks(positions[::step])
    ax.set_xticklabels([str(label) for label in list(summary.index)[::step]], rotation=45)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("total JCT (s)")
    ax.legend()
    ax.set_title(f"where the JCT over the bound sits, by {xlabel}")
    return ax


def slowdown_tail(slowdowns: Mapping[str, Sequence[float]], ax: Axes | None = None) -> Axes:
    """The share of jobs slowed by more than ``x``, per schedule: the tail of each job's
    processing time over its fastest one, ``held / p_i``
    (:func:`ddlsched.sandwich.job_table`), on log axes (most jobs run at their fastest, so
    a plain CDF would show only a step at 1).
    """
    ax = _axes(ax)
    for name, values in slowdowns.items():
        data = np.sort(np.asarray(values, dtype=float))
        above = 1.0 - np.arange(1, len(data) + 1) / len(data)
        shown = above > 0
        ax.step(data[shown], above[shown], where="post", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("processing time / fastest (held / p_i)")
    ax.set_ylabel("share of jobs slowed more")
    ax.legend()
    ax.set_title("slowdown from placement")
    return ax


def jct_parts(parts: Mapping[str, Mapping[str, float]], ax: Axes | None = None) -> Axes:
    """Each policy's total JCT split into parts, over its first part (the lower bound).

    One horizontal bar per policy, its parts stacked in order
    (:attr:`ddlsched.sandwich.JctDecomposition.parts`: ``bound``, ``order``,
    ``placement``, ``servers``); a negative part is drawn back from the running total.

    Parameters
    ----------
    parts
        Per policy, its parts in order (seconds); the first is the bound, which the
        figure's unit is.

    Raises
    ------
    ValueError
        If a policy's first part is not > 0.
    """
    ax = _axes(ax)
    colours = plt.get_cmap("tab10")
    names = list(parts)
    drawn: set[str] = set()
    for row, name in enumerate(names):
        values = parts[name]
        unit = next(iter(values.values()), 0.0)
        if not unit > 0:
            raise ValueError(f"parts of {name!r}: the first (the bound) must be > 0, got {unit!r}")
        left = 0.0
        for k, (part, value) in enumerate(values.items()):
            width = value / unit
            label = part if part not in drawn else None
            ax.barh(row, width, left=left, color=colours(k % 10), label=label)
            drawn.add(part)
            left += width
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.axvline(1.0, color="grey", linestyle=":")
    ax.set_xlabel("total JCT / lower bound")
    ax.legend()
    ax.set_title("where each policy's JCT goes")
    return ax


def _by_load(frame: DataFrame) -> list[tuple[float | None, DataFrame]]:
    """``frame``'s rows grouped by their ``load`` column, in order of first appearance
    (``None``, the recorded arrivals, kept as a group of its own)."""
    loads = list(dict.fromkeys(frame["load"]))
    return [(load, frame[frame["load"].isna() if load is None else frame["load"] == load])
            for load in loads]  # fmt: skip


def _load_title(load: float | None) -> str:
    return "arrivals as recorded" if load is None else f"target load {load:g}"


def study_jct_cdf(jobs: DataFrame, table: DataFrame) -> Figure:
    """``compare --trace --plot``: the JCT CDF of each policy (log time), one panel per
    load (``jobs``: :meth:`ddlsched.experiments.trace_study.TraceStudy.jobs`)."""
    groups = _by_load(jobs)
    figure, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 4), squeeze=False)
    for ax, (load, rows) in zip(axes[0], groups, strict=True):
        jct_cdf({p: list(r["jct"]) for p, r in rows.groupby("policy", sort=False)}, ax, True)
        ax.set_title(f"JCT CDF, {_load_title(load)}")
    figure.tight_layout()
    return figure


def fairness_cdf(rhos: Mapping[str, Sequence[float]], ax: Axes | None = None) -> Axes:
    """Empirical CDFs of finish-time fairness ``rho`` (a job's JCT over its JCT alone on
    its fair share; 1 marked: right of it, worse than the fair share)."""
    ax = _axes(ax)
    for name, values in rhos.items():
        data = np.sort(np.asarray(values, dtype=float))
        ax.step(data, np.arange(1, len(data) + 1) / len(data), where="post", label=name)
    ax.axvline(1.0, color="grey", linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("finish-time fairness rho")
    ax.set_ylabel("share of jobs")
    ax.legend()
    return ax


def study_fairness_cdf(jobs: DataFrame, table: DataFrame) -> Figure:
    """``compare --trace --plot``: the CDF of finish-time fairness per policy, one panel
    per load."""
    groups = _by_load(jobs)
    figure, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 4), squeeze=False)
    for ax, (load, rows) in zip(axes[0], groups, strict=True):
        fairness_cdf({p: list(r["rho"]) for p, r in rows.groupby("policy", sort=False)}, ax)
        ax.set_title(f"finish-time fairness, {_load_title(load)}")
    figure.tight_layout()
    return figure


def jct_against_load(table: DataFrame, ax: Axes | None = None) -> Axes:
    """Mean JCT against the offered load, one line per policy, with each model's lower
    bound on the mean JCT (its bound on the total over the jobs) as a dashed line
    (``table``: :meth:`ddlsched.experiments.trace_study.TraceStudy.table`)."""
    ax = _axes(ax)
    for policy, rows in table.groupby("policy", sort=False):
        rows = rows.sort_values("offered_load")
        ax.plot(rows["offered_load"], rows["mean_jct"], marker="o", label=policy)
    for model, rows in table.groupby("model", sort=False):
        rows = rows.drop_duplicates("offered_load").sort_values("offered_load")
        jobs = rows["total_jct"] / rows["mean_jct"]
        bound = rows["lower_bound"] / jobs
        if bound.notna().any():
            ax.plot(rows["offered_load"], bound, "k--" if model == "A" else "k:",
                    label=f"lower bound ({'problem A' if model == 'A' else model})")  # fmt: skip
    ax.set_xlabel("offered load")
    ax.set_ylabel("mean JCT (s)")
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    ax.set_title("mean JCT against load")
    return ax


def study_jct_against_load(jobs: DataFrame, table: DataFrame) -> Figure:
    """``compare --trace --plot``: :func:`jct_against_load` in a figure of its own."""
    figure, ax = plt.subplots(figsize=(7, 4.5))
    jct_against_load(table, ax)
    figure.tight_layout()
    return figure
