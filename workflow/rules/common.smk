# Helpers for the rules: the campaign planned once (snnbench.planning.campaign) and every input/param/resource
# function. Rule files only declare rules. Nothing here names a benchmark family: each experiment's
# family (snnbench.families) expands it into points and answers for them.
import errno
import os
import sys
import time
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from snnbench import environments, jsonfile, paths, planning
from snnbench.environments import builds
from snnbench.planning import after_run, before_jobs, earlier_head, slurm_request
from snnbench.records import inputs
from snnbench.tables import summary as run_summary
from snnbench.tables import onerror as tables_onerror  # `onerror` is Snakemake's: the handler (Workflow.onerror)

RUN_STARTED = time.time()  # forced files must be made after it (check_targets_made)

# One planner for the workflow, `make check-config` and the tests: refused before any job in lines
# naming the file, the key and what is allowed. A job that the executor starts (SLURM) reads this
# again: the main process that started it checked the config, and only that planning host refuses
# unrunnable points and sets damaged records aside (a dry run only names them).
try:
    CAMPAIGN = planning.plan(
        config,
        workflow.configfiles,
        uses_conda=any(m.name.lower() == "conda" for m in workflow.deployment_settings.deployment_method),
        checked=not workflow.is_main_process,
    )
    if workflow.is_main_process:
        # (workflow.dryrun is not yet known while the Snakefile is read; the output settings are.)
        dry_run = bool(workflow.output_settings and workflow.output_settings.dryrun)
        _command = before_jobs.CommandLine.of_this_process()
        if _command.executor == "slurm":  # first: a job of a head killed hard may still write its point
            for _line in earlier_head.settle(Path.cwd(), dry_run, sys.argv):
                logger.warning(_line)
        for _line in before_jobs.prepare(CAMPAIGN, dry_run, _command):
            logger.warning(_line)
except (planning.ConfigRefused, before_jobs.CannotRun) as error:
    raise WorkflowError(str(error))
EXPERIMENTS = CAMPAIGN.experiments
FAMILY = CAMPAIGN.family
USED_FAMILIES = CAMPAIGN.used_families
FIGURES = CAMPAIGN.figures
COMPARISONS = CAMPAIGN.comparisons
ARCHIVES = CAMPAIGN.archives
RACE = CAMPAIGN.race
BUILD_COMPARISONS = CAMPAIGN.build_comparisons
POINT = paths.POINT
POINT_LOG = "{experiment}/{point}"


wildcard_constraints:
    experiment="|".join(EXPERIMENTS),
    point="|".join(f"(?:{family.point_regex_str()})" for family in USED_FAMILIES.values()),
    figure="|".join({figure for experiment in FIGURES.values() for figure in experiment}) or "^$",
    comparison="|".join(COMPARISONS) or "^$",
    archive="|".join(ARCHIVES) or "^$",
    key=builds.KEY_PATTERN,


def get_point_spec(wildcards):
    spec = CAMPAIGN.point(wildcards.experiment, wildcards.point)
    if spec is None:
        path = paths.point_path(wildcards.experiment, wildcards.point)
        raise WorkflowError(f"{path} is not a point of the configured experiments")
    return spec


def get_point_spec_as_written(wildcards):
    """configure_point's params: the point's spec, in the key order of its spec.json where that file holds
    the same spec. Snakemake compares params by their repr, so a config whose keys were only reordered
    would otherwise rerun every finished point."""
    spec = get_point_spec(wildcards)
    written = jsonfile.read_json_if_whole(Path(spec["path"], "spec.json"))
    return written if written == spec else spec


def family_experiments(family):
    """The experiments of one family (the execute rule of that family matches only them)."""
    return "|".join(name for name, of in FAMILY.items() if of is family)


def family_outputs(family):
    return {Path(name).stem: f"{POINT}/{name}" for name in family.outputs}


def get_point_environment(wildcards):
    """This checkout's link of the point's environment (its build's, or a named one's), made after
    the cached environment (ancient: an environment remade or relinked must not make finished
    points rerun)."""
    environment = CAMPAIGN.linked_environment(get_point_spec(wildcards))
    return [ancient(str(environments.link_marker(environment)))] if environment else []


def get_point_derived_inputs(wildcards):
    """Files the point reads that a rule derives once (a network model's description). A finished point
    reads them as `ancient`: one made again (set aside damaged before any job) reruns no point that read
    the old one (its record names the digest of what it read). A point still to run reads them plainly,
    or Snakemake would not run it after its rule (snakemake/snakemake#4166)."""
    spec = get_point_spec(wildcards)
    family = FAMILY[spec["experiment"]]
    derived = list(family.derivations(spec))
    return [ancient(path) for path in derived] if _finished(spec, family) else derived


def _finished(spec, family):
    """Whether every output of the point is there and this run does not force it."""
    outputs = [f"{spec['path']}/{name}" for name in family.outputs]
    dag = workflow.dag
    forced = dag is None or any(rule.name == execute_rule(family) for rule in dag.forcerules)
    forced = forced or not dag.forcefiles.isdisjoint(outputs)
    return not forced and all(os.path.exists(path) for path in outputs)


def _derivation(wildcards):
    path = paths.NETWORK_DESCRIPTION.format(**wildcards)
    if path not in CAMPAIGN.derivations:
        raise WorkflowError(f"{path} is the description of no configured point")
    return CAMPAIGN.derivations[path]


def get_description_environment(wildcards):
    """The link of the environment a description is derived in (ancient: relinking derives nothing anew);
    none for a main environment (.venv) or under conda."""
    environment = _derivation(wildcards)["environment"]
    if CAMPAIGN.uses_conda or environment in environments.MAIN:
        return []
    return [ancient(str(environments.link_marker(environment)))]


def get_description_conda_env(wildcards):
    return str(environments.file(_derivation(wildcards)["environment"]))


def get_description_remade(wildcards):
    """The note of a description set aside in place (snnbench.records.inputs): its rule makes it again."""
    return inputs.remade_trigger(paths.NETWORK_DESCRIPTION.format(**wildcards))


def get_description_params(wildcards):
    return _derivation(wildcards)


def get_linked_key(wildcards):
    """The key of the cached environment a checkout's .venv-<environment> stands on: a param, so
    that an edited envs file links anew (without making finished points rerun)."""
    return builds.linked_key(wildcards.environment) or environments.key(wildcards.environment)


def get_linked_environment(wildcards):
    return ancient(str(environments.made_marker(get_linked_key(wildcards))))


def get_build(wildcards):
    # Only what defines the environment (its key): a param that changed with the names or experiments
    # using it would make Snakemake remake a shared environment.
    return CAMPAIGN.environments_to_make[wildcards.key]["content"]


def get_point_conda_env(wildcards):
    spec = get_point_spec(wildcards)
    return str(environments.file(FAMILY[spec["experiment"]].environment(spec)))


_RESOURCES = {}


def get_point_resource(key):
    """A resource of the point from its family: threads, mem_mb, nodes, tasks (MPI ranks in all) or
    tasks_per_node, cpus_per_task (threads per rank), mpi, gpu."""

    def value(wildcards):
        spec = get_point_spec(wildcards)
        if spec["path"] not in _RESOURCES:
            _RESOURCES[spec["path"]] = FAMILY[spec["experiment"]].resources(spec, config)
        return _RESOURCES[spec["path"]][key]

    return value


def get_point_mem_mb(wildcards, input):
    """Memory per node from the point's family. A family that reads a derived input for it (a network
    description's synapse count) cannot until that is made (or made again: a damaged one is set aside
    before any job, in a dry run only named); Snakemake then leaves the request to be determined once
    it is (<TBD>), but only for a FileNotFoundError whose filename is one of the job's input files as
    the job spells them: the error is raised again naming that input."""
    spec = get_point_spec(wildcards)
    try:
        return FAMILY[spec["experiment"]].mem_mb(spec, config)
    except (FileNotFoundError, inputs.DamagedInput) as unread:
        named = getattr(unread, "filename", None) or getattr(unread, "path", None)
        for path in input:
            if named and os.path.realpath(path) == os.path.realpath(named):
                raise FileNotFoundError(errno.ENOENT, "not made yet", str(path)) from None
        raise


def get_point_runtime_min(wildcards):
    # The scheduler's limit leaves the run's own time limit room to record a time-out.
    return int(planning.time_limit_s(config, get_point_spec(wildcards)) / 60) + 5


def get_point_slurm(key):
    """A site setting (partition, account, constraint, qos): the experiment's, else the config's."""

    def value(wildcards):
        experiment = EXPERIMENTS[wildcards.experiment]
        return experiment.get("slurm", {}).get(key, config["slurm"].get(key))

    return value


def get_point_slurm_extra(wildcards):
    """The point's sbatch flags beyond its shape (whole nodes, threads per core, the site's `extra`),
    as the executor plugin's slurm_extra (snnbench.planning.slurm_request); None: none."""
    asked = slurm_request.asked(config, EXPERIMENTS[wildcards.experiment])
    return slurm_request.sbatch_flags(asked) or None


def get_statistics_settings(wildcards):
    # Only what changes the statistics: changing a tolerance must not recompute them.
    keys = ("neurons_per_population", "bin_ms", "min_spikes_for_cv")
    return {key: config["validation"][key] for key in keys}


def get_validation_tolerance():
    return {key: config["validation"][key] for key in ("alpha", "ks_alpha", "ks_margin")}


def get_reference_stats(wildcards):
    """The point's reference: the config's stats file(s) for its experiment, else its reference ensemble's."""
    spec = get_point_spec(wildcards)
    external = config["validation"]["references"].get(spec["experiment"])
    if external:
        return [external] if isinstance(external, str) else external
    return [f"{member}/stats.npz" for member in CAMPAIGN.ensembles[spec["path"]]]


def get_reference_simulator(wildcards):
    return CAMPAIGN.reference_simulators[get_point_spec(wildcards)["experiment"]]


def get_seed_stats(wildcards):
    return [f"{peer}/stats.npz" for peer in CAMPAIGN.seed_peers[get_point_spec(wildcards)["path"]]]


def _experiment_points(experiment):
    return list(CAMPAIGN.points_of(experiment))


def get_experiment_records(wildcards):
    return [f"{path}/record.json" for path in _experiment_points(wildcards.experiment)]


def get_experiment_collected(wildcards):
    """Files of the experiment's points that collect reads beside their records (the family's)."""
    names = FAMILY[wildcards.experiment].collected
    return [f"{path}/{name}" for path in _experiment_points(wildcards.experiment) for name in names]


def get_experiment_context(wildcards):
    return _experiment_context(wildcards.experiment)


def _experiment_context(experiment):
    """Records and collected files of other experiments' points that judging this one reads (a shared
    reference ensemble's members): read by collect, left out of its tables."""
    names = FAMILY[experiment].collected
    points = CAMPAIGN.context_points(experiment)
    return [f"{path}/{name}" for path in points for name in ("record.json", *names)]


def get_experiment_benchmarks(wildcards):
    return [paths.point_benchmark(path) for path in _experiment_points(wildcards.experiment)]


def get_figure_stats(wildcards):
    return CAMPAIGN.figure_stats(wildcards.experiment, wildcards.figure)


def get_figure_reference(wildcards):
    return CAMPAIGN.figure_reference(wildcards.experiment)


def get_experiment_summary(wildcards):
    """What was run, in words, for the report's captions."""
    specs = list(CAMPAIGN.points_of(wildcards.experiment).values())
    return FAMILY[wildcards.experiment].summary(EXPERIMENTS[wildcards.experiment], specs)


def get_figure_params(wildcards):
    return CAMPAIGN.figure_params(wildcards.experiment, wildcards.figure)


def get_comparison_tables(wildcards):
    return CAMPAIGN.comparison_tables(wildcards.comparison)


def get_comparison_params(wildcards):
    return CAMPAIGN.comparison_params(wildcards.comparison)


def get_archive_files(wildcards):
    """Everything of one experiment that an archive packs: tables, each point's files that its
    family archives (spec, record, validation, spike statistics; spikes if configured), and
    Snakemake's benchmarks."""
    kinds = FAMILY[wildcards.experiment].archived(config)
    files = [f"results/{wildcards.experiment}/{table}.csv" for table in ("points", "ranks", "validation")]
    files += [f"{path}/{kind}" for path in _experiment_points(wildcards.experiment) for kind in kinds]
    return files + get_experiment_benchmarks(wildcards)


def get_archive_config(wildcards):
    return {
        "experiment": EXPERIMENTS[wildcards.experiment],
        "activity_check": config["activity_check"],
        "validation": config["validation"],
    }


def get_archive(wildcards):
    return ARCHIVES[wildcards.archive]


def execute_rule(family):
    """The name of the rule that runs one point of a family (rule execute_point_<family> and the crates)."""
    return f"execute_point_{family.name.replace('-', '_')}"


def get_crate_run(wildcards):
    """What an experiment's run crate says besides its files (snnbench.results.crate.Run): the workflow's
    files as this run read them (the Snakefile first), its config files, the rule that ran each point."""
    family = FAMILY[wildcards.experiment]
    return {
        "workflow_files": [f.get_path_or_uri(secret_free=True) for f in workflow.included],
        "configfiles": [str(f) for f in workflow.configfiles],
        "execute_rule": execute_rule(family),
        "outputs": list(family.outputs),
        "description": EXPERIMENTS[wildcards.experiment].get("description"),
    }


def get_race_accuracy_table(wildcards):
    """The points table of the accuracy experiment linked to a performance one, if in this config."""
    linked = RACE[wildcards.experiment].get("accuracy_experiment")
    return [f"results/{linked}/points.csv"] if linked in EXPERIMENTS else []


def get_compared_builds(wildcards):
    return BUILD_COMPARISONS[wildcards.experiment]


def get_final_output(wildcards=None):
    return CAMPAIGN.final_outputs()


def check_targets_made():
    """After a run that Snakemake calls done (onsuccess): fail, naming them, if targets were not made
    (snnbench.planning.after_run). Runs cut short on purpose (--until, --omit-from) are not checked."""
    dag = workflow.dag
    if dag.untilrules or dag.untilfiles or dag.omitrules or dag.omitfiles:
        return
    targets = [str(f) for f in dag.targetfiles]
    targets += [str(f) for job in dag.targetjobs if job.rule.norun for f in job.input]
    forced = [str(f) for f in dag.forcefiles] + after_run.forced_by_rules(targets, dag.forcerules)
    left = after_run.not_made(targets, forced, RUN_STARTED)
    if left:
        raise WorkflowError(after_run.message(left))


def write_tables_after_errors():
    """After a run with failed jobs (onerror): the tables of experiments whose points all have a
    record, from the records on disk (snnbench.tables.onerror), so that a point SLURM ended shows;
    first, a failed record for each point whose job ended before its wrapper ran or that SLURM refused."""
    for line in tables_onerror.record_dead_jobs(CAMPAIGN.points):
        logger.warning(line)
    refused = tables_onerror.record_refused_jobs(CAMPAIGN.points, workflow.logger_manager.get_logfile())
    for line in refused:
        logger.warning(line)
    experiment_points = {name: _experiment_points(name) for name in EXPERIMENTS}
    contexts = {name: _experiment_context(name) for name in EXPERIMENTS}
    tolerance = get_validation_tolerance()
    tables = tables_onerror.write_tables(
        experiment_points, config["activity_check"], tolerance, contexts, CAMPAIGN.points
    )
    for line in tables:
        logger.warning(line)


def log_run_summary():
    """Per experiment, its points ok, failed and invalid, and where its table and figures are
    (snnbench.tables.summary). Snakemake calls no handler in a dry run."""
    for line in run_summary.lines(list(EXPERIMENTS)):
        logger.info(line)


def run_succeeded():
    log_run_summary()
    check_targets_made()


def run_failed():
    write_tables_after_errors()
    log_run_summary()


# Snakemake calls only the main Snakefile's onsuccess and onerror (collect.smk's here): a Snakefile that uses
# this workflow as a module calls these through snnbench.planning.after_run.ended (docs/deploy.md).
after_run.HANDLERS.update(succeeded=run_succeeded, failed=run_failed)
