"""Colours, pens and fonts shared by every panel: one colour per resource, used everywhere.

Resource colours come from the Okabe-Ito colour-blind-safe palette; heatmaps use cividis.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtGui

# Okabe & Ito (2008) palette: distinguishable under the common colour-vision deficiencies.
RESOURCE_COLORS = {
    "compute": "#E69F00",    # orange
    "bandwidth": "#0072B2",  # blue
    "memory": "#009E73",     # bluish green
}
RESOURCE_LABELS = {"compute": "Compute", "bandwidth": "Bandwidth", "memory": "Memory"}

# Memory components and time stages map onto the resource they load.
COMPONENT_COLORS = {
    "weights": "#56B4E9",
    "gradients": "#CC79A7",
    "optimizer": "#D55E00",
    "activations": "#009E73",
    "kv_cache": "#009E73",
    "reserved": "#999999",
}
STAGE_COLORS = {
    "compute": RESOURCE_COLORS["compute"],
    "communication_exposed": RESOURCE_COLORS["bandwidth"],
    "pipeline_bubble": "#BBBBBB",
    "optimizer": "#56B4E9",
    "GEMMs (weights)": RESOURCE_COLORS["compute"],
    "attention": "#CC79A7",
    "attention (KV reads)": "#CC79A7",
    "TP communication": RESOURCE_COLORS["bandwidth"],
}
LABELS = {
    "weights": "Weights", "gradients": "Gradients", "optimizer": "Optimizer states",
    "activations": "Activations", "kv_cache": "KV cache", "reserved": "Reserved (runtime, 10%)",
    "compute": "Compute", "communication_exposed": "Exposed communication", "pipeline_bubble": "Pipeline bubble",
}
HEATMAP_COLORMAP = "cividis"
FALLBACK_COLOR = "#777777"


def color_for(name: str) -> str:
    return COMPONENT_COLORS.get(name) or STAGE_COLORS.get(name) or FALLBACK_COLOR


def label_for(name: str) -> str:
    return LABELS.get(name, name[:1].upper() + name[1:])


def base_font_size() -> int:
    return 11


def configure_pyqtgraph() -> None:
    """Global pyqtgraph look: light background, antialiased lines."""
    pg.setConfigOptions(antialias=True, background="w", foreground="#222222")


def axis_font(point_size: int | None = None) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSize(point_size or base_font_size())
    return font
