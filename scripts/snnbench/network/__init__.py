"""The network-simulation family: spiking network models run on simulators, two axes.

A network model (snnbench.network.models: PD14 today) supplies its parameters, sizes, expected
synapse count, reference activity and a builder per simulator that supports it; a simulator
(snnbench.network.simulators) supplies its environment, launch (threads, ranks, GPUs) and phases.
The family (snnbench.network.family) expands experiments into points of one model, runs them
(snnbench.network.execute, snnbench.network.simulate) and turns their records into rows. Only this
package imports a model's own module.
"""
