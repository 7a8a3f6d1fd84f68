"""The snn-data family: data loading for SNN training (Tonic's strategies) measured with the
training step (snnbench.data).

One point per dataset x strategy x tensors x workers x pinned memory x prefetching x model x
device x batch x seed, run by snnbench.data.run in envs/tonic.yaml's environment (its parent:
snnbench.run.child). A point that cannot run here (a GPU strategy or cuda device without a GPU,
dataset files not on disk) is recorded as skipped with the reason, so the workflow does not stop for it.
"""

from __future__ import annotations

import itertools

from snnbench.run.family import ChildFamily

CLASSES = {"shd": 20, "ssc": 35}  # the real datasets' label counts


# The family's figures: name -> panels (registered in snnbench.figures).
FIGURES: dict[str, list[str]] = {
    "data_epoch_time": ["data_epoch_parts", "data_first_epoch_parts"],
    "data_speedup": ["data_speedup", "data_not_run"],
    "data_cache": ["data_cache_footprint"],
}


class Data(ChildFamily):
    name = "snn-data"
    point_pattern = (
        "{dataset}/{strategy}_{tensors}_w{workers}_{pin}_pf{prefetch_factor}/{framework}_{device}_B{batch}/seed{seed}"
    )
    point_regex = {
        "dataset": "[a-z]+",
        "strategy": "[a-z]+",
        "tensors": "[a-z]+",
        "workers": r"\d+",
        "pin": "[a-z]+",
        "prefetch_factor": r"\d+",
        "framework": "[a-z]+",
        "device": "[a-z]+",
        "batch": r"\d+",
        "seed": r"\d+",
    }
    series = "strategy"
    sort_keys = ("experiment", "dataset", "framework", "device", "strategy", "tensors", "workers", "batch", "seed")

    def check(self, index: int, experiment: dict) -> list[str]:
        block, where = experiment["snn_data"], f"experiments[{index}] ({experiment['name']})"
        problems = [
            f"{where}: snn_data.{key} must not repeat: {values}"
            for key, values in block.items()
            if isinstance(values, list) and len(set(map(str, values))) != len(values)
        ]
        if "gpu" in block["strategies"] and "cuda" not in block["devices"]:
            problems.append(f"{where}: snn_data.strategies gpu caches frames on a GPU: add cuda to snn_data.devices")
        if set(block["datasets"]) - {"synthetic"} and not block.get("data_root"):
            problems.append(
                f"{where}: snn_data.data_root must name the folder holding SHD / SSC for {block['datasets']}"
            )
        return problems

    def expand(self, experiment: dict) -> list[dict]:
        block = experiment["snn_data"]
        grid = itertools.product(
            block["datasets"],
            block["strategies"],
            block["tensors"],
            block["workers"],
            block["pin_memory"],
            block["prefetch_factor"],
            block["models"],
            block["devices"],
            block["batch"],
            experiment["seeds"],
        )
        points = {}
        for dataset, strategy, tensors, workers, pin, prefetch, model, device, batch, seed in grid:
            if strategy == "gpu" and device != "cuda":
                continue  # frames cached on the GPU exist only on cuda points
            spec = {
                "experiment": experiment["name"],
                "model_name": self.name,
                "simulator": strategy,
                "device": device,
                "resources": {"threads": block["threads"], "device": device},
                "dataset": {
                    "name": dataset,
                    "root": block.get("data_root", ""),
                    "samples": block["samples"],
                    "time_bins": block["time_bins"],
                    "classes": CLASSES.get(dataset, block["synthetic"]["classes"]),
                    "synthetic": block["synthetic"],
                },
                "loader": {
                    "strategy": strategy,
                    "tensors": tensors,
                    "workers": workers,
                    "pin_memory": pin,
                    "prefetch_factor": prefetch if workers else 0,  # no workers: nothing prefetches
                    "shuffle": block["shuffle"],
                },
                "model": {"name": model, "hidden": block["hidden"], "batch": batch},
                "epochs": block["epochs"],
                "seed": seed,
            }
            spec["path"] = self.point_dir(spec)
            points.setdefault(spec["path"], spec)
        return list(points.values())

    def point_fields(self, spec: dict) -> dict:
        loader = spec["loader"]
        return {
            **loader,
            "pin": "pinned" if loader["pin_memory"] else "pageable",
            "dataset": spec["dataset"]["name"],
            "framework": spec["model"]["name"],
            "batch": spec["model"]["batch"],
            "device": spec["device"],
            "seed": spec["seed"],
        }

    def summary(self, experiment: dict, specs: list[dict]) -> str:
        block = experiment["snn_data"]
        return (
            f"{experiment.get('description', '')} {len(specs)} points: {block['epochs']} epochs of "
            f"{block['samples']} samples ({', '.join(block['datasets'])}, {block['time_bins']} time bins) loaded "
            f"with {', '.join(block['strategies'])}; models {', '.join(block['models'])}; workers {block['workers']}; "
            f"batch {block['batch']}; seeds {', '.join(map(str, experiment['seeds']))}."
        ).strip()

    def environment(self, spec: dict) -> str:
        from snnbench.data.spec import ENVIRONMENT

        return ENVIRONMENT

    def cpu_environments(self) -> list[str]:
        return [self.environment({})]

    # A point: the child (`python -m snnbench.data.run`, envs/tonic.yaml) in a scratch directory (its disk
    # cache included, removed afterwards); snnbench.run.child runs it and writes the record, whatever happens.
    child_module, section = "snnbench.data.run", "data"
    result_keys = ("versions", "dataset", "device", "epochs", "summary", "memory", "trainable_parameters")

    def point_mem_mb(self, spec: dict) -> int:
        return estimate_mem_mb(spec)

    def skip_reason(self, spec: dict) -> str | None:
        """A cuda device or the gpu strategy without a GPU: skipped, without a child."""
        from snnbench.data import spec as data_spec
        from snnbench.machine import gpu

        present, why = gpu.present() if spec["device"] == "cuda" else (False, "")
        return data_spec.skip_reason(spec, present, why)

    def row(self, rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
        from snnbench.data.rows import data_row

        return data_row(rec, benchmark)

    def figures(self, config: dict) -> dict[str, list[str]]:
        return FIGURES

    def describe(self, rec: dict) -> dict:
        spec = rec["point"]
        loader, model = spec["loader"], spec["model"]
        return {
            "simulator": f"{loader['strategy']} ({loader['tensors']}, {loader['workers']} workers)",
            "shape": f"{spec['device']}, {spec['resources']['threads']} threads",
            "model": f"{model['name']} B={model['batch']} on {spec['dataset']['name']}",
        }


def estimate_mem_mb(spec: dict) -> int:
    """Memory to request: the frames of every sample (a memory cache holds them all; T x 700 int16
    each), each worker's copy of the interpreter (~0.5 GB), ~1.5 GB for torch and tonic; 50 % headroom."""
    frames_mb = spec["dataset"]["samples"] * spec["dataset"]["time_bins"] * 700 * 2 / 1e6
    return int(1.5 * (frames_mb + 500 * spec["loader"]["workers"] + 1500))
