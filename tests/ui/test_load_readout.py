"""The load read-out in System outcomes (#23): the finding at the Scenario's request rate, computed by the load
model; hidden without a rate; a refused scenario reads as one line, never a traceback; the form edits the fields."""

from PySide6 import QtWidgets

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.search.load import load_report
from trinity_desktop.ui.controls import ScenarioControls
from trinity_desktop.ui.outcomes_panel import OutcomesPanel


def _serving(**kw) -> Scenario:
    fields = {"kind": "decode", "gpus": 1, "prompt_len": 1024, "gen_len": 128, **kw}
    return Scenario(hardware=hardware_presets()["h100-sxm"], model=model_presets()["llama-3-8b"], **fields)


def test_outcomes_states_the_load_finding_and_hides_it_without_a_rate(shown_panel):
    sc = _serving(request_rate=4.0, ttft_slo_s=0.5, tpot_slo_s=0.03)
    panel = shown_panel(OutcomesPanel, evaluate(sc), size=(683, 700))
    label = panel.load_readout
    report = load_report(sc)
    assert label.isVisible() and label.text() == report.finding
    assert label.text().startswith("At 4 req/s TTFT p95 is ")
    assert f"{report.max_rate_within_slo:.3g} req/s meets" in label.text()
    assert label.wordWrap()  # a long sentence wraps, never widens the dock
    panel.update_results(evaluate(_serving()))
    assert not label.isVisible()
    panel.update_results(evaluate(_serving(request_rate=2.0, gen_len=1)))  # no TPOT with one generated token
    assert label.isVisible() and "gen_len" in label.text() and "Traceback" not in label.text()


def test_form_edits_the_load_fields(qtbot):
    controls = ScenarioControls()
    qtbot.addWidget(controls)
    controls.show_scenario(_serving())
    edits = []
    controls.edited.connect(edits.append)
    for field, value in (("request_rate", 6.5), ("ttft_slo_s", 0.25), ("tpot_slo_s", 0.02),
                         ("prefill_chunk_tokens", 512)):
        spin = controls.widgets[field]
        assert isinstance(spin, (QtWidgets.QSpinBox, QtWidgets.QDoubleSpinBox)) and spin.toolTip()
        spin.setValue(value)
    assert edits == [{"request_rate": 6.5}, {"ttft_slo_s": 0.25}, {"tpot_slo_s": 0.02}, {"prefill_chunk_tokens": 512}]
    assert controls.widgets["request_rate"].minimum() == 0.0  # 0 = off
