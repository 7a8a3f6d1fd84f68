"""Snakemake entry (link_environment): this checkout's .venv-<environment> on the cached environment <key>."""

from snnbench.environments import maker

with open(snakemake.log[0], "a") as log:  # noqa: F821 (provided by Snakemake)
    maker.link(snakemake.wildcards.environment, log, env_key=snakemake.params.key)  # noqa: F821
