"""From a validated `model: snn-training` experiment to its points (specs with readable paths).

One point per framework x device x dtype x matmul precision x time loop x n x T x batch x seed:
`results/<experiment>/<framework>/<device>_<dtype>_<precision>_<loop>/n<n>_T<T>_B<batch>/seed<seed>`.
"""

from __future__ import annotations

import itertools

MODEL = "snn-training"
POINT_DIR = "results/{experiment}/{simulator}/{variant}/{size}/seed{seed}"
VARIANT = "{device}_{dtype}_{matmul_precision}_{time_loop}"
SIZE = "n{n}_T{T}_B{batch}"


def is_training(experiment: dict) -> bool:
    return experiment.get("model") == MODEL


def expand(experiment: dict) -> list[dict]:
    block = experiment["snn_training"]
    points = []
    for framework, device, dtype, precision, time_loop, n, steps, batch, seed in itertools.product(
        block["frameworks"],
        block["devices"],
        block["dtypes"],
        block["matmul_precisions"],
        block["time_loops"],
        block["n"],
        block["T"],
        block["batch"],
        experiment["seeds"],
    ):
        spec = {
            "experiment": experiment["name"],
            "model_name": MODEL,
            "simulator": framework,
            "device": device,
            "resources": {"threads": block["threads"], "device": device},
            "model": {
                "n": n,
                "T": steps,
                "batch": batch,
                "dtype": dtype,
                "matmul_precision": precision,
                "time_loop": time_loop,
            },
            "timing": {
                "repetitions": block["repetitions"][device],
                "warmup_min_steps": block["warmup_min_steps"],
                "warmup_max_steps": block["warmup_max_steps"],
            },
            "seed": seed,
        }
        spec["path"] = point_dir(spec)
        points.append(spec)
    return points


def point_dir(spec: dict) -> str:
    model = spec["model"]
    return POINT_DIR.format(
        experiment=spec["experiment"],
        simulator=spec["simulator"],
        variant=VARIANT.format(device=spec["device"], **model),
        size=SIZE.format(**model),
        seed=spec["seed"],
    )


def check(index: int, experiment: dict) -> list[str]:
    """Problems the schema cannot express (repeated values), as messages naming the key."""
    problems = []
    for key, values in experiment["snn_training"].items():
        if isinstance(values, list) and len(set(values)) != len(values):
            problems.append(
                f"experiments[{index}] ({experiment['name']}): snn_training.{key} must not repeat: {values}"
            )
    return problems


def estimate_mem_mb(spec: dict) -> int:
    """Memory to request: the autograd graph keeps ~8 tensors of T x B x n per step (currents,
    membrane, spikes, masks) plus the weights and their gradient, plus ~1.5 GB for the
    interpreter, torch and the library; 50 % headroom."""
    model = spec["model"]
    itemsize = 8 if model["dtype"] == "float64" else 4
    graph = 8 * model["T"] * model["batch"] * model["n"] * itemsize
    weights = 3 * model["n"] ** 2 * itemsize
    return int(1.5 * ((graph + weights) / 1e6 + 1500))
