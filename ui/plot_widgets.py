"""Shared pyqtgraph helpers for the panels: legible plots, stacked bars, hover read-outs, rectangles.

Nothing here knows about a particular panel; panels build on these and keep the items they create.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.ui import theme

TITLE_SIZE = "14pt"
LABEL_SIZE = "12pt"
READOUT_BG = (255, 255, 255, 235)
READOUT_BORDER = "#444444"


def font(point_size: int | None = None, bold: bool = False) -> QtGui.QFont:
    f = theme.axis_font(max(point_size or theme.base_font_size(), theme.base_font_size()))
    f.setBold(bold)
    return f


def style_plot(plot: pg.PlotItem, title: str = "", left: str = "", bottom: str = "") -> None:
    """Projector-legible fonts (>= 11 pt) on the ticks, axis labels and title; no SI auto-prefixing."""
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setStyle(tickFont=font(), tickTextOffset=6)
        axis.enableAutoSIPrefix(False)
        axis.setTextPen(pg.mkPen("#222222"))
        axis.setPen(pg.mkPen("#444444"))
    if left:
        plot.setLabel("left", left, **{"font-size": LABEL_SIZE})
    if bottom:
        plot.setLabel("bottom", bottom, **{"font-size": LABEL_SIZE})
    if title:
        plot.setTitle(title, size=TITLE_SIZE, color="#222222")


def freeze_view(plot: pg.PlotItem) -> None:
    """No accidental pan/zoom on a chart shown to an audience; ranges are set by the panel."""
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.getViewBox().enableAutoRange(enable=False)


def choose_time_unit(seconds: float) -> tuple[float, str]:
    """(scale, unit) so that seconds * scale reads well: s, ms or µs."""
    mag = abs(seconds) if math.isfinite(seconds) else 0.0
    if mag >= 1.0 or mag == 0.0:
        return 1.0, "s"
    if mag >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def fmt_value(value: float, unit: str) -> str:
    """A number with its unit, 3 significant figures, never NaN."""
    if value is None or not math.isfinite(value):
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.3g} {unit}"


def luminance(rgb: Sequence[float]) -> float:
    """Relative luminance (WCAG) of an sRGB colour given as 0-255 components."""
    def lin(c: float) -> float:
        c = c / 255.0
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb[:3]
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast_text_color(rgb: Sequence[float]) -> str:
    """Black or white, whichever has the higher contrast on the given background."""
    lum = luminance(rgb)
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#FFFFFF"


def label_item(text: str = "", color: str = "#222222", anchor=(0, 0.5), size: int | None = None,
               bold: bool = False) -> pg.TextItem:
    item = pg.TextItem(text, color=color, anchor=anchor)
    item.setFont(font(size, bold))
    return item


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
        self.bar = pg.BarGraphItem(x=[0.0], height=[0.0], width=width, y0=[0.0], brushes=["#cccccc"],
                                   pens=[pg.mkPen("w", width=1)])
        plot.addItem(self.bar)
        self.leaders = pg.PlotCurveItem(pen=pg.mkPen("#666666", width=1), connect="pairs")
        plot.addItem(self.leaders)
        self.labels: list[pg.TextItem] = []
        self.names: list[str] = []
        self.values = np.zeros(0)
        self.bottoms = np.zeros(0)
        self._right_px = 12.0
        plot.getViewBox().sigResized.connect(self.fit_x_range)

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
                         brushes=brushes, pens=[pg.mkPen("w", width=1)] * n)
        self.bar.segment_names = [t.split("\n")[0] for t in label_texts]  # CSV export names each bar as shown
        while len(self.labels) < n:
            item = label_item(anchor=(0, 0.5))
            self.plot.addItem(item)
            self.labels.append(item)
        lines = max((t.count("\n") + 1 for t in label_texts), default=1)
        mids = self.bottoms + self.values / 2
        vb_h = max(self.plot.getViewBox().height(), 200.0)
        line_px = QtGui.QFontMetrics(font()).lineSpacing()
        gap = max(0.06, (lines * line_px + 4) / vb_h) * y_max
        ys = spread_positions(mids, gap=gap, lo=0.5 * gap, hi=y_max - 0.5 * gap)
        leader_x, leader_y = [], []
        for i, item in enumerate(self.labels):
            if i < n:
                item.setText(label_texts[i])
                item.setColor("#222222")
                item.setPos(self.label_x, ys[i])
                item.setVisible(True)
                leader_x += [self.x + self.width / 2, self.label_x - 0.02]
                leader_y += [mids[i], ys[i]]
            else:
                item.setVisible(False)
        self.leaders.setData(np.asarray(leader_x, float), np.asarray(leader_y, float))
        metrics = QtGui.QFontMetrics(font())
        self._right_px = max((metrics.horizontalAdvance(line) for t in label_texts for line in t.split("\n")),
                             default=0) + 16.0
        self.fit_x_range()

    def fit_x_range(self, *_) -> None:
        """Set the x range so the bar and its side labels fit the current view width."""
        width_px = max(self.plot.getViewBox().width(), 120.0)
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


def spread_positions(ys: np.ndarray, gap: float, lo: float, hi: float) -> np.ndarray:
    """Move sorted label positions apart to at least `gap`, staying inside [lo, hi] where possible."""
    ys = np.asarray(ys, dtype=float)
    if ys.size == 0:
        return ys
    order = np.argsort(ys)
    s = ys[order].copy()
    s[0] = max(s[0], lo)
    for i in range(1, s.size):
        s[i] = max(s[i], s[i - 1] + gap)
    overflow = s[-1] - hi
    if overflow > 0:
        s[-1] = hi
        for i in range(s.size - 2, -1, -1):
            s[i] = min(s[i], s[i + 1] - gap)
    out = np.empty_like(s)
    out[order] = s
    return out


class HoverReadout:
    """A hover read-out for one PlotItem: a boxed TextItem following the mouse, text from `text_at(x, y)`.

    `on_move(x, y)` and `on_leave()` let a panel emit its own signals (linked focus). The read-out hides
    when the text is empty or the mouse leaves the plot.
    """

    def __init__(self, plot: pg.PlotItem, text_at: Callable[[float, float], str],
                 on_move: Callable[[float, float], None] | None = None,
                 on_leave: Callable[[], None] | None = None, html: bool = False):
        self.plot = plot
        self.text_at = text_at
        self.on_move = on_move
        self.on_leave = on_leave
        self.html = html
        self.item = pg.TextItem("", color="#111111", fill=pg.mkBrush(*READOUT_BG),
                                border=pg.mkPen(READOUT_BORDER), anchor=(0, 1))
        self.item.setFont(font())
        self.item.setZValue(1000)
        self.item.setVisible(False)
        plot.addItem(self.item, ignoreBounds=True)
        self.inside = False
        plot.scene().sigMouseMoved.connect(self._moved)

    def _moved(self, scene_pos: QtCore.QPointF) -> None:
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            self.leave()
            return
        p = vb.mapSceneToView(scene_pos)
        self.inside = True
        self.show_at(p.x(), p.y())
        if self.on_move is not None:
            self.on_move(p.x(), p.y())

    def show_at(self, x: float, y: float) -> str:
        text = self.text_at(x, y)
        if not text:
            self.item.setVisible(False)
            return text
        if self.html:
            self.item.setHtml(text)
        else:
            self.item.setText(text)
        self.place(x, y)
        self.item.setVisible(True)
        return text

    def place(self, x: float, y: float, offset: float = 14.0) -> None:
        """Put the box beside the cursor (data x, y), flipped and clamped so it stays inside the view."""
        vb = self.plot.getViewBox()
        rect = vb.sceneBoundingRect()
        cursor = vb.mapViewToScene(QtCore.QPointF(x, y))
        br = self.item.textItem.boundingRect()
        w, h = br.width(), br.height()
        left = cursor.x() + offset
        if left + w > rect.right():
            left = cursor.x() - offset - w
        left = max(rect.left(), min(left, rect.right() - w))
        top = cursor.y() + offset
        if top + h > rect.bottom():
            top = cursor.y() - offset - h
        top = max(rect.top(), min(top, rect.bottom() - h))
        self.item.setAnchor((0, 0))
        self.item.setPos(vb.mapSceneToView(QtCore.QPointF(left, top)))

    def leave(self) -> None:
        self.item.setVisible(False)
        if self.inside:
            self.inside = False
            if self.on_leave is not None:
                self.on_leave()


class LeaveFilter(QtCore.QObject):
    """Calls `callback` when the watched widget gets a Leave event (mouse left the plot widget)."""

    def __init__(self, widget, callback: Callable[[], None]):
        super().__init__(widget)
        self.callback = callback
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QtCore.QEvent.Type.Leave:
            self.callback()
        return False


def rect_outline_points(rects: Sequence[tuple[float, float, float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Point arrays for PlotCurveItem(connect='pairs') drawing the outline of each (x, y, w, h) rectangle."""
    xs, ys = [], []
    for x, y, w, h in rects:
        corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)]
        for (ax, ay), (bx, by) in zip(corners[:-1], corners[1:], strict=True):
            xs += [ax, bx]
            ys += [ay, by]
    return np.asarray(xs, float), np.asarray(ys, float)


def html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clicked_view_point(plot: pg.PlotItem, event, left_only: bool = True) -> QtCore.QPointF | None:
    """Data coordinates of a scene mouse click inside the plot's view box, or None (outside, other button)."""
    if left_only and event.button() != QtCore.Qt.MouseButton.LeftButton:
        return None
    vb = plot.getViewBox()
    if not vb.sceneBoundingRect().contains(event.scenePos()):
        return None
    return vb.mapSceneToView(event.scenePos())


def hover_html(lines: Sequence[tuple[str, bool]], width: int = 60) -> str:
    """A hover read-out from (text, bold) lines, each wrapped at `width` characters, at 11 pt."""
    import textwrap

    parts = []
    for text, strong in lines:
        wrapped = "<br>".join(html_escape(line) for line in textwrap.wrap(text, width))
        parts.append(f"<b>{wrapped}</b>" if strong else wrapped)
    return "<div style='font-size:11pt'>" + "<br>".join(parts) + "</div>"


def labelled_combo(name: str, tip: str, items, min_chars: int = 12) -> QtWidgets.QComboBox:
    """A combo box with an accessible name, a tooltip, legible font and (text, data) items; long entries
    do not widen the panel (the drop-down shows them in full)."""
    combo = QtWidgets.QComboBox()
    combo.setAccessibleName(name)
    combo.setToolTip(tip)
    combo.setFont(font())
    combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(min_chars)
    for text, data in items:
        combo.addItem(text, data)
    return combo


def si_decade(value: float) -> str:
    """1e12 -> '1 T', 1e13 -> '10 T', 0.1 -> '0.1', 1e3 -> '1 k' (decimal prefixes)."""
    for factor, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:g} {prefix}"
    return f"{value:g}"


class LogSIAxis(pg.AxisItem):
    """A log axis labelled at whole decades with decimal prefixes ("1 T", "10 T"); minor ticks unlabelled."""

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        out = []
        for v in values:
            r = round(v)
            out.append(si_decade(10.0 ** r * scale) if abs(v - r) < 1e-6 else "")
        return out
