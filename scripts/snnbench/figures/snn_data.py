"""snn-data panels (series: `strategy`, the loading strategy) and the family's figures.

- data_epoch_parts / data_first_epoch_parts: epoch time per strategy stacked by part (waiting for
  the loader, host -> device copy, training step), later epochs (median) and the first (cache fill),
  one group of bars per model, like the table of Tonic's "training SNNs fast" study.
- data_speedup: time of a later epoch with naive loading over the strategy's, same model and loader.
- data_cache_footprint: what each cache holds on disk, in host memory and on the GPU.
- data_not_run: the points that did not run (no GPU, no dataset files) and why.
Invalid points (an epoch that missed samples) are red crosses, never bars.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.figures.axes import legend, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import INVALID, colors
from snnbench.figures.training import not_run_lines

PARTS = {"load": "loading (waiting for the batch)", "copy": "host -> device copy", "step": "training step"}
# What tells two points of one strategy and model apart, in label order.
VARIANTS = ("tensors", "workers", "pin_memory", "prefetch_factor", "batch", "device", "dataset")
CONFIG_KEYS = ("dataset", "framework", "device", "batch", "tensors", "workers", "pin_memory", "prefetch_factor")


def labels(points: pd.DataFrame) -> pd.Series:
    """Strategy, with the loader settings that vary in this table (e.g. 'disk sparse w2')."""
    label = points["strategy"].astype(str)
    short = {
        "tensors": lambda v: str(v),
        "workers": lambda v: f"w{v}",
        "pin_memory": lambda v: "pinned" if v else "pageable",
        "prefetch_factor": lambda v: f"pf{v}",
        "batch": lambda v: f"B{v}",
        "device": lambda v: str(v),
        "dataset": lambda v: str(v),
    }
    for key in VARIANTS:
        if key in points and points[key].nunique() > 1:
            label = label + " " + points[key].map(short[key])
    return label


def _medians(data: PanelData, columns: list[str]) -> pd.DataFrame:
    done = data.valid
    if done.empty:
        return done
    done = done.assign(label=labels(done))
    return done.groupby(["framework", "label"], sort=False)[columns].median().reset_index()


def _stacked(ax, data: PanelData, prefix: str, title: str) -> None:
    columns = [f"{prefix}_{part}_s" for part in PARTS]
    med = _medians(data, columns)
    ax.set_title(title)
    if med.empty:
        no_data(ax, "no finished points")
        return
    palette = dict(zip(PARTS, colors(range(len(PARTS))).values(), strict=False))
    xs = np.arange(len(med))
    bottom = np.zeros(len(med))
    for part, column in zip(PARTS, columns, strict=True):
        ax.bar(xs, med[column], 0.8, bottom=bottom, color=palette[part], linewidth=0, label=PARTS[part])
        bottom += med[column].to_numpy()
    ax.set_xticks(xs, [f"{m}\n{lab}" for m, lab in zip(med["framework"], med["label"], strict=True)])
    ax.tick_params(axis="x", labelsize="x-small", labelrotation=90)
    ax.set_ylabel("time per epoch (s)")
    bad = data.invalid[data.invalid["status"] == "ok"]
    if not bad.empty:
        ax.scatter([0] * len(bad), [0] * len(bad), label="invalid (samples missed)", **INVALID)
    if bottom.max() > 0:
        ax.set_ylim(0, 1.6 * bottom.max())  # room above the bars for the legend
    legend(ax, loc="best")


@panel("time of a later epoch (median over the epochs after the first) per strategy and model, by part", wide=True)
def data_epoch_parts(ax, data: PanelData) -> None:
    _stacked(ax, data, "later", "later epochs (cache read)")


@panel("time of the first epoch (which fills the caches) per strategy and model, by part", wide=True)
def data_first_epoch_parts(ax, data: PanelData) -> None:
    _stacked(ax, data, "first", "first epoch (cache fill)")


def speedups(points: pd.DataFrame) -> pd.DataFrame:
    """Later-epoch time of naive loading over each strategy's, with the same model and loader
    settings (medians over seeds); one row per strategy and configuration that has a naive twin."""
    keys = [k for k in CONFIG_KEYS if k in points]
    valid = points[points["valid"].astype(bool)]
    med = valid.groupby([*keys, "strategy"], dropna=False)["later_total_s"].median().reset_index()
    naive = med[med["strategy"] == "naive"].drop(columns="strategy").rename(columns={"later_total_s": "naive_s"})
    both = med.merge(naive, on=keys)
    return both.assign(speedup=both["naive_s"] / both["later_total_s"])


@panel("speed-up of a later epoch over naive loading (naive time / strategy time; same model and loader)")
def data_speedup(ax, data: PanelData) -> None:
    table = speedups(data.points) if "later_total_s" in data.points else pd.DataFrame()
    if table.empty:
        no_data(ax, "no strategy with a naive twin")
        return
    table = table.assign(label=labels(table))
    palette = colors(sorted(table["framework"].unique()))
    xs = np.arange(len(table))
    ax.bar(xs, table["speedup"], 0.8, color=[palette[m] for m in table["framework"]], linewidth=0)
    for framework, color in palette.items():
        ax.bar([np.nan], [np.nan], color=color, label=framework)
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks(xs, table["label"])
    ax.tick_params(axis="x", labelsize="x-small", labelrotation=90)
    ax.set_ylabel("speed-up over naive")
    legend(ax, loc="upper left")


@panel("cache footprint per strategy: on disk (HDF5 files), in host memory, on the GPU; frames made in epoch 1")
def data_cache_footprint(ax, data: PanelData) -> None:
    columns = ["cache_disk_mb", "cache_memory_mb", "cache_gpu_mb", "frames_mb"]
    med = _medians(data, [c for c in columns if c in data.points])
    if med.empty:
        no_data(ax, "no finished points")
        return
    names = {"cache_disk_mb": "disk", "cache_memory_mb": "host memory", "cache_gpu_mb": "GPU", "frames_mb": "frames"}
    present = [c for c in columns if c in med and med[c].fillna(0).gt(0).any()]
    xs, width = np.arange(len(med)), 0.8 / max(len(present), 1)
    for i, column in enumerate(present):
        ax.bar(xs - 0.4 + width * (i + 0.5), med[column].fillna(0), width, label=names[column], linewidth=0)
    ax.set_xticks(xs, [f"{m}\n{lab}" for m, lab in zip(med["framework"], med["label"], strict=True)])
    ax.tick_params(axis="x", labelsize="x-small", labelrotation=90)
    ax.set_ylabel("MB")
    legend(ax, loc="upper left")


@panel("points that did not run, and why")
def data_not_run(ax, data: PanelData) -> None:
    lines = not_run_lines(data.points, width=70, series=data.series)
    ax.axis("off")
    ax.set_title("not run")
    ax.text(0, 1, "\n".join(lines) or "every point ran", va="top", fontsize="x-small", transform=ax.transAxes)
