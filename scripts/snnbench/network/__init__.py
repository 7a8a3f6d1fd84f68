"""The network-simulation family: spiking network models run on simulators, two axes.

A network model (snnbench.network.models: PD14, hpc_benchmark) supplies its parameters, sizes,
expected synapse count and reference activity; a simulator (snnbench.network.simulators) supplies
its environment, launch (threads, ranks, GPUs), phases and a builder per model it runs.
The family (snnbench.network.family) expands experiments into points of one model, runs them
(snnbench.network.execute, snnbench.network.run) and turns their records into rows, judged at collect
(snnbench.network.judging). Only this package imports a model's own module.
"""
