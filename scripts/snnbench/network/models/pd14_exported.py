"""A PD14 network drawn once and read by every simulator (the `network_seed` key).

NEST draws the network (snnbench.network.simulators.nest.export, rule describe_network) and writes
it beside its description: `network.npz` holds every neuron's initial membrane potential and every
synapse's source, target (0-based, the populations one after another), weight (pA) and delay (ms,
on NEST's grid of time steps). The format is numpy's npz, not SONATA: SONATA is HDF5, which NEST's
PyPI wheel cannot read (it is built without HDF5), and every environment here has numpy. The
description (JSON) names the file, its size, its SHA-256 and the NEST that wrote it. A reader checks the
file against that digest (a damaged one is set aside with its description, snnbench.records.inputs),
and a point's record keeps the digest of the bytes its ranks read (`identity`), so a table says which
network each point ran.

This module reads and writes the file; it imports no simulator (every backend uses it).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from snnbench.hashing import file_sha256
from snnbench.jsonfile import write_npz
from snnbench.paths import NETWORK_DESCRIPTION
from snnbench.records import inputs

MODEL = "pd14"
NETWORK_FILE = "network.npz"


def key(params: dict) -> str | None:
    """The description's folder, N<scale>_K<scale>_seed<network seed>; None: the simulator draws the network."""
    if params.get("network_seed") is None:
        return None
    return f"N{params['neuron_scale']:g}_K{params['indegree_scale']:g}_seed{params['network_seed']}"


def rank_problems(where: str, experiment: dict) -> list[str]:
    """An exported network is read on one MPI rank only (which simulators read one: their registry entries)."""
    if experiment.get(MODEL, {}).get("network_seed") is None:
        return []
    problems = []
    resources = experiment.get("resources", {})
    if max(resources.get("nodes", [1])) * max(resources.get("ranks_per_node", [1])) > 1:
        problems.append(
            f"{where}: pd14.network_seed: an exported network is read on one MPI rank (resources.nodes and "
            "ranks_per_node: [1]; threads_per_rank: any)"
        )
    return problems


def params(params: dict) -> dict:
    """What the export is drawn from: the size and the network seed (the input is not part of it)."""
    return {name: params[name] for name in ("neuron_scale", "indegree_scale", "network_seed")}


def description_path(params: dict) -> Path:
    return Path(NETWORK_DESCRIPTION.format(model=MODEL, description=key(params))).resolve()


def identity(params: dict, rank_results: list[dict]) -> dict:
    """The exported network a point ran, as its ranks read it (identity_read: the description key, the
    SHA-256 of the bytes read, the exporter); {}: none. A builder that reported none: no digest."""
    if key(params) is None:
        return {}
    read = next((r["network"] for r in rank_results if "network" in r), None)
    return {"network": read or {"description": key(params), "sha256": None, "exported_by": None}}


def identity_read(params: dict) -> dict:
    """What this process read of the point's exported network (read()), for its rank's model_results."""
    found = _READ.get(key(params)) if key(params) is not None else None
    return {"network": found} if found else {}


@dataclass
class Projection:
    """The synapses of one projection: source/target indices within their populations, weights
    (pA) and delays in time steps."""

    target: int
    source: int
    i: np.ndarray
    j: np.ndarray
    weight_pA: np.ndarray
    delay_steps: np.ndarray


@dataclass(frozen=True)
class ExportedNetwork:
    num_neurons: np.ndarray  # per population
    v0_mV: np.ndarray  # every neuron, populations one after another
    source: np.ndarray
    target: np.ndarray
    weight_pA: np.ndarray
    delay_ms: np.ndarray

    @property
    def first(self) -> np.ndarray:
        """Index of each population's first neuron."""
        return np.concatenate([[0], np.cumsum(self.num_neurons)[:-1]])

    def population_of(self, neurons: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.first, neurons, side="right") - 1

    def initial_potentials(self) -> list[np.ndarray]:
        """Initial membrane potential (mV) of each population's neurons."""
        return np.split(self.v0_mV, np.cumsum(self.num_neurons)[:-1])

    def projections(self, dt_ms: float) -> list[Projection]:
        """The synapses by (target, source) population, in that order, with indices within the populations."""
        first = self.first
        target_pop, source_pop = self.population_of(self.target), self.population_of(self.source)
        order = np.lexsort((source_pop, target_pop))
        found = []
        pairs = np.stack([target_pop[order], source_pop[order]], axis=1)
        starts = np.flatnonzero(np.r_[True, (np.diff(pairs, axis=0) != 0).any(axis=1)])
        for begin, end in zip(starts, [*starts[1:], order.size], strict=True):
            index = order[begin:end]
            t, s = int(target_pop[index[0]]), int(source_pop[index[0]])
            found.append(
                Projection(
                    target=t,
                    source=s,
                    i=(self.source[index] - first[s]).astype(np.int32),
                    j=(self.target[index] - first[t]).astype(np.int32),
                    weight_pA=self.weight_pA[index],
                    delay_steps=np.rint(self.delay_ms[index] / dt_ms).astype(np.int32),
                )
            )
        return found


def write(folder: Path, network: ExportedNetwork) -> dict:
    """Write network.npz into `folder`; returns its name, length and digest for the description."""
    path = folder / NETWORK_FILE
    arrays = {name: getattr(network, name) for name in ExportedNetwork.__dataclass_fields__}
    write_npz(path, compressed=False, **arrays)
    return {"file": NETWORK_FILE, "bytes": path.stat().st_size, "sha256": file_sha256(path)}


# What this process read: description key -> {description, sha256 of the bytes read, exported_by}.
_READ: dict[str, dict] = {}


@functools.cache
def _read(path: Path, mtime_ns: int, sha256: str, description: Path) -> tuple[ExportedNetwork, str]:
    with inputs.verified(path, sha256, description) as (f, digest), np.load(f) as arrays:
        network = ExportedNetwork(**{name: arrays[name] for name in ExportedNetwork.__dataclass_fields__})
    return network, digest


def read(params: dict) -> ExportedNetwork | None:
    """The exported network of a point, its bytes checked against the digest its description records
    (inputs.DamagedInput where the description or the file is damaged: both set aside, made again on
    the next run); None where the point draws its own (no network_seed). FileNotFoundError until rule
    describe_network made it."""
    if key(params) is None:
        return None
    where = description_path(params)
    description = inputs.read_json(where, set_aside_damaged=True)
    if not isinstance(description, dict) or not isinstance(description.get("sha256"), str):
        raise inputs.damaged(f"{where} is not an exported network's description (no sha256)", [where], True)
    path = where.parent / NETWORK_FILE
    if not path.exists():
        raise inputs.damaged(f"{path} is missing", [path, where], True)
    network, digest = _read(path, path.stat().st_mtime_ns, description["sha256"], where)
    _READ[key(params)] = {"description": key(params), "sha256": digest, "exported_by": description.get("exported_by")}
    return network
