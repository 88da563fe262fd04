"""The roofline's ceilings and its point type: every roof of a device, and one kernel placed under them.

Roofline model (Williams, Waterman, Patterson 2009; the scaling book's roofline.md, "scaling-book"): a kernel
doing F FLOPs and moving B bytes over a link of bandwidth BW on a device of peak P takes max(F/P, B/BW); its
attainable FLOP/s is min(P, I·BW) at intensity I = F/B. The conventions: model/views/roofline.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import (
    compute_dtype_for_weights,
)
from trinity_desktop.model.formulas.pressure import achievable_compute
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.scenario import Scenario

# decode step's weight GEMMs and its KV-cache reads.
POINT_ROLES = ("gemm", "attention", "attention_comparison", "optimizer", "offload", "tp_allreduce", "dp_grad_sync",
               "decode_gemms", "decode_kv_reads", "speculative_verify")  # speculative decoding (#23): verify step
INTENSITY_CAP = 1e6          # FLOP/B used for a point that moves no bytes (clipped, stated)
ADAM_FLOPS_PER_PARAM = 10.0  # AdamW per parameter: 2 moment updates (2 mul + 1 add each), bias
                             # corrections, sqrt, divide, weight decay and the update ≈ 10 FLOPs (assumed)
ROOFLINE_SOURCE = "scaling-book"
COMPUTE_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
DTYPE_LABELS = {"fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "int8": "INT8",
                "fp4": "FP4"}
LINK_LABELS = {"hbm": "HBM", "sram": "SRAM", "l2": "L2", "scale-up": "scale-up", "host": "host",
               "scale-out": "scale-out", "nvme": "NVMe"}


@dataclass(frozen=True)
class Ceiling:
    """One roof: a compute peak (FLOP/s, `link` "") or a data-movement bandwidth (B/s, `link` named)."""

    name: str
    kind: str                     # "compute" | "bandwidth"
    value: float                  # FLOP/s or B/s
    link: str                     # "" for compute, else "hbm" | "sram" | "l2" | "scale-up" | "host" | ...
    source: str
    dtypes: tuple[str, ...] = ()  # compute roofs: the formats that run at this peak
    detail: str = ""              # the link's name (e.g. "NVLink 4 (NVSwitch)") or the peak's note


@dataclass(frozen=True)
class OperatingPoint:
    name: str
    flops: float
    bytes: float
    link: str                     # the ceiling's link the bytes stream over
    resource: str                 # "compute" | "bandwidth" | "memory": colour key of the binding roof
    time_s: float                 # roofline time max(F/P, B/BW) at datasheet peaks
    bound_by: str                 # name of the binding ceiling
    attainable_flops_per_s: float
    dtype: str = ""
    scope: str = ""               # what the FLOPs and bytes count, e.g. "per layer, per micro-batch, one GPU"
    note: str = ""
    role: str = ""                # what the kernel is, an id of POINT_ROLES (stages match points by it)

    @property
    def intensity(self) -> float:
        """FLOP per byte; a point that moves no bytes is clipped to INTENSITY_CAP (never inf/NaN)."""
        if self.bytes <= 0:
            return INTENSITY_CAP
        return min(self.flops / self.bytes, INTENSITY_CAP)


@dataclass(frozen=True)
class Roofline:
    hardware_key: str
    dtype: str
    ceilings: tuple[Ceiling, ...]
    points: tuple[OperatingPoint, ...]
    ridge_flop_per_byte: float

    def ceiling(self, name: str) -> Ceiling:
        for c in self.ceilings:
            if c.name == name:
                return c
        raise KeyError(name)

    def point(self, name: str) -> OperatingPoint:
        for p in self.points:
            if p.name == name:
                return p
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------- ceilings
def attainable(intensity, peak, bw):
    """Attainable FLOP/s: min(peak, intensity · bandwidth). Broadcasts over arrays."""
    return np.minimum(np.asarray(peak, dtype=float), np.asarray(intensity, dtype=float) * np.asarray(bw, dtype=float))


def ceilings(hw: Hardware) -> tuple[Ceiling, ...]:
    """Every roof of a device: compute per published dense format, then each data-movement link.

    Compute: FP32, TF32, BF16/FP16, FP8, INT8, FP4 as published (dense); formats with the same peak share one
    roof (named "BF16/FP16", "FP8/INT8"). Bandwidth: HBM, then the on-chip SRAM and L2 roofs **only if
    the hardware carries a bandwidth for them** (`sram_bw`, `l2_bw` attributes): the presets give SRAM and
    L2 *sizes* but no source in resources/ gives an aggregate on-chip bandwidth, so those roofs are
    omitted rather than invented. Then scale-up, host (PCIe), scale-out and NVMe; links with 0 bandwidth
    (absent on this device) are skipped.
    """
    out: list[Ceiling] = []
    groups: dict[float, list[str]] = {}
    for dt in COMPUTE_DTYPES:
        if dt in hw.peak_flops:
            groups.setdefault(float(hw.peak_flops[dt]), []).append(dt)
    for value, dts in sorted(groups.items()):
        name = "/".join(DTYPE_LABELS[d] for d in dts)
        key = f"peak_{dts[0]}"
        out.append(Ceiling(name=name, kind="compute", value=value, link="", source=hw.sources.get(key, ""),
                           dtypes=tuple(dts), detail=hw.notes.get(key, "")))
    links = [("hbm", "HBM", hw.hbm_bw, "hbm_bw", "HBM"),
             ("sram", "SRAM", float(getattr(hw, "sram_bw", 0.0) or 0.0), "sram_bw", "on-chip SRAM"),
             ("l2", "L2", float(getattr(hw, "l2_bw", 0.0) or 0.0), "l2_bw", "L2 cache"),
             ("scale-up", "scale-up", hw.scaleup_bw, "scaleup_bw", hw.scaleup_name),
             ("host", "host", hw.host_link_bw, "host_link_bw", hw.host_link_name),
             ("scale-out", "scale-out", hw.scaleout_bw, "scaleout_bw", hw.scaleout_name),
             ("nvme", "NVMe", hw.nvme_bw, "nvme_bw", "local NVMe")]
    for link, name, bw, key, detail in links:
        if bw > 0:
            out.append(Ceiling(name=name, kind="bandwidth", value=float(bw), link=link,
                               source=hw.sources.get(key, ""), detail=detail))
    return tuple(out)


def compute_ceiling(ceils: tuple[Ceiling, ...], dtype: str) -> Ceiling:
    """The compute roof a format runs at (fp16 and bf16, tf32 and fp32 stand in as Hardware.peak does)."""
    fallback = {"bf16": "fp16", "fp16": "bf16", "tf32": "fp32"}.get(dtype, dtype)
    for want in (dtype, fallback):
        for c in ceils:
            if c.kind == "compute" and want in c.dtypes:
                return c
    raise KeyError(dtype)


def link_ceiling(ceils: tuple[Ceiling, ...], link: str) -> Ceiling:
    for c in ceils:
        if c.kind == "bandwidth" and c.link == link:
            return c
    raise KeyError(link)


def scenario_dtype(sc: Scenario) -> str:
    """The format the scenario's GEMMs run in: the training precision, or the inference compute format."""
    if sc.kind == "train":
        return sc.precision
    return compute_dtype_for_weights(sc.weight_dtype, dict(sc.hardware.peak_flops))


def ridge_flop_per_byte(hw: Hardware, dtype: str) -> float:
    """Ridge point against HBM: peak(dtype) / HBM bandwidth (Hardware.ridge_point)."""
    return hw.ridge_point(dtype)


# ---------------------------------------------------------------------------------------------- points
def _point(name: str, flops: float, nbytes: float, link: str, dtype: str, ceils: tuple[Ceiling, ...],
           scope: str, note: str = "", role: str = "gemm") -> OperatingPoint:
    flops, nbytes = max(float(flops), 0.0), max(float(nbytes), 0.0)
    comp = compute_ceiling(ceils, dtype)
    roof = link_ceiling(ceils, link)
    t_c = flops / comp.value
    t_b = nbytes / roof.value
    compute_bound = t_c >= t_b
    time = max(t_c, t_b)
    return OperatingPoint(name=name, flops=flops, bytes=nbytes, link=link,
                          resource="compute" if compute_bound else "bandwidth", time_s=time,
                          bound_by=comp.name if compute_bound else roof.name,
                          attainable_flops_per_s=flops / time if time > 0 else 0.0, dtype=dtype, scope=scope,
                          note=note, role=role)


def link_efficiency(sc: Scenario, link: str) -> float:
    """The share of a ceiling the model's times assume: efficiency.hbm for HBM, efficiency.network for the
    device links, 1 for on-chip SRAM and L2 (not derated by the model)."""
    eff = sc.efficiency
    if link == "hbm":
        return eff.hbm
    return eff.network if link in ("scale-up", "scale-out", "host", "nvme") else 1.0


def achievable_compute_share(sc: Scenario, peak: float) -> float:
    """The share of a compute ceiling `peak` the model's kernels reach for this workload
    (pressure.achievable_compute: the kernel curves' best GEMM shape, or compute_efficiency)."""
    return float(achievable_compute(sc.hardware, peak, sc.efficiency.compute, sc.kind)) / peak


def achievable_ridge(sc: Scenario, dtype: str | None = None) -> float:
    """FLOP per HBM byte where the model's roofline time max(F / P_achievable, B / (BW·η_hbm)) turns."""
    hw = sc.hardware
    peak = hw.peak(dtype or scenario_dtype(sc))
    return peak * achievable_compute_share(sc, peak) / (hw.hbm_bw * sc.efficiency.hbm)


def bound_by_achievable(sc: Scenario, p: OperatingPoint, ceils: tuple[Ceiling, ...]) -> str:
    """The ceiling that binds the point once every ceiling is derated to the rate the model times it at."""
    comp, roof = compute_ceiling(ceils, p.dtype), link_ceiling(ceils, p.link)
    t_c = p.flops / (comp.value * achievable_compute_share(sc, comp.value))
    t_b = p.bytes / (roof.value * link_efficiency(sc, p.link))
    return comp.name if t_c >= t_b else roof.name

