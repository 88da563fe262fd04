"""A session whose model (or hardware) is its own, not a preset, shows that model's name in the Model box,
keeps it as a choice, and choosing it again edits back to it (issue #21: the box showed the first preset)."""

from __future__ import annotations

import dataclasses

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from ui.controls import ScenarioControls


def _controls(qtbot) -> ScenarioControls:
    controls = ScenarioControls()
    qtbot.addWidget(controls)
    controls.set_choices(hardware_presets(), model_presets())
    return controls


def test_a_user_model_shows_its_own_name(qtbot):
    controls = _controls(qtbot)
    base = default_scenario()
    mine = dataclasses.replace(base.model, key="my-model", name="My 7B (lab checkpoint, 32 layers)")
    controls.show_scenario(base.replace(model=mine))
    box = controls.model_combo
    assert box.currentText() == "My 7B"                               # the short name, the full one in the list
    assert box.currentText() != box.itemText(0)
    assert controls.choice("model", box.currentData()) == mine
    edits = []
    controls.edited.connect(edits.append)
    box.setCurrentIndex(box.findData(base.model.key))                 # away to a preset, and back
    box.setCurrentIndex(box.findText("My 7B"))
    assert [controls.choice("model", e["model"]) for e in edits] == [base.model, mine]


def test_an_edited_preset_is_not_shown_as_the_preset(qtbot):
    controls = _controls(qtbot)
    base = default_scenario()
    edited = dataclasses.replace(base.model, name="Edited copy", layers=base.model.layers + 2)
    controls.show_scenario(base.replace(model=edited))
    assert controls.model_combo.currentText() == "Edited copy"
    assert controls.choice("model", controls.model_combo.currentData()) == edited
    controls.show_scenario(base)                                      # the preset itself: its own entry
    assert controls.model_combo.currentData() == base.model.key
    assert controls.model_combo.currentText() == controls.model_combo.itemText(
        controls.model_combo.findData(base.model.key))


def test_a_user_hardware_shows_its_own_name(qtbot):
    controls = _controls(qtbot)
    base = default_scenario()
    mine = dataclasses.replace(base.hardware, key="lab-gpu", name="Lab GPU")
    controls.show_scenario(base.replace(hardware=mine))
    assert controls.hardware_combo.currentText() == "Lab GPU"
    assert controls.choice("hardware", controls.hardware_combo.currentData()) == mine
