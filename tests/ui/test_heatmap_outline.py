"""Workload pressure: the binding cell's outline never crosses its number (issue #21: at the 1920 x 1080
layout's dock height, 19-px rows, the 6-px outline inset in the cell ran through the digits' tops and bottoms)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

from trinity_desktop.model.inputs import presets  # noqa: E402
from trinity_desktop.model.views.workloads import evaluate_library  # noqa: E402
from trinity_desktop.ui.heatmap_panel import RESOURCES, HeatmapPanel  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    return evaluate_library(presets.hardware_presets()["h100-sxm"])


def _glyphs(item) -> QtCore.QRectF:
    """The scene rectangle the label's inked glyphs cover (tight box from its first line's baseline)."""
    text_item = item.textItem
    box = text_item.mapRectToScene(text_item.boundingRect())
    metrics = QtGui.QFontMetricsF(text_item.font())
    margin = text_item.document().documentMargin()
    tight = metrics.tightBoundingRect(item.toPlainText())
    baseline = box.top() + margin + metrics.ascent()
    left = box.left() + margin
    return QtCore.QRectF(left + tight.left(), baseline + tight.top(), tight.width(), tight.height())


def _outline_inner_edges(panel) -> list[QtCore.QRectF]:
    """The scene rectangles inside each binding outline's outer stroke."""
    xs, ys = panel.bottleneck_outer.getData()
    half = panel.bottleneck_outer.opts["pen"].widthF() / 2
    vb = panel.plot.getViewBox()
    rects = []
    for k in range(0, len(xs), 8):  # four segments, two points each, per rectangle
        a = vb.mapViewToScene(QtCore.QPointF(min(xs[k : k + 8]), min(ys[k : k + 8])))
        b = vb.mapViewToScene(QtCore.QPointF(max(xs[k : k + 8]), max(ys[k : k + 8])))
        rects.append(QtCore.QRectF(a, b).normalized().adjusted(half, half, -half, -half))
    return rects


@pytest.mark.parametrize(
    "height", range(384, 720, 24)
)  # from 18-px rows; the dock at 1920 x 1080: 433, at 1366: 703
def test_the_binding_outline_keeps_off_its_number(qtbot, rows, height):
    panel = HeatmapPanel()
    qtbot.addWidget(panel)
    panel.resize(784, height)
    panel.show()
    panel.update_rows(rows, "NVIDIA H100 SXM 80GB")
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    inner = _outline_inner_edges(panel)
    bound = [(RESOURCES.index(r.results.bottleneck), i) for i, r in enumerate(rows)]
    assert len(inner) == len(bound)
    for (j, i), clear in zip(bound, inner, strict=True):
        glyphs = _glyphs(panel.cell_labels[3 * i + j])
        assert clear.adjusted(-0.5, -0.5, 0.5, 0.5).contains(glyphs), (
            f"row {i} ({rows[i].name}): the outline's stroke reaches {clear} and the digits cover {glyphs}"
        )
