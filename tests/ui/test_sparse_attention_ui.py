"""Sparse attention read patterns in the trade-off explorer and on the triangle: computed, drawn, not carried."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.claims.trinity import workload  # noqa: E402
from trinity_desktop.model.views.techniques import technique_effect  # noqa: E402
from trinity_desktop.ui.tradeoff_panel import TradeoffPanel  # noqa: E402
from trinity_desktop.ui.triangle_panel import TrianglePanel  # noqa: E402


def test_explorer_draws_nsa_and_does_not_apply_it(shown_panel):
    r = evaluate(workload("long-context-decode"))
    panel = shown_panel(TradeoffPanel, size=(960, 800))
    panel.update_results(r)
    panel.set_direction("memory", "bandwidth")
    assert panel.bubbles()["native-sparse-attention"][4]           # drawn as applicable
    e = technique_effect(r.scenario, "native-sparse-attention")
    assert panel.effect("native-sparse-attention").saved_pct == e.saved_pct
    assert not panel.click_technique("native-sparse-attention")    # computed here, never carried as a scenario
    assert any("not applied on click" in text for text, _ in panel._hover_lines("native-sparse-attention"))


def test_triangle_moves_with_nsa_and_keeps_apply_off(shown_panel):
    r = evaluate(workload("long-context-decode"))
    panel = shown_panel(TrianglePanel, size=(960, 800))
    panel.update_results(r)
    panel.show_path(["native-sparse-attention"])
    (x0, y0, x1, y1, _), = panel.arrow_segments()
    assert (x1, y1) != (x0, y0)
    assert not panel.apply_button.isEnabled()
