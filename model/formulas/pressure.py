"""Resource pressures and the binding resource: one definition used by the heatmap, the triangle, the
status bar, the slide captions and the CLI (`pressure` in `calc --json`).

A pressure is the share of one resource's limit that the scenario uses; 1.0 means that resource is at its
limit. Rates are the achievable ones the model times every step with (`achievable_compute`, `achievable_rates`):
compute as the kernel curves time it (model/formulas/kernel_efficiency.py: a training or prefill GEMM at its
family's best shape reaches peak x MAMF share x compute efficiency / its likely value; decode GEMMs and hardware
without a measured family run at peak x compute efficiency), HBM and links at their bandwidth times the scenario's
efficiency (model/inputs/scenario.py `Efficiency`: 80% by default), so a resource that sets the step time reads
about 1.0:

  compute   = FLOPs / (step time x devices x achievable FLOP/s)
              1.0: the tensor cores are busy for the whole step at the best rate the kernels reach
  bandwidth = max over links of bytes / (step time x link bandwidth x its efficiency)
              1.0: the busiest of HBM, scale-up, scale-out and host link (and NVMe, at its own rate)
              moves data for the whole step
  memory    = bytes held per device / HBM capacity
              1.0: HBM is full (> 1: it does not fit)

Compute and bandwidth are capped at 1 (a resource cannot be busier than always); memory is not, so a
scenario that does not fit reads above 1. A decode step that streams the weights through HBM for its whole
duration has bandwidth pressure 1.0; a training step at 38% MFU on hardware without a measured family, at 50%
compute efficiency, has compute pressure ~0.76 (on an H100, whose best GEMMs reach 80% of peak, ~0.47).

Hot = constrained: the binding resource (bottleneck) is the one with the highest pressure, i.e. the one
nearest its limit, so in every heatmap row the hottest cell is the outlined one. Ties go to memory, then
bandwidth (a capacity limit is harder than a rate limit). This is the roofline's reading of time (the
busier of compute and data movement bounds the step, Williams et al. 2009) extended with capacity
(memory wall: a step that does not fit cannot run, Rajbhandari et al. 2020).

The triangle places a workload by these three numbers clipped to [0, 1] and normalised to sum to 1
(`barycentric`); the CLI names those `triangle_weights`, never `pressure`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars: one formula, grid and scalar
from trinity_desktop.model.formulas import kernel_efficiency as ke

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


TIE_ORDER = ("memory", "bandwidth", "compute")  # who binds when two pressures are equal


def binding_resource(compute, bandwidth, memory) -> str:
    """Name of the binding resource: argmax of the pressures (ties: memory, then bandwidth); the roofline's
    reading of time (Williams et al. 2009) with capacity added (this project, module docstring)."""
    values = {"compute": float(compute), "bandwidth": float(bandwidth), "memory": float(memory)}
    return max(TIE_ORDER, key=lambda name: values[name])


def achievable_compute(hardware, peak, eff_compute, kind: str = "train"):
    """The most FLOP/s the model times a workload's FLOPs at, one home for the roofline and the pressures:
    training and prefill run on the kernel curves, whose best GEMM shape (no tile or wave quantisation) reaches
    peak x the family's MAMF share for the format (FP8 where `peak` is the FP8 one) x eff_compute /
    REFERENCE_COMPUTE_EFFICIENCY (kernel_efficiency, mamf-table); decode GEMMs (model/step/inference.py) and
    hardware without a measured family run at peak x eff_compute. Broadcasts over `peak` and `eff_compute`."""
    family = ke.family_of(hardware.key)
    if kind == "decode" or family is None:
        return peak * eff_compute
    share = family.gemm_share(ke.runs_fp8(peak, hardware))
    return peak * share * xp.asarray(eff_compute, dtype=float) / ke.REFERENCE_COMPUTE_EFFICIENCY


def achievable_rates(peak, link_bandwidth, efficiency, hardware, kind: str = "train"):
    """(FLOP/s, {link: B/s}) at the rates the model times steps with: compute by `achievable_compute`, HBM x
    `efficiency.hbm`, scale-up, scale-out and host link x `efficiency.network`; other links (NVMe) as given
    (the achievable ceilings of the roofline, Williams et al. 2009; the efficiencies of resources/assumptions.toml)."""
    scale = {"hbm": efficiency.hbm, "scale-up": efficiency.network, "scale-out": efficiency.network,
             "host": efficiency.network}
    return (achievable_compute(hardware, peak, efficiency.compute, kind),
            {k: bw * scale.get(k, 1.0) for k, bw in link_bandwidth.items()})


def utilisation_pressures(flops, time_total, devices, peak, bytes_by_link, link_bandwidth, memory_total,
                          capacity):
    """(compute, bandwidth, memory) pressures as defined above. `bytes_by_link` and `link_bandwidth` map a
    link name to bytes per device per step and its bandwidth in B/s (links with no bandwidth are skipped).
    Broadcasts over arrays. Formula and source: the module docstring (Williams et al. 2009; fan2026-trinity)."""
    compute = xp.asarray(flops, dtype=float) / (xp.asarray(time_total, dtype=float) * devices * peak)
    loads = [xp.asarray(bytes_by_link[k], dtype=float) / (xp.asarray(time_total, dtype=float) * bw)
             for k, bw in link_bandwidth.items() if bw > 0 and k in bytes_by_link]
    bandwidth = functools.reduce(xp.maximum, loads) if loads else xp.zeros_like(compute)
    memory = xp.asarray(memory_total, dtype=float) / capacity
    return xp.clip(compute, 0.0, 1.0), xp.clip(bandwidth, 0.0, 1.0), memory


def barycentric(compute, bandwidth, memory):
    """Weights (c, b, m) summing to 1 for placing a workload in the triangle: the pressures clipped to [0, 1],
    divided by their sum (1/3 each when all are 0); the triangle of Fan et al. 2026 (fan2026-trinity). Broadcasts."""
    p = xp.clip(xp.stack(xp.broadcast_arrays(compute, bandwidth, memory)).astype(float), 0.0, 1.0)
    total = p.sum(axis=0)
    return xp.where(total > 0, p / xp.where(total > 0, total, 1.0), 1.0 / 3.0)
