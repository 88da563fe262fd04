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

ATTENTION = "llama-3.2-1b-blocks"   # the published all-attention model of LFM2-1.2B's width and depth
HYBRID = "lfm2-1.2b"
HYBRIDS = ("lfm2-350m", "lfm2-700m", "lfm2-1.2b")
ROLES = ("attention", "hybrid", "conv")
DEFAULT_DEVICE = "laptop-x86-ddr5"


@dataclass(frozen=True)
class StackCurve:
    role: str               # "attention", "hybrid" or "conv"
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

    def by_role(self, role: str) -> StackCurve:
        return next(c for c in self.curves if c.role == role)


def context_axis(n: int = 64) -> np.ndarray:
    return np.unique(np.round(np.geomspace(256, 131072, n)))


def stacks(hybrid_key: str = HYBRID) -> tuple[BlockStack, BlockStack, BlockStack]:
    """(attention, hybrid, all-conv) at the hybrid's widths and depth: the attention stack is the published
    Llama-3.2-1B for LFM2-1.2B (the same widths), otherwise the hybrid with every block attention
    (hypothetical); the all-conv stack is always hypothetical."""
    s = block_stacks()
    hybrid = find(s, hybrid_key, "hybrid model")
    attention = (s[ATTENTION] if hybrid.key == HYBRID else
                 hybrid.replace_layers("attention", f"All attention ({hybrid.name} widths, hypothetical)"))
    return (attention, hybrid, hybrid.replace_layers("conv", f"All short-conv ({hybrid.name} widths, hypothetical)"))


def edge_arch_curves(device: str = DEFAULT_DEVICE, weight_dtype: str = "q4_k", context=None,
                     efficiency: Efficiency | None = None, cache_bytes: float = 2.0,
                     hybrid: str = HYBRID) -> EdgeArchCurves:
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
    trio = stacks(hybrid)
    times = [decode_time(s, n, peak, hw.hbm_bw, eff.compute, eff.hbm, wb, cache_bytes) for s in trio]
    curves = tuple(StackCurve(role, s.key, s.name, decode_flops(s, n), decode_bytes(s, n, wb, cache_bytes),
                              state_bytes(s, n, cache_bytes), t, times[0] / t)
                   for role, s, t in zip(ROLES, trio, times, strict=True))
    return EdgeArchCurves(dev.key, weight_dtype, n, curves)


def context_reaching(curves: EdgeArchCurves, speedup: float, role: str = "hybrid") -> float | None:
    """The smallest context (tokens, log-interpolated) at which the `role` stack reaches `speedup`, or None."""
    s = curves.by_role(role).speedup
    above = np.flatnonzero(s >= speedup)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(curves.context[0])
    x0, x1 = np.log(curves.context[i - 1]), np.log(curves.context[i])
    f = (speedup - s[i - 1]) / (s[i] - s[i - 1])
    return float(np.exp(x0 + f * (x1 - x0)))
