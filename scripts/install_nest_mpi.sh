#!/usr/bin/env bash
# Install NEST with MPI and detailed timers into a virtual environment:
#   scripts/install_nest_mpi.sh VENV
# The PyPI wheel of nest-simulator has no MPI, so NEST is built from the PyPI sdist, once per
# machine: the wheel is cached under ${SNNBENCH_CACHE:-~/.cache/snnbench}/wheels and reused by
# every later environment. The build compiles the models PD14, hpc_benchmark and PyNN's standard types use
# (NEST's -Dwith-models), which takes a fraction of the full model set's ~25 min on 2 cores.
set -euo pipefail

venv=$1
nest_version=3.10.0
models="iaf_psc_exp;iaf_psc_alpha;iaf_psc_delta;iaf_cond_exp;iaf_cond_alpha;iaf_cond_exp_sfa_rr;aeif_cond_alpha"
models+=";aeif_cond_exp;gif_cond_exp;hh_cond_exp_traub;izhikevich;poisson_generator;dc_generator;ac_generator"
models+=";noise_generator;step_current_generator;spike_generator;gamma_sup_generator;ppd_sup_generator"
models+=";parrot_neuron;spike_recorder;multimeter;weight_recorder;static_synapse;stdp_synapse;tsodyks_synapse"
models+=";bernoulli_synapse;quantal_stp_synapse;stdp_pl_synapse_hom"
# The cache key names everything that changes the build.
key="nest-${nest_version}-mpi-detailed-timers-$(echo "$models" | sha256sum | cut -c1-8)"
cache="${SNNBENCH_CACHE:-$HOME/.cache/snnbench}/wheels/$key"
python="$venv/bin/python"
pyver=$("$python" -c 'import sys; print(f"cp{sys.version_info.major}{sys.version_info.minor}")')

debian_packages="openmpi-bin libopenmpi-dev libgsl-dev libltdl-dev libboost-dev cmake ninja-build"
if ! command -v mpicc >/dev/null || ! command -v cmake >/dev/null || ! dpkg -s libgsl-dev libltdl-dev libboost-dev >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $debian_packages
  else
    echo "NEST with MPI needs the Debian packages: $debian_packages" >&2
    exit 1
  fi
fi

wheel=$(ls "$cache"/nest_simulator-"$nest_version"-"$pyver"-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  echo "building NEST $nest_version with MPI from the PyPI sdist (once per machine; cache: $cache)"
  # The build runs without isolation so that CMake finds this environment's mpi4py and numpy, and
  # without pip's wheel cache, whose key leaves out the CMake settings (a changed model list got
  # the earlier build back).
  "$venv/bin/pip" install --quiet "scikit-build-core==1.1.2" "cython==3.3.1" "setuptools==84.2.1" wheel
  mkdir -p "$cache"
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/pip" wheel --no-cache-dir --no-deps --no-build-isolation --no-binary nest-simulator \
    --config-settings=cmake.define.with-mpi=ON \
    --config-settings=cmake.define.with-detailed-timers=ON \
    --config-settings="cmake.define.with-models=$models" \
    --wheel-dir "$cache.partial" "nest-simulator==$nest_version"
  mv "$cache.partial"/nest_simulator-*.whl "$cache"/ && rmdir "$cache.partial"
  wheel=$(ls "$cache"/nest_simulator-"$nest_version"-"$pyver"-*.whl | head -n 1)
fi
"$venv/bin/pip" install --quiet --no-deps "$wheel"
"$python" -c "import nest; assert nest.GetKernelStatus('build_info')['have_mpi'], 'NEST built without MPI'"
