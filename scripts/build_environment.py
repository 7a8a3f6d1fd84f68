"""Snakemake entry (build_environment): make one build's environment in the per-user cache."""

from pathlib import Path

from snnbench import build_env

params = snakemake.params  # noqa: F821 (provided by Snakemake)
build_env.make(params.build, params.build["requirements"], params.labels, Path(snakemake.log[0]), snakemake.threads)  # noqa: F821
