"""Controls and status texts: hardware sets its GPUs per node, the status bar names the context limit, the flow
headline names the bubble denominator, and each workload kind keeps its own layout."""

from __future__ import annotations

from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
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
    from trinity_desktop.model import evaluate
    from trinity_desktop.status_bar import summary_parts

    sc = default_scenario().replace(kind="decode", gpus=8, prompt_len=(1 << 20) - 512, gen_len=512)
    parts = summary_parts(evaluate(sc))
    assert parts[0].split()[1] == "binds"   # what binds first, then the warning, before any other figure
    warnings = [p for p in parts if p.startswith("⚠")]
    assert parts[1:1 + len(warnings)] == warnings and len(warnings) >= 2   # does not fit, beyond the limit
    assert any("Beyond the model's limit" in w and f"{sc.model.max_seq:,}" in w for w in warnings)
    assert "max_seq" not in " ".join(parts)


def test_flow_headline_names_the_bubble_denominator(shown_panel):
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.model import evaluate
    from ui.flow_panel import FlowPanel

    r = evaluate(default_scenario())
    panel = shown_panel(FlowPanel, r)
    text = panel.headline.text()
    frac = r.train["pipeline_bubble_fraction"]
    sc = r.scenario
    balanced = (sc.pp - 1) / (sc.micro_batches + sc.pp - 1)  # the lighter first stage shortens the fill and drain
    assert 0.3 * balanced < frac < balanced
    assert f"bubble {100 * frac:.1f}% of the pipeline phase" in text
    assert f"({100 * r.time['pipeline_bubble'] / r.time_total:.1f}% of the step)" in text


def test_switching_the_workload_keeps_a_layout_per_kind(qtbot):
    """Training on 64 GPUs (TP8) -> decode must not become a 64-way tensor-parallel decode; back to training
    restores the 64 GPUs, and the inference layout the user chose is kept for the next switch."""
    from trinity_desktop.defaults import default_scenario

    controls = ScenarioControls()
    qtbot.addWidget(controls)
    controls.set_choices(hardware_presets(), model_presets())
    train = default_scenario().replace(gpus=64, tp=8, pp=2, global_batch=64)
    controls.show_scenario(train)
    edits = []
    controls.edited.connect(edits.append)
    kind = controls.kind_combo
    kind.setCurrentIndex(kind.findData("decode"))
    assert edits[-1] == {"kind": "decode", "gpus": 8, "pp": 1}  # one TP group of the training layout, no pipeline
    controls.show_scenario(train.replace(kind="decode", gpus=4, pp=2))  # the app applied it; the user picks TP2 PP2
    kind.setCurrentIndex(kind.findData("prefill"))
    assert edits[-1] == {"kind": "prefill"}  # prefill and decode share the inference layout
    controls.show_scenario(train.replace(kind="prefill", gpus=4, pp=2))
    kind.setCurrentIndex(kind.findData("train"))
    assert edits[-1] == {"kind": "train", "gpus": 64, "pp": 2}
    controls.show_scenario(train.replace(pp=4))  # training's PP is its own
    kind.setCurrentIndex(kind.findData("decode"))
    assert edits[-1] == {"kind": "decode", "gpus": 4, "pp": 2}
    controls.show_scenario(train.replace(kind="decode", gpus=4, pp=2))
    assert not controls.groups["train"].isVisibleTo(controls)  # training's own options hide; PP serves both
    assert controls.widgets["pp"].isVisibleTo(controls) and "Inference" in controls.widgets["pp"].toolTip()


def test_window_switch_to_decode_gives_a_sensible_tp(qtbot, tmp_path):
    from PySide6 import QtCore

    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.main_window import MainWindow
    from trinity_desktop.store import ScenarioStore

    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(ScenarioStore(default_scenario().replace(gpus=64, tp=8, pp=2, global_batch=64)), settings)
    qtbot.addWidget(win)
    kind = win.controls.kind_combo
    kind.setCurrentIndex(kind.findData("decode"))
    sc = win.store.scenario
    assert sc.kind == "decode" and sc.gpus == 8
    win.undo_action.trigger()
    assert win.store.scenario.kind == "train" and win.store.scenario.gpus == 64


def test_overlap_and_moe_routing_controls_edit_the_scenario(qtbot):
    """The overlap options and node-limited routing (model/formulas/overlap.py, comms.moe_all_to_all) are controls."""
    controls = ScenarioControls()
    qtbot.addWidget(controls)
    controls.set_choices(hardware_presets(), model_presets())
    edits = []
    controls.edited.connect(edits.append)
    for name in ("tp_comm_overlap", "ep_comm_overlap", "moe_fp8_dispatch"):
        box = controls.widgets[name]
        assert not box.isChecked()  # off by default
        box.setChecked(True)
        assert edits[-1] == {name: True}
    combo = controls.widgets["moe_node_limit"]
    combo.setCurrentIndex(combo.findData(4))
    assert edits[-1] == {"moe_node_limit": 4}
