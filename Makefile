# snnbench: `make run` runs the default experiment, `make test` runs the tests, `make help` lists every target.
# .venv at the repo root holds the workflow, NEST, PyNN and the tests, from the pip lists of
# envs/*.yaml, with the snnbench package installed editable (pyproject.toml; it brings no
# dependencies). Environments whose pins conflict live in a per-user cache (see env-% below).
PYTHON ?= python3
VENV := .venv
ENVS := envs/workflow.yaml envs/nest.yaml envs/pynn-nest.yaml envs/dev.yaml
PROFILE ?= local
SNAKEMAKE := $(VENV)/bin/snakemake --profile profiles/$(PROFILE)
INSTALL_SNNBENCH = $(1)/bin/pip install --quiet --no-deps -e .
# Third-party sources not on a package index (GeNN, the multi-area model): each a URL and a digest of
# its files (snnbench.environments.sources), looked up in $SNNBENCH_THIRD_PARTY, the checkout's third_party/ and the
# per-machine cache, else downloaded once per machine ($SNNBENCH_SOURCE_MIRROR names a mirror).
# Python's standard library alone: it runs before any environment is made.
SOURCES = PYTHONPATH=scripts $(PYTHON) -m snnbench.environments.sources
# Snakemake's `script:` runs the environment's Python by its path unquoted (snakemake/snakemake#2645):
# in a checkout whose path has a space every job would fail, so refuse at once.
ifneq ($(word 2,$(CURDIR)),)
$(error this checkout's path has a space ($(CURDIR)): Snakemake runs each job's Python by its path unquoted (snakemake/snakemake#2645), so every job would fail; clone into a path without spaces)
endif
# The pinned `name==version` lines of conda env files' pip sections (as snnbench.environments.pins
# reads them for the other environments; .venv is made before the package can be run).
pip_pins = $(shell sed -n '/\# no-deps/!s/^ *- \([A-Za-z0-9_.-]*==[^ ]*\).*/\1/p' $(1) | sort -u)

.PHONY: env sources hwloc lmod chromium training-envs run run-training run-data bench-data bench-training-memory bench-training-memory-conv report archive crate regression compare-builds test lint format bench \
	history-add dashboard bench-history bench-history-noise \
	bench-analysis bench-planning bench-slurm bench-pynn bench-brian2 bench-full-scale bench-hpc bench-hpc-growth bench-mam bench-binding bench-toolchain-build bench-validation bench-gpu prepare-gpu check-config rerun rerun-failed clean help

## env: .venv with the workflow, NEST, PyNN and the tests (the pins of envs/workflow, nest, pynn-nest and dev.yaml)
env: $(VENV)/.installed

$(VENV)/.installed: $(ENVS) pyproject.toml
	@$(PYTHON) -c "import ensurepip, venv" 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && apt-get install -y -qq python3-venv; \
	  else echo "$(PYTHON) cannot create virtual environments: install python3-venv"; exit 1; fi; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet $(call pip_pins,$(ENVS))
	$(call INSTALL_SNNBENCH,$(VENV))
	touch $@

## help: every target with what it does (the `## target:` comments of this file)
# A `## name:` line starts a target's text where name is a target of this file; the `##` lines under it go on.
help:
	@awk 'NR == FNR { if (match($$0, /^[A-Za-z0-9%._-]+:/)) made[substr($$0, 1, RLENGTH - 1)] = 1; next } \
	  !/^## / { name = ""; next } \
	  { text = substr($$0, 4); gsub(/[$$][$$]/, "$$", text); label = "" } \
	  match(text, /^[A-Za-z0-9%._-]+: /) && ((substr(text, 1, RLENGTH - 2)) in made) { \
	    name = label = substr(text, 1, RLENGTH - 2); text = substr(text, RLENGTH + 1) } \
	  name != "" { printf "  %-28s %s\n", label, text }' $(firstword $(MAKEFILE_LIST)) $(firstword $(MAKEFILE_LIST))

# Environments whose pins conflict with the main one (envs/<name>.yaml, with the Python it names):
# made once per machine in the per-user cache shared by checkouts, then linked into this checkout
# as .venv-<name> with snnbench installed editable. The workflow does the same by itself (rules
# build_environment and link_environment); these targets call the same code.
## env-%: make env-<name>: the environment of envs/<name>.yaml, made once per machine, linked here as .venv-<name>
env-%: env
	$(VENV)/bin/python -m snnbench.environments.maker $*

## training-envs: the environments of the snn-training family's CPU-capable libraries
training-envs: env
	$(VENV)/bin/python -m snnbench.planning.cpu_environments snn-training

## run-training: the snn-training family on CPU (config/experiments/snn-training-cpu.yaml)
run-training: env
	$(SNAKEMAKE) --configfile config/experiments/snn-training-cpu.yaml $(ARGS)

## run-data: the snn-data family on CPU (config/experiments/snn-data-cpu.yaml): loading strategies with the training step
run-data: env
	$(SNAKEMAKE) --configfile config/experiments/snn-data-cpu.yaml $(ARGS)

## bench-data: run-data, then print per strategy and model the later-epoch time by part and the speed-up over naive
bench-data: run-data
	$(VENV)/bin/python -m snnbench.dev.data_summary results/snn-data-cpu/points.csv

## bench-training-memory: peak memory and step time against T per memory strategy and library (config/experiments/snn-training-memory.yaml), then the table against vanilla
bench-training-memory: env
	$(SNAKEMAKE) --configfile config/experiments/snn-training-memory.yaml $(ARGS)
	$(VENV)/bin/python -m snnbench.training.memory_table results/snn-training-memory/points.csv

## bench-training-memory-conv: the same on Liang et al.'s convolutional SNN, with and without batch norm (config/experiments/snn-training-memory-conv.yaml; CONV_CONFIG=... for another grid)
CONV_CONFIG ?= config/experiments/snn-training-memory-conv.yaml
bench-training-memory-conv: env
	$(SNAKEMAKE) --configfile $(CONV_CONFIG) $(ARGS)
	$(VENV)/bin/python -m snnbench.training.memory_table results/$(basename $(notdir $(CONV_CONFIG)))/points.csv

## run: run the default experiment (config/config.yaml); tables and figures land in results/
run: env
	$(SNAKEMAKE) $(ARGS)

## report: a self-contained HTML report of the results as they are: every figure, captions, each point's provenance;
## it starts no point (after a SLURM run, on the login node: run the workflow first to finish what is missing)
report: env
	$(SNAKEMAKE) $(ARGS) --report results/report.html

## archive: pack each experiment's tables, records and provenance into results/archives/<experiment>.tar.gz
archive: env
	$(SNAKEMAKE) archive $(ARGS)

## crate: each experiment's run as a Workflow Run RO-Crate (Provenance Run Crate 0.5) in results/crates/<experiment>/,
## then each crate checked with roc-validator without a network (docs/results.md, "A run as an RO-Crate");
## CRATE_LICENSE=<SPDX id or URL> names the results' license
crate: env env-rocrate-validator
	SNNBENCH_CRATE_LICENSE="$(CRATE_LICENSE)" $(SNAKEMAKE) crate --forcerun crate_experiment $(ARGS)
	$(VENV)-rocrate-validator/bin/python -m snnbench.results.crate_check results/crates/*/

## regression: per-point ratios results/points.csv / BASELINE (time per phase, RTF, memory), each point against the
## references of its own machine (BASELINE a.csv,b.csv: tables of several machines; TOLERANCES: YAML per machine and metric);
## or HISTORY=default|DIR: each point against its series in the results history (default: the config's history.folder,
## CONFIG= files on top of config/config.yaml; this machine's last LAST runs, default 5; or SINCE=/UNTIL= dates, or
## VERSION=a simulator version). Exit code non-zero for a slowdown (docs/results.md)
regression: env
	@test -n "$(BASELINE)$(HISTORY)" || { echo "usage: make regression BASELINE=path/to/points.csv[,more.csv] | HISTORY=default|DIR [CONFIG=file.yaml] [LAST=N | SINCE=date UNTIL=date | VERSION=v] [CURRENT=results/points.csv] [TOLERANCE=0.1] [TOLERANCES=tolerances.yaml]"; exit 2; }
	$(VENV)/bin/python -m snnbench.results.$(if $(HISTORY),gate --history $(HISTORY),regression $(BASELINE)) \
	  $(or $(CURRENT),results/points.csv) $(if $(TOLERANCE),--tolerance $(TOLERANCE)) $(if $(TOLERANCES),--tolerances $(TOLERANCES)) \
	  $(if $(LAST),--last $(LAST)) $(if $(SINCE),--since $(SINCE)) $(if $(UNTIL),--until $(UNTIL)) $(if $(VERSION),--version $(VERSION)) \
	  $(if $(HISTORY),$(if $(CONFIG),--configfile $(CONFIG)))

# The results history's folder: HISTORY=DIR, else the config's history.folder (config/config.yaml, CONFIG= files on
# top), else $$SNNBENCH_HISTORY, else ~/.local/share/snnbench/history.
HISTORY_PLACE = $(if $(HISTORY),--history $(HISTORY)) $(if $(CONFIG),--configfile $(CONFIG))

## history-add: add every finished point of results/ (or FROM=: results folders, an experiment's points.csv, archives of
## make archive) to the results history (HISTORY=DIR, else the config's history.folder, else $$SNNBENCH_HISTORY, else
## ~/.local/share/snnbench/history); a record already there is not added again (docs/results.md, "A history of results")
history-add: env
	$(VENV)/bin/python -m snnbench.results.history add $(or $(FROM),results) $(HISTORY_PLACE)

## dashboard: the history as a static site, results/dashboard/index.html (OUT=...): per series RTF, phases and memory
## against simulator version and commit date, the steps found, every value linked to its record
dashboard: env
	$(VENV)/bin/python -m snnbench.results.dashboard $(if $(OUT),--out $(OUT)) $(HISTORY_PLACE)

## bench-history: the default experiment and three NEST releases through the builds axis (config/experiments/
## nest-releases.yaml: 3.8 from its release tree, a third-party source fetched and verified like GeNN's, 3.9 and 3.10.0
## from PyPI) on this machine, each added to the history, then its table per version and the dashboard (~45 min on
## 2 cores, the 3.8 build included)
bench-history: env
	$(SNAKEMAKE) $(ARGS)
	$(SNAKEMAKE) --configfile config/experiments/nest-releases.yaml $(ARGS)
	$(MAKE) history-add
	$(VENV)/bin/python -m snnbench.results.history show $(HISTORY_PLACE)
	$(MAKE) dashboard

## bench-history-noise: 8 runs of unchanged code (PD14 N = 0.05, K = 0.1, 3 seeds, 1 thread), a CPU burner pinned to
## the points' CPUs in every second one, then 3 runs whose simulate does 15 % more work, each added to one fresh
## history as the next commit and gated; then the steps found on unchanged code and at the slowdown, in wall and CPU
## time (docs/results.md; ~20 min on 2 cores; ARGS=--out DIR keeps it there, ARGS=--report DIR prints it again)
bench-history-noise: env
	$(VENV)/bin/python -m snnbench.dev.bench_history_noise $(ARGS)

## compare-builds: two builds of one run side by side (ratios per phase with their spread over seeds), e.g.
## make compare-builds BASELINE=nest-3.9 CURRENT=nest-3.10.0 [TABLE=results/nest-builds/points.csv] [TOLERANCE=0.1]
compare-builds: env
	@test -n "$(BASELINE)" -a -n "$(CURRENT)" || { echo "usage: make compare-builds BASELINE=<build> CURRENT=<build> [TABLE=results/points.csv] [TOLERANCE=0.1]"; exit 2; }
	$(VENV)/bin/python -m snnbench.results.regression --builds $(BASELINE) $(CURRENT) $(or $(TABLE),results/points.csv) \
	  $(if $(TOLERANCE),--tolerance $(TOLERANCE)) --out results/builds-$(BASELINE)-$(CURRENT).csv \
	  --figure results/builds-$(BASELINE)-$(CURRENT).png

## hwloc: lstopo (Debian's hwloc) for the points' hardware record (installed as root; without it the
## record says "not available")
hwloc:
	@command -v lstopo-no-graphics >/dev/null || command -v lstopo >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hwloc; \
	  else echo "lstopo missing (Debian package hwloc): hardware records will say 'not available'"; fi; }

# Test files run side by side on this many workers, each file's tests on one worker (their module fixtures,
# e.g. one SLURM campaign, run once): end-to-end tests wait on Snakemake, compilers and the scheduler
# much of the time, so two fill a 2-core CI machine. 0 or 1: one after another. Files go to the workers in
# collection order, the longest first (tests/conftest.py: LONGEST_FIRST).
PYTEST_WORKERS ?= 2

## test: all tests, the end-to-end ones included (the environments they use are made once per
## machine, MPI NEST among them and the crate checker's, and linked into this checkout)
test: sources env hwloc lmod chromium env-rocrate-validator
	$(VENV)/bin/python -m snnbench.planning.cpu_environments
	$(VENV)/bin/pytest $(if $(filter-out 0 1,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder) $(PYTEST_ARGS)

## sources: every third-party source located or downloaded, and verified (first in make test: a missing one
## stops it at once)
sources:
	$(SOURCES) fetch

## chromium: Debian's Chromium and its driver for the dashboard's test in a headless browser (installed when run as
## root; elsewhere that test is skipped)
chromium:
	@command -v chromedriver >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "chromium missing (Debian packages chromium chromium-driver): the dashboard's browser test is skipped"; fi; }

## lmod: Debian's Lmod for the tests of builds given as environment modules (installed when run as
## root; elsewhere those tests are skipped until Lmod is there)
lmod:
	@[ -x "$${LMOD_CMD:-/usr/share/lmod/lmod/libexec/lmod}" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lmod >/dev/null; \
	  else echo "Lmod is not installed: the tests of module builds are skipped (apt-get install lmod)"; fi; }

## lint: Snakemake's linter, snakefmt, ruff, the import contracts and the registries' strings
lint: env
	$(VENV)/bin/snakemake --lint
	$(VENV)/bin/snakefmt --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	$(REGISTRY_PLUGINS) $(VENV)/bin/python -m snnbench.dev.registry_imports

# The tests' plugins (a model, three simulators), so that the registry check resolves plugins' strings too.
REGISTRY_PLUGINS = PYTHONPATH=tests/models:tests/simulators$${PYTHONPATH:+:$$PYTHONPATH} \
	SNNBENCH_NETWORK_MODELS=two_populations=two_populations:TwoPopulations \
	SNNBENCH_NETWORK_SIMULATORS=nest-plugin=nest_plugin:SIMULATOR,nest-sleepy=sleepy_plugin:SIMULATOR,poisson-pd14=poisson_plugin:SIMULATOR \
	SNNBENCH_ENVIRONMENTS=tests/simulators/envs

## format: snakefmt and ruff format rewrite the code in place
format: env
	$(VENV)/bin/snakefmt .
	$(VENV)/bin/ruff format .

## bench: workflow overhead per point, and our NEST PD14 against INM-6's reference implementation
bench: env
	$(VENV)/bin/python -m snnbench.dev.bench $(ARGS)

## bench-analysis: time collect + analyze on 10 000 synthetic records (goal <= 10 s)
bench-analysis: env
	$(VENV)/bin/python -m snnbench.dev.bench_analysis $(ARGS)

## bench-planning: what planning costs the main Snakemake process and each job's start-up, for 10 and 10 000 points
bench-planning: env
	$(VENV)/bin/python -m snnbench.dev.bench_planning $(ARGS)

## bench-slurm: per-point overhead under SLURM vs local (starts the local test cluster; needs root)
bench-slurm: env
	tests/slurm/cluster.sh start
	$(VENV)/bin/python -m snnbench.dev.bench --only snakemake --only slurm $(ARGS)

## bench-pynn: PyNN on NEST against PyNEST on the same points: per phase (ratio of medians), synapses, rates
bench-pynn: env
	$(VENV)/bin/python -m snnbench.dev.bench --only pynn $(ARGS)

## bench-brian2: Brian2 cpp_standalone vs NEST on the same point (ratio of medians, build time apart)
bench-brian2: env env-brian2
	$(VENV)/bin/python -m snnbench.dev.bench_brian2 $(ARGS)

## bench-full-scale: full-scale PD14 (N = K = 1, 2 ranks x 1 thread, 0.5 s + 1 s) through the workflow on this
## machine, then its synapses, peak memory against the SLURM estimate, phase times, RTF and rates against the
## published ones (~6 min and ~15 GB on 2 cores; not part of make test)
bench-full-scale: env
	$(VENV)/bin/snakemake --profile profiles/local --configfile config/experiments/full-scale-local.yaml $(ARGS)
	$(VENV)/bin/python -m snnbench.dev.full_scale

## bench-hpc: NEST's hpc_benchmark weak scaling over 1 and 2 threads on this machine through the workflow, then
## medians per VP count: RTF, efficiency, memory, rates, weights. HPC_EXPERIMENT names the preset
## (config/experiments/<name>.yaml): hpc-weak-machine (11 250 neurons per VP, 3 min) or hpc-weak-machine-large (6 x)
HPC_EXPERIMENT ?= hpc-weak-machine
bench-hpc: env
	$(VENV)/bin/snakemake --profile profiles/local --configfile config/experiments/$(HPC_EXPERIMENT).yaml $(ARGS)
	$(VENV)/bin/python -m snnbench.dev.hpc_weak results/$(HPC_EXPERIMENT)/points.csv

## bench-hpc-growth: hpc_benchmark's growth from 11 250 to 67 500 neurons per VP, NEST's own example beside snnbench's
## points on this machine (docs/hpc_benchmark.md). HPC_EXAMPLE: nest-simulator's pynest/examples/hpc_benchmark.py of
## the installed NEST (git show v3.10:pynest/examples/hpc_benchmark.py); ~45 min on 2 cores
HPC_EXAMPLE ?=
bench-hpc-growth: env
	@test -n "$(HPC_EXAMPLE)" || { echo "bench-hpc-growth: HPC_EXAMPLE=path/to/pynest/examples/hpc_benchmark.py" >&2; exit 2; }
	for run in "1 hpc" "5.8 hpc" "1 plain" "6 plain"; do set -- $$run; \
	  $(VENV)/bin/python -m snnbench.dev.hpc_example $(HPC_EXAMPLE) --scale $$1 --synapses $$2 --sim-ms 500; done
	$(VENV)/bin/snakemake --profile profiles/local --configfile config/experiments/hpc-growth.yaml $(ARGS)
	for size in small large; do $(VENV)/bin/python -m snnbench.dev.hpc_weak results/hpc-growth-$$size/points.csv; done

## bench-mam: the multi-area model's strong scaling on this machine through the workflow (MAM_EXPERIMENT, default
## mam-machine: config/experiments/<name>.yaml), then medians per simulator and shape: construction, RTF, peak
## memory per VP, rates, the theory's rates, the time the description took to derive
MAM_EXPERIMENT ?= mam-machine
bench-mam: env
	$(VENV)/bin/snakemake --profile profiles/local --configfile config/experiments/$(MAM_EXPERIMENT).yaml $(ARGS)
	$(VENV)/bin/python -m snnbench.dev.mam_strong $(MAM_EXPERIMENT)

## bench-binding: the default experiment and hpc_benchmark's small preset, bound to cores and not bound, 3 seeds each,
## through the workflow on this machine; then the simulate phase's medians and spreads side by side (docs/binding.md)
bench-binding: env
	$(VENV)/bin/python -m snnbench.dev.bench_binding $(ARGS)

## bench-toolchain-build: NEST with MPI (the nest-mpi environment) built once through a site's toolchain, an Lmod module
## whose mpicc/mpicxx log their calls and exec the system's (no dpkg check); prints the make time and CMake's MPI lines
## (snnbench.dev.bench_toolchain, docs/builds.md; ~15 min on 2 cores; ARGS=--out DIR for its module tree and log)
bench-toolchain-build: env lmod
	$(VENV)/bin/python -m snnbench.dev.bench_toolchain $(ARGS)

## bench-validation: validation's measured error rates (docs/figures.md): for PD14 at N = K = 0.1 a reference ensemble
## of 20 NEST seeds judged leave-one-out and 10 genn-cpu runs judged against it (false positives), and networks
## changed on purpose (all weights x1.02-1.2, delays +1 step, L4E's in-degrees x0.9 / x0.8) judged against it (power);
## 100 fresh NEST seeds judged one by one and in groups of 10 by the simulator verdict against 40 NEST seeds (false
## positives, also against 30 references drawn anew) and groups of 20 runs of each of four bugs (background +2.5 %,
## weights x1.05, inhibitory delays x1.5 and excitatory delays x0.5 as plugin simulators: power), 1 s per run;
## hpc_benchmark's at its preset's size (20 seeds and inhibition x0.95-0.8, N = 1, K = 0.1, 1 s: ~40 min); the multi-area
## model's all-area run against 20 seeds of INM-6's own code, and with its weights x1.05-1.2
## (config/experiments/mam-validation.yaml, 58 points: ~40 min), judged from its tables. Runs kept in
## results/bench-validation and results/, and reused (~2.5 h)
bench-validation: env
	$(VENV)/bin/python -m snnbench.dev.bench_validation --neuron-scale 0.1 --indegree-scale 0.1 \
	  --out results/bench-validation/pd14 --pool-seeds 0 --bugs none $(ARGS)
	$(VENV)/bin/python -m snnbench.dev.bench_validation --neuron-scale 0.1 --indegree-scale 0.1 --t-sim-ms 1000 \
	  --changes none --second-seeds 0 --seeds 40 --out results/bench-validation/pd14-groups $(ARGS)
	$(VENV)/bin/python -m snnbench.dev.bench_validation --model hpc_benchmark --neuron-scale 1 --indegree-scale 0.1 \
	  --t-presim-ms 100 --t-sim-ms 1000 --out results/bench-validation/hpc_benchmark-preset $(ARGS)
	$(SNAKEMAKE) --configfile config/experiments/mam-validation.yaml
	$(VENV)/bin/python -m snnbench.dev.bench_validation --tables results/mam-validation*/points.csv

## bench-gpu: on a GPU machine, PD14 on Brian2GeNN, PyGeNN (sparse and procedural; N = K = 0.1 and full scale),
## Brian2CUDA (N = K = 0.1) beside NEST (config/experiments/gpu.yaml), then the snn-training CUDA points
## (config/experiments/snn-training-gpu.yaml), then one table: RTF, phases, GPU memory, rates vs NEST. Where
## gpu-bundle/wheels exists (make prepare-gpu), pip installs from it alone. PyGeNN's CUDA backend needs CUDA_PATH.
GPU_EXPERIMENTS := config/experiments/gpu.yaml config/experiments/snn-training-gpu.yaml
bench-gpu: export PIP_NO_INDEX := $(if $(wildcard gpu-bundle/wheels),1,$(PIP_NO_INDEX))
bench-gpu: export PIP_FIND_LINKS := $(if $(wildcard gpu-bundle/wheels),$(abspath gpu-bundle/wheels),$(PIP_FIND_LINKS))
# PyGeNN builds its CUDA backend where CUDA_PATH names the toolkit: by default nvcc's.
bench-gpu: export CUDA_PATH ?= $(patsubst %/bin/nvcc,%,$(realpath $(shell command -v nvcc 2>/dev/null)))
# Each experiment file runs to its end (failed points are recorded with their reasons), then the table.
bench-gpu: env
	$(foreach experiments,$(GPU_EXPERIMENTS),$(SNAKEMAKE) --configfile $(experiments) --keep-going $(ARGS) || true;)
	$(VENV)/bin/python -m snnbench.dev.gpu_summary $(GPU_EXPERIMENTS)

## prepare-gpu: for a GPU machine without a package index: the GeNN archives into third_party/ and the GPU
## environments' wheels for Python 3.12 into gpu-bundle/wheels (both ignored; <= 64 MiB), e.g. ARGS=--dry-run
prepare-gpu: env
	$(VENV)/bin/python -m snnbench.dev.prepare_gpu $(ARGS)

## rerun: recompute one point and the tables/figures, e.g. make rerun POINT=results/<exp>/nest/.../seed55
rerun: env
	@test -n "$(POINT)" || { echo "usage: make rerun POINT=results/<experiment>/<simulator>/<shape>/<scale>/seed<k>"; exit 2; }
	$(SNAKEMAKE) $(ARGS) --forcerun $(POINT:%/=%)/record.json

## check-config: the workflow's messages for config files, without running anything, e.g. make check-config CONFIG=config/experiments/mine.yaml
check-config: env
	@test -n "$(CONFIG)" || { echo "usage: make check-config CONFIG=path/to/config.yaml [...]"; exit 2; }
	$(VENV)/bin/python -m snnbench.planning.check $(CONFIG)

## rerun-failed: recompute every point whose record says failed
rerun-failed: env
	@failed="$$($(VENV)/bin/python -m snnbench.tables.failed)"; \
	if [ -z "$$failed" ]; then echo "no failed points"; else $(SNAKEMAKE) $(ARGS) --forcerun $$failed; fi

## clean: remove Snakemake's state, logs, benchmarks, networks and everything in results/ but its README
clean:
	rm -rf .snakemake logs benchmarks networks
	find results -mindepth 1 ! -name README.md -exec rm -rf {} +
