"""Speculative decoding (#23) where a user looks for it: the Scenario form's fields, the roofline's verify point
and title (the computed speed-up, left or right of the ridge), the flow's draft and verify bars."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs import presets  # noqa: E402
from trinity_desktop.model.views.stages import stages  # noqa: E402
from trinity_desktop.ui.controls import ScenarioControls  # noqa: E402
from trinity_desktop.ui.flow_readout import role_of  # noqa: E402
from trinity_desktop.ui.plot_widgets import title_text  # noqa: E402
from trinity_desktop.ui.roofline_panel import RooflinePanel  # noqa: E402
from trinity_desktop.ui.roofline_speculative import speculative_title  # noqa: E402

HW, MODELS = presets.hardware_presets(), presets.model_presets()


def _scenario(batch: int) -> Scenario:
    return Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-70b"], kind="decode", gpus=8, batch=batch,
                    draft_model="llama-3.2-1b", draft_tokens=4, acceptance=0.7)


@pytest.fixture(scope="module")
def results():
    return {b: evaluate(_scenario(b)) for b in (1, 1024)}


def test_form_shows_and_edits_the_speculative_fields(qtbot):
    controls = ScenarioControls()
    qtbot.addWidget(controls)
    controls.set_choices(HW, MODELS)
    controls.show_scenario(_scenario(1))
    w = controls.widgets
    assert w["draft_model"].currentData() == "llama-3.2-1b" and w["mtp_depth"].currentData() == 0
    assert w["draft_tokens"].value() == 4 and w["acceptance"].value() == pytest.approx(0.7)
    assert w["draft_model"].findData("") == 0  # "none" first: off
    assert w["draft_tokens"].isEnabled() and w["acceptance"].isEnabled()
    controls.show_scenario(_scenario(1).replace(draft_model="", mtp_depth=1))  # MTP: γ = modules, α still asked
    assert not w["draft_tokens"].isEnabled() and w["acceptance"].isEnabled()
    controls.show_scenario(_scenario(1).replace(draft_model=""))  # off: neither applies
    assert not w["draft_tokens"].isEnabled() and not w["acceptance"].isEnabled()
    controls.show_scenario(_scenario(1))
    with qtbot.waitSignal(controls.edited) as edit:
        w["acceptance"].setValue(0.85)
    assert edit.args[0] == {"acceptance": 0.85}
    with qtbot.waitSignal(controls.edited) as edit:
        w["mtp_depth"].setCurrentIndex(w["mtp_depth"].findData(1))
    assert edit.args[0] == {"mtp_depth": 1}


@pytest.mark.parametrize("batch, side, verdict", [(1, "left of the ridge", "faster"),
                                                   (1024, "right of the ridge", "slower")])
def test_roofline_verify_point_and_title(qtbot, results, batch, side, verdict):
    r = results[batch]
    spec = r.speculative
    panel = RooflinePanel()
    qtbot.addWidget(panel)
    panel.set_hardware_choices(HW)
    panel.resize(1000, 650)
    panel.show()
    panel.update_results(r)
    verify = next(p for p in panel.roofline_result().points if p.role == "speculative_verify")
    assert verify.intensity == pytest.approx(spec.verify_intensity, rel=1e-9)
    assert verify.name in panel.point_items()
    title = title_text(panel.plot)
    ratio = spec.speedup if spec.helps else 1.0 / spec.speedup
    assert side in title and f"{ratio:.2f}× {verdict}" in title and f"batch {batch:,}" in title
    assert title == speculative_title(spec, batch)


def test_flow_draws_draft_and_verify_bars(results):
    r = results[1]
    bars = stages(r.scenario, r)
    drafts = [s for s in bars if s.role == "speculative_draft"]
    verifies = [s for s in bars if s.role == "speculative_verify"]
    assert drafts and len(drafts) == len(verifies)
    assert {role_of(s, "decode") for s in drafts} == {"draft"}
    assert {role_of(s, "decode") for s in verifies} == {"bandwidth-bound"}  # HBM-bound at batch 1
    assert max(s.end_s for s in bars) == pytest.approx(r.speculative.request_s, rel=1e-12)
    assert r.speculative.request_s < r.infer["request_s"]  # speculation shortens the request here
