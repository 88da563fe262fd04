"""The memory hierarchy chart: the device's memory tiers as a ladder ordered by latency, fastest at the top.

One row per tier (`model.tiers.tiers_for`, sources in the hover): the row's name and latency are the left axis'
labels, its point sits at the bandwidth seen from the GPU (x, log), and its capacity per GPU is written beside
the point (right of it, the x range keeping that text's room in pixels, or where the dashed line leaves room:
`label_layout.place` with the line as obstacle). One point per row, so no two sit on each other, and no label
is ever shortened. Part of the KV-cache residency panel.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.tiers import tiers_for
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.curve_obstacles import line_boxes
from trinity_desktop.ui.units import fmt_bytes, fmt_rate

POINT_PX = 18
LABEL_GAP_PX = POINT_PX / 2 + 4   # a capacity text's distance from its point's centre
LABEL_SIDES = ("right", "left", "above-right", "below-right", "above-left", "below-left")


def by_latency(tiers) -> list:
    """Tiers fastest first; a tier with no stated latency goes last."""
    return sorted(tiers, key=lambda t: (t.latency_s <= 0, t.latency_s))


class HierarchyChart(pg.GraphicsLayoutWidget):
    """Memory tiers of one device, ordered by latency, at their bandwidth; `show_tiers(hw)` draws them."""

    def __init__(self, colors: dict[str, str], time_label: Callable[[float], str]):
        super().__init__()
        self.colors, self.time_label = colors, time_label
        self._hardware: Hardware | None = None
        self.setBackground(pw.plot_background())
        self.setAccessibleName("Memory hierarchy chart")
        self.setAccessibleDescription(
            "Each memory tier of the device as a row, fastest (lowest latency) at the top: the point is its "
            "bandwidth seen from the GPU (log scale), the text beside it its capacity per GPU.")
        self.plot: pg.PlotItem = self.addPlot()
        self.plot.getViewBox().sigResized.connect(
            lambda *_: self._hardware is not None and self.show_tiers(self._hardware))
        pw.style_plot(self.plot, bottom="bandwidth from the GPU (log)")
        pw.freeze_view(self.plot)
        self.plot.getViewBox().invertY(True)
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        self.plot.getAxis("left").setStyle(tickLength=0)
        self.line = pg.PlotCurveItem(pen=pg.mkPen(theme.MUTED_COLOR, width=2, style=QtCore.Qt.PenStyle.DashLine))
        self.plot.addItem(self.line)
        self.points = pg.ScatterPlotItem(size=POINT_PX, symbol="s")
        self.points.setZValue(5)
        self.plot.addItem(self.points)
        self.labels: list[pg.TextItem] = []
        self._tiers = ()
        self.hover = pw.HoverReadout(self.plot, self._hover_text)
        pw.LeaveFilter(self, self.hover.leave)

    def show_tiers(self, hw: Hardware) -> None:
        """Draw hardware `hw`'s tiers, fastest first; the capacity texts keep their room at the plot's size."""
        self._hardware = hw
        self._tiers = tuple(by_latency(tiers_for(hw)))
        n = len(self._tiers)
        bw = np.array([t.bandwidth for t in self._tiers])
        lx, ys = np.log10(bw), np.arange(n, dtype=float)
        brushes = [pg.mkBrush(self.colors.get(t.name, theme.FALLBACK_COLOR)) for t in self._tiers]
        self.points.setData(lx, ys, brush=brushes, pen=pg.mkPen(theme.plot_text_color(), width=1.2))
        self.line.setData(lx, ys)
        metrics = QtGui.QFontMetrics(pw.font())
        names = [f"{t.label}\n{self._latency(t)}" for t in self._tiers]
        axis = self.plot.getAxis("left")
        axis.setTicks([[(float(i), name) for i, name in enumerate(names)]])
        axis.setWidth(max(metrics.horizontalAdvance(line) for name in names for line in name.split("\n")) + 14)
        while len(self.labels) < n:
            item = pw.label_item(anchor=(0, 0.5))
            self.plot.addItem(item, ignoreBounds=True)
            self.labels.append(item)
        texts = [f"{fmt_bytes(t.capacity_bytes)}" for t in self._tiers]
        for i, item in enumerate(self.labels):
            item.setVisible(i < n)
            if i < n:
                item.setText(texts[i])
                item.setColor(theme.plot_text_color())
        # x range: a decade either side, and room right of the fastest point for its text (x_max solves
        # x + (text px + gap) · (x_max − x0) / width = x_max for every row)
        width = max(self.plot.getViewBox().width(), 120.0)
        x0 = math.floor(lx.min()) - 0.3
        x1 = math.ceil(lx.max()) + 0.2
        for x, text in zip(lx, texts, strict=True):
            share = min((metrics.horizontalAdvance(text) + POINT_PX) / width, 0.6)
            x1 = max(x1, (x - share * x0) / (1.0 - share))
        self.plot.setXRange(x0, x1, padding=0)
        self.plot.setYRange(-0.6, n - 0.4, padding=0)
        self._place_labels(lx, ys)
        step = max(1, math.ceil((x1 - x0) * 80.0 / width))   # a decade label every ~80 px at most
        self.plot.getAxis("bottom").setTicks([[(e, fmt_rate(10.0 ** e))
                                               for e in range(math.ceil(x0), math.floor(x1) + 1, step)]])
        hbm = next((t for t in self._tiers if t.name == "hbm"), self._tiers[0])
        slow = self._tiers[-1]
        pw.set_title(self.plot, pw.html_escape(findings.hierarchy_title(
            hbm.label, hbm.bandwidth, hbm.capacity_bytes, slow.label, slow.bandwidth, slow.capacity_bytes)),
            size="13pt")

    def _place_labels(self, lx: np.ndarray, ys: np.ndarray) -> None:
        """Each capacity text beside its point by the shared placer: right of it where the dashed line leaves
        room, else left, above or below it, never on the line, a point or another text (#21: "250 GB" sat on
        the line); one with no room is hidden (the hover gives the capacity)."""
        vb = self.plot.getViewBox()
        vb.updateMatrix()   # the range just set moves the points now, not at the next paint
        bounds = ll.view_bounds(vb)
        centres = [ll.scene_point(vb, float(x), float(y)) for x, y in zip(lx, ys, strict=True)]
        half = POINT_PX / 2 + 1
        obstacles = line_boxes([self.line], bounds) + [(cx - half, cy - half, cx + half, cy + half)
                                                       for cx, cy in centres]
        requests = []
        for i, (cx, cy) in enumerate(centres):
            w, h = ll.text_size(self.labels[i])
            requests.append(ll.Label(str(i), w, h, ll.around(cx, cy, w, h, LABEL_GAP_PX, LABEL_SIDES, steps=2)))
        boxes = ll.place(requests, bounds, obstacles)
        for i, item in enumerate(self.labels[:len(centres)]):
            ll.put(item, vb, boxes[str(i)])

    def _latency(self, tier) -> str:
        return f"{self.time_label(tier.latency_s)} latency" if tier.latency_s > 0 else "latency n/a"

    def _hover_text(self, x: float, y: float) -> str:
        if not self._tiers:
            return ""
        i = int(round(y))
        if not 0 <= i < len(self._tiers) or abs(y - i) > 0.45:
            return ""
        t = self._tiers[i]
        src = ", ".join(f"{k}: {v}" for k, v in t.source.items() if v)
        return (f"{t.label}\ncapacity {fmt_bytes(t.capacity_bytes)} per GPU\nbandwidth {fmt_rate(t.bandwidth)}\n"
                f"latency {self.time_label(t.latency_s)}\nsources: {src}")

    def tier_order(self) -> list[str]:
        """Tier names as drawn, top (fastest) to bottom."""
        return [t.name for t in self._tiers]
