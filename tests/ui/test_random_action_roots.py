"""Escapes that an independent seeded random-action pass (real widgets, a real event loop) found, fixed where they
arose (issue 26, "Event loop"). Each test is built from its reproducer; tests/ui/conftest.py fails any test from
which an exception escapes into the event loop."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.model.step.kv_residency import serving_scenario


@pytest.fixture(scope="module")
def training_with_pools():
    """The user set prefill and decode pools while serving, then switched to training: training ignores the
    pools, so the scenario is valid, but its pool TP (3) divides none of the model's 64 heads."""
    sc = default_scenario()
    assert sc.kind == "train" and sc.model.heads % 3
    return sc.replace(prefill_gpus=8, decode_gpus=8, prefill_tp=3)


def test_a_training_scenario_is_served_without_its_unused_pools(training_with_pools):
    """Seed 7, action 167 (a theme change): the residency panel's refresh raised "prefill_tp = 3 is not
    allowed" from `serving_scenario`, which turned the training scenario into a decode one and so switched its
    pools on. One TP group of the layout serves; the pools stay off, as training had them."""
    served = serving_scenario(training_with_pools)
    assert served.kind == "decode" and served.gpus == training_with_pools.tp
    assert served.prefill_gpus == served.decode_gpus == 0


def test_the_residency_panel_redraws_a_training_scenario_with_pools_on_a_theme_change(qtbot, shown_panel,
                                                                                      training_with_pools):
    from trinity_desktop.ui import theme
    from trinity_desktop.ui.panel_problem import problem_text
    from trinity_desktop.ui.residency_panel import ResidencyPanel

    panel = shown_panel(ResidencyPanel, evaluate(training_with_pools))
    assert problem_text(panel) == ""
    try:
        theme.apply_theme("dark", panel)   # the change event refreshes the panel
        qtbot.wait(10)
    finally:
        theme.apply_theme("light", panel)
    assert problem_text(panel) == ""


def test_a_failed_kv_refresh_leaves_no_bands_over_stale_fractions(qtbot, shown_panel, monkeypatch):
    """Seed 7, action 127 (a dock shown): `_draw_sinks` raised "IndexError: index 1 is out of bounds for axis 0
    with size 1" on the view's resize. A refresh that failed part way (shown as a note on the panel) had already
    stored the new bands while the fractions were still the old ones. The panel now stores them together."""
    from trinity_desktop.ui import matrix_panel
    from trinity_desktop.ui.panel_problem import problem_text, update_or_explain

    results = evaluate(default_scenario().replace(kind="decode", gpus=1, tp=1, pp=1, kv_policy="streaming", kv_sinks=4))
    calls = {"n": 0}
    real = matrix_panel.binned_fraction

    def failing_after_the_first(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("a band that cannot be binned")
        return real(*args, **kwargs)

    monkeypatch.setattr(matrix_panel, "binned_fraction", failing_after_the_first)
    panel = shown_panel(matrix_panel.MatrixPanel)
    assert not update_or_explain(panel, results)
    assert "cannot be binned" in problem_text(panel)
    assert len(panel._bands) == 0 and panel._kv_frac.shape == (1, 1)   # nothing half stored
    panel.resize(panel.width() + 37, panel.height() + 11)    # the view's sigResized redraws the sinks
    qtbot.wait(20)
    monkeypatch.setattr(matrix_panel, "binned_fraction", real)
    assert update_or_explain(panel, results) and problem_text(panel) == ""
    assert panel._kv_frac.shape[0] == sum(len(heads) for _, _, _, heads in panel._bands)
    panel.resize(panel.width() - 50, panel.height())
    qtbot.wait(20)


def test_bars_set_to_no_bars_with_per_bar_pens_do_not_raise(qtbot):
    """pyqtgraph's BarGraphItem raises UnboundLocalError from `_updateColors` when handed an empty list of
    pens (it reads the loop variable after a loop that did not run). A stacked bar with no parts must not
    hand it one."""
    from trinity_desktop.ui.stacked_bar import StackedBar

    root = pg.PlotWidget()
    qtbot.addWidget(root)
    bar = StackedBar(root.getPlotItem())
    bar.update(["a", "b"], [1.0, 2.0], ["a", "b"], 4.0)
    bar.update([], [], [], 4.0)
    assert bar.total == 0.0
    root.show()
    qtbot.wait(10)
    assert bar.bar.boundingRect().isEmpty() and np.asarray(bar.values).size == 0
    bar.update(["a"], [3.0], ["a"], 4.0)   # and back to a bar
    assert bar.total == 3.0 and not bar.bar.boundingRect().isEmpty()
