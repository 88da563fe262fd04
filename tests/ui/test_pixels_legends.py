"""Wrapping keys and the flow's position line, laid out as Qt lays them out: in the planner, flow and split
keys a marker (■ ◆ ▨ ● ◯ ▼) never ends a line with its words on the next, at any width from a narrow dock
(280 px, one whole entry a line) up; the flow's "Bar k of n: <stage>" line wraps in a narrow dock, not cut."""

from __future__ import annotations

import pytest
from PySide6 import QtGui, QtWidgets

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.ui.flow_panel import FlowPanel
from trinity_desktop.ui.planner_panel import PlannerPanel
from trinity_desktop.ui.split_panel import SplitPanel

MARKERS = "■◆▨●◯▼"
WIDTHS = range(280, 1000, 7)   # from a narrow dock (one whole entry per line) up


@pytest.fixture(scope="module")
def train_results():
    return evaluate(default_scenario())   # PP 2: the key has the idle (pipeline bubble) entry


def _laid_out_lines(label: QtWidgets.QLabel, width: int) -> list[str]:
    doc = QtGui.QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setHtml(label.text())
    doc.setTextWidth(width)
    doc.size()   # lays the text out (Qt does it lazily)
    lines = []
    block = doc.begin()
    while block.isValid():
        text, layout = block.text(), block.layout()
        lines += [text[layout.lineAt(i).textStart():layout.lineAt(i).textStart() + layout.lineAt(i).textLength()]
                  for i in range(layout.lineCount())]
        block = block.next()
    return lines


def _orphaned_markers(label: QtWidgets.QLabel) -> list[tuple[int, str]]:
    """Lines that end in a marker (its words went to the next line) or start with a blank (a gap)."""
    return [(w, line) for w in WIDTHS for line in _laid_out_lines(label, w)
            if line.rstrip() and (line.rstrip()[-1] in MARKERS or line[0].isspace())]


def test_planner_key_keeps_markers_with_their_words(qtbot):
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    assert "◆" in panel.legend.text() and "▨" in panel.legend.text()
    assert _orphaned_markers(panel.legend) == []


def test_flow_key_keeps_markers_with_their_words(qtbot, train_results):
    panel = FlowPanel()
    qtbot.addWidget(panel)
    panel.update_results(train_results)
    assert "▨" in panel.legend_label.text()
    assert _orphaned_markers(panel.legend_label) == []
    # and "idle (pipeline bubble / waiting)" is one run: it never breaks after "idle"
    assert all(not line.rstrip().endswith("idle") for w in WIDTHS for line in _laid_out_lines(panel.legend_label, w))


def test_split_key_keeps_markers_with_their_words(qtbot):
    panel = SplitPanel()
    qtbot.addWidget(panel)
    assert _orphaned_markers(panel.legend_label) == []


def test_flow_position_wraps_in_a_narrow_dock(qtbot):
    panel = FlowPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 470)
    panel.show()
    panel.update_results(evaluate(default_scenario().replace(kind="decode", gpus=8)))
    panel.detail_check.setChecked(True)
    panel.next_button.click()
    label = panel.position_label
    qtbot.waitUntil(lambda: label.text().startswith("Bar 2 of "))
    QtWidgets.QApplication.processEvents()
    one_line = label.fontMetrics().horizontalAdvance(label.text())
    assert one_line > label.width()   # the text is longer than the line: it must wrap ...
    assert label.wordWrap() and label.height() >= label.heightForWidth(label.width())   # ... all of it shown
    assert panel.width() <= 420   # and never widens the dock
