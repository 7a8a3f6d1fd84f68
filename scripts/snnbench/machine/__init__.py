"""The machine a point runs on: its hardware record, energy counters, GPUs, memory, Lmod."""
