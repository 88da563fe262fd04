"""Split computing and quantisation panels: what they draw equals the model; sliders move the optimum."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views import split as sp
from trinity_desktop.model.views.on_device import BITS, on_device_table  # noqa: E402
from trinity_desktop.ui.quantisation_panel import QuantisationPanel  # noqa: E402
from trinity_desktop.ui.split_panel import SplitPanel  # noqa: E402


@pytest.fixture(scope="module")
def decode_results():
    sc = Scenario(hardware=presets.hardware_presets()["h200-sxm"], model=presets.model_presets()["llama-3.2-1b"],
                  kind="decode", gpus=1, gpus_per_node=8, batch=1, prompt_len=512, gen_len=256)
    return evaluate(sc)


@pytest.fixture
def split_panel(shown_panel):
    return shown_panel(SplitPanel)


@pytest.fixture
def quant_panel(shown_panel):
    return shown_panel(QuantisationPanel)


def test_split_panel_draws_the_model(split_panel, decode_results):
    p = split_panel
    p.update_results(decode_results)  # the scenario's H200 becomes the cloud side
    p.set_model("resnet-50")
    p.set_device("phone-a17-pro")
    p.set_network("4g")
    prof, dev, net, cloud = sp.lookup("resnet-50", "phone-a17-pro", "4g", cloud="h200-sxm")
    t = sp.split_table(prof, dev, net, cloud, uplink_bytes_per_s=p.uplink_mbps() * 1e6 / 8)
    bars = p.bars()
    for name in ("device_s", "transfer_s", "cloud_s", "energy_j"):
        np.testing.assert_allclose(bars[name], t[name], rtol=1e-12)
    scale = {"ms": 1e3, "s": 1.0, "µs": 1e6}[p.time_unit()]
    np.testing.assert_allclose(p.drawn_heights()["device"], t["device_s"] * scale, rtol=1e-12)
    assert p.uplink_mbps() == pytest.approx(6.0, rel=0.02)  # the 4G preset moved the slider
    assert p.optimal_index() == int(sp.optimal_split(t, "latency"))
    assert "H200" in p.caption_text() and "W radio" in p.caption_text()
    assert all(np.all(np.isfinite(v)) for v in bars.values())


def test_split_panel_sliders_move_the_optimum(split_panel, qtbot):
    """ResNet-50 on the laptop CPU over Ethernet: fast uplink -> all cloud; slow uplink -> all device; the
    device-speed slider brings it back on the device. splitChanged reports the position in [0, 1]."""
    p = split_panel
    p.set_model("resnet-50")
    p.set_device("laptop-x86-ddr5")
    p.set_network("ethernet")
    positions = []
    p.splitChanged.connect(positions.append)
    p.set_uplink(1000.0)
    assert p.optimal_index() == 0 and p.optimum_position() == 0.0
    before = p.bars()["transfer_s"][0]
    with qtbot.waitSignal(p.splitChanged, timeout=1000) as blocker:
        p.set_uplink(0.1)
    assert p.bars()["transfer_s"][0] > 100 * before  # the bars followed the slider
    n = len(p.bars()["device_s"]) - 1
    assert p.optimal_index() == n and blocker.args == [1.0]
    p.set_uplink(1000.0)
    assert p.optimal_index() == 0 and positions[-1] == 0.0
    p.set_device_speed(10.0)
    assert p.optimal_index() == n
    assert positions[-1] == 1.0 and 0.0 in positions


def test_split_panel_energy_objective_finds_interior_split(split_panel):
    """Neurosurgeon's headline direction on screen: AlexNet, phone, Wi-Fi, energy -> split after pool5."""
    p = split_panel
    p.set_model("alexnet")
    p.set_device("phone-a17-pro")
    p.set_network("wifi")
    p.set_objective("energy")
    prof = sp.lookup("alexnet", "phone-a17-pro", "wifi")[0]
    assert p.optimal_index() == prof.layer_names.index("pool5") + 1
    assert "after pool5" in p.summary_text()
    text = p.hover_text_at(p.optimal_index(), 1e-6)
    assert "optimum" in text and "mJ" in text and ("ms" in text or "µs" in text)
    assert p.hover_text_at(0.5, 1e-6) == ""  # between bars


def test_quantisation_panel_draws_the_model(quant_panel, decode_results):
    q = quant_panel
    q.update_results(decode_results)  # follows the scenario's small model
    assert q.model_combo.currentData() == "llama-3.2-1b"
    q.set_device("jetson-orin-nano-super")
    t = on_device_table("llama-3.2-1b", "jetson-orin-nano-super")
    np.testing.assert_allclose(q.storage_gb(), t["weight_bytes"] / 1e9, rtol=1e-12)
    np.testing.assert_allclose(q.tokens_per_s(), t["tokens_per_s"], rtol=1e-12)
    assert len(q.storage_gb()) == len(BITS)


def test_quantisation_panel_target_and_notes(quant_panel, qtbot):
    q = quant_panel
    q.set_model("llama-3.2-3b")
    q.set_device("phone-a17-pro")
    q.set_target_ms(100)
    assert list(q.meets_target()) == [False, True, True, True, True]
    q.set_target_ms(25)  # 40 tokens/s: only the 2-bit weights get there on the phone
    assert list(q.meets_target()) == [False, False, False, False, True]
    notes = q.notes_text()
    assert "not model output" in notes and "assumed" in notes and "GPTQ" in notes
    assert "4-bit" in notes and "2-bit" in notes and "seed" not in notes.lower()
    text = q.hover_text_at("rate", 2, 1e-6)
    assert "tokens/s" in text and "per token" in text
    with qtbot.waitSignal(q.editRequested, timeout=1000) as blocker:
        q.editRequested.emit({"weight_dtype": "int4"})
    assert blocker.args == [{"weight_dtype": "int4"}]
