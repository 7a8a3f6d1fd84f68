"""The community race (Senk et al. 2026, Neuromorph. Comput. Eng. 6:012001): its recipe, the
synaptic events a point processed, the columns a record gives the table, and the living table.

Recipe (their checklist): accuracy runs record spikes (15 min of model time); performance runs
simulate >= 10 s of model time without recording spikes; both discard the first 500 ms (here the
presimulation) and use ten seeds. An experiment says which it follows with `race.recipe`; where its
values differ from the checklist, the spec lists the deviations, and records, tables and the export
carry them, so a tiny test run is never mistaken for an entry.

Synaptic events = spikes of the measured window x mean out-degree (num_synapses / num_neurons),
i.e. N_syn x mean rate x T, the number the published E_syn divide by. Spikes come from the
simulator's own counter where it has one (NEST's kernel `local_spike_counter`, summed over
ranks), from the recorded spikes on accuracy points, else from the rates of the linked accuracy
point (same simulator, model and seed), as the published studies do; each row says which.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from snnbench.network import models

NOT_MEASURED = "not measured"
# The living table's columns (INM-6 microcircuit-PD14-model docs, benchmarking) and the export's provenance.
TABLE_COLUMNS = ["id", "study", "year", "rtf", "e_syn_uj", "simulator", "nodes", "system", "process_node_nm", "drive"]


def deviations(experiment: dict) -> list[str]:
    """Where a race experiment's values differ from its model's checklist, in words."""
    recipe, model = experiment["race"]["recipe"], experiment[experiment["model"]]
    checklist = models.get(experiment["model"]).race["checklist"]
    found = []
    t_presim, t_sim = model.get("t_presim_ms", 100.0), model.get("t_sim_ms", 1000.0)
    if t_presim < checklist["t_presim_ms"]:
        found.append(f"warm-up {t_presim:g} ms < {checklist['t_presim_ms']:g} ms")
    minimum = checklist[f"{recipe}_t_sim_ms"]
    if t_sim < minimum:
        found.append(f"model time {t_sim:g} ms < {minimum:g} ms")
    if len(experiment["seeds"]) < checklist["seeds"]:
        found.append(f"{len(experiment['seeds'])} seeds < {checklist['seeds']}")
    if model.get("neuron_scale", 1.0) != 1.0 or model["indegree_scale"] != 1.0:
        found.append("not full scale")
    return found


def spec_fields(experiment: dict) -> dict:
    """The `race` block of a point's spec (only race experiments' points have one)."""
    race = experiment["race"]
    fields = {"recipe": race["recipe"], "deviations": deviations(experiment)}
    fields.update({k: race[k] for k in ("accuracy_experiment", "system", "process_node_nm") if k in race})
    return fields


def mean_outdegree(num_synapses: int, num_neurons: int) -> float:
    return num_synapses / num_neurons if num_neurons else float("nan")


def spike_section(spec: dict, ranks: list[dict], populations: list[dict], num_synapses: int, num_neurons: int):
    """The record's `spikes` and `synaptic_events` of the measured window."""
    counters = [r.get("spike_counter") for r in ranks]
    counted = None if None in counters else int(sum(counters))
    if populations:
        total = int(sum(p["spikes"] for p in populations))
        source = "spike recorder (measured window)"
        by_population = {p["population"]: int(p["spikes"]) for p in populations}
    elif counted is not None:
        total, source, by_population = counted, "simulator spike counter (NEST local_spike_counter, all ranks)", None
    else:
        total, by_population = None, None
        source = f"none: {spec['simulator']} has no spike counter; taken from the linked accuracy point's rates"
    spikes = {"total": total, "source": source, "counter_total": counted, "by_population": by_population}
    events = {
        "count": None if total is None else total * mean_outdegree(num_synapses, num_neurons),
        "source": source if total is not None else None,
        "method": "spikes of the measured window x mean out-degree (num_synapses / num_neurons)",
    }
    return spikes, events


def record_columns(rec: dict) -> dict:
    """The race, spike, synaptic-event and energy columns of a PD14 record's row."""
    spec = rec["point"]
    race = spec.get("race", {})
    row = {
        "race_recipe": race.get("recipe"),
        "race_deviations": "; ".join(race.get("deviations", [])),
        "race_accuracy_experiment": race.get("accuracy_experiment"),
        "race_system": race.get("system"),
        "race_process_node_nm": race.get("process_node_nm"),
        "record_spikes": spec["model"]["record_spikes"],
    }
    spikes, events = rec.get("spikes") or {}, rec.get("synaptic_events") or {}
    row["spikes_total"] = spikes.get("total")
    row["spike_count_source"] = spikes.get("source")
    row["synaptic_events"] = events.get("count")
    row["synaptic_events_source"] = events.get("source")
    row.update(energy_columns(rec.get("energy")))
    row["energy_per_synaptic_event_uj"] = e_syn_uj(row.get("energy_simulate_j"), row["synaptic_events"])
    return row


def energy_columns(energy: dict | None) -> dict:
    if not energy:
        return {
            "energy_measured": False,
            "energy_not_measured": "no energy section (failed point, or recorded before energy was)",
        }
    slurm = energy.get("slurm") or {}
    return {
        "energy_measured": energy["measured"],
        "energy_not_measured": energy["not_measured"],
        "energy_covers": energy["covers"],
        "energy_construction_j": energy["construction_j"],
        "energy_presimulate_j": energy["presimulate_j"],
        "energy_simulate_j": energy["simulate_j"],
        "slurm_energy_j": slurm.get("consumed_energy_j"),
        "slurm_energy": slurm.get("covers") if slurm.get("measured") else f"{NOT_MEASURED}: {slurm.get('reason')}",
    }


def e_syn_uj(energy_j, events) -> float:
    """Energy per synaptic event in µJ; NaN where either is missing."""
    if energy_j is None or events is None or pd.isna(energy_j) or pd.isna(events) or not events:
        return float("nan")
    return float(energy_j) / float(events) * 1e6


def link_accuracy(points: pd.DataFrame, accuracy: pd.DataFrame) -> pd.DataFrame:
    """Performance points without counted spikes take the rate of their linked accuracy point
    (same simulator, model size, input and seed): events = its spikes per ms x this point's model
    time x this point's mean out-degree. Adds `linked_accuracy_path` to every performance row."""
    points = points.copy()
    points["linked_accuracy_path"] = None
    if accuracy.empty or "spikes_total" not in accuracy:
        return points
    keys = ["simulator", "neuron_scale", "indegree_scale", "input", "seed"]
    ok = accuracy[(accuracy["status"] == "ok") & accuracy["spikes_total"].notna()]
    linked = ok.drop_duplicates(keys).set_index(keys)
    for i, row in points.iterrows():
        key = tuple(row[k] for k in keys)
        if key not in linked.index:
            continue
        acc = linked.loc[key]
        points.at[i, "linked_accuracy_path"] = acc["path"]
        if pd.isna(row.get("synaptic_events")) and row["status"] == "ok":
            spikes = acc["spikes_total"] / acc["t_sim_ms"] * row["t_sim_ms"]
            points.at[i, "spikes_total"] = spikes
            points.at[i, "synaptic_events"] = spikes * mean_outdegree(row["num_synapses"], row["num_neurons"])
            points.at[i, "synaptic_events_source"] = f"rates of the linked accuracy point {acc['path']}"
            points.at[i, "energy_per_synaptic_event_uj"] = e_syn_uj(
                row.get("energy_simulate_j"), points.at[i, "synaptic_events"]
            )
    return points


def reference_table(model: str) -> pd.DataFrame:
    """The published entries of the model's living table (PD14's: the 14 of Senk et al. 2026), E_syn
    empty where unpublished."""
    return pd.read_csv(Path(__file__).with_name(models.get(model).race["table"]))


def study(model: str) -> str:
    """Who defined the model's race, for legends and captions."""
    return models.get(model).race["study"]


def model_of(points: pd.DataFrame) -> str:
    """The network model of a race experiment's points (one per experiment)."""
    return str(points["model_name"].iloc[0])


def _joined(values) -> str:
    return "; ".join(sorted({str(v) for v in values if isinstance(v, str) and v}))


def run_rows(points: pd.DataFrame) -> pd.DataFrame:
    """This run's performance results as rows of the living table: per simulator, shape and model
    size, medians over the valid seeds, with the provenance a reviewer asks for."""
    perf = points[(points["race_recipe"] == "performance") & points["valid"].astype(bool)]
    rows = []
    for (simulator, shape, n, k), group in perf.groupby(["simulator", "shape", "neuron_scale", "indegree_scale"]):
        first = group.iloc[0]
        e_syn = group["energy_per_synaptic_event_uj"].median()
        rows.append(
            {
                "id": f"this run: {simulator} {shape} N{n:g} K{k:g}",
                "study": f"snnbench {first['experiment']}",
                "year": int(str(first["started_utc"])[:4]),
                "rtf": group["real_time_factor"].median(),
                "e_syn_uj": e_syn if not np.isnan(e_syn) else NOT_MEASURED,
                "simulator": f"{simulator} {first.get('simulator_version', '')}".strip(),
                "nodes": int(first["nodes"]),
                "system": first.get("race_system") if isinstance(first.get("race_system"), str) else first["cpu_model"],
                "process_node_nm": first.get("race_process_node_nm")
                if pd.notna(first.get("race_process_node_nm"))
                else "not stated",
                "drive": "Poisson" if first["input"] == "poisson" else "DC",
                **_provenance(group),
            }
        )
    return pd.DataFrame(rows)


def _provenance(group: pd.DataFrame) -> dict:
    first = group.iloc[0]
    return {
        "source": "this run",
        "seeds": len(group),
        "rtf_min": group["real_time_factor"].min(),
        "rtf_max": group["real_time_factor"].max(),
        "neuron_scale": first["neuron_scale"],
        "indegree_scale": first["indegree_scale"],
        "t_presim_ms": first["t_presim_ms"],
        "t_sim_ms": first["t_sim_ms"],
        "shape": first["shape"],
        "recipe_deviations": first["race_deviations"] or "none",
        "synaptic_events_source": _joined(group["synaptic_events_source"]),
        "energy": _joined(group["energy_covers"])
        if group["energy_measured"].astype(bool).all()
        else NOT_MEASURED + ": " + _joined(group["energy_not_measured"]),
        "slurm_energy": _joined(group["slurm_energy"]),
        "host": _joined(group["host"]),
        "cpu_model": first["cpu_model"],
        "git_commit": first["git_commit"],
        "benchmark_hash": first["benchmark_hash"],
        "started_utc": first["started_utc"],
    }


def standings(points: pd.DataFrame) -> pd.DataFrame:
    """The published entries (source 'published') followed by this run's rows."""
    published = reference_table(model_of(points)).assign(source="published")
    return pd.concat([published, run_rows(points)], ignore_index=True)


def to_markdown(table: pd.DataFrame) -> str:
    """The living table's columns as a markdown table (missing values as '–', as the table writes)."""
    columns = TABLE_COLUMNS + ["source"]

    def cell(value) -> str:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return "–"
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row[c]) for c in columns) + " |" for _, row in table.iterrows()]
    return "\n".join(lines) + "\n"
