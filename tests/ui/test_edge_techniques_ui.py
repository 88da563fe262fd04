"""The new techniques appear in the trade-off explorer (a bubble with its computed effect) and move the workload
on the triangle like the others."""

from trinity_desktop.model import evaluate
from trinity_desktop.model.claims.trinity import workload
from trinity_desktop.ui.tradeoff_panel import TradeoffPanel
from trinity_desktop.ui.triangle_panel import TrianglePanel


def test_explorer_shows_sparse_attention_and_distillation(shown_panel):
    panel = shown_panel(TradeoffPanel, evaluate(workload("long-context-decode")))
    panel.set_direction("compute", "memory")
    bubbles = panel.bubbles()
    for key in ("sliding-window-attention", "distillation-half-depth"):
        assert key in bubbles
        effect = panel.effect(key)
        assert effect is not None and effect.applicable and effect.saved_pct > 40


def test_triangle_path_moves(shown_panel):
    panel = shown_panel(TrianglePanel, evaluate(workload("long-context-decode")))
    panel.show_path(["sliding-window-attention", "distillation-half-depth"])
    assert len(panel._path) == 3
    points = [panel._point(r) for _sc, r in panel._path]
    assert points[0] != points[1] != points[2]
