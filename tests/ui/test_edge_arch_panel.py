"""Edge-architecture panel: the title states the hybrid's computed speed-up, the dashed lines are the cited
ratios, and the highlighted hybrid line is named inside the plot."""

import numpy as np
import pytest

from trinity_desktop.model.views.edge_arch import edge_arch_curves
from trinity_desktop.ui.edge_arch_panel import COLORS, EdgeArchPanel, edge_arch_title, line_name


def test_title_from_the_curves():
    c = edge_arch_curves()
    hybrid = c.by_role("hybrid").speedup
    at4k = float(np.interp(np.log(4096), np.log(c.context), hybrid))
    assert f"{at4k:.2f}x" in edge_arch_title(c)
    assert "not 2.5x" in edge_arch_title(c)


@pytest.mark.parametrize("size", [(683, 700), (1800, 950)])
def test_hybrid_label_shown_and_device_switch(shown_panel, qtbot, size):
    panel = shown_panel(EdgeArchPanel, size=size)
    qtbot.wait(50)
    hybrid_label = panel.slabels.items[0]
    assert hybrid_label.isVisible() and "LFM2" in hybrid_label.toPlainText()
    assert panel.splot.getViewBox().sceneBoundingRect().contains(hybrid_label.sceneBoundingRect())
    panel.device_combo.setCurrentIndex(panel.device_combo.findData("phone-a17-pro"))
    assert panel.curves.device == "phone-a17-pro"
    assert "ms/token" in panel.speed_hover(np.log10(4096), 0)


@pytest.mark.parametrize("size", [(517, 700), (784, 470)])   # the dock at 1366x768 and at 1920x1080
def test_the_hybrid_is_named_on_its_line_and_every_line_in_the_key(shown_panel, qtbot, size):
    """At 1366 the state chart named 2 of its 3 lines (the baseline's name under the hybrid's line), and the
    speed-up names sat where the lines start together at 1x. The highlighted hybrid is named on the speed-up
    chart, nearer its line than the baseline; the key names all three in their lines' colours."""
    panel = shown_panel(EdgeArchPanel, size=size)
    qtbot.wait(80)
    c = panel.curves
    vb = panel.splot.getViewBox()
    (label,) = [item for item in panel.slabels.items if item.isVisible()]
    hybrid, baseline = c.by_role("hybrid"), c.by_role("attention")
    assert label.toPlainText() == line_name(hybrid)
    assert vb.sceneBoundingRect().contains(label.sceneBoundingRect())
    centre = vb.mapSceneToView(label.sceneBoundingRect().center())
    k = int(np.argmin(np.abs(np.log10(c.context) - centre.x())))
    assert abs(np.log10(hybrid.speedup[k]) - centre.y()) < abs(np.log10(baseline.speedup[k]) - centre.y())
    key = panel.key.text()
    for cur in c.curves:
        assert f"color:{COLORS[cur.role]};'>━</span>&nbsp;{line_name(cur).replace(' ', '&nbsp;')}".replace(
            "-", "\u2011") in key
