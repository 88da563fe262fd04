"""Edge-architecture panel: the title states the hybrid's computed speed-up, the dashed lines are the cited
ratios, and the highlighted hybrid line is named inside the plot."""

import numpy as np
import pyqtgraph as pg
import pytest

from trinity_desktop.model.views.edge_arch import edge_arch_curves
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.edge_arch_panel import COLORS, EdgeArchPanel, edge_arch_title, line_name


def test_title_from_the_curves():
    c = edge_arch_curves()
    hybrid = c.by_role("hybrid").speedup
    at4k = float(np.interp(np.log(4096), np.log(c.context), hybrid))
    assert f"{at4k:.2f}×" in edge_arch_title(c)
    assert "not 2.5×" in edge_arch_title(c)


@pytest.mark.parametrize("size", [(517, 700), (784, 470), (1800, 950)])   # 1366 and 1920 docks, a slide
def test_every_line_is_named_in_the_key_the_hybrid_in_bold(shown_panel, qtbot, size):
    """At 1366 the state chart named 2 of its 3 lines (the baseline's name under the hybrid's line), and the
    speed-up names sat where the three lines start together at 1x, moving with every resize. A key under both
    charts names every line in its colour, the highlighted hybrid in bold; nothing is written on the lines."""
    panel = shown_panel(EdgeArchPanel, size=size)
    qtbot.wait(50)
    c = panel.curves
    key = panel.key.text()
    for cur in c.curves:
        entry = pw.key_entry("━", line_name(cur), COLORS[cur.role])
        assert (f"<b>{entry}</b>" if cur.role == "hybrid" else entry) in key
    assert not [i for i in panel.splot.items if isinstance(i, pg.TextItem) and i.isVisible()]
    panel.device_combo.setCurrentIndex(panel.device_combo.findData("phone-a17-pro"))
    assert panel.curves.device == "phone-a17-pro"
    assert "ms/token" in panel.speed_hover(np.log10(4096), 0)
