"""PD14 performance panels: phases, real-time factor, efficiency, time to solution, memory.

Median over seeds, error bars span the seeds (min to max); failed and invalid points are red
crosses (failed ones on the x axis, invalid ones at their value), never part of a curve.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.figures.axes import ERRORBAR, legend, lines, mark_invalid, no_data, stacked_bars, vps_axis
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import colors
from snnbench.network.phases import DETAIL, PHASES

CONSTRUCTION = ("setup", "create", "connect", "prepare")
PROPAGATION = ("presimulate", "simulate")
# The detailed timers of the simulate phase: those a simulator names (its registry entry,
# snnbench.network.simulators) are the table's simulate_detail_<label>_s, in its order
# (snnbench.network.rows). Where no simulator of the table names any, every `timer_simulate_*`
# column the records have.
TOTAL_TIMERS = ("time_simulate",)  # timers that hold the whole phase, not a part of it


def phase_columns(points: pd.DataFrame, phases) -> list[str]:
    return [f"time_{p}_s" for p in phases if f"time_{p}_s" in points]


@panel("network construction (setup to prepare) and state propagation (presimulation and simulation), stacked")
def construction_propagation(ax, data: PanelData) -> None:
    if data.valid.empty or "time_simulate_s" not in data.points:
        no_data(ax)
        return
    points = data.points
    parts = {
        "construction": points[phase_columns(points, CONSTRUCTION)].sum(axis=1),
        "propagation": points[phase_columns(points, PROPAGATION)].sum(axis=1),
    }
    stacked_bars(ax, data, parts, "wall time (s)")


@panel("wall time per simulator-neutral phase, stacked")
def phases(ax, data: PanelData) -> None:
    if data.valid.empty or "time_simulate_s" not in data.points:
        no_data(ax)
        return
    parts = {p: data.points[f"time_{p}_s"] for p in PHASES if f"time_{p}_s" in data.points}
    stacked_bars(ax, data, parts, "wall time (s)")


def detailed_timer_columns(points: pd.DataFrame) -> dict[str, str]:
    """Detailed timers of the simulate phase present in the table: label -> column."""
    named = [col for col in points.columns if col.startswith(DETAIL)]
    if named:
        return {col.removeprefix(DETAIL).removesuffix("_s"): col for col in named if points[col].notna().any()}
    columns = {}
    prefix = "timer_simulate_"
    for col in points.columns:
        name = col.removeprefix(prefix).removesuffix("_s")
        if col.startswith(prefix) and not name.endswith("_cpu") and name not in TOTAL_TIMERS:
            columns[name.removeprefix("time_")] = col
    return columns


@panel(
    "real-time factor of the simulate phase split into the simulator's own detailed phases (for NEST: update, "
    "collocate, communicate, deliver; 'other' is the rest) where the build records them"
)
def real_time_factor_phases(ax, data: PanelData) -> None:
    points = data.points
    if data.valid.empty or "real_time_factor" not in points:
        no_data(ax)
        return
    model_s = points["t_sim_ms"] * 1e-3
    detailed = detailed_timer_columns(points)
    parts = {label: points[col].fillna(0.0) / model_s for label, col in detailed.items()}
    title = None
    if parts:
        parts["other"] = (points["real_time_factor"] - sum(parts.values())).clip(lower=0.0)
    else:
        parts["simulate"] = points["real_time_factor"]
        title = "no detailed\ntimers recorded"
    stacked_bars(ax, data, parts, "real-time factor", legend_title=title)


@panel("real-time factor of the simulate phase (wall time / model time; 1 = real time)")
def real_time_factor(ax, data: PanelData) -> None:
    if not lines(ax, data, "real_time_factor", "real-time factor", log=True):
        no_data(ax)


@panel("share of each phase in the total wall time (medians over seeds)")
def phase_fractions(ax, data: PanelData) -> None:
    cols = phase_columns(data.points, PHASES)
    if data.valid.empty or not cols:
        no_data(ax)
        return
    totals = data.points[cols].sum(axis=1)
    parts = {c.removeprefix("time_").removesuffix("_s"): data.points[c] / totals for c in cols}
    stacked_bars(ax, data, parts, "fraction of wall time", errorbars=False)  # totals are 1
    ax.set_ylim(0, 1.05)


@panel("parallel efficiency of the simulate phase against the fewest VPs (strong: T0 v0 / (T v); weak: T0 / T)")
def efficiency(ax, data: PanelData) -> None:
    if not lines(ax, data, "efficiency", "parallel efficiency"):
        no_data(ax)
        return
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    top = float(np.nanmax(data.valid["efficiency"])) if data.valid["efficiency"].notna().any() else 1.0
    ax.set_ylim(0, max(1.2, top * 1.1))


@panel("wall time of the simulate phase and of all phases")
def time_to_solution(ax, data: PanelData) -> None:
    import seaborn as sns

    if data.valid.empty or "time_simulate_s" not in data.points:
        no_data(ax)
        return
    long = data.valid.melt(
        id_vars=["vps", data.series],
        value_vars=[c for c in ("time_simulate_s", "time_total_s") if c in data.points],
        var_name="phase",
        value_name="time",
    )
    long["phase"] = long["phase"].map({"time_simulate_s": "simulate", "time_total_s": "all phases"})
    sns.lineplot(
        long,
        x="vps",
        y="time",
        hue=data.series,
        style="phase",
        palette=colors(data.points[data.series]),
        estimator="median",
        marker="o",
        errorbar=ERRORBAR,
        err_style="bars",
        ax=ax,
    )
    vps_axis(ax, data.points)
    mark_invalid(ax, data, "time_total_s")
    ax.set_ylabel("wall time (s)")
    ax.set_ylim(bottom=0)
    legend(ax)


@panel("peak resident memory per node (VmHWM summed over the node's ranks)")
def memory_per_node(ax, data: PanelData) -> None:
    points = data.points
    if "peak_rss_mb_sum" in points:
        data = PanelData(
            points.assign(memory_per_node_gb=points["peak_rss_mb_sum"] / points["nodes"] / 1024), data.series
        )
    if not lines(ax, data, "memory_per_node_gb", "peak memory per node (GB)"):
        no_data(ax)
        return
    ax.set_ylim(0, float(data.valid["memory_per_node_gb"].max()) * 1.15)
