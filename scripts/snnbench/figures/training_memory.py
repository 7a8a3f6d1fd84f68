"""snn-training memory panels: peak memory of a training step against T per strategy and library, and
step time against peak memory (the trade-off) with the published ratios as references.

- training_memory_T: the step's peak tensor memory (snnbench.training.memory: CUDA allocator peak, or
  the CPU allocator's running sum from torch's profiler) against T, one line per library and strategy;
  and what the forward pass keeps for the backward pass.
- training_memory_tradeoff: each strategy's memory ratio against its speed-up over vanilla BPTT on the
  same point, with Liang et al.'s (0.41x, 2.13x; 0.33x, 1.94x with BN) and SpikingJelly's memopt
  (0.58x at the same time) as reference marks; and the memory ratio against T.
Linear + LIF and the convolutional network (conv, conv-bn) are told apart by marker and label.
Invalid points (failed FLOP check, or gradients that differ from vanilla's) are kept out.
"""

from __future__ import annotations

from snnbench.figures.axes import legend, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import colors
from snnbench.training.memory_table import REFERENCES, medians, ratios

STYLES = {"vanilla": "-", "checkpoint-layer": ":", "checkpoint-neuron": "--"}  # chunked ones: dash-dot
MARKERS = {"linear": "o", "conv": "s", "conv-bn": "^"}  # the network: Linear + LIF, or the Conv/FC stack


def _network(architecture: str) -> str:
    """How labels name the network: nothing for Linear + LIF (the family's first), else its name."""
    return "" if architecture == "linear" else f"{architecture} "


def _line_style(strategy_id: str) -> str:
    return STYLES.get(strategy_id, "-.")


def _against_t(ax, data: PanelData, column: str, ylabel: str) -> None:
    med = medians(data.points)
    ax.set_xlabel("T (time steps)")
    ax.set_ylabel(ylabel)
    if med.empty or med[column].isna().all():
        no_data(ax, "no valid points with step memory")
        return
    widest = med.groupby(["framework", "architecture"])["n"].transform("max")
    med = med[med["n"] == widest]  # one width per library and network: its largest
    palette = colors(sorted(med["framework"].unique()))
    for (framework, architecture, strategy, n), group in med.groupby(["framework", "architecture", "strategy_id", "n"]):
        group = group.sort_values("T")
        ax.plot(
            group["T"],
            group[column],
            marker=MARKERS.get(architecture, "o"),
            ms=3,
            ls=_line_style(strategy),
            color=palette[framework],
            label=f"{framework} {_network(architecture)}n={n} {strategy}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    legend(ax, loc="upper left", fontsize="xx-small")


@panel("peak tensor memory of one training step against T, per library (colour) and strategy (line style)")
def training_peak_memory_T(ax, data: PanelData) -> None:
    _against_t(ax, data, "step_peak_mb", "step peak memory (MB)")


@panel("memory the forward pass keeps for the backward pass (held at its end) against T, per library and strategy")
def training_kept_memory_T(ax, data: PanelData) -> None:
    _against_t(ax, data, "kept_mb", "kept for backward (MB)")


def _references(ax) -> None:
    for ref in REFERENCES:
        ax.scatter(ref["speedup"], ref["memory_ratio"], marker="*", s=60, color="black", zorder=5)
        ax.annotate(
            ref["label"],
            (ref["speedup"], ref["memory_ratio"]),
            fontsize="xx-small",
            xytext=(3, 3),
            textcoords="offset points",
        )


@panel(
    "each strategy's peak memory and speed-up relative to vanilla BPTT on the same point (one dot per n and T); "
    "stars: published ratios on other networks and GPUs (Liang et al. 2022, SpikingJelly memopt), references only"
)
def training_memory_tradeoff(ax, data: PanelData) -> None:
    rows = ratios(data.points)
    rows = rows[rows["strategy_id"] != "vanilla"] if not rows.empty else rows
    ax.set_xlabel("speed-up over vanilla (vanilla step time / step time)")
    ax.set_ylabel("peak memory / vanilla's")
    _references(ax)
    ax.axhline(1, color="grey", lw=0.5)
    ax.axvline(1, color="grey", lw=0.5)
    if rows.empty:
        no_data(ax, "no strategy points beside vanilla ones")
        return
    palette = colors(sorted(rows["framework"].unique()))
    markers = dict(zip(sorted(rows["strategy_id"].unique()), "osD^vP", strict=False))
    for (framework, architecture, strategy), group in rows.groupby(["framework", "architecture", "strategy_id"]):
        ax.scatter(
            group["speedup"],
            group["memory_ratio"],
            s=10,
            marker=markers.get(strategy, "o"),
            color=palette[framework],
            label=f"{framework} {_network(architecture)}{strategy}",
        )
    ax.set_xscale("log")
    legend(ax, loc="upper right", fontsize="xx-small")


@panel("each strategy's peak memory relative to vanilla's against T (largest width per library)")
def training_memory_ratio_T(ax, data: PanelData) -> None:
    rows = ratios(data.points)
    ax.set_xlabel("T (time steps)")
    ax.set_ylabel("peak memory / vanilla's")
    if rows.empty or (rows["strategy_id"] == "vanilla").all():
        no_data(ax, "no strategy points beside vanilla ones")
        return
    widest = rows.groupby(["framework", "architecture"])["n"].transform("max")
    rows = rows[(rows["strategy_id"] != "vanilla") & (rows["n"] == widest)]
    palette = colors(sorted(rows["framework"].unique()))
    for (framework, architecture, strategy), group in rows.groupby(["framework", "architecture", "strategy_id"]):
        group = group.sort_values("T")
        ax.plot(
            group["T"],
            group["memory_ratio"],
            marker=MARKERS.get(architecture, "o"),
            ms=3,
            ls=_line_style(strategy),
            color=palette[framework],
            label=f"{framework} {_network(architecture)}{strategy}",
        )
    for ref in REFERENCES[:1]:
        ax.axhline(ref["memory_ratio"], color="black", ls=":", lw=0.8, label=f"{ref['label']} ({ref['memory_ratio']}x)")
    ax.set_xscale("log")
    legend(ax, loc="lower left", fontsize="xx-small")
