"""The Matrices dock never asks for more width than a half-column at 1366 x 768 leaves it: its legend wraps and
its algorithm box shows short names (issue #21: bringing it to the front squeezed the Scenario form to 176 px,
cutting its values)."""

from __future__ import annotations

from trinity_desktop.ui.matrix_panel import ALGORITHM_LABELS, MatrixPanel
from trinity_desktop.ui.named_combo import FULL_NAME_ROLE

MAX_MIN_WIDTH = 320   # the 1366 x 768 plan's centre-left column, beside a whole Scenario form


def test_the_matrix_panel_stays_narrow(qtbot):
    panel = MatrixPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert panel.minimumSizeHint().width() <= MAX_MIN_WIDTH
    assert panel.kv_legend.wordWrap()
    combo = panel.algo_combo
    fulls = [combo.itemData(i, FULL_NAME_ROLE) for i in range(combo.count())]
    assert fulls == list(ALGORITHM_LABELS.values())                  # the list keeps the whole names
    assert [combo.itemText(i) for i in range(combo.count())] == ["Ring all-reduce", "Binary tree", "Hierarchical",
                                                                 "In-network"]
    combo.setCurrentIndex(2)
    assert panel._algorithm == "hierarchical"
