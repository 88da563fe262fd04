"""Edge-architecture panel: the title states the hybrid's computed speed-up, the dashed lines are the cited
ratios, and the highlighted hybrid line is named inside the plot."""

import numpy as np
import pytest

from trinity_desktop.model.views.edge_arch import edge_arch_curves
from trinity_desktop.ui.edge_arch_panel import EdgeArchPanel, edge_arch_title


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
