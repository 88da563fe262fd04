"""Resource pressures and the bottleneck rule: one definition used by the heatmap, the triangle and the CLI.

  compute   = share of the step (or request phase) time spent in FLOP-bound work
  bandwidth = share spent moving data: HBM-bound kernels, exposed communication, the optimizer's stream
  memory    = capacity required / capacity available at the binding tier (HBM), >1 means it does not fit

Compute and bandwidth are time shares in [0, 1] (the rest is pipeline idle time); memory is a capacity
ratio. The binding resource is the largest of the three (memory whenever the scenario does not fit).
Triangle placement uses the same three numbers, clipped to [0, 1] and normalised to sum to 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESOURCES = ("compute", "bandwidth", "memory")


@dataclass(frozen=True)
class Pressure:
    compute: float
    bandwidth: float
    memory: float

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.compute, self.bandwidth, self.memory)

    @property
    def binding(self) -> str:
        return binding_resource(*self.as_tuple())


def binding_resource(compute, bandwidth, memory):
    """Name of the resource that binds: memory if it does not fit, else the largest pressure."""
    values = (compute, bandwidth, memory)
    if memory > 1.0:
        return "memory"
    return RESOURCES[int(np.argmax(values))]


def barycentric(compute, bandwidth, memory):
    """Weights (c, b, m) summing to 1 for placing a workload in the triangle. Broadcasts."""
    p = np.clip(np.stack(np.broadcast_arrays(compute, bandwidth, memory)).astype(float), 0.0, 1.0)
    total = p.sum(axis=0)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / 3.0)
