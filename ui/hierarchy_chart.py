"""The memory hierarchy chart: the device's memory tiers as points, capacity per GPU (x, log) against bandwidth
(y, log), each labelled with its latency (tiers from `model.tiers.tiers_for`, sources in the hover).

Labels sit right of the points with the room kept in pixels; they take one line when the plot is low and
are elided when it is narrow (the hover gives them in full). Part of the KV-cache residency panel.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.tiers import tiers_for
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_bytes, fmt_rate


class HierarchyChart(pg.GraphicsLayoutWidget):
    """Memory tiers of one device, capacity against bandwidth; `show_tiers(hw)` draws them."""

    def __init__(self, colors: dict[str, str], time_label: Callable[[float], str]):
        super().__init__()
        self.colors, self.time_label = colors, time_label
        self._hardware: Hardware | None = None
        self.setBackground("w")
        self.setAccessibleName("Memory hierarchy chart")
        self.setAccessibleDescription(
            "Each memory tier of the device as a point: capacity per GPU (x, log) against bandwidth (y, log), "
            "labelled with its latency.")
        self.plot: pg.PlotItem = self.addPlot()
        self.plot.getViewBox().sigResized.connect(
            lambda *_: self._hardware is not None and self.show_tiers(self._hardware))
        pw.style_plot(self.plot, "Memory hierarchy", left="bandwidth seen from the GPU (B/s, log scale)",
                      bottom="capacity per GPU (bytes, log scale)")
        pw.freeze_view(self.plot)
        self.line = pg.PlotCurveItem(pen=pg.mkPen("#999999", width=2, style=QtCore.Qt.PenStyle.DashLine))
        self.plot.addItem(self.line)
        self.points = pg.ScatterPlotItem(size=22, pen=pg.mkPen("#222222", width=1.5))
        self.plot.addItem(self.points)
        self.labels: list[pg.TextItem] = []
        self.leaders = pg.PlotCurveItem(pen=pg.mkPen("#888888", width=1), connect="pairs")
        self.plot.addItem(self.leaders)
        self._tiers = ()
        self.hover = pw.HoverReadout(self.plot, self._hover_text)
        pw.LeaveFilter(self, self.hover.leave)

    def show_tiers(self, hw: Hardware) -> None:
        """Draw hardware `hw`'s tiers; the labels keep their room for the current plot size."""
        self._hardware = hw
        self._tiers = tiers_for(hw)
        cap = np.array([t.capacity_bytes for t in self._tiers])
        bw = np.array([t.bandwidth for t in self._tiers])
        lx, ly = np.log10(cap), np.log10(bw)
        brushes = [pg.mkBrush(self.colors.get(t.name, theme.FALLBACK_COLOR)) for t in self._tiers]
        self.points.setData(lx, ly, brush=brushes, symbol="s")
        self.line.setData(lx, ly)
        while len(self.labels) < len(self._tiers):
            item = pw.label_item(anchor=(0, 0.5))
            self.plot.addItem(item)
            self.labels.append(item)
        # Labels (name, then the numbers) right of the points: the x range leaves them the room, in pixels.
        texts = []
        for t in self._tiers:
            lat = self.time_label(t.latency_s) if t.latency_s > 0 else "latency n/a"
            texts.append(f"{t.label}\n{fmt_bytes(t.capacity_bytes)} · {fmt_rate(t.bandwidth)} · {lat}")
        metrics = QtGui.QFontMetrics(pw.font())
        vb = self.plot.getViewBox()
        width, height = max(vb.width(), 200.0), max(vb.height(), 150.0)
        lines = 2 if len(texts) * (2 * metrics.lineSpacing() + 10) <= 0.95 * height else 1
        if lines == 1:   # too low for two lines a label: name and numbers on one line
            texts = [text.replace("\n", ": ") for text in texts]
        room = min(max(metrics.horizontalAdvance(line) for text in texts for line in text.split("\n")) + 40.0,
                   0.5 * width)   # a narrow plot: the lines are elided (the hover gives them in full)
        texts = ["\n".join(metrics.elidedText(line, QtCore.Qt.TextElideMode.ElideRight, int(room - 40.0))
                           for line in text.split("\n")) for text in texts]
        x0 = math.floor(lx.min()) - 0.5
        x1 = max(math.ceil(lx.max()) + 1.0, (float(lx.max()) * width - room * x0) / (width - room) + 0.3)
        y0, y1 = math.floor(ly.min()) - 0.5, math.ceil(ly.max()) + 0.5
        px_x = width / (x1 - x0)
        label_x = float(lx.max()) + 24.0 / px_x
        line_gap = (lines * metrics.lineSpacing() + 10) * (y1 - y0) / height
        label_y = ll.spread_positions(ly, gap=line_gap, lo=y0 + line_gap / 2, hi=y1 - line_gap / 2)
        leaders_x, leaders_y = [], []
        for i, item in enumerate(self.labels):
            if i < len(self._tiers):
                item.setText(texts[i])
                item.setPos(label_x, label_y[i])
                item.setVisible(True)
                leaders_x += [lx[i] + 12.0 / px_x, label_x - 2.0 / px_x]
                leaders_y += [ly[i], label_y[i]]
            else:
                item.setVisible(False)
        self.leaders.setData(np.asarray(leaders_x, float), np.asarray(leaders_y, float))
        self.plot.setXRange(x0, x1, padding=0)
        self.plot.setYRange(y0, y1, padding=0)
        step = max(1, math.ceil((x1 - x0) * 80.0 / width))   # a decade label every ~80 px at most
        self.plot.getAxis("bottom").setTicks([[(e, fmt_bytes(10.0 ** e))
                                                  for e in range(math.ceil(x0), math.floor(x1) + 1, step)]])
        self.plot.getAxis("left").setTicks([[(e, fmt_rate(10.0 ** e)) for e in range(math.ceil(y0), math.floor(y1) + 1)]])
        pw.set_title(self.plot, f"Memory hierarchy of {pw.html_escape(hw.name)} (per GPU)", size="13pt")

    def _hover_text(self, x: float, y: float) -> str:
        if not self._tiers:
            return ""
        pts = np.array([(math.log10(t.capacity_bytes), math.log10(t.bandwidth)) for t in self._tiers])
        d = np.hypot(pts[:, 0] - x, pts[:, 1] - y)
        i = int(np.argmin(d))
        if d[i] > 0.6:
            return ""
        t = self._tiers[i]
        src = ", ".join(f"{k}: {v}" for k, v in t.source.items() if v)
        return (f"{t.label}\ncapacity {fmt_bytes(t.capacity_bytes)} per GPU\nbandwidth {fmt_rate(t.bandwidth)}\n"
                f"latency {self.time_label(t.latency_s)}\nsources: {src}")
