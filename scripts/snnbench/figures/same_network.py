"""Panels of one network run by every simulator (pd14.network_seed, DC input): how many of the reference
simulator's spikes each simulator emits, and each population's rate against the reference's
(snnbench.network.judging.same_network; the reference is the table's `validation_reference`, NEST by default)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.figures.axes import legend, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.network.judging import rate_agreement
from snnbench.network.judging.same_network import SAME_RUN

WINDOWS = {"spike_match_early": "first 100 ms", "spike_match_run": "whole run"}


def finished(data: PanelData) -> pd.DataFrame:
    """Points that ran to the end, valid or not: a run that leaves NEST's spikes is what these panels show."""
    return data.points[data.points["status"] == "ok"] if "status" in data.points else data.valid


def compared(data: PanelData) -> pd.DataFrame:
    """Finished points with a spike comparison, the reference simulator's own left out."""
    points = finished(data)
    if "spike_match_early" not in points:
        return points.iloc[0:0]
    return points[points["spike_match_early"].notna() & (points["simulator"] != rate_agreement.reference_of(points))]


@panel(
    "share of the reference simulator's spikes each simulator emits at the same neuron within one step, "
    "same network, DC input"
)
def spike_match(ax, data: PanelData) -> None:
    import seaborn as sns

    points = compared(data)
    if points.empty:
        no_data(ax, "no point of an exported network with DC input beside the reference simulator's")
        return
    long = points.melt(id_vars=[data.series], value_vars=list(WINDOWS), var_name="window", value_name="share")
    long["window"] = long["window"].map(WINDOWS)
    sns.barplot(long, x=data.series, y="share", hue="window", estimator="median", errorbar=("pi", 100), ax=ax)
    ax.set_ylim(0, 1.05)
    ax.axhline(0.99, color="0.4", linewidth=0.6, linestyle="--")
    ax.set_xlabel("")
    ax.set_ylabel(f"{rate_agreement.reference_of(points)}'s spikes matched")
    ax.tick_params(axis="x", labelrotation=30)
    legend(ax)


@panel(
    "rate of each population against the reference simulator's on the same network and seed (%), median over seeds",
    wide=True,
)
def rate_difference_by_population(ax, data: PanelData) -> None:
    import seaborn as sns

    points = compared(data)
    columns = rate_agreement.rate_columns(points)
    if points.empty or not columns:
        no_data(ax, "no point of an exported network with DC input beside the reference simulator's")
        return
    name = rate_agreement.reference_of(finished(data))
    reference = finished(data)[finished(data)["simulator"] == name].set_index(SAME_RUN)
    rows = []
    for _, point in points.iterrows():
        nest = reference.loc[tuple(point[k] for k in SAME_RUN)]
        nest = nest.iloc[0] if isinstance(nest, pd.DataFrame) else nest
        for column in columns:
            population = column.removeprefix("rate_").removesuffix("_hz")
            change = 100 * (point[column] - nest[column]) / nest[column] if nest[column] > 0 else float("nan")
            rows.append({data.series: point[data.series], "population": population, "difference_pct": change})
    table = pd.DataFrame(rows).pivot_table(index=data.series, columns="population", values="difference_pct")
    table = table[[c.removeprefix("rate_").removesuffix("_hz") for c in columns]]
    limit = max(float(np.nanmax(np.abs(table.to_numpy()))), 1.0)  # symmetric around 0; identical rates stay white
    sns.heatmap(
        table,
        annot=True,
        fmt=".1f",
        vmin=-limit,
        vmax=limit,
        cmap="RdBu_r",
        cbar_kws={"label": f"rate - {name}'s (%)"},
        ax=ax,
    )
    ax.set_xlabel("population")
    ax.set_ylabel("")
    ax.tick_params(axis="y", labelrotation=0)
