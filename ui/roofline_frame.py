"""What the roofline panel's layers draw from: one frozen frame (the Results, their Roofline, the view's ranges),
the ceilings' geometry in that view, and the plot's pixel scale.

The panel builds a `RooflineFrame` after every change of results or range and hands it to each layer
(ui/roofline_band.py, roofline_compare.py, roofline_labels.py, roofline_stage.py, roofline_hover.py); no layer reads
the panel's own state. The model's side of a frame is `Roofline` (model/views/roofline.py): ceilings and
operating points in data units (FLOP/B, FLOP/s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.roofline import Ceiling, Roofline

__all__ = ["RooflineFrame", "ceiling_geometry", "compute_roof_name", "px_per_decade", "text_rect_px"]


@dataclass(frozen=True)
class RooflineFrame:
    """The Results drawn, their Roofline, and the view's x (FLOP/B) and y (FLOP/s) ranges in data units."""

    results: Results
    roof: Roofline
    x_range: tuple[float, float]
    y_range: tuple[float, float]

    @property
    def scenario(self) -> Scenario:
        return self.results.scenario

    @property
    def hardware(self) -> Hardware:
        return self.results.scenario.hardware

    @property
    def peak(self) -> float:
        """The scenario format's dense peak FLOP/s: where the ridge sits."""
        return self.hardware.peak(self.roof.dtype)

    def geometry(self, c: Ceiling) -> tuple[np.ndarray, np.ndarray]:
        return ceiling_geometry(c, self.roof, self.hardware, self.x_range)


def ceiling_geometry(c: Ceiling, roof: Roofline, hw: Hardware,
                     x_range: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """(xs, ys) of a ceiling in data units: a compute roof runs from where the HBM roof meets it to the right
    edge; the HBM roof rises to the highest compute roof; other links rise to the scenario format's peak (their
    ridge)."""
    x_lo, x_hi = x_range
    if c.kind == "compute":
        x0 = max(c.value / hw.hbm_bw, x_lo)
        return np.array([x0, x_hi]), np.array([c.value, c.value])
    top = max(k.value for k in roof.ceilings if k.kind == "compute") if c.link == "hbm" else hw.peak(roof.dtype)
    x1 = min(top / c.value, x_hi)
    return np.array([x_lo, x1]), np.array([x_lo, x1]) * c.value


def compute_roof_name(roof: Roofline) -> str:
    """The compute roof of the scenario's format (BF16 and FP16 share one, as do TF32 and FP32), or ""."""
    twin = {"bf16": "fp16", "fp16": "bf16", "tf32": "fp32"}.get(roof.dtype)
    return next((c.name for c in roof.ceilings if c.kind == "compute" and (roof.dtype in c.dtypes or twin in c.dtypes)),
                "")


def px_per_decade(plot: pg.PlotItem) -> tuple[float, float]:
    """Pixels per decade of x and of y in the plot's view (log10 axes)."""
    vb = plot.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    return max(vb.width(), 1.0) / max(x1 - x0, 1e-9), max(vb.height(), 1.0) / max(y1 - y0, 1e-9)


def text_rect_px(item: pg.TextItem, px_x: float, px_y: float) -> QtCore.QRectF:
    """An unrotated TextItem's box in the layout's pixel frame (x right, y down), from its log10 position and
    anchor."""
    metrics = QtGui.QFontMetrics(item.textItem.font())
    lines = item.toPlainText().split("\n")
    w = max(metrics.horizontalAdvance(line) for line in lines) + 4
    h = metrics.lineSpacing() * len(lines) + 2
    pos = item.pos()
    ax, ay = item.anchor.x(), item.anchor.y()
    x, y = pos.x() * px_x, -pos.y() * px_y
    return QtCore.QRectF(x - ax * w, y - ay * h, w, h)

