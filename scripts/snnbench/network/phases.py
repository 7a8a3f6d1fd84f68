"""The phases of a network point, in the order the driver (snnbench.network.run) calls and times
them: the names of the record's phase timers. Here, not beside the Backend, so that figures and
results read them without loading a simulator.
"""

PHASES = ("setup", "create", "connect", "prepare", "presimulate", "simulate")
# The points table's column prefix of the simulate phase's detailed timers a simulator names (its registry
# entry's detailed_timers): <DETAIL><label>_s, written by snnbench.network.rows, drawn by the RTF panel.
DETAIL = "simulate_detail_"
