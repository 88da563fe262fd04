"""The KV-cache residency chart's key: its own row above the plot, in the theme's text colour on the chart's
background, never a box over the tiers' fills (a near-white box on a dark plot hid the data under it)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme

SAMPLE_PX = 24  # a key entry's swatch and its gap
KEY_COLUMNS = (
    6  # up to four tiers, SRAM or RDMA, and the step-time line: one row where the dock is wide enough
)


def key_row(graphics: pg.GraphicsLayoutWidget) -> pg.LegendItem:
    """A key at row 0 of `graphics` (the plot sits at row 1): no box, its entries in the theme's text colour."""
    key = pg.LegendItem(labelTextSize="11pt", labelTextColor=theme.plot_foreground(), colCount=KEY_COLUMNS)
    graphics.ci.addItem(key, row=0, col=0)
    key.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed)
    key.layout.setContentsMargins(2, 0, 2, 0)
    graphics.ci.layout.setRowStretchFactor(0, 0)
    graphics.ci.layout.setRowStretchFactor(1, 1)
    return key


def fit_columns(key: pg.LegendItem, width: float) -> None:
    """As many columns as `width` holds whole entries (an entry never runs past the chart's edge)."""
    if not key.items:
        return
    metrics = QtGui.QFontMetrics(
        pw.font(11)
    )  # a label's own box grows with its layout cell: its text's width
    entry = max(SAMPLE_PX + metrics.horizontalAdvance(label.text) + 16 for _s, label in key.items)
    columns = max(1, min(KEY_COLUMNS, int((width - 16) // entry)))
    if columns != key.columnCount:
        key.setColumnCount(columns)


def restyle_key(key: pg.LegendItem) -> None:
    """After a theme change: the entries' text in the new theme's colour."""
    key.setLabelTextColor(theme.plot_foreground())
    for _sample, label in key.items:
        label.setText(label.text, color=theme.plot_foreground())
