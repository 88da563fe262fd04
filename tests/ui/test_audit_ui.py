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
