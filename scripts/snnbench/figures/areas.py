"""Panels of a network made of areas (the multi-area model): population rates per area and population
type, and every simulator's rates against the reference simulator's (the model's `reference_simulator`,
INM-6's own simulation for the multi-area model), judged by the project's rule
(snnbench.network.judging.rate_agreement).

Populations are the table's rate columns named `<area>-<type>` (rate_V1-23E_hz); means over valid seeds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.figures.activity import network_model
from snnbench.figures.axes import legend, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import FONT_PT, colors
from snnbench.network.judging import rate_agreement


def area_rates_long(points: pd.DataFrame, series: str) -> pd.DataFrame:
    """One row per series, area and population type: the mean rate over valid points and its seeds'
    range; empty where the table has no area rates."""
    columns = [c for c in rate_agreement.rate_columns(points) if "-" in c]
    valid = points[points["valid"].astype(bool)]
    if not columns or valid.empty:
        return pd.DataFrame()
    long = valid.melt(id_vars=[series, "seed"], value_vars=columns, var_name="column", value_name="rate")
    named = long["column"].str.removeprefix("rate_").str.removesuffix("_hz").str.split("-", n=1)
    long = long.assign(area=named.str[0], type=named.str[1])
    grouped = long.groupby([series, "area", "type"], sort=False)["rate"]
    return grouped.agg(rate="mean", low="min", high="max").reset_index()


def reference_of(points: pd.DataFrame, series: str) -> str:
    """The reference series: the table's reference simulator (else the model's) where it ran, else the first series."""
    reference = rate_agreement.reference_of(points, network_model(points).reference_simulator)
    return reference if series == "simulator" and reference in set(points[series]) else points[series].iloc[0]


@panel("rates (spikes/s) per area (rows) and population type (columns) of the reference simulator, mean over seeds")
def area_rates(ax, data: PanelData) -> None:
    points = data.with_reference
    long = area_rates_long(points, data.series)
    if long.empty:
        no_data(ax, "no area rates")
        return
    shown = reference_of(points, data.series)
    sub = long[long[data.series] == shown]
    areas = list(dict.fromkeys(sub["area"]))
    types = list(dict.fromkeys(sub["type"]))
    grid = sub.pivot(index="area", columns="type", values="rate").reindex(index=areas, columns=types)
    image = ax.imshow(grid.to_numpy(dtype=float), aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(types)), types)
    # 32 areas in one row of a figure: the smallest size journals accept (5 pt) keeps their names apart
    ax.set_yticks(range(len(areas)), areas, fontsize=FONT_PT if len(areas) <= 16 else 5)
    if grid.size <= 64:
        for (i, j), value in np.ndenumerate(grid.to_numpy(dtype=float)):
            if np.isfinite(value):
                ax.text(j, i, f"{value:.1f}", ha="center", va="center", fontsize=5, color="white")
    ax.figure.colorbar(image, ax=ax, label="rate (spikes/s)")
    ax.set_title(f"{shown}", loc="right")


@panel("each simulator's population rates against the reference simulator's (seed means, bars: the seeds' range)")
def rates_against_reference(ax, data: PanelData) -> None:
    points = data.with_reference
    long = area_rates_long(points, data.series)
    if long.empty:
        no_data(ax, "no area rates")
        return
    reference = reference_of(points, data.series)
    ref = long[long[data.series] == reference].set_index(["area", "type"])["rate"]
    others = [s for s in dict.fromkeys(long[data.series]) if s != reference]
    if not others:
        no_data(ax, f"only the reference ({reference}) ran")
        return
    palette = colors(long[data.series])
    for series in others:
        sub = long[long[data.series] == series].set_index(["area", "type"]).reindex(ref.index)
        yerr = [sub["rate"] - sub["low"], sub["high"] - sub["rate"]]
        ax.errorbar(ref, sub["rate"], yerr=yerr, fmt="o", color=palette[series], label=series, markersize=2.5)
    top = float(np.nanmax(long["high"])) * 1.05
    ax.plot([0, top], [0, top], color="0.6", linewidth=0.6, zorder=0)
    table = rate_agreement.agreement(points, reference) if data.series == "simulator" else pd.DataFrame()
    if not table.empty and table["agrees"].notna().any():
        counts = table.dropna(subset=["agrees"]).groupby("simulator")["agrees"].agg(["sum", "count"])
        ax.set_title(
            ", ".join(f"{s}: {int(r['sum'])}/{int(r['count'])} agree" for s, r in counts.iterrows()), loc="right"
        )
    ax.set_xlabel(f"{reference} rate (spikes/s)")
    ax.set_ylabel("rate (spikes/s)")
    legend(ax)
