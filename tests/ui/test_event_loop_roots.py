"""Exceptions the event-loop guard used to catch, fixed where they arose (issue 26, "Event loop"). Each test is
built from the reproducer of one escape; tests/ui/conftest.py fails any test from which an exception escapes."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets


def test_a_glide_leaves_a_curve_its_panel_redrew_with_other_points(qtbot):
    """"Number of pens does not match number of points (3 != 9)": a slide's glide captured a 9-point marker
    curve with per-point pens; its panel then redrew it with 3 points and 3 pens (a sweep shown, the next edit)
    and the glide's next frame put 9 points back under the 3 pens."""
    from trinity_desktop.transitions import CurveTween

    root = QtWidgets.QWidget()
    qtbot.addWidget(root)
    plot = pg.PlotWidget()
    QtWidgets.QVBoxLayout(root).addWidget(plot)
    item = pg.PlotDataItem(pen=None, symbolSize=13)
    plot.addItem(item)
    root.show()
    nine = np.arange(9.0)
    item.setData(nine, nine + 1, symbolPen=[pg.mkPen("r")] * 9)
    tween = CurveTween(root)
    item.setData(2 * nine, nine + 2, symbolPen=[pg.mkPen("r")] * 9)
    assert tween.capture_after() == 1
    item.setData(np.arange(3.0), np.arange(3.0), symbolPen=[pg.mkPen("b")] * 3)  # the panel redraws it
    tween.apply(0.5)
    tween.apply(1.0)
    x, y = item.getOriginalDataset()
    assert list(x) == [0.0, 1.0, 2.0] and list(y) == [0.0, 1.0, 2.0]  # the panel's points stand
    assert tween.pairs == []


def test_a_glide_still_moves_a_curve_that_keeps_its_points(qtbot):
    from trinity_desktop.transitions import CurveTween

    root = QtWidgets.QWidget()
    qtbot.addWidget(root)
    plot = pg.PlotWidget()
    QtWidgets.QVBoxLayout(root).addWidget(plot)
    item = pg.PlotDataItem([0.0, 1.0], [0.0, 0.0])
    plot.addItem(item)
    root.show()
    tween = CurveTween(root)
    item.setData([0.0, 1.0], [2.0, 4.0])
    assert tween.capture_after() == 1
    tween.apply(0.5)
    assert list(item.getOriginalDataset()[1]) == [1.0, 2.0]


def test_a_log_axis_past_float64_labels_its_decades_without_overflow(qtbot):
    """The soak's escape: a log view panned out to 10^400 made LogSIAxis compute 10.0 ** 400 while painting."""
    from trinity_desktop.ui.plot_widgets import LogSIAxis

    axis = LogSIAxis("left")
    assert axis.logTickStrings([399.0, 400.0, 3.0, 3.5], 1.0, 1.0) == ["1e399", "1e400", "1 k", ""]
