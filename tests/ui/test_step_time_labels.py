"""Two step times a speaker sees side by side are told apart (#23, ui/step_time_labels.py): the status bar's
static-batch time says so once a request rate is set (System outcomes shows the p95 under load), and the
roofline footer's per-step bound names itself and the title's model time."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.status_bar import summary_parts  # noqa: E402
from trinity_desktop.ui.roofline_panel import RooflinePanel  # noqa: E402
from trinity_desktop.ui.units import fmt_seconds  # noqa: E402

PREFILL = default_scenario().replace(kind="prefill", gpus=8, pp=1, batch=16)


@pytest.fixture(scope="module")
def loaded():
    return evaluate(PREFILL.replace(request_rate=4.0))


def test_status_bar_labels_the_static_batch_under_load(loaded):
    plain = summary_parts(evaluate(PREFILL))
    assert f"prefill {fmt_seconds(evaluate(PREFILL).time_total)}" in plain  # no rate: as before
    part = next(p for p in summary_parts(loaded) if p.startswith("prefill "))
    assert part == (f"prefill {fmt_seconds(loaded.time_total)} (static batch of 16, no queueing; p95 under load: "
                    "System outcomes)")


def test_roofline_footer_names_its_bound_and_the_titles_time(shown_panel):
    r = evaluate(default_scenario().replace(kind="decode", gpus=8, pp=1, batch=16))
    panel = shown_panel(RooflinePanel, r, size=(700, 700))
    text = panel.info_label.text()
    assert "per token step, the ideal roofline bound on one GPU at datasheet peaks" in text
    assert text.count("<br>") == 2   # three rows, no compared hardware failed
    assert f"the title's {fmt_seconds(r.time_total)} per token is the model's time at batch 16" in text
    from trinity_desktop.ui.plot_widgets import title_text

    assert f"{fmt_seconds(r.time_total)} per token" in title_text(panel.plot)
