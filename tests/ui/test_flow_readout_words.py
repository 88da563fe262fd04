"""The flow's phase read-out names its bars and lanes whole: "1 bar on host link", "24,608 bars on 32 lanes, stage 0
to stage 31", never a list cut with "…" (issue #21: no shortened text in a chart dock)."""

from __future__ import annotations

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from ui.flow_panel import FlowPanel


def test_phase_readouts_are_whole(shown_panel):
    sc = default_scenario().replace(gpus=64, pp=8, tp=8)
    panel = shown_panel(FlowPanel, evaluate(sc))
    names = panel.phase_names()
    assert "data load" in names and "forward" in names
    for i, name in enumerate(names):
        panel.select(i)
        text = panel.detail_label.text()
        assert "…" not in text, f"{name}: {text}"
    panel.select(names.index("data load"))
    assert "1 bar on host link" in panel.detail_label.text()
    panel.select(names.index("forward"))
    ph = panel.current_phase()
    lanes = list(dict.fromkeys(panel._stages[i].lane for i in ph.members))
    assert len(lanes) > 4
    assert f"{len(ph.members):,} bars on {len(lanes)} lanes, {lanes[0]} to {lanes[-1]}" in panel.detail_label.text()


def test_a_number_stays_on_its_line_with_its_unit():
    """A wrapped read-out split "537 / MB" across two lines on the planner slides."""
    from trinity_desktop.ui.units import unbroken_units

    assert unbroken_units("hbm 115 GB, 0 s → 2.24 s, 41 kB/token, 2 stages") == \
        "hbm 115&nbsp;GB, 0&nbsp;s → 2.24&nbsp;s, 41&nbsp;kB/token, 2 stages"
