"""The frame the scale-over-time panels share: a wrapped row of controls above, one plot with its legend in a row
above the view (never over a point), log axes labelled at decades where asked, a hover read-out of the nearest
point, and a wrapped caption below. Colours come from the theme's roles only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.ui import named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.wrap_layout import control_row

HOVER_PX = 24.0      # a point is hovered within this many pixels


class SciLogAxis(pw.LogSIAxis):
    """A log axis whose decades read 1e21, 1e22 ... (FLOPs of training runs are past every SI prefix)."""

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        return [f"1e{round(v)}" if abs(v - round(v)) < 1e-6 else "" for v in values]


def faded(color: str, alpha: int) -> QtGui.QColor:
    c = QtGui.QColor(color)
    c.setAlpha(alpha)
    return c


class ScaleChart(QtWidgets.QWidget):
    """A titled chart: `self.plot` (a PlotItem), `self.legend`, `self.caption`; `points` registered with
    `set_hover_points` are named by the hover read-out."""

    def __init__(self, name: str, accessible: str, description: str, left: str, bottom: str,
                 log_x: bool, log_y: bool, controls: Sequence = (), legend_columns: int = 2,
                 sci_x: bool = False, y_axis: pg.AxisItem | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName(name)
        self.setAccessibleName(accessible)
        self.log_x, self.log_y = log_x, log_y
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName(accessible)
        self.graphics.setAccessibleDescription(description)
        column = self.graphics.addLayout(row=0, col=0)
        column.layout.setContentsMargins(0, 0, 0, 0)
        self.legend_columns = legend_columns   # the most columns; fewer when the entries would not fit
        self.legend = pg.LegendItem(labelTextSize="11pt", labelTextColor=theme.plot_foreground(),
                                    colCount=legend_columns)
        column.addItem(self.legend, row=0, col=0)
        self.legend.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed)
        column.layout.setRowStretchFactor(0, 0)
        column.layout.setRowStretchFactor(1, 1)
        axes = {}
        if log_x:
            axes["bottom"] = SciLogAxis("bottom") if sci_x else pw.LogSIAxis("bottom")
        if log_y:
            axes["left"] = y_axis or pw.LogSIAxis("left")   # a panel may label its log axis at 1, 2 and 5
        self.plot: pg.PlotItem = column.addPlot(row=1, col=0, axisItems=axes)
        pw.style_plot(self.plot, "", left=left, bottom=bottom)
        self.plot.setLogMode(x=log_x, y=log_y)
        pw.freeze_view(self.plot)
        self._hover_points: list[tuple[float, float, str]] = []
        self.hover = pw.HoverReadout(self.plot, self.hover_text_at)
        pw.LeaveFilter(self.graphics, self.hover.leave)

        self.caption = QtWidgets.QLabel("")
        self.caption.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.caption.setObjectName(f"{name}Caption")
        self.caption.setFont(pw.font(11))
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName(f"{accessible}: caption")
        self.caption.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        if controls:
            holder = QtWidgets.QWidget()
            holder.setLayout(control_row(controls, pw.font()))
            layout.addWidget(holder)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.caption)

    # ------------------------------------------------------------------ items
    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """A theme switch: the plot's background and the legend's text take the new theme's colours."""
        super().changeEvent(event)
        if pw.is_theme_change(event):
            self.graphics.setBackground(pw.plot_background())
            self.legend.setLabelTextColor(theme.plot_foreground())
            for _sample, label in self.legend.items:   # setLabelTextColor only stores the colour: redraw the text
                label.setText(label.text)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self.fit_legend()

    def fit_legend(self) -> None:
        """The most columns (up to `legend_columns`) whose entries fit the chart's width, so the legend never
        widens the plot past the dock (then every text on its right would be cut)."""
        margins = self.layout().contentsMargins()
        room = self.width() - margins.left() - margins.right() - 24   # the graphics layout's own margins
        for columns in range(self.legend_columns, 0, -1):
            self.legend.setColumnCount(columns)
            if legend_width(self.legend) <= room:
                return

    def line(self, color: str, width: float = 2.0, name: str = "", dash: bool = False,
             symbol: str | None = None) -> pg.PlotDataItem:
        pen = pg.mkPen(color, width=width, style=QtCore.Qt.PenStyle.DashLine if dash else QtCore.Qt.PenStyle.SolidLine)
        item = pg.PlotDataItem([], [], pen=pen, symbol=symbol, symbolBrush=color if symbol else None,
                               symbolPen=pg.mkPen(theme.plot_foreground()) if symbol else None, symbolSize=11,
                               name=name or None)
        self.plot.addItem(item)
        if name:
            self.legend.addItem(item, name)
        return item

    def points(self, color: str, symbol: str = "o", name: str = "", size: int = 11) -> pg.PlotDataItem:
        item = pg.PlotDataItem([], [], pen=None, symbol=symbol, symbolBrush=color, symbolSize=size,
                               symbolPen=pg.mkPen(theme.plot_foreground()), name=name or None)
        self.plot.addItem(item)
        if name:
            self.legend.addItem(item, name)
        return item

    def show_in_legend(self, items: Sequence[tuple[pg.PlotDataItem, str]]) -> None:
        """The legend lists exactly these (item, name) entries, in order (hidden items leave it)."""
        self.legend.clear()
        for item, name in items:
            self.legend.addItem(item, name)
        self.fit_legend()

    def set_title(self, text: str) -> None:
        pw.set_title(self.plot, pw.html_escape(text), size="13pt")

    def fit_range(self, xs: Sequence[float], ys: Sequence[float], pad: float = 0.08) -> None:
        """View range over the data, in the plot's own (log10 where log) coordinates."""
        x = np.asarray([v for v in xs if v > 0 or not self.log_x], dtype=float)
        y = np.asarray([v for v in ys if v > 0 or not self.log_y], dtype=float)
        if x.size == 0 or y.size == 0:
            return
        x = np.log10(x) if self.log_x else x
        y = np.log10(y) if self.log_y else y
        span_x, span_y = max(np.ptp(x), 1e-9), max(np.ptp(y), 1e-9)
        self.plot.setXRange(x.min() - pad * span_x, x.max() + pad * span_x, padding=0)
        self.plot.setYRange(y.min() - pad * span_y, y.max() + pad * span_y, padding=0)

    # ------------------------------------------------------------------ hover
    def set_hover_points(self, points: list[tuple[float, float, str]]) -> None:
        """(x, y, text) in data units; the read-out names the nearest within HOVER_PX pixels."""
        self._hover_points = points

    def _view(self, x: float, y: float) -> tuple[float, float]:
        return (math.log10(x) if self.log_x else x), (math.log10(y) if self.log_y else y)

    def hover_text_at(self, x: float, y: float) -> str:
        if not self._hover_points:
            return ""
        vb = self.plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        sx = vb.width() / max(x1 - x0, 1e-12)
        sy = vb.height() / max(y1 - y0, 1e-12)
        best, text = HOVER_PX, ""
        for px, py, t in self._hover_points:
            if (self.log_x and px <= 0) or (self.log_y and py <= 0):
                continue
            vx, vy = self._view(px, py)
            d = math.hypot((vx - x) * sx, (vy - y) * sy)
            if d < best:
                best, text = d, t
        return text


def legend_width(legend: pg.LegendItem) -> float:
    """The width the legend's entries need in its current columns: per column, its widest sample + label."""
    grid = legend.layout
    widths = [max((grid.itemAt(r, c).preferredWidth() for r in range(grid.rowCount()) if grid.itemAt(r, c)),
                  default=0.0) for c in range(grid.columnCount())]
    return sum(widths) + grid.horizontalSpacing() * max(len(widths) - 1, 0)


def set_log_data(item: pg.PlotDataItem, xs, ys) -> None:
    """setData with non-positive values dropped (a log axis cannot place them)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    item.setData(x[keep], y[keep])


def combo(name: str, tip: str, items, on_change: Callable[[object], None], min_chars: int = 8) -> QtWidgets.QComboBox:
    box = named_combo.labelled_combo(name, tip, items, min_chars=min_chars)
    box.currentIndexChanged.connect(lambda _i: on_change(box.currentData()))
    return box
