"""Every verdict on a network point, each rule in one module, made once, at collect (snnbench.network.rows
calls them on the whole table, with the config's current bounds and tolerances). Records and statistics hold
only what was measured (snnbench.network.activity, snnbench.network.validation); nothing here runs at execute
(an import contract, `make lint`).

- plausibility: is a point's activity plausible (bounds: activity_bounds; the reference ensemble's, else the
  model's)?
- validity: are its spike statistics within what the reference's seeds allow (the ensemble rule: ensemble), or
  within the one-run KS rule?
- rate_agreement: do a simulator's population rates agree with the reference's (ensemble.rates_agree)?
- same_network: one network and its spikes (spike_match) where a point shares its reference's seed.
- group_verdict: does a simulator, over all its runs, simulate the reference's model?
"""
