"""Snakemake entry (build_environment): make one environment (a simulator build's, or a named
environment's) in the per-user cache."""

from pathlib import Path

from snnbench.environments import maker, sources
from snnbench.planning.experiments import build_labels

build = snakemake.params.build  # noqa: F821 (provided by Snakemake)
labels = build_labels(snakemake.config, build["key"])  # noqa: F821 (how a failure names the build)
# Where its source is looked for: the config's keys, not params (a changed mirror must not remake it).
settings = sources.Settings.of(snakemake.config)  # noqa: F821
maker.make(build, labels, Path(snakemake.log[0]), snakemake.threads, settings)  # noqa: F821
