"""A seeded synthetic dataset with SHD's shape: 700 channels, samples of about 1 s, events
(t in microseconds, x = channel, p = 0) as Tonic's structured arrays, 20 classes.

Each sample is drawn from (seed, index) alone, so every access, process and epoch sees the same
events and caches can be compared with the naive path. Each channel fires as a Poisson process;
its rate is `rate_hz` times a class-dependent profile over channels (a bump whose centre moves
with the label, as formants move along the cochlea), so the task is learnable. With the default
12 Hz a 1 s sample has about 8 000 events, the order of SHD's samples. Duration varies by
+-20 % around `duration_ms`, as SHD's recordings do.
"""

from __future__ import annotations

import numpy as np

DTYPE = np.dtype([("t", int), ("x", int), ("p", int)])  # tonic.datasets.SHD.dtype
SENSOR_SIZE = (700, 1, 1)


class SyntheticSHD:
    """Indexable like Tonic's datasets: dataset[i] -> (events, label), with `transform` applied."""

    sensor_size = SENSOR_SIZE
    dtype = DTYPE
    ordering = DTYPE.names

    def __init__(
        self,
        samples: int,
        seed: int,
        rate_hz: float = 12.0,
        duration_ms: float = 1000.0,
        classes: int = 20,
        transform=None,
        target_transform=None,
    ):
        self.samples, self.seed, self.rate_hz = samples, seed, rate_hz
        self.duration_ms, self.classes = duration_ms, classes
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return self.samples

    def events(self, index: int) -> tuple[np.ndarray, int]:
        """The raw events and label of one sample."""
        if not 0 <= index < self.samples:
            raise IndexError(f"sample {index} of {self.samples}")
        rng = np.random.default_rng([self.seed, index])
        label = int(rng.integers(self.classes))
        channels = self.sensor_size[0]
        duration_us = self.duration_ms * 1e3 * rng.uniform(0.8, 1.2)
        centre = (label + 0.5) / self.classes * channels
        profile = 0.3 + 1.4 * np.exp(-0.5 * ((np.arange(channels) - centre) / (0.08 * channels)) ** 2)
        counts = rng.poisson(self.rate_hz * profile / profile.mean() * duration_us * 1e-6)
        events = np.zeros(int(counts.sum()), dtype=self.dtype)
        events["x"] = np.repeat(np.arange(channels), counts)
        events["t"] = rng.uniform(0, duration_us, events.size).astype(int)
        return events[np.argsort(events["t"], kind="stable")], label

    def __getitem__(self, index: int):
        events, label = self.events(index)
        if self.transform is not None:
            events = self.transform(events)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return events, label
