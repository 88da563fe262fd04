"""Sparse attention read patterns in the trade-off explorer and on the triangle: computed, drawn, not carried."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.claims.trinity import workload  # noqa: E402
from trinity_desktop.model.views.techniques import technique_effect  # noqa: E402
from trinity_desktop.ui import plot_widgets as pw  # noqa: E402
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


def test_a_technique_focus_turns_the_explorer_and_previews_on_the_triangle(shown_panel):
    """The deck's sparse-attention slide focuses NSA: the explorer turns to NSA's direction (memory spent,
    bandwidth saved) and rings it; the triangle previews its move. Choosing another direction afterwards sticks."""
    r = evaluate(workload("long-context-decode"))
    explorer = shown_panel(TradeoffPanel, size=(960, 520))
    explorer.update_results(r)
    explorer.set_direction("compute", "memory")
    explorer.set_focus("technique", "native-sparse-attention")
    assert explorer.direction() == ("memory", "bandwidth")
    assert explorer.focus_ring.getData()[0] is not None and len(explorer.focus_ring.getData()[0]) == 1
    e = technique_effect(r.scenario, "native-sparse-attention")
    assert f"−{e.saved_pct:.0f}% for {e.spent_pct:+.0f}% memory" in pw.title_text(explorer.plot)
    explorer.set_direction("compute", "bandwidth")
    assert explorer.direction() == ("compute", "bandwidth")
    triangle = shown_panel(TrianglePanel, size=(960, 800))
    triangle.update_results(r)
    triangle.set_focus("technique", "native-sparse-attention")
    assert triangle.preview_visible()


def test_the_not_applicable_list_reads_whole_on_a_low_panel(shown_panel):
    """Grouped by reason on whole wrapped lines (never a scrolled list with a row cut at its edge), and the chart
    keeps most of a low panel."""
    r = evaluate(workload("dense-pretrain"))
    explorer = shown_panel(TradeoffPanel, size=(660, 420))
    explorer.update_results(r)
    explorer.set_direction("compute", "memory")
    assert explorer.na_title.isVisible()
    label = explorer.na_list
    assert label.height() >= label.heightForWidth(label.width()) > 10
    assert "Applies to prefill / decode workloads, not train: KV-cache quantisation," in label.text()
    assert label.text().count("KV-cache quantisation") == 1   # FP8 and INT4 named once; the hover has both
    assert "KV-cache quantisation (FP8)" in label.toolTip() and "KV-cache quantisation (INT4)" in label.toolTip()
    assert explorer.graphics.height() >= 200
