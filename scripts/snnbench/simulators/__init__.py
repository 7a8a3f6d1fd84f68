"""Simulator backends by name. The names are the `simulators` values of the config schema."""

from __future__ import annotations

import importlib

# name -> "module:Class", imported on demand so that one simulator's environment need not
# hold the others.
BACKENDS = {
    "nest": "snnbench.simulators.nest:NestBackend",
}


def get_backend(name: str):
    if name not in BACKENDS:
        raise ValueError(f"unknown simulator {name!r}; known: {', '.join(sorted(BACKENDS))}")
    module, cls = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), cls)
