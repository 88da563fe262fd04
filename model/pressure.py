"""Resource pressures and the bottleneck rule: one definition used by the heatmap, the triangle and the CLI.

Each pressure is the fraction of one resource's capacity the scenario uses, equivalently the share of the
step (or token) time that resource would need at its datasheet peak:

  compute   = FLOPs / (step time x devices x peak FLOP/s)          (hardware-FLOPs utilisation)
  bandwidth = max over links of bytes / (step time x link bandwidth)  (the busiest of HBM, scale-up,
              scale-out and host link, per device)
  memory    = bytes held / HBM capacity                             (> 1 means it does not fit)

So a decode step that streams weights at 70% of HBM bandwidth has bandwidth pressure 0.7, and a training
step at 38% MFU has compute pressure ~0.4. The triangle places a workload by these three numbers clipped to
[0, 1] and normalised to sum to 1 (barycentric weights).

The binding resource (bottleneck) is memory when the scenario does not fit or uses >= 90% of HBM
(no headroom: batch or context cannot grow); otherwise the larger of the compute and bandwidth pressures.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import fastnp as np  # numpy, with fast paths for scalars (one formula serves grid and scalar)

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


MEMORY_BINDS_AT = 0.9


def binding_resource(compute, bandwidth, memory):
    """Name of the resource that binds: memory at >= 90% of HBM (or not fitting), else the busier of
    compute and bandwidth."""
    if memory >= MEMORY_BINDS_AT:
        return "memory"
    return "compute" if compute >= bandwidth else "bandwidth"


def utilisation_pressures(flops, time_total, devices, peak, bytes_by_link, link_bandwidth, memory_total,
                          capacity):
    """(compute, bandwidth, memory) pressures as defined above. `bytes_by_link` and `link_bandwidth` map a
    link name to bytes per device per step and its bandwidth in B/s (links with no bandwidth are skipped).
    Broadcasts over arrays."""
    compute = np.asarray(flops, dtype=float) / (np.asarray(time_total, dtype=float) * devices * peak)
    loads = [np.asarray(bytes_by_link[k], dtype=float) / (np.asarray(time_total, dtype=float) * bw)
             for k, bw in link_bandwidth.items() if bw > 0 and k in bytes_by_link]
    bandwidth = functools.reduce(np.maximum, loads) if loads else np.zeros_like(compute)
    memory = np.asarray(memory_total, dtype=float) / capacity
    return np.clip(compute, 0.0, 1.0), np.clip(bandwidth, 0.0, 1.0), memory


def barycentric(compute, bandwidth, memory):
    """Weights (c, b, m) summing to 1 for placing a workload in the triangle. Broadcasts."""
    p = np.clip(np.stack(np.broadcast_arrays(compute, bandwidth, memory)).astype(float), 0.0, 1.0)
    total = p.sum(axis=0)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / 3.0)
