"""Validation statistics of a point's recorded spikes, and their distances to other runs.

Is the simulated network the published model? Per population, on a subsample of neurons (the
first `neurons_per_population` of each population, silent neurons included), from the spikes
of the measured window:

- per-neuron firing rates (spike count / window length, spikes/s),
- per-neuron ISI coefficients of variation (neurons with at least `min_spikes_for_cv` spikes),
- pairwise spike-count correlation coefficients in `bin_ms` bins (neurons that fired),

computed with Elephant (Denker et al., Elephant: Electrophysiology Analysis Toolkit). Two runs
are compared per population and statistic by the two-sample Kolmogorov-Smirnov statistic and
the Wasserstein (earth mover's) distance (scipy.stats), as in the INM-6 reference data of the
PD14 model and Golosio et al. 2023 (Front. Comput. Neurosci.).

The verdict on these distances is made at collect, once: snnbench.network.judging.validity.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np

from snnbench.jsonfile import read_json, write_npz
from snnbench.network import models

STATISTICS = ("rate", "cv_isi", "correlation")


def ensemble_distances(sample: np.ndarray, members: list[np.ndarray], self_index: int | None, distance) -> dict:
    """The ensemble fields of one population and statistic: the point's mean distance to the members (itself
    left out where it is one, `self_index`) and their count; each run's sample mean and its standard error, the
    point joining the runs (its index last) where it is no member. distance(a, b) -> float (NaN where
    undefined). One distance per member: validate_point's cost grows linearly with the ensemble."""
    index = self_index if self_index is not None else len(members)
    to_members = [distance(sample, m) for i, m in enumerate(members) if i != self_index]
    to_members = [d for d in to_members if math.isfinite(d)]
    runs = list(members) if self_index is not None else [*members, sample]
    return {
        "ks_ensemble": float(np.mean(to_members)) if to_members else math.nan,
        "n_ensemble": len(to_members),
        "ensemble_means": [float(np.mean(r)) if len(r) else math.nan for r in runs],
        # each run's standard error of its mean: the glog's additive noise (see `offsets`)
        "ensemble_sems": [float(np.std(r, ddof=1) / math.sqrt(len(r))) if len(r) > 1 else math.nan for r in runs],
        "ensemble_self": index,
    }


def _trains(senders: np.ndarray, times_ms: np.ndarray, ids: np.ndarray) -> list[np.ndarray]:
    """Sorted spike times of each neuron in `ids` (empty for silent neurons)."""
    order = np.lexsort((times_ms, senders))
    senders, times_ms = senders[order], times_ms[order]
    lo = np.searchsorted(senders, ids, side="left")
    hi = np.searchsorted(senders, ids, side="right")
    return [times_ms[a:b] for a, b in zip(lo, hi, strict=True)]


def population_samples(
    trains: list[np.ndarray], t_start_ms: float, t_stop_ms: float, bin_ms: float, min_spikes_for_cv: int
) -> dict[str, np.ndarray]:
    """Rates, ISI CVs and pairwise spike-count correlations of one population's subsample."""
    import neo
    import quantities as pq
    from elephant import conversion, spike_train_correlation, statistics

    duration_s = (t_stop_ms - t_start_ms) * 1e-3
    counts = np.array([t.size for t in trains])
    rates = counts / duration_s
    # ISIs and CVs of all neurons in one call each: trains padded with NaN into rows.
    enough = [t for t in trains if t.size >= max(min_spikes_for_cv, 3)]
    cvs = np.zeros(0)
    if enough:
        padded = np.full((len(enough), max(t.size for t in enough)), np.nan)
        for row, t in zip(padded, enough, strict=True):
            row[: t.size] = t
        cvs = np.asarray(statistics.cv(statistics.isi(padded, axis=1), axis=1, nan_policy="omit"), dtype=float)
    active = [neo.SpikeTrain(t, t_start=t_start_ms, t_stop=t_stop_ms, units="ms") for t in trains if t.size]
    correlations = np.zeros(0)
    if len(active) >= 2:
        with warnings.catch_warnings():
            # Deprecation notices of quantities/numpy inside Elephant, and NaN coefficients of
            # neurons whose spikes all fall in one bin (no count variance; dropped below).
            warnings.simplefilter("ignore")
            binned = conversion.BinnedSpikeTrain(
                active, bin_size=bin_ms * pq.ms, t_start=t_start_ms * pq.ms, t_stop=t_stop_ms * pq.ms, tolerance=None
            )
            matrix = spike_train_correlation.correlation_coefficient(binned)
        pairs = matrix[np.triu_indices(len(active), k=1)]
        correlations = pairs[np.isfinite(pairs)]
    return {
        "rate": rates,
        "cv_isi": cvs,
        "correlation": correlations,
        # Neurons behind each sample: the sample size of the KS critical value.
        "rate_neurons": np.array(len(trains)),
        "cv_isi_neurons": np.array(cvs.size),
        "correlation_neurons": np.array(len(active) if correlations.size else 0),
    }


def spike_statistics(
    senders,
    times_ms,
    first_ids: list[int],
    sizes: list[int],
    t_start_ms: float,
    t_stop_ms: float,
    neurons_per_population: int,
    bin_ms: float,
    min_spikes_for_cv: int = 3,
    populations: tuple[str, ...] = (),
) -> dict[str, dict[str, np.ndarray]]:
    """Per population (named in order by `populations`): the samples of `population_samples` for the first
    `neurons_per_population` neurons of the population (all of them in smaller ones)."""
    senders = np.asarray(senders, dtype=np.int64)
    times_ms = np.asarray(times_ms, dtype=float)
    stats = {}
    for name, first, size in zip(populations, first_ids, sizes, strict=False):
        ids = np.arange(first, first + min(size, neurons_per_population), dtype=np.int64)
        trains = _trains(senders, times_ms, ids)
        stats[name] = population_samples(trains, t_start_ms, t_stop_ms, bin_ms, min_spikes_for_cv)
    return stats


def save(stats: dict, meta: dict, path) -> None:
    """One .npz: arrays `<population>/<statistic>` and the settings they were made with."""
    arrays = {f"{pop}/{key}": value for pop, samples in stats.items() for key, value in samples.items()}
    write_npz(path, meta=np.array(json.dumps(meta)), **arrays)


def load(path) -> tuple[dict, dict]:
    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        stats: dict[str, dict[str, np.ndarray]] = {}
        for key in data.files:
            if key == "meta":
                continue
            pop, name = key.split("/", 1)
            stats.setdefault(pop, {})[name] = data[key]
    return stats, meta


def ks_statistic(sample: np.ndarray, reference: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic, the largest difference of the two empirical CDFs, as
    scipy.stats.ks_2samp computes it, without the p-value nothing here reads: its exact computation took
    two thirds of a multi-area point's validate_point (72 of 116 s against 20 seeds)."""
    a, b = np.sort(sample), np.sort(reference)
    both = np.concatenate([a, b])
    gap = np.searchsorted(a, both, side="right") / a.size - np.searchsorted(b, both, side="right") / b.size
    return float(np.max(np.abs(gap)))


def ks_distance(sample: np.ndarray, reference: np.ndarray, min_samples: int) -> float:
    """ks_statistic; NaN if either sample has fewer than `min_samples` values."""
    return ks_statistic(sample, reference) if min(len(sample), len(reference)) >= max(min_samples, 1) else math.nan


def distance(sample: np.ndarray, reference: np.ndarray, min_samples: int) -> tuple[float, float]:
    """(Kolmogorov-Smirnov statistic, Wasserstein distance) of two samples; NaN if either has
    fewer than `min_samples` values."""
    from scipy import stats

    if min(len(sample), len(reference)) < max(min_samples, 1):
        return math.nan, math.nan
    return ks_statistic(sample, reference), float(stats.wasserstein_distance(sample, reference))


def compare(
    point: dict,
    reference: dict | None,
    seeds: list[dict],
    min_samples: int,
    ensemble: list[dict] = (),
    self_index: int | None = None,
) -> list[dict]:
    """One row per population and statistic: the point's sample (size, median), its distances
    to the reference run and, as medians over the other seeds of the same shape, between seeds;
    with a reference `ensemble` (the reference simulator's seeds, the point itself at `self_index`
    if it is one), the ensemble's distances (`ensemble_distances`)."""
    rows = []

    def to_member(a, b):
        return ks_distance(a, b, min_samples)

    for pop, samples in point.items():
        for stat in STATISTICS:
            values = samples[stat]
            row = {
                "population": pop,
                "statistic": stat,
                "n_values": int(values.size),
                "n_neurons": int(samples[f"{stat}_neurons"]),
                "median": float(np.median(values)) if values.size else math.nan,
                "mean": float(np.mean(values)) if values.size else math.nan,
            }
            if reference is not None and pop in reference:
                ks, w = distance(values, reference[pop][stat], min_samples)
                row.update(
                    ks_reference=ks,
                    wasserstein_reference=w,
                    n_neurons_reference=int(reference[pop][f"{stat}_neurons"]),
                )
            members = [m[pop][stat] for m in ensemble if pop in m]
            if len(members) == len(ensemble) and len(members) >= 2:
                row.update(ensemble_distances(values, members, self_index, to_member))
            between = [distance(values, other[pop][stat], min_samples) for other in seeds if pop in other]
            between = [d for d in between if not math.isnan(d[0])]
            row["n_seeds"] = len(between)
            row["ks_seeds"] = float(np.median([d[0] for d in between])) if between else math.nan
            row["wasserstein_seeds"] = float(np.median([d[1] for d in between])) if between else math.nan
            rows.append(row)
    return rows


def read_spikes(path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path) as data:
        return data["senders"], data["times_ms"]


def point_statistics(record_path, spikes_path, out_path, settings: dict) -> dict:
    """Statistics of one point's spikes (Snakemake rule point_statistics); empty for failed
    points and points that recorded no spikes, with the reason in the metadata."""
    rec = read_json(record_path)
    model, network_model = rec["point"]["model"], models.of_spec(rec["point"])
    meta = {"point": rec["point"]["path"], "settings": settings, "reason": None}
    stats: dict = {}
    if rec["status"] != "ok":
        meta["reason"] = "point failed"
    elif not model.get("record_spikes", True):
        meta["reason"] = f"spikes not recorded ({network_model.name}.record_spikes: false)"
    else:
        senders, times = read_spikes(spikes_path)
        sizes = network_model.size(model).num_neurons.tolist()
        stats = spike_statistics(
            senders,
            times,
            rec["ranks"][0]["population_first_ids"],
            sizes,
            model["t_presim_ms"],
            model["t_presim_ms"] + model["t_sim_ms"],
            settings["neurons_per_population"],
            settings["bin_ms"],
            settings["min_spikes_for_cv"],
            network_model.populations_of(model),
        )
    save(stats, meta, out_path)
    return meta


def validate_point(
    stats_path, reference_paths, seed_paths: list, out_path, min_samples: int, reference_simulator: str | None = None
) -> dict:
    """Distances of one point's statistics to its reference (one run's stats.npz, or the reference
    ensemble's: a list, the first the reference run) and to its other seeds (Snakemake rule validate_point).
    The reference simulator is written beside them, for the table and figures."""
    reference_paths = [reference_paths] if isinstance(reference_paths, (str, Path)) else list(reference_paths)
    stats, meta = load(stats_path)
    result = {
        "point": meta["point"],
        "reference": None,
        "reference_simulator": reference_simulator,
        "is_reference": False,
        "checked": False,
        "rows": [],
    }
    if meta["reason"]:
        result["reason"] = meta["reason"]
    else:
        members = [(Path(p), *load(p)) for p in reference_paths]
        _, reference, ref_meta = members[0]
        result["reference"] = ref_meta["point"]
        mine = Path(stats_path).resolve()
        result["is_reference"] = members[0][0].resolve() == mine
        usable = [(path, s) for path, s, m in members if not m["reason"]]
        ensemble = [s for _, s in usable] if len(usable) >= 2 else []
        if ref_meta["reason"]:
            reference = None
            if not ensemble:
                result["reason"] = f"reference run {ref_meta['point']}: {ref_meta['reason']}"
        result["ensemble"] = [str(path) for path, _ in usable]
        self_index = next((i for i, (path, _) in enumerate(usable) if path.resolve() == mine), None)
        seeds = [s for s, m in (load(p) for p in seed_paths) if not m["reason"]]
        result["rows"] = compare(stats, reference, seeds, min_samples, ensemble, self_index)
        result["checked"] = reference is not None or bool(ensemble)
    Path(out_path).write_text(json.dumps(result, indent=1, allow_nan=True) + "\n")
    return result
