"""The snn-data benchmark family: data loading for SNN training (Tonic's strategies) measured
together with the training step, so that a point says whether loading or compute bounds an epoch.

Modules: spec (strategies, models, datasets, skip reasons; pure Python), synthetic (the seeded
SHD-shaped dataset), loading (Tonic datasets, caches and torch's DataLoader per strategy), model
(the two models and their training step), epochs (the timed epoch loop), run (child: one point),
execute (parent: run a point, write its record), equivalence (cached samples equal naive ones),
rows (record -> row). Its family interface is snnbench.data.family, its panels snnbench.figures.snn_data.
"""
