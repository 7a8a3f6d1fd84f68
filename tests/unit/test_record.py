"""Merging per-rank results into a point record, and the record schema."""

import copy

import jsonschema
import numpy as np
import pytest
from snnbench.network import ranks
from snnbench.network.phases import PHASES
from snnbench.records import record


def rank(r, n, scale=1.0, rss=100.0):
    return {
        "rank": r,
        "num_ranks": n,
        "threads": 2,
        "host": f"node{r // 2}",
        "phases_s": {p: scale * (i + 1) for i, p in enumerate(PHASES)},
        "rss_after_phase_mb": {p: rss for p in PHASES},
        "peak_rss_mb": rss,
        "simulator_timers_s": {"simulate": {"time_simulate": scale * 6.0}, "connect": {"time_construction_connect": r}},
        "local_synapses": 1000 + r,
        "population_first_ids": [1],
        "local_spikes": 0,
        "simulator_version": "3.10.0",
        "simulator_info": {},
    }


def test_merge_takes_slowest_rank_and_sums_memory_and_synapses():
    merged = ranks.merge_ranks([rank(1, 3, 2.0, 300.0), rank(0, 3, 1.0, 100.0), rank(2, 3, 0.5, 200.0)])
    assert merged["phases_s"]["simulate"] == 12.0  # rank 1: 2.0 * 6
    assert merged["phases_s"]["total"] == 2.0 * sum(range(1, 7))
    assert merged["memory"] == {"peak_rss_mb_sum": 600.0, "peak_rss_mb_max_rank": 300.0}
    assert merged["num_synapses"] == 3003
    assert merged["simulator_timers_s"]["simulate"]["time_simulate"] == 12.0
    assert merged["simulator_timers_s"]["connect"]["time_construction_connect"] == 2
    assert merged["hosts"] == ["node0", "node1"]


def test_total_is_slowest_rank_sum_not_sum_of_maxima():
    a, b = rank(0, 2), rank(1, 2)
    a["phases_s"]["connect"], b["phases_s"]["simulate"] = 10.0, 10.0
    merged = ranks.merge_ranks([a, b])
    assert merged["phases_s"]["total"] == pytest.approx(21 - 3 + 10)  # not 21 - 3 - 6 + 20


def test_missing_rank_is_an_error():
    with pytest.raises(ValueError, match="expected ranks 0..2"):
        ranks.merge_ranks([rank(0, 3), rank(2, 3)])


def test_merge_spikes(tmp_path):
    for r in range(2):
        np.savez(tmp_path / f"rank{r}.npz", senders=np.array([r + 1, r + 3]), times_ms=np.array([1.0, 2.0]))
    senders, times = ranks.merge_spikes(sorted(tmp_path.glob("*.npz")))
    assert sorted(senders.tolist()) == [1, 2, 3, 4] and times.size == 4


def failed_record():
    return {
        "schema_version": 1,
        "point": {
            "experiment": "e",
            "simulator": "nest",
            "scaling": "strong",
            "resources": {},
            "model": {},
            "seed": 1,
            "path": "results/e",
        },
        "status": "failed",
        "failure": {"reason": "killed by SIGKILL"},
        "provenance": {k: {} for k in ["workflow", "python", "packages", "host", "environment"]}
        | {"started_utc": "now", "benchmark_hash": "x"},
        "wall_time_s": 1.0,
    }


def test_schema_accepts_failed_record_and_rejects_inconsistent_ones():
    rec = failed_record()
    record.validate(rec)
    ok_without_results = copy.deepcopy(rec) | {"status": "ok", "failure": None}
    with pytest.raises(jsonschema.ValidationError, match="'phases_s' is a required property"):
        record.validate(ok_without_results)
    failed_without_reason = rec | {"failure": None}
    with pytest.raises(jsonschema.ValidationError):
        record.validate(failed_without_reason)
    with pytest.raises(jsonschema.ValidationError, match="'done' is not one of"):
        record.validate(rec | {"status": "done"})


def test_write_is_atomic_and_validated(tmp_path):
    path = tmp_path / "record.json"
    with pytest.raises(jsonschema.ValidationError):
        record.write(failed_record() | {"status": "bogus"}, path)
    assert not path.exists() and not list(tmp_path.iterdir())
    record.write(failed_record(), path)
    assert path.exists() and [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_spikes_are_written_whole_or_not_at_all(tmp_path):
    """A point's .npz files go through jsonfile.write_npz: a writer stopped halfway (here by its second array)
    leaves the earlier file as it was, never half an archive that a head's checks would set aside."""
    from snnbench.jsonfile import write_npz

    class Unreadable:
        def __array__(self, *args, **kwargs):
            raise OSError("stopped halfway")

    path = tmp_path / "spikes.npz"
    write_npz(path, senders=np.array([1, 2]), times_ms=np.array([0.5, 1.5]))
    before = path.read_bytes()
    with pytest.raises(OSError, match="stopped halfway"):
        write_npz(path, senders=np.arange(1000), times_ms=Unreadable())
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["spikes.npz"]
    with np.load(path) as spikes:
        assert spikes["senders"].tolist() == [1, 2]
