"""What an snn-data point can be, in plain Python (no torch, no tonic): the loading strategies,
the models, the datasets and why a point cannot run here."""

from __future__ import annotations

from dataclasses import dataclass

ENVIRONMENT = "tonic"  # envs/tonic.yaml: tonic, torch (CPU build), numpy


@dataclass(frozen=True)
class Strategy:
    description: str
    cache: str  # none, disk, memory or gpu
    needs_gpu: bool = False


STRATEGIES = {
    "naive": Strategy("the dataset's transform (events -> frames) runs on every access, every epoch", "none"),
    "disk": Strategy("tonic.DiskCachedDataset: frames written to HDF5 files (lzf) in epoch 1, read back later", "disk"),
    "memory": Strategy("tonic.MemoryCachedDataset: frames kept in host memory from epoch 1 on", "memory"),
    "gpu": Strategy("frames cached on the GPU: epoch 1 loads naively and keeps each batch on the device", "gpu", True),
}

TENSORS = {
    "dense": "batches travel to the device as dense int16 frames",
    "sparse": "batches become sparse COO tensors in the loader, travel sparse, and are made dense on the device",
}

MODELS = {
    "lif": "Linear(700, hidden) + LIF, Linear(hidden, classes) + LIF (snnbench.training's reference neuron), "
    "loss on the output spike counts: compute-heavy",
    "linear": "frames summed over time, Linear(700, classes): compute-light, so loading shows",
}

# Tonic's classes for the real datasets and the file each needs under <data_root>/<class>/ (the
# archive and its extracted HDF5 file, as Tonic checks them); snnbench never downloads.
REAL_DATASETS = {
    "shd": ("SHD", ("shd_train.h5.zip", "shd_train.h5")),
    "ssc": ("SSC", ("ssc_train.h5.zip", "ssc_train.h5")),
}
DATASETS = ("synthetic", *REAL_DATASETS)
SENSOR_SIZE = (700, 1, 1)  # SHD and SSC: 700 cochlea channels, one polarity


def skip_reason(spec: dict, gpu_present: bool, gpu_why: str = "") -> str | None:
    """Why a point cannot run on this machine (before its child starts), or None."""
    if spec["device"] == "cuda" and not gpu_present:
        return f"no GPU: {gpu_why}".rstrip(": ")
    if STRATEGIES[spec["loader"]["strategy"]].needs_gpu and spec["device"] != "cuda":
        return "no GPU: the gpu strategy caches frames on a CUDA device; this point's device is cpu"
    return None


def missing_files(dataset: dict) -> list[str]:
    """The files a real dataset needs that are not on disk (empty for the synthetic one)."""
    from pathlib import Path

    if dataset["name"] not in REAL_DATASETS:
        return []
    folder, files = REAL_DATASETS[dataset["name"]]
    root = Path(dataset["root"]).expanduser() / folder
    return [str(root / name) for name in files if not (root / name).is_file()]
