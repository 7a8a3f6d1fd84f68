"""Snakemake entry (build_environment): make one environment (a simulator build's, or a named
environment's) in the per-user cache."""

from pathlib import Path

from snnbench import build_env
from snnbench.config import build_labels

build = snakemake.params.build  # noqa: F821 (provided by Snakemake)
labels = build_labels(snakemake.config, build["key"])  # noqa: F821 (how a failure names the build)
build_env.make(build, labels, Path(snakemake.log[0]), snakemake.threads)  # noqa: F821
