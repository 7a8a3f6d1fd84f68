"""The community race: presets, energy readers on fake counters (known answers), the synaptic
events, and the standings figure and export drawn from a small table."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, experiment, validated
from snnbench import figures, planning
from snnbench.machine import energy
from snnbench.network import race

PRESETS = ["race-accuracy.yaml", "race-performance.yaml", "race-tiny.yaml"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


# --- presets


@pytest.mark.parametrize("name", PRESETS)
def test_presets_validate_and_expand_with_their_recipe(name):
    cfg = yaml.safe_load((REPO / "config/experiments" / name).read_text())
    cfg = validated(*cfg["experiments"])
    for exp in cfg["experiments"]:
        specs = planning.expand_points(exp)
        assert specs and all(s["race"]["recipe"] == exp["race"]["recipe"] for s in specs)
        if exp["race"]["recipe"] == "performance":
            assert exp["pd14"]["record_spikes"] is False


def test_full_presets_follow_the_checklist():
    for name in ("race-accuracy.yaml", "race-performance.yaml"):
        exp = yaml.safe_load((REPO / "config/experiments" / name).read_text())["experiments"][0]
        assert exp["pd14"]["t_presim_ms"] == 500 and len(exp["seeds"]) == 10
        assert race.deviations(validated(exp)["experiments"][0]) == []


def test_tiny_preset_names_its_deviations():
    cfg = yaml.safe_load((REPO / "config/experiments/race-tiny.yaml").read_text())
    perf = validated(*cfg["experiments"])["experiments"][1]
    spec = planning.expand_points(perf)[0]
    assert spec["race"]["accuracy_experiment"] == "race-tiny-accuracy"
    assert "model time 1000 ms < 10000 ms" in spec["race"]["deviations"]
    assert "not full scale" in spec["race"]["deviations"]


def test_performance_recipe_that_records_spikes_is_refused():
    bad = experiment(race={"recipe": "performance"})
    with pytest.raises(planning.ConfigRefused, match="record_spikes: false"):
        validated(bad)


def test_experiments_without_race_keep_their_specs():
    assert all("race" not in s for s in planning.expand_points(validated(experiment())["experiments"][0]))


# --- energy readers on fake counters


def fake_rapl(root, packages=2, dram=True, energy_uj=1000, max_range=2**32):
    for p in range(packages):
        zone = root / f"intel-rapl:{p}"
        zone.mkdir(parents=True)
        (zone / "name").write_text(f"package-{p}\n")
        (zone / "energy_uj").write_text(f"{energy_uj}\n")
        (zone / "max_energy_range_uj").write_text(f"{max_range}\n")
        core = root / f"intel-rapl:{p}:0"
        core.mkdir()
        (core / "name").write_text("core\n")
        (core / "energy_uj").write_text("5\n")
        (core / "max_energy_range_uj").write_text(f"{max_range}\n")
        if dram:
            sub = root / f"intel-rapl:{p}:1"
            sub.mkdir()
            (sub / "name").write_text("dram\n")
            (sub / "energy_uj").write_text(f"{energy_uj}\n")
            (sub / "max_energy_range_uj").write_text(f"{max_range}\n")
    return root


def set_counter(root, zone, value):
    (root / zone / "energy_uj").write_text(f"{value}\n")


def test_rapl_finds_packages_and_dram_not_core(tmp_path):
    sensors, problems = energy.rapl_sensors(fake_rapl(tmp_path / "powercap"))
    assert [s.name for s in sensors] == [
        "rapl:package-0",
        "rapl:package-0/dram",
        "rapl:package-1",
        "rapl:package-1/dram",
    ]
    assert problems == []
    assert "DRAM" in sensors[1].covers and "package-0" in sensors[0].covers


def test_no_powercap_says_why(tmp_path):
    sensors, problems = energy.rapl_sensors(tmp_path / "absent")
    assert sensors == [] and "absent" in problems[0]


def test_counter_wraps_around():
    assert energy.counter_delta_uj(100, 300, 1000) == 200
    assert energy.counter_delta_uj(900, 100, 1000) == 200  # wrapped once
    with pytest.raises(ValueError):
        energy.counter_delta_uj(900, 100, None)


def test_phase_windows_sockets_and_wrap(tmp_path):
    """Two sockets with DRAM: each phase's energy from the readings at its boundaries, one counter
    wrapping inside the simulate phase."""
    root = fake_rapl(tmp_path / "powercap", max_range=5_500_000)
    meter = energy.Meter(*energy.rapl_sensors(root))
    for i, mark in enumerate(["setup", "create", "connect", "prepare", "presimulate", "simulate", "end"]):
        for zone in ("intel-rapl:0", "intel-rapl:0:1", "intel-rapl:1", "intel-rapl:1:1"):
            set_counter(root, zone, (1_000_000 * i) % 5_500_000)  # 1 J per phase; "end" has wrapped
        meter.mark(mark)
    summary = energy.summarize([("node1", meter.report())])
    assert summary["measured"] and summary["not_measured"] is None
    assert summary["construction_j"] == pytest.approx(4 * 4.0)  # 4 phases x 4 counters x 1 J
    assert summary["presimulate_j"] == pytest.approx(4.0)
    assert summary["simulate_j"] == pytest.approx(4.0)
    assert len(summary["readings"]) == 4 and "node1" in summary["covers"]


def test_ranks_on_one_host_count_once_and_hosts_add(tmp_path):
    root = fake_rapl(tmp_path / "powercap", packages=1, dram=False)
    meter = energy.Meter(*energy.rapl_sensors(root))
    for i, mark in enumerate(["setup", "create", "connect", "prepare", "presimulate", "simulate", "end"]):
        set_counter(root, "intel-rapl:0", 2_000_000 * i)
        meter.mark(mark)
    report = meter.report()
    summary = energy.summarize([("a", report), ("a", report), ("b", report)])
    assert summary["simulate_j"] == pytest.approx(4.0)  # 2 J on host a (once) + 2 J on host b


class FakeNVML:
    """pynvml's calls that the reader uses, for two GPUs with counters in mJ."""

    def __init__(self, energy_mj):
        self.energy_mj = energy_mj

    def nvmlInit(self):
        pass

    def nvmlDeviceGetCount(self):
        return len(self.energy_mj)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, i):
        return b"Fake H100"

    def nvmlDeviceGetTotalEnergyConsumption(self, i):
        return self.energy_mj[i]


def test_nvml_several_gpus_in_joules(tmp_path):
    nvml = FakeNVML([1000, 5000])
    sensors, problems = energy.machine_sensors(gpus=True, root=tmp_path / "absent", nvml=nvml)
    assert [s.name for s in sensors] == ["nvml:gpu0", "nvml:gpu1"] and "Fake H100" in sensors[0].covers
    meter = energy.Meter(sensors, problems)
    for i, mark in enumerate(["setup", "create", "connect", "prepare", "presimulate", "simulate", "end"]):
        nvml.energy_mj = [1000 + 500 * i, 5000 + 1500 * i]
        meter.mark(mark)
    summary = energy.summarize([("gpu-node", meter.report())])
    assert summary["simulate_j"] == pytest.approx(0.5 + 1.5)
    assert summary["construction_j"] == pytest.approx(4 * 2.0)


def test_machine_without_sensors_says_not_measured(tmp_path):
    meter = energy.Meter(*energy.machine_sensors(gpus=False, root=tmp_path / "absent"))
    for mark in ["setup", "create", "connect", "prepare", "presimulate", "simulate", "end"]:
        meter.mark(mark)
    summary = energy.summarize([("here", meter.report())], energy.sacct_energy(job_id=""))
    assert summary["measured"] is False and summary["simulate_j"] is None
    assert "RAPL" in summary["not_measured"] and "NVML" in summary["not_measured"]
    assert summary["slurm"] == {"measured": False, "reason": "not in a SLURM job", "covers": summary["slurm"]["covers"]}


def test_sacct_energy_sums_finished_steps():
    class Out:
        stdout = "42|\n42.batch|\n42.0|1200\n42.1|300\n"

    result = energy.sacct_energy("42", run=lambda *a, **k: Out())
    assert result["measured"] and result["consumed_energy_j"] == 1500.0

    class Empty:
        stdout = "42|\n42.0|0\n"

    assert "acct_gather_energy" in energy.sacct_energy("42", run=lambda *a, **k: Empty())["reason"]


# --- synaptic events, linking, standings


def test_synaptic_events_from_counter_and_from_recorder():
    spec = {"simulator": "nest"}
    ranks = [{"spike_counter": 60}, {"spike_counter": 40}]
    spikes, events = race.spike_section(spec, ranks, [], num_synapses=1000, num_neurons=10)
    assert spikes["total"] == 100 and "counter" in spikes["source"] and events["count"] == 100 * 100
    pops = [{"population": "L23E", "spikes": 70}, {"population": "L23I", "spikes": 30}]
    spikes, events = race.spike_section(spec, ranks, pops, num_synapses=1000, num_neurons=10)
    assert spikes["total"] == 100 and spikes["counter_total"] == 100 and "recorder" in spikes["source"]
    spikes, events = race.spike_section({"simulator": "brian2-cpp"}, [{"spike_counter": None}], [], 1000, 10)
    assert spikes["total"] is None and events["count"] is None and "linked accuracy" in spikes["source"]


def run_table(energy_j=None) -> pd.DataFrame:
    base = {
        "experiment": "perf",
        "simulator": "nest",
        "simulator_version": "3.10.0",
        "shape": "1x1x2",
        "nodes": 1,
        "model_name": "pd14",
        "neuron_scale": 0.02,
        "indegree_scale": 0.1,
        "input": "poisson",
        "t_presim_ms": 500.0,
        "t_sim_ms": 1000.0,
        "status": "ok",
        "valid": True,
        "race_recipe": "performance",
        "race_deviations": "not full scale",
        "race_system": None,
        "race_process_node_nm": np.nan,
        "started_utc": "2026-11-23T01:00:00+00:00",
        "cpu_model": "Test CPU",
        "host": "here",
        "git_commit": "abc",
        "benchmark_hash": "h",
        "num_synapses": 1000,
        "num_neurons": 10,
        "energy_measured": energy_j is not None,
        "energy_not_measured": None if energy_j else "RAPL: absent",
        "energy_covers": "CPU package-0" if energy_j else None,
        "energy_simulate_j": energy_j,
        "slurm_energy": "not measured: not in a SLURM job",
    }
    rows = []
    for seed, rtf, counted in ((1, 2.0, 500.0), (2, 3.0, None)):
        events = None if counted is None else counted * 100
        rows.append(
            base
            | {
                "seed": seed,
                "path": f"results/perf/p/seed{seed}",
                "real_time_factor": rtf,
                "spikes_total": counted,
                "synaptic_events": events,
                "synaptic_events_source": "counter" if counted else None,
                "energy_per_synaptic_event_uj": race.e_syn_uj(energy_j, events),
            }
        )
    return pd.DataFrame(rows)


def test_link_accuracy_fills_uncounted_points():
    accuracy = pd.DataFrame(
        [
            {"simulator": "nest", "neuron_scale": 0.02, "indegree_scale": 0.1, "input": "poisson", "seed": seed}
            | {"status": "ok", "spikes_total": 2000.0, "t_sim_ms": 2000.0, "path": f"results/acc/seed{seed}"}
            for seed in (1, 2)
        ]
    )
    linked = race.link_accuracy(run_table(energy_j=1.0), accuracy)
    second = linked[linked["seed"] == 2].iloc[0]
    assert second["synaptic_events"] == pytest.approx(1000.0 * 100)  # 1 spike/ms x 1000 ms x out-degree 100
    assert "results/acc/seed2" in second["synaptic_events_source"]
    assert second["energy_per_synaptic_event_uj"] == pytest.approx(1.0 / 1e5 * 1e6)
    first = linked[linked["seed"] == 1].iloc[0]
    assert first["synaptic_events_source"] == "counter" and first["linked_accuracy_path"] == "results/acc/seed1"


def test_export_has_the_published_entries_and_this_run_with_not_measured():
    table = race.standings(run_table())
    published = table[table["source"] == "published"]
    assert len(published) == 14 and {"Kur+22b", "Gol+23b", "Kau+23"} <= set(published["id"])
    mine = table[table["source"] == "this run"].iloc[0]
    assert mine["rtf"] == pytest.approx(2.5) and mine["e_syn_uj"] == race.NOT_MEASURED
    assert mine["energy"].startswith("not measured") and mine["recipe_deviations"] == "not full scale"
    markdown = race.to_markdown(table)
    assert markdown.count("\n") == 2 + 15 and "| this run: nest 1x1x2 N0.02 K0.1 |" in markdown
    assert "not measured" in markdown and "| Kni+21 | Knight et al. 2021 | 2021 | 0.7 | – |" in markdown


def scatter_points(ax):
    return [tuple(p) for c in ax.collections for p in c.get_offsets()]


def test_standings_figure_without_energy_is_rtf_only(tmp_path):
    fig = figures.draw(["race_energy", "race_year"], figures.PanelData(run_table()), str(tmp_path / "s.png"))
    energy_ax, year_ax = fig.axes[:2]
    labels = [t.get_text() for t in energy_ax.get_yticklabels()]
    assert "Kau+23" in labels and any(label.startswith("this run: nest") for label in labels)
    assert energy_ax.get_xscale() == "log" and "not measured" in energy_ax.get_title(loc="right")
    assert (2.5, 14.0) in scatter_points(energy_ax)  # this run's median RTF, after the 14 entries
    assert year_ax.get_yscale() == "log" and year_ax.get_ylabel() == "real-time factor"
    assert (2023.0, 0.05) in scatter_points(year_ax) and (2026.5, 2.5) in scatter_points(year_ax)
    assert (tmp_path / "s.png").exists()


def test_standings_figure_with_energy_is_log_log():
    fig = figures.draw(["race_energy"], figures.PanelData(run_table(energy_j=1.0)))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "energy per synaptic event (µJ)"
    points = scatter_points(ax)
    assert (0.048, 0.05) in points  # Kau+23
    assert (pytest.approx(20.0), pytest.approx(2.5)) in points  # 1 J / 5e4 events = 20 µJ; median RTF
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0].startswith("published") and any(t.startswith("this run") for t in legend)
