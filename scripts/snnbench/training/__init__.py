"""The snn-training benchmark family: training-step speed of PyTorch SNN libraries.

One Linear(n, n) + LIF layer, the same written neuron (spec.NEURON) in every library, timed
forward / backward / step in a fresh process per point and the library's own environment.
Modules: spec (the neuron and the frameworks; pure Python), execute (parent: run a point, write
its record), run (child: time one point), lif (the plain-PyTorch reference), models (one builder
per library), timing, sanity (FLOP bounds), equivalence (spike trains across libraries), rows
(record -> row). Its family interface is snnbench.training.family, its panels snnbench.figures.training.
"""
