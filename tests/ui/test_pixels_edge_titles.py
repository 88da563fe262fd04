"""Each edge-architecture chart's title states its finding, computed from the curves it draws, and follows
the data when the device or weight format changes (issue #21: the titles only named the charts)."""

import numpy as np

from trinity_desktop.model.views.edge_arch import edge_arch_curves
from trinity_desktop.ui.edge_arch_panel import EdgeArchPanel
from trinity_desktop.ui.edge_findings import speedup_chart_title, state_chart_title, tokens_text
from trinity_desktop.ui.plot_widgets import title_text
from trinity_desktop.ui.units import fmt_bytes


def test_titles_quote_the_curves_values():
    c = edge_arch_curves()
    hybrid, attention = c.by_role("hybrid"), c.by_role("attention")
    speed = speedup_chart_title(c, "LFM2")
    assert f"{hybrid.speedup[0]:.2f}× at {tokens_text(c.context[0])} tokens" in speed
    assert f"{hybrid.speedup[-1]:.2f}× at {tokens_text(c.context[-1])}" in speed
    state = state_chart_title(c, "LFM2")
    ratio = attention.state_bytes[-1] / hybrid.state_bytes[-1]
    assert ratio > 1   # the hybrid keeps KV for 6 of its 16 blocks only
    assert f"{ratio:.1f}× less" in state and fmt_bytes(attention.state_bytes[-1]) in state
    assert tokens_text(4096) == "4k" and tokens_text(131072) == "128k" and tokens_text(256) == "256"


def test_chart_titles_follow_the_device(shown_panel, qtbot):
    panel = shown_panel(EdgeArchPanel, size=(683, 700))
    assert title_text(panel.splot) == speedup_chart_title(panel.curves, "LFM2-1.2B")
    assert title_text(panel.tplot) == state_chart_title(panel.curves, "LFM2-1.2B")
    panel.format_combo.setCurrentIndex(panel.format_combo.findData("bf16"))
    c = panel.curves
    assert c.weight_dtype == "bf16"
    assert title_text(panel.splot) == speedup_chart_title(c, "LFM2-1.2B")
    assert np.isfinite(c.by_role("hybrid").speedup).all()
