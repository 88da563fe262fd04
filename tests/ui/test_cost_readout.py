"""Cost and energy per million tokens in the System outcomes and the planner, and the Scenario form's new fields
(GPU price, LoRA rank, targets, QLoRA): issue #23."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets  # noqa: E402
from trinity_desktop.model.views.cost import scenario_cost  # noqa: E402
from trinity_desktop.ui.controls import ScenarioControls  # noqa: E402
from trinity_desktop.ui.cost_readout import CostReadout, cost_sentence  # noqa: E402
from trinity_desktop.ui.outcomes_panel import OutcomesPanel  # noqa: E402

H, M = hardware_presets(), model_presets()


@pytest.fixture(scope="module")
def priced():
    sc = Scenario(hardware=H["h100-sxm"], model=M["llama-3-8b"], gpus=8, global_batch=16, gpu_hour_price=2.5)
    return evaluate(sc)


def test_sentence_states_dollars_and_kwh_from_the_model(priced):
    c = scenario_cost(priced)
    text = cost_sentence(c, "train", "NVIDIA H100 SXM 80GB")
    assert text.startswith(f"${c.usd_per_million_tokens:,.3g} per million tokens trained at $2.50 per GPU-hour")
    assert f"{c.kwh_per_million_tokens:,.3g} kWh per million at the 700 W TDP (5.6 kW for 8 GPUs" in text


def test_sentence_says_what_is_missing():
    sc = Scenario(hardware=H["tpu-v5e"], model=M["llama-3.2-1b"], kind="decode", gpus=1, batch=4)
    text = cost_sentence(scenario_cost(evaluate(sc)), "decode", "Google TPU v5e")
    assert text == "no TDP in the entry for Google TPU v5e, so no energy figure; set a GPU price (Cluster) for dollars."


def test_outcomes_panel_shows_the_readout(qtbot, priced):
    panel = OutcomesPanel()
    qtbot.addWidget(panel)
    panel.update_results(priced)
    assert panel.cost_readout.text() == cost_sentence(scenario_cost(priced), "train", priced.scenario.hardware.name)
    assert isinstance(panel.cost_readout, CostReadout) and panel.cost_readout.wordWrap()
    assert not panel.cost_readout.isHidden()
    panel.update_results(evaluate(priced.scenario.replace(gpu_hour_price=0.0)))
    assert panel.cost_readout.isHidden()   # no price set: no cost line on the panel


def test_form_fields_edit_the_new_scenario_fields(qtbot):
    controls = ScenarioControls()
    qtbot.addWidget(controls)
    controls.show_scenario(Scenario(hardware=H["h100-sxm"], model=M["llama-3-8b"], gpus=8, global_batch=8))
    edits = []
    controls.edited.connect(edits.append)
    controls.widgets["gpu_hour_price"].setValue(3.25)
    rank = controls.widgets["lora_rank"]
    rank.setCurrentIndex(rank.findData(16))
    targets = controls.widgets["lora_targets"]
    targets.setCurrentIndex(targets.findData("all"))
    controls.widgets["qlora"].setChecked(True)
    assert edits == [{"gpu_hour_price": 3.25}, {"lora_rank": 16}, {"lora_targets": "all"}, {"qlora": True}]
    for name in ("gpu_hour_price", "lora_rank", "lora_targets", "qlora"):
        assert controls.widgets[name].toolTip() and controls.widgets[name].accessibleName()


def test_planner_best_layout_sentence_is_priced_per_gpu(qtbot, priced):
    label = CostReadout()
    qtbot.addWidget(label)
    label.update_results(priced)
    label.update_best(2000.0, priced.scenario)
    label.update_best(1000.0, priced.scenario)  # a new search replaces the best layout's sentence
    usd, kwh = 2.5 / 3600 / 1000 * 1e6, 700 / 1000 / 3.6
    assert label.text().endswith(f" Best layout: ${usd:,.3g} and {kwh:,.3g} kWh per million tokens.")
    assert label.text().count("Best layout") == 1
