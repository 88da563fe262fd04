"""One stacked bar of named segments with leader-lined side labels (the Memory and time panel's bars)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from trinity_desktop.ui import label_layout, theme
from trinity_desktop.ui.plot_widgets import font, label_item, plot_background


class StackedBar:
    """One stacked bar (vertical) of named segments, drawn by a single long-lived BarGraphItem.

    Each segment gets a side label (name, then value) joined to its segment by a leader line; labels are
    spread apart so thin segments stay legible. The x range follows the widget size so labels always fit
    (text is measured in pixels); `left_px` reserves room left of the bar for labels of horizontal lines.
    `update` changes data in place (setOpts / setData); nothing is rebuilt.
    """

    HALF_MIDDLE = 0.5     # the bar occupies [-0.3, 0.3]; the middle region is [-0.5, LABEL_X]
    LABEL_X = 0.55

    def __init__(self, plot: pg.PlotItem, width: float = 0.6):
        self.plot = plot
        self.x = 0.0
        self.width = width
        self.label_x = self.LABEL_X
        self.left_px = 12.0
        self.bar = pg.BarGraphItem(x=[0.0], height=[0.0], width=width, y0=[0.0], brushes=[theme.FALLBACK_COLOR],
                                   pens=[pg.mkPen(plot_background(), width=1)])
        plot.addItem(self.bar)
        self.leaders = pg.PlotCurveItem(pen=pg.mkPen(theme.plot_text_color(), width=1), connect="pairs")
        plot.addItem(self.leaders)
        self.labels: list[pg.TextItem] = []
        self.names: list[str] = []
        self.values = np.zeros(0)
        self.bottoms = np.zeros(0)
        self._right_px = 12.0
        plot.getViewBox().sigResized.connect(self.relayout)

    @property
    def total(self) -> float:
        return float(self.values.sum()) if self.values.size else 0.0

    def update(self, names: Sequence[str], values: Sequence[float], label_texts: Sequence[str],
               y_max: float) -> None:
        self.names = list(names)
        self.values = np.asarray(values, dtype=float)
        self.bottoms = np.concatenate([[0.0], np.cumsum(self.values)[:-1]]) if self.values.size else np.zeros(0)
        n = len(self.names)
        brushes = [pg.mkBrush(theme.color_for(name)) for name in self.names]
        self.bar.setOpts(x=np.full(n, self.x), height=self.values, y0=self.bottoms, width=self.width,
                         brushes=brushes, pens=[pg.mkPen(plot_background(), width=1)] * n)
        self.bar.segment_names = [t.split("\n")[0] for t in label_texts]  # CSV export names each bar as shown
        while len(self.labels) < n:
            item = label_item(anchor=(0, 0.5))
            self.plot.addItem(item)
            self.labels.append(item)
        self._given = (list(label_texts), y_max)
        self.relayout()

    def relayout(self, *_) -> None:
        """Spread the labels for the current plot size (name and value on one line when the plot is too low
        for two), then fit the x range."""
        if not hasattr(self, "_given"):
            return
        label_texts, y_max = self._given
        n = len(self.names)
        lines = max((t.count("\n") + 1 for t in label_texts), default=1)
        mids = self.bottoms + self.values / 2
        vb_h = max(self.plot.getViewBox().height(), 120.0)
        line_px = QtGui.QFontMetrics(font()).lineSpacing()
        if n * (lines * line_px + 4) > 0.95 * vb_h:   # too low for two-line labels: name and value on one line
            label_texts = [t.replace("\n", " ") for t in label_texts]
            lines = 1
        self._full_texts = list(label_texts)
        gap = max(0.06, (lines * line_px + 4) / vb_h) * y_max
        ys = label_layout.spread_positions(mids, gap=gap, lo=0.5 * gap, hi=y_max - 0.5 * gap)
        leader_x, leader_y = [], []
        for i, item in enumerate(self.labels):
            if i < n:
                item.setText(label_texts[i])
                item.setColor(theme.plot_text_color())
                item.setPos(self.label_x, ys[i])
                item.setVisible(True)
                leader_x += [self.x + self.width / 2, self.label_x - 0.02]
                leader_y += [mids[i], ys[i]]
            else:
                item.setVisible(False)
        self.leaders.setData(np.asarray(leader_x, float), np.asarray(leader_y, float))
        self.fit_x_range()

    def fit_x_range(self, *_) -> None:
        """Set the x range so the bar and its side labels fit the current view width; on a narrow plot the
        labels' lines are elided to the room right of the bar (the hover gives them in full)."""
        width_px = max(self.plot.getViewBox().width(), 120.0)
        metrics = QtGui.QFontMetrics(font())
        room = max(width_px * 0.62 - 16.0, 50.0)
        widest = 0.0
        for item, text in zip(self.labels, getattr(self, "_full_texts", []), strict=False):
            lines = [metrics.elidedText(line, QtCore.Qt.TextElideMode.ElideRight, int(room)) for line in text.split("\n")]
            if item.toPlainText() != "\n".join(lines):
                item.setText("\n".join(lines))
            widest = max(widest, *(metrics.horizontalAdvance(line) for line in lines))
        self._right_px = widest + 16.0
        middle_units = self.HALF_MIDDLE + self.label_x
        middle_px = max(width_px - self.left_px - self._right_px, 60.0)
        ppu = min(middle_px / middle_units, 220.0)  # pixels per unit: the bar is at most ~130 px wide
        x_min = -self.HALF_MIDDLE - self.left_px / ppu
        x_max = x_min + width_px / ppu
        self.plot.setXRange(x_min, x_max, padding=0)

    def segment_at(self, x: float, y: float) -> int:
        """Index of the segment under data point (x, y), or -1 (also -1 beside the bar)."""
        if abs(x - self.x) > self.width / 2 + 1e-9 or not self.values.size:
            return -1
        for i, (b, h) in enumerate(zip(self.bottoms, self.values, strict=True)):
            if b <= y < b + h:
                return i
        return -1
