"""PD14 on Brian2, split by role; the backend class is `snnbench.network.simulators.brian2.pd14.Brian2Backend`.

- `network`: the network's random data (connectivity, weights, delays, initial potentials), drawn
  with numpy from the point's seed the way the NEST backend draws it.
- `delays`: binning a projection's delays (Brian2GeNN has one delay per Synapses object).
- `devices`: the Brian2 devices, their prerequisites and their preferences.
- `build_cache`: where standalone builds are kept and what their key holds.
- `standalone_runs`: the runs inside a standalone binary, seeded at start-up and timed by marks it writes.

Nothing here imports Brian2 at module level, so the numpy parts run in any environment.
"""
