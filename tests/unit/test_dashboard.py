"""The dashboard's site (snnbench.results.dashboard) from a history of two synthetic runs, the second 1.3 times
slower: Plotly's JavaScript once and from no CDN, a page per series that loads it, every value linked to a record
the site holds, and the step between the two commits listed with its size. (Its test in a browser, on real
runs: tests/e2e/test_history_run.py.)"""

from __future__ import annotations

import json
import re

import pytest
from snnbench.results import dashboard, history
from test_history import write_run


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("dashboard")
    for name, seed, slow, commit, started in (("old", 1, 1.0, "a", "2026-01-01"), ("new", 2, 1.3, "b", "2026-02-01")):
        write_run(root / name, seed=seed, slow=slow, commit=commit * 40, started=started)
        history.add(root / name, root / "store")
    made = dashboard.build(root / "store", root / "site")
    return root / "site", made


def test_the_javascript_is_written_once_and_loaded_from_the_site(site):
    folder, made = site
    assert [p.name for p in folder.rglob("*.js")] == ["plotly.min.js"]
    pages = [folder / "index.html", *(folder / "series").glob("*.html")]
    assert len(pages) == 1 + made["series"] == 3
    for page in pages:
        text = page.read_text()
        assert not re.search(r"<script[^>]+src=\"https?://", text)  # no CDN: the reader needs no network
        assert text.count("plotly.min.js") == 1
    assert made["bytes"] < 10e6


def test_every_value_links_to_a_record_the_site_holds(site):
    folder, made = site
    page = next((folder / "series").glob("*.html")).read_text()
    links = set(re.findall(r"href='(\.\./records/[0-9a-f]+\.json)'", page))
    assert len(links) == 6  # the series' 6 points (2 runs x 3 seeds)
    for link in links:
        assert json.loads((folder / "series" / link).read_text())["status"] in ("ok", "failed")
    assert len(list((folder / "records").glob("*.json"))) == made["points"] == 12


def test_the_step_between_the_commits_is_listed_with_its_size(site):
    folder, made = site
    found = made["found"]
    simulate = found[(found["metric"] == "time_simulate_s") & (found["axis"] == "commit")]
    assert len(simulate) == 2 and set(simulate["after"]) == {"b" * 10}  # one step per series
    assert simulate["ratio"].between(1.15, 1.45).all()
    assert "aaaaaaaaaa &rarr; bbbbbbbbbb" in (folder / "index.html").read_text()
