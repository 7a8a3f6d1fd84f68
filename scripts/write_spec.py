"""Snakemake entry (configure_point): write the point's spec, its full parameter set."""

from snnbench.jsonfile import write_json

# (The checks before any job write a damaged spec again the same way: snnbench.planning.before_jobs.)
write_json(snakemake.params.spec, snakemake.output.spec)  # noqa: F821 (provided by Snakemake)
