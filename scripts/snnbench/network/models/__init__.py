"""Network models by name: the `model` of a network experiment and `model_name` of its points.

This registry is the one list of network models. Adding one: a module with a `NetworkModel`
subclass (snnbench.network.models.base), one entry here and, per simulator that runs it, a builder
(a snnbench.network.simulators.base.Backend subclass named in the model's `builders`). Models kept
outside the package (a site's own, the tests') are registered by the environment variable
SNNBENCH_NETWORK_MODELS, "name=module:Class" separated by commas: every process of a run (the
workflow, its jobs, the ranks) inherits it.
"""

from __future__ import annotations

import importlib
import os
from functools import cache

from snnbench.network.models.base import NetworkModel

# The model (family) of an experiment that names no `model`, and of a spec written before models had
# names: the one place this default is written (snnbench.families and the schema's default take it).
DEFAULT = "pd14"

MODELS = {
    "pd14": "snnbench.network.models.pd14:PD14",
    "hpc_benchmark": "snnbench.network.models.hpc_benchmark:HpcBenchmark",
    "multi_area_model": "snnbench.network.models.multi_area:MultiArea",
}
EXTRA_VARIABLE = "SNNBENCH_NETWORK_MODELS"


def registered() -> dict[str, str]:
    """name -> "module:Class" of every model: the package's, then those named by the variable."""
    extra = os.environ.get(EXTRA_VARIABLE, "")
    named = dict(item.strip().split("=", 1) for item in extra.split(",") if "=" in item)
    return {**MODELS, **named}


def of_spec(spec: dict) -> NetworkModel:
    return get(spec.get("model_name", DEFAULT))


def names() -> list[str]:
    return list(registered())


@cache
def get(name: str) -> NetworkModel:
    """The model named `name`; KeyError if none is registered under it."""
    module, cls = registered()[name].split(":")
    return getattr(importlib.import_module(module), cls)()
