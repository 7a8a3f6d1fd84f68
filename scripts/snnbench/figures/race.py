"""Where a result stands in the community race (Senk et al. 2026): the living table's figures.

The 14 published entries (snnbench/race_reference.csv) are a grey reference series, each labelled
with its id; this run's performance points (valid ones, median over seeds per simulator, shape
and model size, bars spanning the seeds) are highlighted in colour. Without measured energy the
energy panel shows the real-time factor alone and says that energy was not measured.
"""

from __future__ import annotations

import pandas as pd

from snnbench.figures.axes import legend
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import colors
from snnbench.network import race

REFERENCE = {"color": "0.55", "s": 14, "zorder": 2, "linewidths": 0}
RUN = {"marker": "*", "s": 70, "zorder": 5, "edgecolor": "black", "linewidths": 0.4}
LABEL_PT = 5


def run_points(points: pd.DataFrame, series: str) -> pd.DataFrame:
    """This run's valid performance points (all valid points where no recipe is given), as medians
    over seeds with min / max, per series, shape and model size."""
    if "real_time_factor" not in points:
        return pd.DataFrame()
    rows = points[points["valid"].astype(bool) & points["real_time_factor"].notna()]
    if "race_recipe" in rows and (rows["race_recipe"] == "performance").any():
        rows = rows[rows["race_recipe"] == "performance"]
    if rows.empty:
        return pd.DataFrame()
    if "energy_per_synaptic_event_uj" not in rows:
        rows = rows.assign(energy_per_synaptic_event_uj=float("nan"))
    year = pd.to_datetime(rows["started_utc"], utc=True).dt.year + 0.5
    rows = rows.assign(year=year)
    keys = [series, "shape", "neuron_scale"]
    grouped = rows.groupby(keys, dropna=False)
    summary = grouped.agg(
        rtf=("real_time_factor", "median"),
        rtf_min=("real_time_factor", "min"),
        rtf_max=("real_time_factor", "max"),
        e_syn=("energy_per_synaptic_event_uj", "median"),
        year=("year", "median"),
    )
    return summary.reset_index()


def _reference(ax, points: pd.DataFrame, x: str, label_all: bool = True) -> pd.DataFrame:
    model = race.model_of(points)
    ref = race.reference_table(model)
    shown = ref.dropna(subset=[x])
    ax.scatter(shown[x], shown["rtf"], label=f"published ({race.study(model)})", **REFERENCE)
    for _, row in shown.iterrows():
        if label_all:
            ax.annotate(row["id"], (row[x], row["rtf"]), xytext=(2, 1), textcoords="offset points", fontsize=LABEL_PT)
    return ref


def _run(ax, run: pd.DataFrame, x: str, series: str) -> None:
    palette = colors(run[series])
    for _, row in run.iterrows():
        label = f"this run: {row[series]} {row['shape']} N={row['neuron_scale']:g}"
        ax.errorbar(
            row[x],
            row["rtf"],
            yerr=[[row["rtf"] - row["rtf_min"]], [row["rtf_max"] - row["rtf"]]],
            fmt="none",
            ecolor=palette[row[series]],
            elinewidth=0.8,
        )
        ax.scatter(row[x], row["rtf"], color=palette[row[series]], label=label, **RUN)


@panel("real-time factor against energy per synaptic event (log-log): published entries (grey) and this run (stars)")
def race_energy(ax, data: PanelData) -> None:
    run = run_points(data.points, data.series)
    measured = run[run["e_syn"].notna()] if not run.empty else run
    if measured.empty:
        _rtf_only(ax, data.points, run, data.series)
        return
    _reference(ax, data.points, "e_syn_uj")
    _run(ax, measured.assign(e_syn_uj=measured["e_syn"]), "e_syn_uj", data.series)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="0.8", linewidth=0.6, zorder=0)
    ax.set_xlabel("energy per synaptic event (µJ)")
    ax.set_ylabel("real-time factor")
    legend(ax, fontsize=LABEL_PT)


def _rtf_only(ax, points: pd.DataFrame, run: pd.DataFrame, series: str) -> None:
    """No energy measured here: every entry's real-time factor on one log axis, this run's marked."""
    model = race.model_of(points)
    ref = race.reference_table(model).sort_values("rtf")
    ax.scatter(ref["rtf"], range(len(ref)), label=f"published ({race.study(model)})", **REFERENCE)
    labels = list(ref["id"])
    if not run.empty:
        y = range(len(ref), len(ref) + len(run))
        palette = colors(run[series])
        for yi, (_, row) in zip(y, run.iterrows(), strict=True):
            ax.errorbar(row["rtf"], yi, xerr=[[row["rtf"] - row["rtf_min"]], [row["rtf_max"] - row["rtf"]]], fmt="none")
            ax.scatter(row["rtf"], yi, color=palette[row[series]], **RUN)
            labels.append(f"this run: {row[series]} {row['shape']} N={row['neuron_scale']:g}")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=LABEL_PT)
    ax.set_xscale("log")
    ax.axvline(1.0, color="0.8", linewidth=0.6, zorder=0)
    ax.set_xlabel("real-time factor")
    ax.set_title("energy per synaptic event: not measured here", fontsize=LABEL_PT + 1, loc="right")


@panel("real-time factor against year: published entries (grey) and this run (stars)")
def race_year(ax, data: PanelData) -> None:
    run = run_points(data.points, data.series)
    _reference(ax, data.points, "year")
    if not run.empty:
        _run(ax, run, "year", data.series)
    ax.set_yscale("log")
    ax.axhline(1.0, color="0.8", linewidth=0.6, zorder=0)
    ax.set_xlabel("year")
    ax.set_ylabel("real-time factor")
    legend(ax, fontsize=LABEL_PT)
