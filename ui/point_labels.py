"""Labels beside data points of one plot, placed by the shared placer (ui/label_layout.py): none overlaps
another or a marker, none leaves the plot; a label with no free place hides (the hover names the point)."""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
import shiboken6
from PySide6 import QtGui

from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme

MARKER_PX = 10.0
AROUND = ll.SIDES + ("above-right", "below-right", "above-left", "below-left")
END_COLUMN = ("right", "right-up", "right-down")   # names at the right ends of lines, stacked when crowded


class PointLabels:
    """Long-lived TextItems for up to `capacity` points of `plot`; `set` changes texts and anchors, and the
    placement follows every resize of the view."""

    def __init__(self, plot: pg.PlotItem, capacity: int, size: int | None = None, steps: int = 3,
                 sides: Sequence[str] = AROUND):
        """`steps`: rings of candidate places further out than beside the point (0: beside it or not at all,
        for a crowded chart where a far name reads as another point's); `sides`: where beside it (ll.around)."""
        self.plot, self.steps, self.sides = plot, steps, tuple(sides)
        self.items = [pw.label_item("", color=theme.plot_text_color(), size=size) for _ in range(capacity)]
        for item in self.items:
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=True)
        self.points: list[tuple[float, float, str, bool]] = []
        self.lines: list[tuple[tuple[float, float], ...]] = []
        self.avoid: list = []
        self.marks: list[tuple[float, float, float]] = []
        self.layout = ll.LabelLayout()
        follow = pw.NextPass(plot.getViewBox(), self.relayout)   # once per burst of resizes and range changes
        plot.getViewBox().sigResized.connect(follow.poke)
        plot.getViewBox().sigRangeChanged.connect(follow.poke)

    def set(self, points: Sequence[tuple[float, float, str, bool]], lines=(), colors=(), avoid=(),
            marks=()) -> None:
        """(x, y, text, bold) per point, most important first; `lines`: polylines ((x, y), ...) the labels
        keep off; all in view coordinates. `colors`: theme colours per label (default: the text colour), made
        readable on the plot's background. `avoid`: other text items of the plot the labels keep off; `marks`:
        other markers they keep off, as (x, y, size in pixels)."""
        self.points = list(points)[: len(self.items)]
        self.lines = [tuple(line) for line in lines]
        self.marks = list(marks)
        self.avoid = list(avoid)
        bg = QtGui.QColor(theme.THEMES[theme.current_theme()]["plot_bg"])
        for k, (item, (_x, _y, text, bold)) in enumerate(zip(self.items, self.points, strict=False)):
            color = colors[k] if k < len(colors) else theme.plot_text_color()
            item.setColor(QtGui.QColor(theme.readable(QtGui.QColor(color), bg)))
            item.setText(text)
            item.setFont(pw.font(None, bold))
        for item in self.items[len(self.points):]:
            item.setVisible(False)
        self.layout.invalidate()
        self.relayout()

    def relayout(self, *_) -> None:
        try:
            self._relayout()
        except RuntimeError:   # the plot torn down during the pass (a garbage collection freed its panel)
            if all(shiboken6.isValid(i.textItem) for i in self.items):
                raise

    def _relayout(self) -> None:
        vb = self.plot.getViewBox()
        if not self.points or vb.width() <= 0 or not all(shiboken6.isValid(i.textItem) for i in self.items):
            return   # nothing to place, no room yet, or the plot's items already torn down (a late resize)
        anchors = [ll.scene_point(vb, x, y) for x, y, _t, _b in self.points]
        labels = []
        for k, ((sx, sy), item) in enumerate(zip(anchors, self.items, strict=False)):
            w, h = ll.text_size(item)
            labels.append(ll.Label(str(k), w, h, ll.around(sx, sy, w, h, MARKER_PX / 2 + 2, self.sides,
                                                           steps=self.steps)))
        marks = [(*ll.scene_point(vb, x, y), px) for x, y, px in self.marks]
        obstacles = [ll.box_of(sx - px / 2, sy - px / 2, px, px) for sx, sy, px in
                     [(sx, sy, MARKER_PX) for sx, sy in anchors] + marks]
        for line in self.lines:
            pts = [ll.scene_point(vb, x, y) for x, y in line]
            for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
                obstacles += ll.strip(x0, y0, x1, y1, 4.0)
        for item in self.avoid:
            if shiboken6.isValid(item) and item.isVisible():
                r = item.sceneBoundingRect()
                obstacles.append(ll.box_of(r.x(), r.y(), r.width(), r.height()))
        boxes = self.layout.place(labels, ll.view_bounds(vb), obstacles)
        for k, item in enumerate(self.items[: len(self.points)]):
            ll.put(item, vb, boxes.get(str(k)))
