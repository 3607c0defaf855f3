"""Timing a training run's optimizer steps on a device, for the device benchmarks
(`gpu_router_training.py`, `encoder_device.py`)."""

from __future__ import annotations

import time

import torch


class StepClock:
    """Pass `on_step` as a training call's step callback: it stamps each step's end (the loss read
    in the callback syncs the GPU). Created just before the call, it also resets the GPU's peak
    memory counter and starts the wall clock."""

    def __init__(self, device: str) -> None:
        self.cuda = device.startswith("cuda")
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()
        self.stamps: list[float] = []
        self.started = time.perf_counter()

    def on_step(self, *_: object) -> None:
        self.stamps.append(time.perf_counter())

    def steady_seconds(self, fallback: float) -> float:
        """Seconds per step after the first, which pays for kernel selection and allocator
        warm-up (`fallback` when fewer than two steps were taken)."""
        if len(self.stamps) < 2:
            return fallback
        return (self.stamps[-1] - self.stamps[0]) / (len(self.stamps) - 1)

    def since_last_step(self) -> float:
        """Seconds from the last step's end (the start, without steps) to now."""
        return time.perf_counter() - (self.stamps[-1] if self.stamps else self.started)

    def peak_gib(self) -> float:
        return torch.cuda.max_memory_allocated() / 2**30 if self.cuda else float("nan")
