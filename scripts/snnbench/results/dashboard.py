"""A static dashboard of the history: one page per series (a benchmark on a machine), no server.

    python -m snnbench.results.dashboard [--history DIR] [--configfile FILE] [--out results/dashboard]
    make dashboard [HISTORY=DIR] [CONFIG=FILE] [OUT=results/dashboard]

The site (open index.html in a browser, or copy the folder anywhere):

    index.html             every series, filtered by machine, model, simulator and version; the steps found
    series/<series>.html   RTF, each phase's time and the memory against simulator version and against snnbench
                           commit date, every seed a point, the median per position a line, the steps found marked,
                           and the series of the same benchmark on the machine's name with other hardware
    records/<digest>.json  each point's record, as kept by the history: every value links to its record
    plotly.min.js          Plotly's JavaScript as the plotly package bundles it, once for every page (no CDN)

A history's table that does not read is named and left out. No history (missing, or no table that reads): one
line saying so, exit code 2, no site written (an earlier one is left as it is).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import plotly.offline
from plotly.subplots import make_subplots

from snnbench import paths
from snnbench.network.phases import PHASES
from snnbench.results import dashboard_pages, history, history_place, steps

PLOTTED = {
    "real_time_factor": "real-time factor",
    **{f"time_{phase}_s": f"{phase} time (s)" for phase in (*PHASES, "total")},
    "cpu_simulate_s": "simulate CPU time, all ranks (s)",
    "peak_rss_mb_sum": "peak memory, all ranks (MB)",
}
CLICK_OPENS_RECORD = (
    "document.getElementById('{plot_id}').on('plotly_click', function (event) {"
    " var data = event.points[0].customdata; if (data) { window.open(data[0], '_blank'); } });"
)


def series_title(row: pd.Series) -> str:
    shape = f"{row['nodes']}x{row['ranks_per_node']}x{row['threads_per_rank']}"
    size = f"N={row['neuron_scale']} K={row['indegree_scale']}" if row["neuron_scale"] else row["network_description"]
    timing = f"{row['t_presim_ms']}+{row['t_sim_ms']} ms" if row["t_sim_ms"] else ""
    hardware = row["hardware"] if isinstance(row["hardware"], str) else ""
    machine = f"on {row['machine'] or '?'}" + (f" (hardware {hardware[:8]})" if hardware else "")
    parts = [row["model_name"], row["simulator"], size, row["input"], timing, shape, machine]
    return " ".join(str(p) for p in parts if p)


def _commit_dates(rows: pd.DataFrame) -> pd.Series:
    if "git_commit_utc" not in rows:
        return rows["started_utc"]
    return rows["git_commit_utc"].where(rows["git_commit_utc"].fillna("") != "", rows["started_utc"])


def metric_figure(points: pd.DataFrame, metric: str, found: pd.DataFrame) -> go.Figure:
    """One metric of one series: against simulator version (left) and commit date (right)."""
    figure = make_subplots(
        rows=1, cols=2, shared_yaxes=True, subplot_titles=("by simulator version", "by snnbench commit date")
    )
    rows = steps.measured(points, metric)
    rows = rows.assign(
        version=steps.position_labels(rows, "version"),
        commit=steps.position_labels(rows, "commit"),
        # The commit's own date where the record has it (git's order), else when the point ran.
        date=pd.to_datetime(_commit_dates(rows), utc=True, errors="coerce"),
        link="../records/" + rows["record_sha"] + ".json",
    )
    order = list(steps.positions(points, metric, "version").index)
    hover = "%{y:.4g}<br>seed %{text}<br>%{customdata[1]}<extra>click: its record</extra>"
    about = "version " + rows["version"] + ", commit " + rows["commit"] + ", " + rows["started_utc"]
    link_and_about = list(zip(rows["link"], about, strict=True))  # each point: its record's link, what it is
    for col, x in ((1, rows["version"]), (2, rows["date"])):
        figure.add_trace(
            go.Scatter(
                x=x,
                y=rows[metric],
                mode="markers",
                name="seeds",
                showlegend=col == 1,
                text=rows["seed"],
                customdata=link_and_about,
                hovertemplate=hover,
                marker={"color": "#1f77b4", "size": 8, "opacity": 0.7},
            ),
            row=1,
            col=col,
        )
    medians = rows.groupby("version")[metric].median().reindex(order)
    figure.add_trace(
        go.Scatter(x=order, y=medians, mode="lines+markers", name="median per version", hoverinfo="skip"), row=1, col=1
    )
    by_date = rows.sort_values("date").groupby(["version", "commit"], sort=False)
    by_date = by_date.agg(date=("date", "min"), y=(metric, "median")).reset_index()
    for version, line in by_date.groupby("version", sort=False):
        name = f"median per commit, {version}"
        figure.add_trace(
            go.Scatter(x=line["date"], y=line["y"], mode="lines+markers", name=name, hoverinfo="skip"), row=1, col=2
        )
    _mark_steps(figure, found, order, by_date)
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=order, row=1, col=1)
    figure.update_layout(  # no template: Plotly's own would be written into every plot of every page
        title=PLOTTED[metric],
        height=330,
        margin={"l": 50, "r": 20, "t": 60, "b": 40},
        template="none",
        hovermode="closest",
    )
    return figure


def _mark_steps(figure: go.Figure, found: pd.DataFrame, order: list[str], by_date: pd.DataFrame) -> None:
    """A dashed line between the positions a step lies between, labelled with its size."""
    for step in found.itertuples():
        label = f"step x{step.ratio:.2f}"
        if step.axis == "version" and step.after in order:
            x, col = order.index(step.after) - 0.5, 1
        elif step.axis == "commit":
            after = by_date[(by_date["commit"] == step.after) & (by_date["version"] == step.within)]
            if after.empty:
                continue
            x, col = after["date"].iloc[0], 2
        else:
            continue
        figure.add_vline(x=x, line_dash="dash", line_color="#d62728", row=1, col=col)
        figure.add_annotation(
            x=x, y=1, yref="y domain", text=label, showarrow=False, font={"color": "#d62728"}, row=1, col=col
        )


def series_page(points: pd.DataFrame, found: pd.DataFrame, others: pd.DataFrame | None = None) -> str:
    """The HTML of one series' page (others: the series of the same benchmark on other hardware)."""
    plots = []
    for metric in PLOTTED:
        if steps.measured(points, metric).empty:
            continue
        figure = metric_figure(points, metric, found[found["metric"] == metric])
        plots.append(
            pio.to_html(figure, full_html=False, include_plotlyjs=False, post_script=CLICK_OPENS_RECORD, div_id=metric)
        )
    others = others if others is not None else dashboard_pages.other_hardware(points)[points["series"].iloc[0]]
    return dashboard_pages.series_page(series_title(points.iloc[0]), plots, found, points, list(PLOTTED), others)


def build(root: Path, out: Path, past: pd.DataFrame | None = None) -> dict:
    """Write the site for the history in `root` (its table `past`, where read already) into `out` (replaced);
    what was written and how long it took."""
    began = time.perf_counter()
    past = history.read(root) if past is None else past
    found = steps.all_steps(past, list(PLOTTED))
    if out.exists():
        shutil.rmtree(out)
    (out / "series").mkdir(parents=True)
    (out / "records").mkdir()
    (out / "plotly.min.js").write_text(plotly.offline.get_plotlyjs())
    for sha, record_file in zip(past["record_sha"], past["record_file"], strict=True):
        (out / "records" / f"{sha}.json").write_bytes(history.record(root, record_file))
    others = dashboard_pages.other_hardware(past)
    for series, points in past.groupby("series", sort=False):
        page = series_page(points, found[found["series"] == series], others[series])
        (out / "series" / f"{series}.html").write_text(page)
    titles = {series: series_title(points.iloc[0]) for series, points in past.groupby("series", sort=False)}
    (out / "index.html").write_text(dashboard_pages.index_page(past, found, titles, str(root), others))
    files = [f for f in out.rglob("*") if f.is_file()]
    return {
        "points": len(past),
        "series": len(titles),
        "steps": len(found),
        "files": len(files),
        "bytes": sum(f.stat().st_size for f in files),
        "seconds": time.perf_counter() - began,
        "found": found,
        "titles": titles,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snnbench.results.dashboard", description=__doc__.split("\n\n")[0])
    history_place.place_arguments(parser)
    parser.add_argument("--out", type=Path, default=Path(paths.DASHBOARD_DIR), help="the site's folder (replaced)")
    args = parser.parse_args(argv)
    root = history_place.root_or_refusal(args)
    if root is None:
        return 2
    past = history.read(root)
    if past.empty:  # a site of no series says nothing; an old site is left as it is
        print(history.nothing_at(root), file=sys.stderr)
        return 2
    made = build(root, args.out, past)
    print(
        f"{args.out}/index.html: {made['series']} series, {made['points']} points, {made['steps']} steps found; "
        f"{made['files']} files, {made['bytes'] / 1e6:.1f} MB, built in {made['seconds']:.1f} s"
    )
    print(dashboard_pages.steps_text(made["found"], made["titles"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
