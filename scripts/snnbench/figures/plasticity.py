"""Plasticity panels: the E->E weight distribution after the run (hpc_benchmark's stdp_pl_synapse_hom
synapses), from the histogram of w / w_initial each point's record holds (the points table's
`ee_weight_histogram`, over the bins its model names: `weight_bins_relative`, found by the table's
model_name in the models' registry)."""

from __future__ import annotations

import json

import numpy as np

from snnbench.figures.activity import network_model
from snnbench.figures.axes import legend, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import colors


def summed_histogram(cells, edges: np.ndarray) -> np.ndarray:
    """The points' histograms (JSON: first bin, counts from it) added up over the model's bins."""
    total = np.zeros(len(edges) - 1)
    for cell in cells:
        histogram = json.loads(cell)
        counts = np.asarray(histogram["counts"], dtype=float)
        total[histogram["first"] : histogram["first"] + counts.size] += counts
    return total


@panel(
    "E->E weights after the run relative to their initial value, per series and model size (valid points, "
    "seeds pooled; density); the initial weight at 1"
)
def ee_weight_distribution(ax, data: PanelData) -> None:
    valid = data.valid
    if "ee_weight_histogram" not in valid or valid["ee_weight_histogram"].isna().all():
        no_data(ax, "no weight histograms (hpc_benchmark records)")
        return
    valid = valid.dropna(subset=["ee_weight_histogram"])
    edges = network_model(valid).weight_bins_relative
    palette = colors(sorted(valid[data.series].unique()))
    sizes = sorted(valid["neuron_scale"].unique())
    used = []
    for (series, scale), group in valid.groupby([data.series, "neuron_scale"]):
        counts = summed_histogram(group["ee_weight_histogram"], edges)
        density = counts / (counts.sum() * np.diff(edges))
        linestyle = ["-", "--", ":", "-."][sizes.index(scale) % 4]
        label = f"{series}, N={scale:g}" if len(sizes) > 1 else str(series)
        ax.stairs(density, edges, color=palette[series], linestyle=linestyle, label=label)
        used.append(np.flatnonzero(counts))
    span = np.concatenate(used)
    low, high = edges[max(span.min() - 2, 0)], edges[min(span.max() + 3, len(edges) - 1)]
    ax.set_xlim(min(low, 0.98), max(high, 1.02))
    ax.axvline(1.0, color="black", linewidth=0.6)
    ax.set_xlabel("weight after the run / initial weight")
    ax.set_ylabel("density")
    legend(ax)
