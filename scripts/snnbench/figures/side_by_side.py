"""Panels across series: the same point (model size, resources) on each simulator or table."""

from __future__ import annotations

import numpy as np

from snnbench.figures.axes import ERRORBAR, legend, log_y, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import INVALID, colors


@panel("real-time factor of the same point (model size, resources) on each series, median over seeds", wide=True)
def simulator_comparison(ax, data: PanelData) -> None:
    import seaborn as sns

    points = data.points
    if data.valid.empty or "real_time_factor" not in points:
        no_data(ax)
        return
    many = points["shape"].nunique() * points["neuron_scale"].nunique() > 12
    sep = " " if many else "\n"
    frame = points.assign(point=points["shape"] + sep + "N=" + points["neuron_scale"].map("{:g}".format))
    order = list(dict.fromkeys(frame.sort_values(["vps", "neuron_scale"])["point"]))
    valid = frame[frame["valid"].astype(bool)]
    sns.barplot(
        valid,
        x="point",
        y="real_time_factor",
        hue=data.series,
        order=order,
        palette=colors(points[data.series]),
        estimator="median",
        errorbar=ERRORBAR,
        err_kws={"linewidth": 0.8},
        capsize=0.1,
        ax=ax,
    )
    bad = frame[~frame["valid"].astype(bool)]
    if not bad.empty:
        ax.scatter([order.index(p) for p in bad["point"]], np.zeros(len(bad)), label="failed / invalid", **INVALID)
    values = valid["real_time_factor"]
    if values.max() / values.min() > 20:  # simulators a hundredfold apart: log, bars from a visible floor
        log_y(ax)
        ax.set_ylim(bottom=values.min() / 3)
    if len(order) > 6:
        ax.tick_params(axis="x", labelrotation=90)
    ax.set_xlabel("point (nodes x ranks x threads, neuron scale)")
    ax.set_ylabel("real-time factor")
    legend(ax)
