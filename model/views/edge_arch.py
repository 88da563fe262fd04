"""Attention, gated short-convolution and hybrid stacks decoding on an edge device, against context length.

For each stack of resources/edge_architectures.toml (and the all-conv reference of the hybrid's widths) the
per-token FLOPs, bytes read, state bytes and roofline time come from model/formulas/edge_blocks.py on the
device's peak and memory bandwidth (resources/edge.toml) with the scenario's efficiencies; speed-up =
attention time / stack time at the same context. Everything broadcasts over the context axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.edge_blocks import decode_bytes, decode_flops, decode_time, state_bytes
from trinity_desktop.model.inputs.edge_architectures import BlockStack, block_stacks
from trinity_desktop.model.inputs.presets import find
from trinity_desktop.model.inputs.scenario import Efficiency
from trinity_desktop.model.views.split import edge_devices

ATTENTION = "llama-3.2-1b-blocks"
HYBRID = "lfm2-1.2b"
DEFAULT_DEVICE = "laptop-x86-ddr5"


@dataclass(frozen=True)
class StackCurve:
    key: str
    name: str
    flops: np.ndarray
    bytes_read: np.ndarray
    state_bytes: np.ndarray
    time_s: np.ndarray
    speedup: np.ndarray     # attention time / this stack's time


@dataclass(frozen=True)
class EdgeArchCurves:
    device: str
    weight_dtype: str
    context: np.ndarray
    curves: tuple[StackCurve, ...]   # attention, hybrid, all-conv

    def by_key(self, key: str) -> StackCurve:
        return next(c for c in self.curves if c.key == key)


def context_axis(n: int = 64) -> np.ndarray:
    return np.unique(np.round(np.geomspace(256, 131072, n)))


def stacks() -> tuple[BlockStack, BlockStack, BlockStack]:
    s = block_stacks()
    hybrid = s[HYBRID]
    return (s[ATTENTION], hybrid, hybrid.replace_layers("conv", "All short-conv (LFM2-1.2B widths, hypothetical)"))


def edge_arch_curves(device: str = DEFAULT_DEVICE, weight_dtype: str = "q4_k", context=None,
                     efficiency: Efficiency | None = None, cache_bytes: float = 2.0) -> EdgeArchCurves:
    if weight_dtype not in BYTES_PER_ELEMENT:
        raise ValidationError("weight_dtype", weight_dtype, "one of " + ", ".join(BYTES_PER_ELEMENT))
    dev = find(edge_devices(), device, "device")
    n = context_axis() if context is None else np.asarray(context, dtype=float)
    if n.ndim != 1 or n.size == 0 or np.any(~np.isfinite(n)) or np.any(n < 1) or np.any(n > 1 << 24):
        raise ValidationError("context", context, "token counts from 1 to 16777216")
    eff = efficiency or Efficiency()
    hw = dev.hardware
    peak = hw.peak("bf16")
    wb = BYTES_PER_ELEMENT[weight_dtype]
    times = [decode_time(s, n, peak, hw.hbm_bw, eff.compute, eff.hbm, wb, cache_bytes) for s in stacks()]
    curves = tuple(StackCurve(s.key, s.name, decode_flops(s, n), decode_bytes(s, n, wb, cache_bytes),
                              state_bytes(s, n, cache_bytes), t, times[0] / t) for s, t in zip(stacks(), times,
                                                                                             strict=True))
    return EdgeArchCurves(dev.key, weight_dtype, n, curves)


def context_reaching(curves: EdgeArchCurves, key: str, speedup: float) -> float | None:
    """The smallest context (tokens, log-interpolated) at which stack `key` reaches `speedup`, or None."""
    s = curves.by_key(key).speedup
    above = np.flatnonzero(s >= speedup)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(curves.context[0])
    x0, x1 = np.log(curves.context[i - 1]), np.log(curves.context[i])
    f = (speedup - s[i - 1]) / (s[i] - s[i - 1])
    return float(np.exp(x0 + f * (x1 - x0)))
