"""Drawing helpers shared by panels: the VP axis, lines over seeds, stacked bars, legends, the
red crosses of failed and invalid points, the "no data" note.

seaborn is imported inside the helpers that use it: a figure without them never loads it.
"""

from __future__ import annotations

import matplotlib.ticker
import numpy as np
import pandas as pd

from snnbench.figures.registry import PanelData
from snnbench.figures.style import DISTURBED, INVALID, colors, lighter

ERRORBAR = ("pi", 100)  # bars span all seeds
MAX_DOTS = 40  # up to this many points a panel shows every point, beyond it their spread


def no_data(ax, text: str = "no valid points") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def shared_vps(points: pd.DataFrame, series: str) -> bool:
    """Whether several shapes of one series have the same number of VPs (e.g. 2 nodes x 1 thread
    and 1 node x 2 threads): then they are told apart, never pooled as if they were seeds."""
    return bool((points.groupby([series, "vps"])["shape"].nunique() > 1).any())


def crowded(ax, n: int, most: int = 16) -> None:
    """Upright tick labels up to 8 categories, rotated beyond, every k-th beyond `most`."""
    if n > 8:
        ax.tick_params(axis="x", labelrotation=90)
    if n > most:
        step = -(-n // most)
        for i, label in enumerate(ax.get_xticklabels()):
            label.set_visible(i % step == 0)


def vps_axis(ax, points: pd.DataFrame) -> None:
    """x = virtual processes; log2 over wide ranges; weak scaling also names the model size."""
    vps = sorted(points["vps"].dropna().unique())
    if not vps:
        return
    if vps[-1] / vps[0] >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xticks(vps)
    if (points["scaling"] == "weak").any():
        scale = points.groupby("vps")["neuron_scale"].first()
        ax.set_xticklabels([f"{v:g}\nN={scale[v]:g}" for v in vps])
    else:
        ax.set_xticklabels([f"{v:g}" for v in vps])
    crowded(ax, len(vps))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("virtual processes")


def lines(ax, data: PanelData, y: str, label: str, log: bool = False) -> bool:
    """Median over seeds per series against VPs, error bars over seeds, invalid points marked.
    Shapes sharing a VP count get their own line per layout of a node (ranks x threads)."""
    import seaborn as sns

    valid = data.valid.dropna(subset=[y]) if y in data.points else data.valid.iloc[0:0]
    if not valid.empty:
        per_node = None
        if shared_vps(data.points, data.series):
            valid = valid.assign(
                **{"per node": valid["ranks_per_node"].astype(str) + "x" + valid["threads_per_rank"].astype(str)}
            )
            per_node = "per node"
        sns.lineplot(
            valid,
            x="vps",
            y=y,
            hue=data.series,
            style=per_node,
            palette=colors(data.points[data.series]),
            estimator="median",
            markers=True if per_node else None,
            marker=None if per_node else "o",
            dashes=False,
            errorbar=ERRORBAR,
            err_style="bars",
            ax=ax,
        )
        if log:
            log_y(ax)
    vps_axis(ax, data.points)
    mark_invalid(ax, data, y)
    mark_disturbed(ax, data, y)
    ax.set_ylabel(label)
    legend(ax)
    return not valid.empty


def mark_disturbed(ax, data: PanelData, y: str) -> None:
    """Valid points that others' work slowed (the `disturbed` column, judged at collect): ringed at their value,
    so that a curve's outlier says why."""
    if "disturbed" not in data.valid or y not in data.valid:
        return
    hit = data.valid[(data.valid["disturbed"] == True) & data.valid[y].notna()]  # noqa: E712 (object column)
    if not hit.empty:
        ax.scatter(hit["vps"], hit[y], label="disturbed (others used its CPUs)", **DISTURBED)


def mark_invalid(ax, data: PanelData, y: str | None) -> None:
    """Invalid finished points at their value; failed or value-less ones (a NaN efficiency) on the x axis
    itself, in axes coordinates, so that no later change of the y limits moves them to a made-up value.
    Red crosses, each kind in the legend only where drawn."""
    bad = data.invalid
    if bad.empty:
        return
    values = bad[y] if y and y in bad else pd.Series(np.nan, index=bad.index)
    valued = values.notna()
    if valued.any():
        ax.scatter(bad.loc[valued, "vps"], values[valued], label="invalid (at its value)", **INVALID)
    if (~valued).any():
        on_axis = ax.get_xaxis_transform()  # x in data, y in axes fractions: 0 is the axis
        ax.scatter(bad.loc[~valued, "vps"], np.zeros((~valued).sum()), transform=on_axis, clip_on=False,
                   label="failed / no value (on the axis)", **INVALID)  # fmt: skip


def log_y(ax) -> None:
    """Log y axis with plain numbers (1, 2, 5, 10), minor ones labelled over narrow ranges."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.LogFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(1.5, 0.5)))


def legend(ax, **kwargs) -> None:
    """A legend inside the panel; beside it (in columns) when it has many entries."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) > 5 and "loc" not in kwargs:
        kwargs.update(loc="upper left", bbox_to_anchor=(1.0, 1.0), ncols=1 + len(handles) // 12)
    ax.legend(handles, labels, **kwargs)


def _shape_labels(data: PanelData, shapes: pd.DataFrame) -> list[str]:
    """Tick labels of the shapes: VPs, the shape where VPs repeat, the model size in weak scaling."""
    labels = [f"{v:g}" for v in shapes["vps"]]
    if shared_vps(data.points, data.series):
        labels = [f"{v:g} ({s})" for v, s in zip(shapes["vps"], shapes["shape"], strict=True)]
    if (data.points["scaling"] == "weak").any():
        labels = [f"{label}\nN={n:g}" for label, n in zip(labels, shapes["neuron_scale"], strict=True)]
    return labels


def stacked_bars(
    ax,
    data: PanelData,
    parts: dict[str, pd.Series],
    ylabel: str,
    legend_title: str | None = None,
    errorbars: bool = True,
) -> None:
    """Bars per shape (ordered by VPs; dodged per series, later series in lighter shades) stacked from
    `parts` (label -> per-point values), medians over seeds; an error bar over seeds on the
    stack's total."""
    valid = data.valid
    shapes = data.points.sort_values(["vps", "nodes", "ranks_per_node"], kind="stable")
    shapes = shapes.drop_duplicates("shape")[["shape", "vps", "neuron_scale"]].reset_index(drop=True)
    position = {shape: i for i, shape in enumerate(shapes["shape"])}
    series = list(dict.fromkeys(data.points[data.series]))
    width = 0.8 / len(series)
    part_colors = dict(zip(parts, colors(range(len(parts))).values(), strict=False))
    frame = valid[["shape", data.series]].copy()
    for label, values in parts.items():
        frame[label] = values.loc[valid.index]
    frame["__total"] = frame[list(parts)].sum(axis=1)
    for j, name in enumerate(series):
        sub = frame[frame[data.series] == name]
        if sub.empty:
            continue
        med = sub.groupby("shape").median(numeric_only=True)
        spread = sub.groupby("shape")["__total"].agg(["min", "max"])
        x = np.array([position[s] for s in med.index]) - 0.4 + width * (j + 0.5)
        bottom = np.zeros(len(med))
        for label in parts:
            ax.bar(
                x,
                med[label],
                width * 0.9,
                bottom=bottom,
                color=lighter(part_colors[label], j),
                linewidth=0,  # seaborn's white edges would hide narrow bars
                label=label if j == 0 else None,
            )
            bottom += med[label].to_numpy()
        total = med["__total"].to_numpy()
        if errorbars:
            ax.errorbar(x, total, yerr=[total - spread["min"], spread["max"] - total], fmt="none", color="k", lw=0.8)
        if len(series) > 1:
            ax.bar([np.nan], [np.nan], color=lighter("0.35", j), label=f"{name} (shade)")
    bad = data.invalid
    if not bad.empty:
        ax.scatter([position[s] for s in bad["shape"]], np.zeros(len(bad)), label="failed / invalid", **INVALID)
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels(_shape_labels(data, shapes))
    crowded(ax, len(shapes))
    ax.set_xlabel("virtual processes" + (" (nodes x ranks x threads)" if shared_vps(data.points, data.series) else ""))
    ax.set_ylabel(ylabel)
    legend(ax, loc="upper left", bbox_to_anchor=(1.0, 1.0), title=legend_title, alignment="left")
