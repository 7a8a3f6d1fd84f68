"""Does Brian2GeNN's PoissonInput drive a neuron as cpp_standalone's does? (docs/families.md, L6E.)

    .venv-brian2genn/bin/python -m snnbench.dev.brian2genn_poisson_probe genn OUT_DIR
    .venv-brian2/bin/python -m snnbench.dev.brian2genn_poisson_probe cpp OUT_DIR

Non-spiking PD14 neurons (no threshold) driven by PoissonInput alone with L6E's external in-degree,
rate and weight at in-degree scale 0.1 (snnbench.network.models.pd14; the scale of
tests/e2e/test_brian2genn.py, where L6E runs low), 300 ms, the first 50 ms dropped. It
prints the membrane potential's mean and spread, the pairwise correlation of I_syn and v between
neurons (independent draws: near 0) and I_syn's autocorrelation at a few lags. Brian2GeNN cannot
seed the draws made during the run (brian2genn#142), so the two devices are compared by these
statistics, not sample by sample.
"""

from __future__ import annotations

import sys

import numpy as np

from snnbench.network.models import pd14
from snnbench.network.simulators.brian2.pd14 import LIF_EQUATIONS, membrane_constants

NEURONS = 200
POPULATION = pd14.POPULATIONS.index("L6E")
INDEGREE_SCALE = 0.1
RUN_MS, DROP_MS = 300.0, 50.0
LAGS_STEPS = (1, 5, 10, 50)


def run(device: str, out_dir: str) -> dict[str, np.ndarray]:
    """v (mV) and I_syn (pA) of every neuron at every step after DROP_MS, on `device` (genn or cpp)."""
    import brian2 as b2

    if device == "genn":
        import brian2genn  # noqa: F401 (registers the device)

        from snnbench.network.simulators.brian2.devices import genn_path

        b2.prefs.devices.genn.path = str(genn_path())
        b2.set_device("genn", use_GPU=False, directory=out_dir)
    else:
        b2.set_device("cpp_standalone", directory=out_dir)
        b2.seed(1)  # Brian2GeNN refuses seed() (brian2genn#142)
    net = pd14.derive(1.0, INDEGREE_SCALE, "poisson")
    b2.defaultclock.dt = pd14.DT_MS * b2.ms
    # PD14's own equations and constants, without a threshold (Brian2 warns that "unless refractory"
    # then never applies) and without DC.
    namespace = {**membrane_constants(b2, pd14.NEURON), "I_dc": 0 * b2.pA}
    group = b2.NeuronGroup(NEURONS, LIF_EQUATIONS, method="exact", namespace=namespace)
    group.v = pd14.NEURON["E_L_mV"] * b2.mV
    drive = b2.PoissonInput(
        group,
        "I_syn",
        N=int(net.ext_indegree[POPULATION]),
        rate=pd14.BG_RATE_HZ * b2.Hz,
        weight=net.weight_ext_pA * b2.pA,
    )
    monitor = b2.StateMonitor(group, ["v", "I_syn"], record=True)
    b2.Network(group, drive, monitor).run(RUN_MS * b2.ms)
    first = int(round(DROP_MS / pd14.DT_MS))
    return {"v": np.asarray(monitor.v / b2.mV)[:, first:], "I_syn": np.asarray(monitor.I_syn / b2.pA)[:, first:]}


def statistics(traces: dict[str, np.ndarray]) -> dict[str, float]:
    """The figures the two devices are compared by."""
    off_diagonal = ~np.eye(NEURONS, dtype=bool)
    centred = traces["I_syn"] - traces["I_syn"].mean(axis=1, keepdims=True)
    power = np.sum(centred * centred, axis=1)
    stats = {
        "v_mean_mV": float(traces["v"].mean()),
        "v_sd_over_time_mV": float(traces["v"].std(axis=1).mean()),
        "I_syn_mean_pA": float(traces["I_syn"].mean()),
        "I_syn_pairwise_correlation": float(np.corrcoef(traces["I_syn"])[off_diagonal].mean()),
        "v_pairwise_correlation": float(np.corrcoef(traces["v"])[off_diagonal].mean()),
    }
    for lag in LAGS_STEPS:
        lagged = np.sum(centred[:, lag:] * centred[:, :-lag], axis=1) / power
        stats[f"I_syn_autocorrelation_lag{lag}"] = float(lagged.mean())
    return stats


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[0] not in ("genn", "cpp"):
        sys.exit("usage: python -m snnbench.dev.brian2genn_poisson_probe {genn|cpp} OUT_DIR")
    for name, value in statistics(run(*argv)).items():
        print(f"{argv[0]} {name} {value:.6g}")


if __name__ == "__main__":
    main(sys.argv[1:])
