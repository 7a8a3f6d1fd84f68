"""End to end: real runs kept in a history, gated against it, and shown on the dashboard in headless Chromium.

One workflow run of three identical tiny experiments on the plugin simulator `nest-sleepy`
(tests/simulators/sleepy_plugin.py): `gate-a` is added to a fresh history; `gate-b` is a run unchanged
against it (same series: the experiment's name is not part of it); `gate-slow`'s simulate phase sleeps
SLEEP_S first (a run made slower on purpose). The gate (what `make regression HISTORY=...` runs) must pass the
first (exit 0) and flag the second (exit 1). Then the dashboard of all three loads in Chromium with its plots
and no console error."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml
from conftest import TINY, VENV_BIN, copy_workflow, plugin_environment, snakemake
from snnbench.results import dashboard, history

pytestmark = pytest.mark.slow

SLEEP_S = 5.0  # tiny points simulate 200 ms of model time in 0.2 to 0.8 s here: the slowed run is >= 7 x slower
EXPERIMENTS = ("gate-a", "gate-b", "gate-slow")
CONFIG = {
    "experiments": [
        dict(TINY, name=name, simulators=["nest-sleepy"], resources={"threads_per_rank": [1]}, seeds=[1, 2])
        for name in EXPERIMENTS
    ],
    "figures": {"experiment": {}},  # no figures: not what this test is about (15 plotting jobs fewer)
}
# The gate watches the simulate phase and the RTF with a tolerance of 2.0 (a flag needs 3 times as slow, every
# seed slower than every reference seed): tiny points on a loaded 2-core machine vary between runs by up to 1.6 x
# (measured: gate-b / gate-a, 2026-11-27, load 6 to 10 on 2 cores).
GATE = ["--metrics", "time_simulate_s", "real_time_factor", "--tolerance", "2.0"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("history"))
    (workdir / "config" / "gate.yaml").write_text(yaml.safe_dump(CONFIG))
    env = plugin_environment(
        workdir,
        "simulators",
        SNNBENCH_NETWORK_SIMULATORS="nest-sleepy=sleepy_plugin:SIMULATOR",
        SNNBENCH_TEST_SLOW_EXPERIMENTS="gate-slow",
        SNNBENCH_TEST_SLEEP_S=str(SLEEP_S),
    )
    snakemake(workdir, "--configfile", "config/gate.yaml", env=env)
    store = workdir.parent / "history"
    history.add(workdir / "results" / "gate-a" / "points.csv", store)
    return workdir, store


def gate(workdir, store, experiment: str) -> subprocess.CompletedProcess:
    table = f"results/{experiment}/points.csv"
    command = [str(VENV_BIN / "python"), "-m", "snnbench.results.gate", table, "--history", str(store), *GATE]
    return subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=120)


def test_the_slowed_run_is_really_slower(finished):
    workdir, _ = finished
    for seed in (1, 2):
        (slow,) = workdir.glob(f"results/gate-slow/nest-sleepy/*/*/seed{seed}/record.json")
        (same,) = workdir.glob(f"results/gate-a/nest-sleepy/*/*/seed{seed}/record.json")
        slow_s, same_s = (json.loads(p.read_text())["phases_s"]["simulate"] for p in (slow, same))
        assert slow_s >= same_s + SLEEP_S * 0.9


def test_an_unchanged_run_passes_the_gate(finished):
    proc = gate(*finished, "gate-b")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 points compared" in proc.stdout and "none slower" in proc.stdout


def test_a_slower_run_fails_the_gate(finished):
    proc = gate(*finished, "gate-slow")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SLOWER simulate,real_time_factor" in proc.stdout


def test_the_same_run_added_again_adds_nothing(finished):
    workdir, store = finished
    assert history.add(workdir / "results" / "gate-a" / "points.csv", store) == []
    past = history.read(store)
    assert len(past) == 2 and past["hardware"].str.len().gt(0).all()  # the node's hardware record, kept once
    assert len(list(store.glob("*/hardware/*.json.gz"))) == 1


@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium is missing: make test installs it")
def test_the_dashboard_shows_its_plots_in_chromium(finished, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import Select, WebDriverWait

    workdir, store = finished
    history.add(workdir / "results", store)  # gate-b and gate-slow beside gate-a
    made = dashboard.build(store, tmp_path / "site")
    assert made["series"] == 1 and made["points"] == 6 and made["bytes"] < 10e6
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        browser.get((tmp_path / "site" / "index.html").as_uri())
        (row,) = browser.find_elements("css selector", "#series tbody tr")
        shown = {}
        for name in ("machine", "model", "simulator", "versions"):  # each filter set to the series' own value
            Select(browser.find_element("css selector", f"select[name={name}]")).select_by_index(1)
            shown[name] = row.is_displayed()
        row.find_element("tag name", "a").click()
        plots = browser.find_elements("css selector", ".js-plotly-plot .main-svg")
        dots = browser.find_elements("css selector", ".js-plotly-plot .scatterlayer .point")
        links = [a.get_attribute("href") for a in browser.find_elements("css selector", "table.points a")]
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        seed = browser.find_element("css selector", "#real_time_factor .scatterlayer .trace .point")
        ActionChains(browser).move_to_element(seed).click().perform()  # a click on a seed's dot opens its record
        WebDriverWait(browser, 10).until(lambda b: len(b.window_handles) == 2)
        browser.switch_to.window(browser.window_handles[1])
        clicked = json.loads(browser.find_element("tag name", "body").text)
        browser.get(links[0])  # and so does each value in the table
        linked = json.loads(browser.find_element("tag name", "body").text)
    finally:
        browser.quit()
    assert len(plots) >= 8 and len(dots) >= 6 * 2  # each plot's two panels: every seed a dot
    assert errors == [] and all(shown.values()), shown
    assert clicked["point"]["simulator"] == linked["point"]["simulator"] == "nest-sleepy"  # records kept by the history
