"""Simulators on one network (pd14.network_seed) with deterministic input (DC): do they emit NEST's spikes?

For each point of a network NEST exported, beside the NEST point of the same model, network and
seed (any resource shape): the share of NEST's spikes it emits at the same neuron within one time
step and the share of its spikes NEST emits, spikes paired one to one (snnbench.network.judging.spike_match),
in the first 100 ms of the measured window and over all of it, and the largest relative difference of
a population's rate from NEST's, populations silent on either side included. Poisson input is
drawn by each simulator's own generator, so spikes are compared only with DC input; rates over
seeds are judged by the one rule of snnbench.network.judging.rate_agreement.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.jsonfile import read_json
from snnbench.network import models
from snnbench.network.judging import rate_agreement, spike_match

SHARES = ("spike_match_early", "spike_match_run", "spike_match_other_early", "spike_match_other_run")
COLUMNS = (*SHARES, "rate_difference_max_rel")
SAME_RUN = [*rate_agreement.SAME_MODEL, "network_seed", "seed"]


def neuron_index(senders: np.ndarray, first_ids: list[int], sizes: list[int]) -> np.ndarray:
    """Each sender as its neuron's index, populations one after another from 0 (a simulator numbers
    them its own way: NEST from its first node's id, PyNN with its recorders' ids between populations)."""
    first = np.asarray(first_ids, dtype=np.int64)
    population = np.searchsorted(first, senders, side="right") - 1
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return np.asarray(senders, dtype=np.int64) - first[population] + offsets[population]


def spikes(point: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A point's spikes, its neurons numbered from 0 (snnbench.network.execute writes them beside its record)."""
    record = read_json(f"{point['path']}/record.json")
    sizes = models.of_spec(record["point"]).size(record["point"]["model"]).num_neurons.tolist()
    with np.load(f"{point['path']}/spikes.npz") as data:
        return neuron_index(data["senders"], record["ranks"][0]["population_first_ids"], sizes), data["times_ms"]


def rate_difference(rate: float, reference_rate: float) -> float:
    """|rate - reference_rate| / the larger of the two: the same either way round, 0 where both are
    silent, 1 where one side is silent and the other fires; NaN where a rate is missing."""
    if np.isnan(rate) or np.isnan(reference_rate):
        return np.nan
    larger = max(rate, reference_rate)
    return abs(rate - reference_rate) / larger if larger > 0 else 0.0


def largest_rate_difference(point: pd.Series, reference: pd.Series, rates: list[str]) -> float:
    """max over populations of rate_difference from NEST's. rates: the table's rate columns; one empty on
    both sides names another model's population, one empty on one side makes the answer NaN."""
    pairs = [(float(point[c]), float(reference[c])) for c in rates]
    differences = [rate_difference(*p) for p in pairs if not (np.isnan(p[0]) and np.isnan(p[1]))]
    return float(np.max(differences)) if differences else np.nan


def add_spike_match(points: pd.DataFrame, reference: str = rate_agreement.REFERENCE) -> pd.DataFrame:
    """The COLUMNS for finished DC points of an exported network that NEST also ran; empty elsewhere."""
    points = points.copy()
    for column in COLUMNS:
        points[column] = np.nan
    if "network_seed" not in points or points["network_seed"].isna().all():
        return points
    # Every finished point, valid or not: a run that leaves NEST's spikes is what this measures.
    chosen = points["network_seed"].notna() & (points["input"] == "dc") & (points["status"] == "ok")
    rates = rate_agreement.rate_columns(points[chosen])
    for _, group in points[chosen].groupby(SAME_RUN, dropna=False):
        nest_points = group[group["simulator"] == reference]
        if nest_points.empty:
            continue
        nest_point = nest_points.iloc[0]
        nest_spikes = spikes(nest_point)
        dt_ms = models.get(nest_point["model_name"]).dt_ms
        for index, point in group.iterrows():
            found = spike_match.match_fractions(nest_spikes, spikes(point), dt_ms, float(point["t_presim_ms"]))
            for column in SHARES:
                points.loc[index, column] = found[column]
            points.loc[index, "rate_difference_max_rel"] = largest_rate_difference(point, nest_point, rates)
    return points
