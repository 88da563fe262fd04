"""The Scenario form's collapsible Serving section (#23, ui/serving_section.py): the serving fields live in it,
it is closed for a scenario that sets none of them and opens (never closes) when one is set, and its fields
still report their edits."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6 import QtWidgets  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.ui.controls import ScenarioControls  # noqa: E402
from trinity_desktop.ui.serving_section import SERVING_FIELDS, serving_fields_set  # noqa: E402

DECODE = default_scenario().replace(kind="decode", gpus=8, pp=1)


def _form(qtbot):
    form = ScenarioControls()
    qtbot.addWidget(form)
    form.resize(300, 900)
    form.show()
    form.show_scenario(DECODE)
    QtWidgets.QApplication.processEvents()
    return form


def test_serving_fields_sit_in_the_closed_section(qtbot):
    form = _form(qtbot)
    assert len(SERVING_FIELDS) == 19
    assert all(form.serving.body.isAncestorOf(form.widgets[f]) for f in SERVING_FIELDS)
    assert not form.serving.is_open() and not form.widgets["request_rate"].isVisible()
    assert form.widgets["batch"].isVisible()  # the common inference fields stay in the group
    assert form.serving.toggle.text() == "▸ Serving"
    form.serving.toggle.click()
    assert form.serving.is_open() and form.widgets["request_rate"].isVisible()
    assert form.serving.toggle.text() == "▾ Serving"


def test_a_set_serving_field_opens_it_and_counts(qtbot):
    form = _form(qtbot)
    assert serving_fields_set(DECODE) == ()
    sc = DECODE.replace(request_rate=4.0, tpot_slo_s=0.05)
    assert serving_fields_set(sc) == ("request_rate", "tpot_slo_s")
    form.show_scenario(sc)
    assert form.serving.is_open() and form.serving.toggle.text() == "▾ Serving (2 set)"
    form.show_scenario(DECODE)  # never closes by itself
    assert form.serving.is_open() and form.serving.toggle.text() == "▾ Serving"


def test_a_dependent_field_alone_is_not_set():
    """γ without a drafter, or a chunk size without a rate, switches nothing on."""
    assert serving_fields_set(DECODE.replace(draft_tokens=6, prefill_chunk_tokens=4096)) == ()
    assert serving_fields_set(DECODE.replace(draft_model="llama-3.2-1b", draft_tokens=6)) == (
        "draft_model", "draft_tokens")


def test_fields_in_the_section_report_edits(qtbot):
    form = _form(qtbot)
    form.serving.set_open(True)
    with qtbot.waitSignal(form.edited) as edit:
        form.widgets["request_rate"].setValue(2.5)
    assert edit.args == [{"request_rate": 2.5}]


def test_a_laptop_scenario_is_read_without_building_a_default_scenario_on_it():
    """A device with no device-to-device link refuses the default 8 GPUs: reading which serving fields a laptop
    scenario sets must not build a Scenario there (it raised out of the event loop while presenting a deck)."""
    from trinity_desktop.model.inputs.presets import hardware_presets

    laptop = default_scenario().replace(hardware=hardware_presets()["laptop-x86-ddr5"], kind="decode", gpus=1,
                                        tp=1, pp=1)
    assert serving_fields_set(laptop) == ()
    assert serving_fields_set(laptop.replace(request_rate=2.0)) == ("request_rate",)
