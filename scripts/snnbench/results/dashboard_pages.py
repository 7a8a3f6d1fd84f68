"""The dashboard's HTML around its plots: the index with its filters, a series' page with its steps and its
points' table (every value a link to the point's record). Plain HTML and a few lines of JavaScript that hide
rows of the index; the plots are Plotly's (snnbench.results.dashboard)."""

from __future__ import annotations

import html

import pandas as pd

from snnbench.results import history, steps

STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1400px}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#eee}td.t{text-align:left}
.step{color:#d62728}.hw{color:#7f7f7f}label{margin-right:1em}"""
# The index's filters: each series row's data-<name> attribute and a select of the same name.
FILTERS = {"machine": "machine", "model": "model_name", "simulator": "simulator"}
FILTER_SCRIPT = """
function applyFilters() {
  var chosen = {};
  document.querySelectorAll('select.filter').forEach(function (s) { chosen[s.name] = s.value; });
  document.querySelectorAll('#series tbody tr').forEach(function (row) {
    var shown = Object.keys(chosen).every(function (key) {
      return !chosen[key] || (' ' + row.dataset[key] + ' ').indexOf(' ' + chosen[key] + ' ') >= 0;
    });
    row.style.display = shown ? '' : 'none';
  });
}
document.querySelectorAll('select.filter').forEach(function (s) { s.addEventListener('change', applyFilters); });
"""


def page(title: str, body: str, depth: int) -> str:
    up = "../" * depth
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<style>{STYLE}</style><script src="{up}plotly.min.js"></script></head><body>{body}</body></html>\n'
    )


def steps_table(found: pd.DataFrame, titles: dict[str, str] | None = None) -> str:
    if found.empty:
        return "<p>No step found.</p>"
    head = "<tr>" + ("<th>series</th>" if titles else "") + "<th>metric</th><th>along</th><th>between</th>"
    head += "<th>size (after / before)</th><th>seeds' SD / level</th></tr>"
    rows = []
    for step in found.itertuples():
        series = ""
        if titles:
            series = f'<td class="t"><a href="series/{step.series}.html">{html.escape(titles[step.series])}</a></td>'
        rows.append(
            "<tr class='step'>"
            + series
            + f"<td class='t'>{step.metric}</td><td class='t'>{step.axis} {html.escape(step.within)}</td>"
            + f"<td class='t'>{html.escape(step.before)} &rarr; {html.escape(step.after)}</td>"
            + f"<td>x{step.ratio:.3f}</td><td>{step.noise:.3f}</td></tr>"
        )
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def steps_text(found: pd.DataFrame, titles: dict[str, str]) -> str:
    """The steps as lines for a terminal."""
    if found.empty:
        return "no step found"
    return "\n".join(
        f"step in {titles[s.series]}: {s.metric} x{s.ratio:.3f} between {s.axis} {s.before} and {s.after}"
        + (f" (of {s.within})" if s.within else "")
        + f" (seeds' SD {s.noise:.3f} of the level)"
        for s in found.itertuples()
    )


def points_table(points: pd.DataFrame, metrics: list[str]) -> str:
    """Every point of a series, each value a link to its record."""
    shown = [m for m in metrics if points[m].notna().any()]
    head = "".join(f"<th>{h}</th>" for h in ["date", "version", "build", "commit", "seed", "hardware", "valid", *shown])
    rows = []
    for point in points.sort_values(["started_utc", "seed"]).itertuples():
        link = f"../records/{point.record_sha}.json"
        cells = [point.started_utc, point.simulator_version, point.build, point.git_commit[:10], point.seed]
        cells.append(point.hardware[:8] if isinstance(point.hardware, str) else "")
        cells = [f"<td class='t'><a href='{link}'>{html.escape(str(c))}</a></td>" for c in cells]
        cells.append(f"<td>{'yes' if point.valid else 'no'}</td>")
        values = [getattr(point, m) for m in shown]
        cells += [f"<td><a href='{link}'>{'' if pd.isna(v) else f'{v:.4g}'}</a></td>" for v in values]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class='points'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def other_hardware(past: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per series, the series of the same benchmark on a machine of the same name with other hardware (a node
    whose CPUs or memory changed, two hosts of one name; the hardware digest is part of a series' key): each with
    its hardware digest, its first and last date and its points."""
    benchmark = (
        past[[k for k in history.SERIES_KEYS if k != "hardware"]].astype("string").fillna("").agg("|".join, axis=1)
    )
    kinds = past.assign(benchmark=benchmark).groupby(["benchmark", "series"], sort=False)
    table = kinds.agg(hardware=("hardware", "first"), first=("started_utc", "min"), last=("started_utc", "max"))
    table = table.assign(points=kinds.size()).reset_index().sort_values("first")
    return {
        row.series: table[(table["benchmark"] == row.benchmark) & (table["series"] != row.series)]
        for row in table.itertuples()
    }


def hardware_table(others: pd.DataFrame, points: pd.DataFrame) -> str:
    hardware = str(points["hardware"].iloc[0] or "none recorded")
    mine = f"<p>Hardware digest {html.escape(hardware[:8])} (each node's CPUs, topology and total memory)."
    if others.empty:
        return f"{mine} The same benchmark on this machine's name with other hardware: none.</p>"
    head = "<tr><th>series</th><th>hardware</th><th>first</th><th>last</th><th>points</th></tr>"
    rows = "".join(
        f"<tr class='hw'><td class='t'><a href='{o.series}.html'>{html.escape(o.series)}</a></td>"
        f"<td class='t'>{html.escape(str(o.hardware)[:8] or 'none recorded')}</td>"
        f"<td class='t'>{html.escape(o.first)}</td><td class='t'>{html.escape(o.last)}</td><td>{o.points}</td></tr>"
        for o in others.itertuples()
    )
    about = f"{mine} The same benchmark on this machine's name with other hardware, series of their own:</p>"
    return f"{about}<table id='hardware'><thead>{head}</thead><tbody>{rows}</tbody></table>"


def series_page(
    title: str, plots: list[str], found: pd.DataFrame, points: pd.DataFrame, metrics: list[str], others: pd.DataFrame
) -> str:
    body = f"<p><a href='../index.html'>all series</a></p><h1>{html.escape(title)}</h1>"
    body += "<h2>Steps found</h2>" + steps_table(found)
    body += "<h2>Hardware</h2>" + hardware_table(others, points)
    body += "<h2>Plots</h2><p>Each dot is one seed; click one to open its record.</p>"
    body += "".join(f"<div class='plot'>{plot}</div>" for plot in plots)
    body += "<h2>Points</h2>" + points_table(points, metrics)
    return page(title, body, depth=1)


def _options(name: str, values) -> str:
    options = "".join(f"<option>{html.escape(v)}</option>" for v in sorted(set(values) - {""}, key=str))
    select = f"<select class='filter' name='{name}'><option value=''>all</option>{options}</select>"
    return f"<label>{name} {select}</label>"


def index_page(
    past: pd.DataFrame, found: pd.DataFrame, titles: dict[str, str], root: str, others: dict[str, pd.DataFrame]
) -> str:
    """Every series with its machine, model, simulator and versions (filters), its points and its steps; `others`:
    other_hardware(past)."""
    rows, versions = [], set()
    for series, points in past.groupby("series", sort=False):
        first = points.iloc[0]
        known = sorted(set(points["simulator_version"]) - {""}, key=steps.version_order)
        versions.update(known)
        count = int((found["series"] == series).sum())
        changed = len(others[series])
        rtf = points.loc[points["valid"], "real_time_factor"].median()
        attributes = {name: first[column] for name, column in FILTERS.items()} | {"versions": " ".join(known)}
        data = " ".join(f"data-{name}='{html.escape(value)}'" for name, value in attributes.items())
        rows.append(
            f"<tr {data}><td class='t'><a href='series/{series}.html'>{html.escape(titles[series])}</a></td>"
            f"<td class='t'>{html.escape(', '.join(known))}</td><td>{points['git_commit'].nunique()}</td>"
            f"<td>{len(points)}</td><td>{rtf:.3g}</td><td class='{'step' if count else ''}'>{count}</td>"
            f"<td>{changed}</td></tr>"
        )
    filters = "".join(_options(name, past[column]) for name, column in FILTERS.items())
    filters += _options("versions", versions)
    head = "<tr><th>series</th><th>simulator versions</th><th>commits</th><th>points</th><th>median RTF</th>"
    head += "<th>steps</th><th>same benchmark, other hardware</th></tr>"
    body = f"<h1>snnbench history</h1><p>{len(past)} points of {len(titles)} series from {html.escape(root)}.</p>"
    body += f"<p>{filters}</p><table id='series'><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    body += "<h2>Steps found</h2>" + steps_table(found, titles) + f"<script>{FILTER_SCRIPT}</script>"
    return page("snnbench history", body, depth=0)
