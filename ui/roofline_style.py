"""What the roofline panel's layers share: colours, marker symbols, link names, short point names, formats."""

from __future__ import annotations

import math

from PySide6 import QtCore

from trinity_desktop.ui import theme

COMPUTE = theme.RESOURCE_COLORS["compute"]
BANDWIDTH = theme.RESOURCE_COLORS["bandwidth"]
MEMORY = theme.RESOURCE_COLORS["memory"]
NOFIT_COLOR = theme.MUTED_COLOR
# Compared hardware: Okabe-Ito hues not used for the resources, each with its own dash pattern.
COMPARE_STYLES = [(theme.ACCENT_COLORS["pink"], QtCore.Qt.PenStyle.DashLine), (theme.FOCUS_COLOR, QtCore.Qt.PenStyle.DotLine),
                  (theme.FALLBACK_COLOR, QtCore.Qt.PenStyle.DashDotLine)]
MAX_COMPARE = 3
LINK_SYMBOLS = {"hbm": "o", "sram": "o", "l2": "o", "scale-up": "t", "scale-out": "s", "host": "d", "nvme": "h"}
LINK_WORDS = {"hbm": "HBM", "sram": "SRAM", "l2": "L2", "scale-up": "scale-up link", "scale-out": "scale-out network",
              "host": "host link", "nvme": "NVMe"}
SHORT_NAMES = {"QKV GEMM": "QKV", "out-projection GEMM": "out-proj", "MLP up+gate GEMM": "MLP up",
               "MLP up GEMM": "MLP up", "MLP down GEMM": "MLP down", "attention (FlashAttention)": "FlashAttention",
               "attention (standard)": "standard attn", "optimizer step": "optimizer",
               "TP all-reduce": "TP all-reduce", "decode GEMMs (weights)": "decode GEMMs",
               "decode KV-cache reads": "KV reads", "MLP up+gate GEMM (routed experts)": "experts up",
               "MLP up GEMM (routed experts)": "experts up", "MLP down GEMM (routed experts)": "experts down",
               "MLP up+gate GEMM (shared experts)": "shared up", "MLP up GEMM (shared experts)": "shared up",
               "MLP down GEMM (shared experts)": "shared down", "MLP up+gate GEMM (dense layers)": "dense MLP up",
               "MLP up GEMM (dense layers)": "dense MLP up", "MLP down GEMM (dense layers)": "dense MLP down"}
SWEEP_GEMM = "sweep: decode GEMMs"
SWEEP_STEP = "sweep: decode step (GEMMs + KV reads)"
HOVER_PX = 14.0
MODES = {"batch": "batch size", "context": "context length"}
STAGE_RING = theme.ON_LIGHT      # the highlight ring: black on a white halo reads on every fill and for every viewer
STAGE_LABEL_CHARS = 56


def short_name(name: str) -> str:
    """A point's on-plot label (the hover shows the full name)."""
    if name in SHORT_NAMES:
        return SHORT_NAMES[name]
    if name.endswith(" — comparison"):
        return short_name(name[: -len(" — comparison")]) + " (cmp)"
    if name.startswith("DP gradient"):
        return "DP grads"
    return name.split(" (")[0]


def fmt_intensity(value: float) -> str:
    if not math.isfinite(value):
        return "—"
    return f"{value:,.0f} FLOP/B" if value >= 100 else f"{value:.3g} FLOP/B"


def fmt_count(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.3g}M"
    if value >= 1e4:
        return f"{value / 1e3:.3g}k"
    return f"{value:,.0f}"
