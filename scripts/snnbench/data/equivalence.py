"""Cached samples are the naive ones: every sample, and every batch the loader makes, through
Tonic's DiskCachedDataset (when it fills the cache and when it reads it back) and
MemoryCachedDataset, equals the one made by running the transform (exactly, dtype included).

    python -m snnbench.data.equivalence [SAMPLES]   (prints a JSON report; runs in envs/tonic.yaml)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from snnbench.data import loading
from snnbench.data.synthetic import SyntheticSHD


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def _batches(dataset, tensors: str) -> list:
    loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=False, collate_fn=loading.Collate(tensors))
    return [(x.to_dense() if x.is_sparse else x, y) for x, y in loader]


def compare(samples: int = 24, time_bins: int = 20, seed: int = 3) -> dict:
    reads = loading.SourceReads()
    naive = SyntheticSHD(samples, seed, transform=loading.CountedFrames(time_bins, reads))
    expected = [naive[i] for i in range(samples)]
    report = {"samples": samples}
    with tempfile.TemporaryDirectory() as tmp:
        cached = {
            "disk": loading.wrap(naive, "disk", Path(tmp) / "cache"),
            "memory": loading.wrap(naive, "memory", Path(tmp) / "unused"),
        }
        for name, dataset in cached.items():
            for attempt in ("fill", "read"):
                before = reads.snapshot()[0]
                got = [dataset[i] for i in range(samples)]
                report[f"{name}_{attempt}_equal"] = all(
                    _same(g[0], e[0]) and int(g[1]) == int(e[1]) for g, e in zip(got, expected, strict=True)
                )
                report[f"{name}_{attempt}_source_reads"] = reads.snapshot()[0] - before
            for tensors in ("dense", "sparse"):
                pairs = zip(_batches(dataset, tensors), _batches(naive, "dense"), strict=True)
                report[f"{name}_{tensors}_batches_equal"] = all(
                    torch.equal(x, nx) and torch.equal(y, ny) for (x, y), (nx, ny) in pairs
                )
    return report


if __name__ == "__main__":
    print(json.dumps(compare(*map(int, sys.argv[1:2]))))
