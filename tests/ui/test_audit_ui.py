"""UI regressions from the correctness audit (issue 16, items 3, 8, 10, 11)."""

from __future__ import annotations

from trinity_desktop.model.presets import hardware_presets, model_presets
from ui.controls import ScenarioControls


def test_choosing_hardware_sets_its_gpus_per_node(qtbot):
    controls = ScenarioControls()
    qtbot.addWidget(controls)
    controls.set_choices(hardware_presets(), model_presets())
    edits = []
    controls.edited.connect(edits.append)
    combo = controls.hardware_combo
    combo.setCurrentIndex(combo.findData("tpu-v5p"))
    assert edits[-1] == {"hardware": "tpu-v5p", "gpus_per_node": 4}
    combo.setCurrentIndex(combo.findData("h100-sxm"))
    assert edits[-1] == {"hardware": "h100-sxm", "gpus_per_node": 8}


def test_status_bar_names_the_context_limit():
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.main_window import MainWindow
    from trinity_desktop.model import evaluate

    sc = default_scenario().replace(kind="decode", gpus=8, prompt_len=(1 << 20) - 512, gen_len=512)
    text = MainWindow._summary(evaluate(sc))
    assert "max_seq" in text and f"{sc.model.max_seq:,}" in text


def test_flow_headline_names_the_bubble_denominator(shown_panel):
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.model import evaluate
    from ui.flow_panel import FlowPanel

    r = evaluate(default_scenario())
    panel = shown_panel(FlowPanel, r)
    text = panel.headline.text()
    frac = r.train["pipeline_bubble_fraction"]
    sc = r.scenario
    assert frac == (sc.pp - 1) / (sc.micro_batches + sc.pp - 1)
    assert f"bubble {100 * frac:.1f}% of the pipeline phase" in text
    assert f"({100 * r.time['pipeline_bubble'] / r.time_total:.1f}% of the step)" in text
