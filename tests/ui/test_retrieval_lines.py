"""Vector search, bytes view: every line the legend names can be seen (issue #21: DiskANN's 1.5-px dashed line
lay 5% above HNSW's 3.5-px line, under it at every N, while the legend listed it as a line of its own)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.formulas.retrieval import INDEX_LABELS, INDEXES  # noqa: E402
from trinity_desktop.ui.retrieval_panel import RetrievalPanel  # noqa: E402

APART_PX = 4.0  # two lines this far apart somewhere read as two lines


@pytest.fixture(scope="module")
def results():
    return evaluate(default_scenario())


def _screen_y(panel, item) -> np.ndarray:
    vb = panel.chart.plot.getViewBox()
    xs, ys = item.getData()
    return np.array([vb.mapViewToScene(QtCore.QPointF(x, y)).y() for x, y in zip(xs, ys, strict=True)])


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("size", [(517, 680), (784, 410)])  # the dock at 1366 x 768 and at 1920 x 1080
def test_every_line_the_legend_names_is_seen(qtbot, results, index, size):
    panel = RetrievalPanel()
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    panel.update_results(results)
    panel.index_combo.setCurrentIndex(list(INDEXES).index(index))
    qtbot.wait(20)
    legend = {item.item: label.text for item, label in panel.chart.legend.items}
    chosen = panel.lines[index]
    for key in INDEXES:
        line = panel.lines[key]
        if key == index:
            continue
        apart = np.max(np.abs(_screen_y(panel, line) - _screen_y(panel, chosen)))
        name = legend[line]
        assert apart >= APART_PX or (
            f"on {INDEX_LABELS[index]}'s line" in name and line.zValue() > chosen.zValue()
        ), (
            f"{name!r} is at most {apart:.1f} px from the {INDEX_LABELS[index]} line and its legend does not say so"
        )
