"""The interface every benchmark family implements.

A family turns one config experiment into points and knows everything about them that differs
between families: the path of a point, its environment, its resources, how its child process
runs and records it, how a record becomes a table row, how points are judged valid, and which
figures the experiment gets. Rules, collect, provenance, the report and the figure runner call
these methods and nothing else, so none of them branches on the family.
"""

from __future__ import annotations

from pathlib import Path

from snnbench import paths
from snnbench.records import inputs


class Family:
    name = "abstract"  # the `model` value of a config experiment, and `model_name` of its specs
    # A point's directory below results/<experiment>/: three levels and the seed. Fields are the
    # keys of point_fields(spec); point_regex gives each field's wildcard expression.
    point_pattern = "{a}/{b}/{c}/seed{seed}"
    point_regex: dict[str, str] = {}
    # Files the execute step writes into the point's directory (record.json first).
    outputs: tuple[str, ...] = ("record.json",)
    # Files of a point the collect step reads beside the record (e.g. validation results).
    collected: tuple[str, ...] = ()
    # Files later steps make from a point's outputs and other steps read (e.g. its spike statistics): checked
    # before any job as its outputs are, and made again, where set aside, when a step reads them.
    statistics: tuple[str, ...] = ()
    # The column of points.csv that names a figure's series, and the columns its rows sort by.
    series = "simulator"
    sort_keys: tuple[str, ...] = ("experiment", "simulator", "seed")
    # Top-level config keys whose value is the default of the same key in each of the family's
    # experiments (a site default that an experiment overrides), e.g. the network family's binding.
    site_defaults: tuple[str, ...] = ()
    # Whether a point's SLURM job asks for whole nodes unless the config's slurm.exclusive says
    # (snnbench.planning.slurm_request): off for one process on a few cores or one GPU of a shared node.
    slurm_exclusive = False

    # --- config -> points
    def check(self, index: int, experiment: dict) -> list[str]:
        """Problems the schema cannot express, each naming the key."""
        return []

    def expand(self, experiment: dict) -> list[dict]:
        """The experiment's points (specs), each with its `path`."""
        raise NotImplementedError

    def shared_experiment(self, experiment: dict) -> dict | None:
        """An experiment the workflow derives from this one and shares with every experiment that derives
        the same (a reference ensemble of seeds, named by its content), or None."""
        return None

    def point_fields(self, spec: dict) -> dict:
        raise NotImplementedError

    def point_dir(self, spec: dict) -> str:
        return paths.point_path(spec["experiment"], self.point_pattern.format(**self.point_fields(spec)))

    def point_regex_str(self) -> str:
        """The regular expression of this family's <point> part (the workflow's wildcard constraint)."""
        return paths.pattern_regex(self.point_pattern, self.point_regex)

    def point_glob(self) -> str:
        return paths.pattern_glob(self.point_pattern)

    def builds(self, experiment: dict) -> list[tuple[str, dict]]:
        """The experiment's simulator builds (snnbench.environments.builds): (label, the spec's build) for each."""
        return []

    def summary(self, experiment: dict, specs: list[dict]) -> str:
        """What was run, in words, for captions."""
        raise NotImplementedError

    # --- where and with what a point runs
    def environment(self, spec: dict) -> str:
        """The point's environment (envs/<name>.yaml)."""
        raise NotImplementedError

    def mem_mb(self, spec: dict, config: dict) -> int:
        """Memory to request per node for the point; may read the point's derived inputs (a
        FileNotFoundError for one of them leaves the request to be determined once it exists)."""
        return self.resources(spec, config)["mem_mb"]

    def derivations(self, spec: dict) -> dict[str, dict]:
        """Files a point reads besides its spec and environment, each derived once by another rule
        (e.g. a network model's description): path -> {environment: envs/<name>.yaml it is made in,
        module: `python -m <module> PARAMS_JSON OUT`, params: what defines it}."""
        return {}

    def derived_problem(self, path: str, derivation: dict) -> tuple[str, list[Path]] | None:
        """What makes a derived file (a path of derivations(), with its derivation) not what its points
        read, found cheaply before any job (no digest: that is checked where a point reads it), and the
        files to set aside with it so that its rule makes them again; None: nothing wrong or not made."""
        return None

    def derived_environments(self, experiment: dict) -> list[str]:
        """Environments (envs/<name>.yaml) that the experiment's derived inputs are made in."""
        return []

    def cpu_environments(self) -> list[str]:
        """The environments (envs/<name>.yaml) this family's points use on a machine without a GPU,
        besides the workflow's own: what `make test` makes (snnbench.planning.cpu_environments)."""
        return []

    def workflow_makes_environment(self, spec: dict) -> bool:
        """Whether the workflow makes the point's environment before it runs (False: one made by hand,
        whose file cannot be installed as it is, e.g. CUDA kernels built on a GPU machine)."""
        return True

    def missing_environment(self, spec: dict) -> str | None:
        """Why the point cannot start here, if that must stop the workflow before any job."""
        return None

    def local_problem(self, spec: dict) -> tuple[str, str] | None:
        """Under an executor that runs jobs on this machine: (the experiment's key, why) where the point
        cannot run as asked on this machine (e.g. a binding its shape cannot get), else None."""
        return None

    def resources(self, spec: dict, config: dict) -> dict:
        """threads, mem_mb, nodes, tasks (in all) or tasks_per_node, cpus_per_task, mpi, gpu."""
        raise NotImplementedError

    def run_point(self, spec: dict, spec_path: Path, outputs: dict, log_path: Path, config: dict, time_limit_s: float):
        """Run the point (spec: spec_path's content) in a child process, killed after time_limit_s, and
        write its record (and other outputs), whatever happens. Returns the record."""
        raise NotImplementedError

    def import_run(self, spec: dict, run_dir: Path, outputs: dict, log_path: Path, config: dict) -> dict:
        """Write the record (and other outputs) of a point whose child process ran outside the
        workflow, from what it left in run_dir (snnbench.results.import_runs). Returns the record."""
        raise NotImplementedError

    # --- record -> tables, figures, report
    def row(self, rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
        """One record as the columns of points.csv (parameters, outcome, measurements, `valid`)."""
        raise NotImplementedError

    def rank_rows(self, rec: dict) -> list[dict]:
        return []

    def finish_table(self, points, beside: list, tolerance: dict | None):
        """Columns judged across points (validation, efficiency, agreement). `beside`: (point path,
        {file name: content of the `collected` files}) per point. Returns (points, long table)."""
        import pandas as pd

        return points, pd.DataFrame()

    def series_of(self, experiment: dict) -> str:
        """The column naming a figure's series for one experiment (default: the family's `series`)."""
        return self.series

    def figures(self, config: dict) -> dict[str, list[str]]:
        """The experiment's figures: name -> panels."""
        return {}

    def describe(self, rec: dict) -> dict:
        """simulator, shape and model of a record, in words, for the provenance table."""
        raise NotImplementedError

    def collected_problem(self, name: str, content) -> str | None:
        """What makes the content of a `collected` file not what collect reads, or None."""
        return None if isinstance(content, dict) else "not a JSON object"

    def output_problem(self, name: str, path: Path) -> str | None:
        """What makes an existing output of a point other than its record (checked against the record
        schema) not what its readers read, found cheaply before any job (an .npz's zip directory); None."""
        return inputs.npz_problem(path) if name.endswith(".npz") else None

    def archived(self, config: dict) -> tuple[str, ...]:
        """Files of each point that an archive packs."""
        return ("spec.json", "record.json", *self.collected)


class ChildFamily(Family):
    """A family whose point is one child process writing result.json (snn-training, snn-data): its
    resources, running a point and importing one run elsewhere are snnbench.run.child's, from what
    the family names here. The network family launches its MPI ranks its own way."""

    child_module = ""  # `python -m <child_module> SPEC SCRATCH` runs a point
    section = ""  # the record's key of the child's result
    result_keys: tuple[str, ...] = ()  # what of result.json the record keeps

    def point_mem_mb(self, spec: dict) -> int:
        """Memory to request for a point (the one process)."""
        raise NotImplementedError

    def skip_reason(self, spec: dict) -> str | None:
        """Why the point cannot run here (recorded as skipped without a child); None: it runs."""
        return None

    def resources(self, spec: dict, config: dict) -> dict:
        from snnbench.run import child

        return child.resources(spec, self.point_mem_mb(spec))

    def run_point(self, spec: dict, spec_path: Path, outputs: dict, log_path: Path, config: dict, time_limit_s: float):
        from snnbench.run import child

        return child.run_point(
            spec_path,
            outputs["record.json"],
            log_path,
            time_limit_s,
            spec=spec,
            skip_reason=self.skip_reason,
            environment=self.environment(spec),
            module=self.child_module,
            section=self.section,
            keys=self.result_keys,
        )

    def import_run(self, spec: dict, run_dir: Path, outputs: dict, log_path: Path, config: dict) -> dict:
        from snnbench.run import child

        record_path = outputs["record.json"]
        return child.import_run(spec, run_dir, record_path, log_path, section=self.section, keys=self.result_keys)
