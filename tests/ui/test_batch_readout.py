"""The training scenario's tokens per step against the published optimum, in the planner and the breakdown."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.claims.trinity import workload  # noqa: E402
from trinity_desktop.model.formulas.batch_law import optimal_batch_tokens  # noqa: E402
from trinity_desktop.ui.batch_readout import BatchReadout, batch_of, fmt_tokens  # noqa: E402
from trinity_desktop.ui.breakdown_panel import BreakdownPanel  # noqa: E402


def test_batch_of_by_hand():
    r = evaluate(workload("dense-pretrain"))
    sc = r.scenario
    b = batch_of(r)
    assert b.batch_tokens == sc.global_batch * sc.seq_len
    n = r.params_active
    assert b.optimal_tokens == pytest.approx(0.2920 * (6 * n * 20 * n) ** 0.3271)   # DeepSeek LLM law, D = 20 N
    assert b.optimal_tokens == pytest.approx(float(optimal_batch_tokens(120 * n * n)))
    assert batch_of(evaluate(workload("long-context-decode"))) is None


def test_readout_label(qtbot):
    label = BatchReadout()
    qtbot.addWidget(label)
    r = evaluate(workload("dense-pretrain"))
    label.update_results(r)
    b = batch_of(r)
    assert label.text() == (f"Your global batch is {fmt_tokens(b.batch_tokens)} tokens; the published optimum at "
                            f"this compute is {fmt_tokens(b.optimal_tokens)}.")
    assert not label.isHidden()
    label.update_results(evaluate(workload("long-context-decode")))
    assert label.isHidden() and label.text() == ""


def test_breakdown_summary_and_planner_show_it(shown_panel):
    r = evaluate(workload("dense-pretrain"))
    b = batch_of(r)
    breakdown = shown_panel(BreakdownPanel, size=(900, 600))
    breakdown.update_results(r)
    assert f"batch {fmt_tokens(b.batch_tokens)} tokens (published optimum {fmt_tokens(b.optimal_tokens)})" in \
        breakdown.summary_text()
    from trinity_desktop.ui.planner_panel import PlannerPanel
    planner = shown_panel(PlannerPanel, size=(900, 600))
    try:
        planner.update_results(r)
        assert planner.batch_readout.text().startswith(f"Your global batch is {fmt_tokens(b.batch_tokens)} tokens")
        assert planner.batch_readout.isVisible()
    finally:
        planner.stop_workers()
