"""The roots of defects seen on the rendered pixels (issue #21), each with the audit check that catches it:
a dock tab bar that scrolls draws no tab in part; a side axis makes room for its wrapped label; the claims
table reads whole in a narrow dock; a caption leaves the slide with its control; a field's hint reads in every
theme."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6 import QtGui, QtWidgets

from trinity_desktop.audit_text import cut_table_cells, cut_tabs
from trinity_desktop.slide_controls import editing_controls
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.axes import WrappedLabelAxis
from trinity_desktop.ui.whole_tabs import WholeTabsStyle, use_whole_tabs
from trinity_desktop.ui.wrap_layout import captioned


def _scrolled_bar(qtbot, whole: bool) -> QtWidgets.QTabBar:
    bar = QtWidgets.QTabBar()
    qtbot.addWidget(bar)
    bar.setElideMode(pg.QtCore.Qt.TextElideMode.ElideNone)
    bar.setUsesScrollButtons(True)
    for i in range(12):
        bar.addTab(f"Panel number {i}")
    if whole:
        use_whole_tabs(bar)
    bar.resize(500, 30)
    bar.show()
    bar.setCurrentIndex(9)   # Qt scrolls just far enough: the tab at the bar's other end is left in part
    qtbot.waitExposed(bar)
    return bar


def test_a_scrolled_tab_bar_draws_no_tab_in_part_and_the_audit_sees_one_that_does(qtbot):
    assert any("shown in part" in line for line in cut_tabs([_scrolled_bar(qtbot, whole=False)]))
    bar = _scrolled_bar(qtbot, whole=True)
    assert cut_tabs([bar]) == []
    assert isinstance(bar.style(), WholeTabsStyle) or bar.property("wholeTabs") is True


def test_a_side_axis_counts_its_wrapped_labels_whole_height(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    plot = widget.getPlotItem()
    pw.style_plot(plot, left="KV cache resident per GPU, in gigabytes of HBM (10⁹ B)")
    widget.resize(500, 170)   # a short axis: the label wraps
    widget.show()
    qtbot.waitExposed(widget)
    axis = plot.getAxis("left")
    qtbot.waitUntil(lambda: "<br>" in (axis.labelText or ""), timeout=3000)
    widget.grab()   # paint once: the axis learns its tick labels' width
    assert isinstance(axis, WrappedLabelAxis) and "_updateWidth" not in vars(axis)   # a subclass, not a patch

    def counts_the_label_whole() -> bool:
        tick_room = axis.textWidth + axis.style["tickTextOffset"][0] + max(0, axis.style["tickLength"])
        return axis.width() >= tick_room + axis.label.boundingRect().height() - 0.5

    qtbot.waitUntil(counts_the_label_whole, timeout=3000)   # refitted on a later pass of the event loop (NextPass)


def test_the_claims_table_reads_whole_in_a_laptop_dock(shown_panel):
    from trinity_desktop.ui.claims_panel import ClaimsPanel

    panel = shown_panel(ClaimsPanel, size=(517, 640))   # a centre dock at 1366 x 768
    assert cut_table_cells(panel) == []


def test_a_caption_leaves_the_slide_with_its_control(qtbot):
    combo = QtWidgets.QComboBox()
    combo.addItems(["Context length", "Batch"])
    box = captioned("x axis", combo)
    qtbot.addWidget(box)
    box.show()
    caption = box.findChild(QtWidgets.QLabel)
    assert {caption, combo} <= set(editing_controls(box))


@pytest.mark.parametrize("name", ["light", "dark", "high-contrast"])
def test_a_fields_hint_reads_in_every_theme(name):
    colors = theme.THEMES[name]
    hint, field = theme.placeholder_text_color(colors), QtGui.QColor(colors["base"])
    lum = sorted((theme.luminance(hint), theme.luminance(field)))
    assert (lum[1] + 0.05) / (lum[0] + 0.05) >= 4.5
