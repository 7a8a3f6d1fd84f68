"""The snn-training family: training-step speed of PyTorch SNN libraries (one Linear(n, n) + LIF
layer written in snnbench.training.spec, or the seed paper's Conv/FC stack, spec.CONV).

One point per framework x architecture x device x dtype x matmul precision x time loop x memory strategy (x chunk
length for the chunked ones) x n x T x batch x seed,
run by snnbench.training.execute in the framework's environment. A point that cannot run here
(a CUDA point without a GPU, a missing environment) is recorded as skipped or failed with the
reason, so the workflow does not stop for it.
"""

from __future__ import annotations

import itertools

from snnbench.run.family import ChildFamily

# The family's figures: name -> panels (registered in snnbench.figures).
FIGURES: dict[str, list[str]] = {
    "training_time": [
        "training_forward_time",
        "training_backward_time",
        "training_step_time",
        "training_warmup",
        "training_not_run",
    ],
    "training_spike_rate": ["training_spike_rate"],
    "training_memory": ["training_memory_cpu", "training_memory_cuda"],
    "training_memory_T": ["training_peak_memory_T", "training_kept_memory_T"],
    "training_memory_tradeoff": ["training_memory_tradeoff", "training_memory_ratio_T"],
    "training_time_loop": ["training_time_loop"],
    "training_published_2023": ["training_published_2023_forward", "training_published_2023_backward"],
}


class Training(ChildFamily):
    name = "snn-training"
    point_pattern = (
        "{simulator}/{device}_{dtype}_{matmul_precision}_{time_loop}_{strategy}/"
        "{architecture}_n{n}_T{T}_B{batch}/seed{seed}"
    )
    point_regex = {
        "device": "[a-z0-9]+",
        "dtype": "[a-z0-9]+",
        "matmul_precision": "[a-z]+",
        "time_loop": "[a-z]+",
        "strategy": "[a-z0-9-]+",
        "architecture": "[a-z-]+",
        "n": r"\d+",
        "T": r"\d+",
        "batch": r"\d+",
        "seed": r"\d+",
    }
    series = "framework"
    sort_keys = (
        "experiment",
        "simulator",
        "architecture",
        "device",
        "time_loop",
        "strategy",
        "n",
        "T",
        "batch",
        "seed",
    )

    def check(self, index: int, experiment: dict) -> list[str]:
        block, where = experiment["snn_training"], f"experiments[{index}] ({experiment['name']})"
        problems = []
        for key, values in block.items():
            if isinstance(values, list) and len(set(values)) != len(values):
                problems.append(f"{where}: snn_training.{key} must not repeat: {values}")
        least, most = block["warmup_min_steps"], block["warmup_max_steps"]
        if least > most:  # the warm-up would stop at the most and call itself settled
            problems.append(
                f"{where}: snn_training.warmup_min_steps ({least}) must not exceed snn_training.warmup_max_steps "
                f"({most})"
            )
        if "vanilla" not in block["strategies"]:
            problems.append(
                f"{where}: snn_training.strategies {block['strategies']} lacks vanilla, the reference each memory "
                "strategy is measured against on the same point (the figure training_memory_tradeoff's ratios): "
                "add vanilla"
            )
        return problems

    def expand(self, experiment: dict) -> list[dict]:
        block = experiment["snn_training"]
        points = []
        grid = itertools.product(
            block["frameworks"],
            block["architectures"],
            block["devices"],
            block["dtypes"],
            block["matmul_precisions"],
            block["time_loops"],
            strategy_grid(block),
            block["n"],
            block["T"],
            block["batch"],
            experiment["seeds"],
        )
        for framework, architecture, device, dtype, precision, time_loop, strategy_chunk, n, steps, batch, seed in grid:
            strategy, chunk = strategy_chunk
            spec = {
                "experiment": experiment["name"],
                "model_name": self.name,
                "simulator": framework,
                "device": device,
                "resources": {"threads": block["threads"], "device": device},
                "model": {
                    "architecture": architecture,
                    "n": n,
                    "T": steps,
                    "batch": batch,
                    "dtype": dtype,
                    "matmul_precision": precision,
                    "time_loop": time_loop,
                    "strategy": strategy,
                    "chunk": chunk,
                },
                "timing": {
                    "repetitions": block["repetitions"][device],
                    "memory_repetitions": block["memory_repetitions"],
                    "warmup_min_steps": block["warmup_min_steps"],
                    "warmup_max_steps": block["warmup_max_steps"],
                },
                "seed": seed,
            }
            spec["path"] = self.point_dir(spec)
            points.append(spec)
        return points

    def point_fields(self, spec: dict) -> dict:
        from snnbench.training.spec import strategy_id

        model = spec["model"]
        strategy = strategy_id(model.get("strategy", "vanilla"), model.get("chunk"))
        fields = {"strategy": strategy, "simulator": spec["simulator"], "device": spec["device"], "seed": spec["seed"]}
        return {"architecture": "linear", **model, **fields}

    def summary(self, experiment: dict, specs: list[dict]) -> str:
        block = experiment["snn_training"]
        return (
            f"{experiment.get('description', '')} {len(specs)} points: one training step of "
            f"{', '.join(block['architectures'])} (linear: Linear(n, n) + LIF; conv / conv-bn: Liang et al.'s Conv/FC "
            f"stack, n hidden units) on {', '.join(block['frameworks'])}; n {block['n']}, T {block['T']}, "
            f"batch {block['batch']}; "
            f"strategies {', '.join(block['strategies'])}; "
            f"seeds {', '.join(map(str, experiment['seeds']))}."
        ).strip()

    def environment(self, spec: dict) -> str:
        from snnbench.training.execute import environment_for

        return environment_for(spec)

    def cpu_environments(self) -> list[str]:
        from snnbench.training.spec import FRAMEWORKS

        usable = [f for f in FRAMEWORKS.values() if not f.cuda_only and not f.unavailable]
        # NeuroBench's metrics of each point run in their own environment (envs/neurobench.yaml).
        return [*dict.fromkeys(f.environment for f in usable), "neurobench"]

    def workflow_makes_environment(self, spec: dict) -> bool:
        # CUDA-only libraries build their kernels against a CUDA torch, by hand on a GPU machine (their
        # envs files say how); unavailable ones have none. Their points are skipped or fail with the reason.
        from snnbench.training.spec import FRAMEWORKS

        framework = FRAMEWORKS[spec["simulator"]]
        return not (framework.cuda_only or framework.unavailable)

    # A point: the child (`python -m snnbench.training.run`, the framework's environment) times it;
    # snnbench.run.child runs it and writes the record, whatever happens.
    child_module, section = "snnbench.training.run", "training"
    result_keys = (
        "framework",
        "device",
        "timing",
        "memory",
        "activity",
        "sanity",
        "trainable_parameters",
        "neuron",
        "strategy",
        "neurobench",
    )

    def point_mem_mb(self, spec: dict) -> int:
        return estimate_mem_mb(spec)

    def skip_reason(self, spec: dict) -> str | None:
        from snnbench.training.execute import skip_reason

        return skip_reason(spec)

    def row(self, rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
        from snnbench.training.rows import training_row

        return training_row(rec, benchmark)

    def figures(self, config: dict) -> dict[str, list[str]]:
        return FIGURES

    def describe(self, rec: dict) -> dict:
        spec = rec["point"]
        res, model = spec["resources"], spec["model"]
        framework = (rec.get("training") or {}).get("framework") or {}
        return {
            "simulator": f"{spec['simulator']} {framework.get('version') or ''}".strip(),
            "shape": f"{res['device']}, {res['threads']} threads",
            "model": (
                f"{model.get('architecture', 'linear')} n={model['n']} T={model['T']} B={model['batch']} "
                f"{model['dtype']} {model['time_loop']}"
            ),
        }


def strategy_grid(block: dict) -> list[tuple[str, int | None]]:
    """(strategy, chunk) pairs: the chunked strategies once per chunk length, the others once."""
    from snnbench.training.spec import CHUNKED

    pairs = []
    for strategy in block["strategies"]:
        chunks = block["chunks"] if strategy in CHUNKED else [None]
        pairs.extend((strategy, chunk) for chunk in chunks)
    return pairs


def estimate_mem_mb(spec: dict) -> int:
    """Memory to request: the autograd graph keeps ~8 tensors of T x B x n per step (currents,
    membrane, spikes, masks; the convolutional network: its neurons instead of n, ~80 000 per sample)
    plus the weights and their gradient, plus ~1.5 GB for the interpreter, torch and the library;
    50 % headroom."""
    model = spec["model"]
    itemsize = 8 if model["dtype"] == "float64" else 4
    neurons = model["n"] if model.get("architecture", "linear") == "linear" else conv_neurons() + model["n"]
    graph = 8 * model["T"] * model["batch"] * neurons * itemsize
    weights = 3 * model["n"] ** 2 * itemsize
    return int(1.5 * ((graph + weights) / 1e6 + 1500))


def conv_neurons() -> int:
    """Neurons per sample of the convolutional network's conv layers (snnbench.training.spec.CONV)."""
    from snnbench.training.spec import CONV

    _, height, width = CONV["image"]
    c1, c2, c3 = CONV["channels"]
    return height * width * (c1 + c2) + height * width // 4 * c3 + CONV["classes"]
