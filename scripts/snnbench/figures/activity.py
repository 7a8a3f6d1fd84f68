"""PD14 activity panels: population rates, per-neuron distributions, validation distances.

Invalid points are kept out of the boxes and bars and drawn as red crosses (their medians where
there are many).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.figures.axes import ERRORBAR, MAX_DOTS, legend, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import INVALID, colors
from snnbench.network import models, validation
from snnbench.network.judging import rate_agreement


def network_model(points: pd.DataFrame):
    """The network model of a table's points (its model_name column; tables made before it: PD14)."""
    names = points["model_name"].dropna().unique() if "model_name" in points else []
    return models.get(names[0] if len(names) else models.DEFAULT)


MAX_BOXES = 32  # populations a distribution panel draws one by one (more are unreadable)


def populations(points: pd.DataFrame) -> list[str]:
    """The populations of a table's points: its model's, or where they depend on the point (the
    multi-area model's simulated areas), the table's rate columns."""
    fixed = network_model(points).populations
    if fixed:
        return list(fixed)
    return [c.removeprefix("rate_").removesuffix("_hz") for c in rate_agreement.rate_columns(points)]


def rates_long(points: pd.DataFrame, keep: list[str]) -> pd.DataFrame | None:
    """One row per point and population (columns `keep`, population, rate); None without rates."""
    cols = [f"rate_{p}_hz" for p in populations(points)]
    if points.empty or not set(cols) <= set(points.columns):
        return None
    long = points.melt(id_vars=keep, value_vars=cols, var_name="population", value_name="rate")
    long["population"] = long["population"].str.removeprefix("rate_").str.removesuffix("_hz")
    return long


@panel(
    "population rates of every finished point (invalid ones red; the spread as boxes beyond 40 points) and the "
    "published reference rates (black)",
    wide=True,
)
def rates(ax, data: PanelData) -> None:
    import seaborn as sns

    done = data.points[data.points["status"] == "ok"]
    hue = data.series if done[data.series].nunique() > 1 else "shape"
    long = rates_long(done, [hue, "valid"])
    if long is None:
        no_data(ax, "no recorded rates")
        return
    good, bad = long[long["valid"].astype(bool)], long[~long["valid"].astype(bool)]
    model = network_model(done)
    order = list(model.populations)
    if len(done) <= MAX_DOTS:
        if not good.empty:
            sns.stripplot(good, x="population", y="rate", hue=hue, dodge=True, size=2.5, ax=ax, order=order)
        if not bad.empty:
            sns.stripplot(bad, x="population", y="rate", color=INVALID["color"], marker="X", ax=ax, order=order)
    else:  # many points: their spread per population as boxes, invalid ones as their medians
        if not good.empty:
            sns.boxplot(good, x="population", y="rate", hue=hue, order=order, fliersize=0, linewidth=0.6, ax=ax)
        if not bad.empty:
            med = bad.groupby("population")["rate"].median().reindex(order)
            ax.scatter(range(len(order)), med, label="invalid (median)", **INVALID)
    first = done.iloc[0]
    reference = model.reference_rates(first)
    if reference is not None:
        ref_rates, _ = reference
        ax.scatter(
            range(len(order)),
            [ref_rates[p] for p in order],
            marker="_",
            s=120,
            color="black",
            label="reference",
            zorder=6,
        )
    ax.set_ylim(bottom=0)
    ax.set_xlabel("population")
    ax.set_ylabel("rate (spikes/s)")
    legend(ax, title=hue)


@panel(
    "population rates per simulator (mean over seeds and shapes; bars span the points); the title says whether each "
    "simulator, over all its runs, simulates the reference simulator's model (every statistic and population: "
    "agrees, differs, or not enough runs) and whether its rates agree with the reference's within what its seeds "
    "allow",
    wide=True,
)
def rates_by_simulator(ax, data: PanelData) -> None:
    import seaborn as sns

    long = rates_long(data.valid, [data.series])
    if long is None:
        no_data(ax, "no valid rates")
        return
    sns.barplot(
        long,
        x="population",
        y="rate",
        hue=data.series,
        palette=colors(data.points[data.series]),
        errorbar=ERRORBAR,
        err_kws={"linewidth": 0.8},
        order=populations(data.points),
        ax=ax,
    )
    ax.set_title(verdict_lines(data.points), loc="right")
    ax.set_xlabel("population")
    ax.set_ylabel("rate (spikes/s)")
    legend(ax, title=data.series)


def verdict_lines(points: pd.DataFrame) -> str:
    """Each simulator against the reference: over all its runs (group_verdict: every statistic and population),
    and its rates within the reference seeds' spread (rate_agreement)."""
    from snnbench.network.judging import group_verdict, rate_agreement

    reference = rate_agreement.reference_of(points)
    lines = []
    groups = group_verdict.table(points)
    if not groups.empty:
        words = [f"{g.simulator_build}: {g.simulator_verdict}" for g in groups.itertuples()]
        lines.append(f"vs {reference}, all runs: " + "; ".join(words))
    table = rate_agreement.agreement(points)
    if not table.empty:
        verdicts = table.dropna(subset=["agrees"]).groupby("simulator")["agrees"].all()
        words = [f"{s}: {'agrees' if ok else 'differs'}" for s, ok in verdicts.items()]
        if words:
            lines.append(f"rates vs {reference} within its seeds' spread: " + ", ".join(words))
    return "\n".join(lines)


def pooled_by_type(dist: pd.DataFrame, order: list[str]) -> tuple[pd.DataFrame, list[str], str]:
    """(samples, boxes in order, x label): one box per population, or where there are more than MAX_BOXES named
    <area>-<type> (the multi-area model's 254), one per type with every area's neurons pooled."""
    if len(order) <= MAX_BOXES or not all("-" in name for name in order):
        return dist, order, "population"
    kind = {name: name.split("-", 1)[1] for name in order}
    label = f"population type ({len(order)} populations pooled over areas)"
    return dist.assign(population=dist["population"].map(kind)), list(dict.fromkeys(kind.values())), label


def _distribution(ax, data: PanelData, statistic: str, label: str) -> None:
    import seaborn as sns

    dist = data.distributions
    if dist is None or dist.empty or not (dist["statistic"] == statistic).any():
        no_data(ax, "no spike statistics")
        return
    sub = dist[dist["statistic"] == statistic]
    hue = data.series if sub[data.series].nunique() > 1 else "shape"
    shown = data.with_reference  # the reference ensemble's run beside the points where it is another table's
    valid = sub[sub["valid"].astype(bool)]
    # The legend names only what is drawn: a shape whose points are all invalid has no box (its crosses say so).
    order = [v for v in dict.fromkeys(shown.sort_values("vps", kind="stable")[hue]) if v in set(valid[hue])]
    sub, boxes, xlabel = pooled_by_type(sub, populations(data.points))
    if order:
        sns.boxplot(
            sub[sub["valid"].astype(bool)],
            x="population",
            y="value",
            hue=hue,
            hue_order=order,
            order=boxes,
            palette=colors(order),
            fliersize=0,
            whis=(5, 95),
            linewidth=0.6,
            ax=ax,
        )
    invalid = sub[~sub["valid"].astype(bool)]
    if not invalid.empty:
        med = invalid.groupby("population")["value"].median().reindex(boxes)
        ax.scatter(range(len(med)), med, label="invalid (median)", **INVALID)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(label)
    legend(ax, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=4, title=hue, alignment="right")


@panel(
    "per-neuron firing rates of the neuron subsample per population (boxes: quartiles, whiskers: 5-95 %)",
    needs_distributions=True,
)
def rate_distribution(ax, data: PanelData) -> None:
    _distribution(ax, data, "rate", "rate (spikes/s)")


@panel("ISI coefficients of variation per population (neurons with enough spikes)", needs_distributions=True)
def cv_isi_distribution(ax, data: PanelData) -> None:
    _distribution(ax, data, "cv_isi", "ISI CV")


@panel("pairwise spike-count correlation coefficients per population (2 ms bins)", needs_distributions=True)
def correlation_distribution(ax, data: PanelData) -> None:
    _distribution(ax, data, "correlation", "correlation coefficient")
    if data.distributions is not None and not data.distributions.empty:
        ax.axhline(0.0, color="grey", lw=0.6, ls=":")


@panel(
    "each point's largest judged difference from its reference per statistic, relative to what it is allowed "
    "(above 1 = outside: the point is invalid)"
)
def validation_distances(ax, data: PanelData) -> None:
    points = data.points
    if "validation_excess_rate" not in points or not points["validation_checked"].astype(bool).any():
        no_data(ax, "no validation results")
        return
    checked = points[points["validation_checked"].astype(bool)]
    # Under the one-run rule the reference point is judged against itself (0 in every statistic): named, not drawn.
    itself = checked["path"].eq(checked["validation_reference_point"]) if "validation_reference_point" in checked else 0
    n = int(np.sum(itself))
    if n == len(checked):
        no_data(ax, "only the reference point, judged against itself")
        return
    if n:
        where = {"transform": ax.transAxes, "ha": "left", "va": "top", "fontsize": "small", "color": "0.4"}
        reference = "the reference point" if n == 1 else f"the {n} reference points"
        ax.text(0.02, 0.98, f"not drawn: {reference} (judged against itself)", **where)
        checked = checked[~itself]
    long = checked.melt(
        id_vars=["vps", "valid"],
        value_vars=[f"validation_excess_{s}" for s in validation.STATISTICS],
        var_name="statistic",
        value_name="excess",
    )
    long["statistic"] = long["statistic"].str.removeprefix("validation_excess_")
    long = long.dropna(subset=["excess"])
    # An allowed distance of zero makes an infinite excess: drawn at the top of the axis, not lost.
    finite = long["excess"][np.isfinite(long["excess"])]
    top = max(1.2, float(finite.max()) * 1.1 if len(finite) else 1.2)
    long["excess"] = long["excess"].clip(upper=top)
    order = list(validation.STATISTICS)
    rng = np.random.default_rng(0)  # horizontal jitter only
    x = long["statistic"].map(order.index) + rng.uniform(-0.2, 0.2, len(long))
    within = long["excess"] <= 1.0
    dense = len(long) > 3 * MAX_DOTS  # thousands of markers: raster them in the PDF (small, fast files)
    ax.scatter(
        x[within], long["excess"][within], s=10, color="0.3", label="within tolerance", clip_on=False, rasterized=dense
    )
    if (~within).any():
        ax.scatter(x[~within], long["excess"][~within], label="outside: invalid", clip_on=False, **INVALID)
    ax.axhline(1.0, color=INVALID["color"], lw=0.8, ls="--")
    ax.set_xticks(range(len(order)), [s.replace("_", " ") for s in order])
    ax.set_xlim(-0.5, len(order) - 0.5)
    ax.set_ylim(bottom=0, top=top)
    ax.set_xlabel("statistic (worst population of each point)")
    ax.set_ylabel("judged / allowed")
    legend(ax)
