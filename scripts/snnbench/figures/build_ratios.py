"""The regression view between two builds of one run as a figure: per metric (phases, total,
real-time factor, memory) the ratio of medians current build / baseline build of every point,
with its spread over seeds, the tolerance band, and the changes flagged (snnbench.results.regression)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd

from snnbench.figures.style import DOUBLE_COLUMN_IN, ROW_HEIGHT_IN, colors, style
from snnbench.tables.frames import shapes

CHANGE_MARK = {"slower": ("^", "#d62728"), "faster": ("v", "#0173b2")}


def _metrics(ratios: pd.DataFrame) -> list[str]:
    return [c.removeprefix("ratio_") for c in ratios if c.startswith("ratio_") and not c.endswith(("_low", "_high"))]


def _name(metric: str) -> str:
    return {"real_time_factor": "RTF", "peak_rss_mb_sum": "memory"}.get(
        metric, metric.removeprefix("time_").removesuffix("_s")
    )


def draw_ratios(ratios: pd.DataFrame, tolerance: float, png: str | None = None, pdf: str | None = None):
    """One figure: a dot per point and metric, bars spanning the spread over seeds."""
    style()
    fig, ax = plt.subplots(figsize=(DOUBLE_COLUMN_IN, ROW_HEIGHT_IN), layout="constrained")
    metrics = _metrics(ratios)
    ax.axhspan(1 - tolerance, 1 + tolerance, color="0.9", zorder=0, label=f"tolerance ±{tolerance:g}")
    ax.axhline(1.0, color="0.5", linewidth=0.6, zorder=1)
    labels = shapes(ratios) + " N=" + ratios["neuron_scale"].map("{:g}".format)
    for column in ("simulator", "build", "machine"):  # named where they differ between rows
        if column in ratios and ratios[column].nunique() > 1:
            labels = ratios[column].astype(str) + " " + labels
    palette = colors(labels)
    width = 0.7 / max(len(ratios), 1)
    for j, (i, row) in enumerate(ratios.iterrows()):
        x = np.arange(len(metrics)) - 0.35 + width * (j + 0.5)
        y = row[[f"ratio_{m}" for m in metrics]].to_numpy(float)
        low = row[[f"ratio_{m}_low" for m in metrics]].to_numpy(float)
        high = row[[f"ratio_{m}_high" for m in metrics]].to_numpy(float)
        ax.errorbar(x, y, yerr=[y - low, high - y], fmt="o", ms=3, capsize=2, color=palette[labels[i]], label=labels[i])
        for k, metric in enumerate(metrics):
            if row.get(f"change_{metric}") in CHANGE_MARK:
                marker, color = CHANGE_MARK[row[f"change_{metric}"]]
                ax.scatter(x[k], high[k] * 1.03, marker=marker, color=color, s=14, zorder=5)
    ax.set_yscale("log")  # 2x slower and 2x faster equally far from 1
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(range(len(metrics)), [_name(m) for m in metrics])
    if not ratios.empty and "baseline_build" in ratios:
        current = ratios["build"].iloc[0] if ratios["build"].nunique() == 1 else "build"
        ax.set_ylabel(f"{current} / {ratios['baseline_build'].iloc[0]}")
    else:
        ax.set_ylabel("current / baseline")
    ax.set_title("ratio of medians over seeds; bars: spread over seeds; ▲ slower, ▼ faster", loc="left")
    ax.legend(ncols=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    for path in (png, pdf):
        if path:
            fig.savefig(path)
    plt.close(fig)
    return fig
