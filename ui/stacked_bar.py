"""One stacked bar of named segments with leader-lined side labels (the Memory and time panel's bars)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui

from trinity_desktop.ui import label_layout, theme
from trinity_desktop.ui.plot_widgets import font, label_item, plot_background


class StackedBar:
    """One stacked bar (vertical) of named segments, drawn by a single long-lived BarGraphItem.

    Each segment gets a side label (name, then value) joined to its segment by a leader line; labels wrap
    to the room beside the bar and are spread apart by their measured heights so thin segments stay legible. The x range follows the widget size so labels always fit
    (text is measured in pixels); `left_px` reserves room left of the bar for labels of horizontal lines.
    `update` changes data in place (setOpts / setData); nothing is rebuilt.
    """

    HALF_MIDDLE = 0.5     # the bar occupies [-0.3, 0.3]; the middle region is [-0.5, LABEL_X]
    LABEL_X = 0.55
    MIN_MIDDLE_PX = 60.0  # the bar and its leaders keep at least this many pixels; labels wrap to the rest

    def __init__(self, plot: pg.PlotItem, width: float = 0.6):
        self.plot = plot
        self.x = 0.0
        self.width = width
        self.label_x = self.LABEL_X
        self.left_px = 12.0
        # one shared separator pen, never a per-bar list: pyqtgraph raises UnboundLocalError on an empty one
        self.bar = pg.BarGraphItem(x=[0.0], height=[0.0], width=width, y0=[0.0], brushes=[theme.FALLBACK_COLOR],
                                   pen=pg.mkPen(plot_background(), width=1))
        plot.addItem(self.bar)
        self.leaders = pg.PlotCurveItem(pen=pg.mkPen(theme.plot_text_color(), width=1), connect="pairs")
        plot.addItem(self.leaders)
        self.labels: list[pg.TextItem] = []
        self.names: list[str] = []
        self.values = np.zeros(0)
        self.bottoms = np.zeros(0)
        self._right_px = 12.0
        plot.getViewBox().sigResized.connect(self.relayout)
        # labels are spread in data units but drawn in pixels: a new y range (a band's whisker raising the top)
        # changes how many pixels a unit is, so they are spread again
        plot.getViewBox().sigYRangeChanged.connect(self.relayout)

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
                         brushes=brushes, pen=pg.mkPen(plot_background(), width=1))
        self.bar.segment_names = [t.split("\n")[0] for t in label_texts]  # CSV export names each bar as shown
        while len(self.labels) < n:
            item = label_item(anchor=(0, 0.5))
            self.plot.addItem(item)
            self.labels.append(item)
        self._given = (list(label_texts), y_max)
        self.relayout()

    def relayout(self, *_) -> None:
        """Word-wrap each label to the room right of the bar (name and value on one line when the plot is too
        low for two), spread the labels by their measured heights so none overlaps, then fit the x range."""
        if not hasattr(self, "_given"):
            return
        label_texts, y_max = self._given
        n = len(self.names)
        mids = self.bottoms + self.values / 2
        vb_h = max(self.plot.getViewBox().height(), 120.0)
        width_px = max(self.plot.getViewBox().width(), 120.0)
        metrics = QtGui.QFontMetricsF(font())
        room = max(min(width_px * 0.62, width_px - self.left_px - self.MIN_MIDDLE_PX) - 16.0, 50.0)
        texts = [self._wrapped(t, metrics, room) for t in label_texts]
        heights = [label_layout.measure(t, font())[1] for t in texts]
        if sum(heights) + 2 * n > 0.95 * vb_h:   # too low for two-line labels: name and value on one line
            texts = [self._wrapped(t.replace("\n", " "), metrics, room) for t in label_texts]
            heights = [label_layout.measure(t, font())[1] for t in texts]
        shown = self._labelled(heights, 0.95 * vb_h)
        self._full_texts = [t for i, t in enumerate(texts) if shown[i]]
        ys = np.zeros(n)
        y0, y1 = self.plot.getViewBox().viewRange()[1]
        per_px = max(y1 - y0, y_max) / vb_h   # data units per pixel of the view as drawn (its range may exceed y_max)
        ys[shown] = label_layout.spread_by_size(mids[shown], np.asarray(heights)[shown] * per_px,
                                                pad=2.0 * per_px, lo=0.0, hi=y_max)
        leader_x, leader_y = [], []
        for i, item in enumerate(self.labels):
            if i < n and shown[i]:
                if item.toPlainText() != texts[i]:
                    item.setText(texts[i])
                item.setColor(theme.plot_text_color())
                item.setPos(self.label_x, ys[i])
                item.setVisible(True)
                leader_x += [self.x + self.width / 2, self.label_x - 0.02]
                leader_y += [mids[i], ys[i]]
            else:
                item.setVisible(False)
        self.leaders.setData(np.asarray(leader_x, float), np.asarray(leader_y, float))
        self.fit_x_range()

    def _labelled(self, heights: Sequence[float], room_px: float) -> np.ndarray:
        """Which segments get a side label: every one of non-zero size while all labels fit the plot's height,
        else the largest ones that fit (the others are read by hovering their segment)."""
        shown = self.values > 0.0
        order = np.argsort(-self.values, kind="stable")
        used = 0.0
        for i in order:
            if shown[i]:
                used += heights[i] + 2.0
                shown[i] = used <= room_px
        return shown

    @staticmethod
    def _wrapped(text: str, metrics: QtGui.QFontMetricsF, room: float) -> str:
        """Each line of `text` word-wrapped to `room` pixels (a label wraps; it is never elided)."""
        out: list[str] = []
        for line in text.split("\n"):
            words = line.split(" ")
            current = words[0]
            for word in words[1:]:
                if metrics.horizontalAdvance(current + " " + word) <= room:
                    current += " " + word
                else:
                    out.append(current)
                    current = word
            out.append(current)
        return "\n".join(out)

    def fit_x_range(self, *_) -> None:
        """Set the x range so the bar and its (wrapped) side labels fit the current view width."""
        width_px = max(self.plot.getViewBox().width(), 120.0)
        widest = max((label_layout.measure(t, font())[0] for t in getattr(self, "_full_texts", [])), default=0.0)
        self._right_px = widest + 16.0
        middle_units = self.HALF_MIDDLE + self.label_x
        middle_px = max(width_px - self.left_px - self._right_px, self.MIN_MIDDLE_PX)
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
