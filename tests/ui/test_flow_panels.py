"""Flow (Gantt + stepper) and outcomes (variants side by side) panels: what they draw is what the model computed;
the keyboard moves the highlight and the linked panels hear about it."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtWidgets  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.views.stages import stages  # noqa: E402
from trinity_desktop.model.views.variants import VARIANTS  # noqa: E402
from trinity_desktop.ui import theme  # noqa: E402
from trinity_desktop.ui.flow_panel import FlowPanel  # noqa: E402
from trinity_desktop.ui.outcomes_panel import OutcomesPanel  # noqa: E402
from trinity_desktop.ui.plot_widgets import title_text  # noqa: E402
from trinity_desktop.ui.units import fmt_seconds  # noqa: E402


@pytest.fixture(scope="module")
def train_results():
    return evaluate(default_scenario())


@pytest.fixture(scope="module")
def infer_results():
    return evaluate(default_scenario().replace(kind="decode", gpus=8))


@pytest.fixture
def flow(shown_panel, train_results):
    """The panel stepping bar by bar (1F1B micro-batch detail)."""
    panel = shown_panel(FlowPanel, train_results)
    panel.set_detailed(True)
    panel.select(0)
    return panel


@pytest.fixture
def phase_flow(shown_panel, train_results):
    """The panel as it opens: stepping phase by phase."""
    return shown_panel(FlowPanel, train_results)


@pytest.fixture
def outcomes(shown_panel, train_results):
    return shown_panel(OutcomesPanel, train_results)


class LinkedStub(QtCore.QObject):
    """Stands in for the roofline and memory panels: what they would show for the focused stage."""

    def __init__(self):
        super().__init__()
        self.operating_point = None   # roofline: (FLOPs, bytes) of the stage
        self.live_hbm = None          # memory panel: live HBM at that moment

    def follow(self, name: str, numbers: dict) -> None:
        self.operating_point = (numbers["flops"], sum(numbers["bytes_by_link"].values()))
        self.live_hbm = numbers["live_memory_by_tier"]["hbm"]


# --- flow panel -------------------------------------------------------------------------------------

def test_gantt_draws_every_stage(flow, train_results):
    expected = stages(train_results.scenario, train_results)
    assert flow.stage_count() == len(expected)
    bars = flow.bars()
    assert bars == [(s.lane, s.start_s, s.end_s, s.kind) for s in expected]
    assert flow.lanes()[:2] == ["stage 0", "stage 1"] and "DP network" in flow.lanes()
    assert max(end for _, _, end, _ in bars) == pytest.approx(train_results.time_total, rel=1e-6)
    kinds = {k for *_, k in bars}
    assert {"compute", "communication", "idle"} <= kinds  # the bubble and the collectives are drawn
    # the bar item holds exactly these bars, in the drawn time unit
    opts = flow.bars_item.opts
    assert len(opts["x0"]) == len(bars)
    assert np.all(np.isfinite(opts["x0"])) and np.all(np.asarray(opts["width"]) >= 0)


def test_keyboard_moves_the_highlight_and_updates_linked_panels(qtbot, flow, train_results):
    stub = LinkedStub()
    flow.stageFocused.connect(stub.follow)
    focus = []
    flow.focusRequested.connect(lambda what, key: focus.append((what, key)))
    assert flow.focusPolicy() & QtCore.Qt.FocusPolicy.TabFocus
    assert flow.current_index() == 0
    with qtbot.waitSignal(flow.stageFocused, timeout=1000) as blocker:
        qtbot.keyClick(flow, QtCore.Qt.Key.Key_Right)
    assert flow.current_index() == 1
    st = flow.current_stage()
    name, numbers = blocker.args
    assert name == st.name and numbers["start_s"] == st.start_s and numbers["end_s"] == st.end_s
    assert stub.live_hbm == st.live_memory_by_tier["hbm"]
    assert stub.operating_point == (st.flops, sum(st.bytes_by_link.values()))
    assert focus[-1] == ("stage", st.name)
    x0, x1, y0, y1 = flow.highlight_rect()
    assert x0 == pytest.approx(st.start_s, rel=1e-9, abs=1e-12)
    assert x1 == pytest.approx(st.end_s, rel=1e-9)
    lane = flow.lanes().index(st.lane)
    assert y0 < lane < y1
    for _ in range(3):
        qtbot.keyClick(flow, QtCore.Qt.Key.Key_Right)
    assert flow.current_index() == 4
    qtbot.keyClick(flow, QtCore.Qt.Key.Key_Left)
    assert flow.current_index() == 3
    # the linked stub follows the newly highlighted stage
    assert stub.live_hbm == flow.current_stage().live_memory_by_tier["hbm"]
    # clamped at the ends
    for _ in range(10):
        qtbot.keyClick(flow, QtCore.Qt.Key.Key_Left)
    assert flow.current_index() == 0
    qtbot.keyClick(flow, QtCore.Qt.Key.Key_End)
    assert flow.current_index() == flow.stage_count() - 1
    qtbot.keyClick(flow, QtCore.Qt.Key.Key_Right)
    assert flow.current_index() == flow.stage_count() - 1


def test_arrow_keys_work_while_a_button_has_focus(qtbot, flow):
    flow.next_button.setFocus()
    qtbot.keyClick(flow.next_button, QtCore.Qt.Key.Key_Right)
    assert flow.current_index() == 1


def test_buttons_and_play(qtbot, flow):
    qtbot.mouseClick(flow.next_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.mouseClick(flow.next_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.mouseClick(flow.prev_button, QtCore.Qt.MouseButton.LeftButton)
    assert flow.current_index() == 1
    flow.timer.setInterval(5)
    qtbot.mouseClick(flow.play_button, QtCore.Qt.MouseButton.LeftButton)
    assert flow.is_playing() and "Pause" in flow.play_button.text()
    qtbot.waitUntil(lambda: flow.current_index() >= 4, timeout=2000)
    qtbot.keyClick(flow, QtCore.Qt.Key.Key_Space)
    assert not flow.is_playing() and "Play" in flow.play_button.text()
    for w in (flow.prev_button, flow.next_button, flow.play_button, flow.zoom_check):
        assert w.toolTip() and w.accessibleName()


def test_side_readout_shows_the_numbers_with_units(flow, train_results):
    i = next(k for k, s in enumerate(stages(train_results.scenario, train_results))
             if s.name == "forward mb 1" and s.lane == "stage 0")
    flow.select(i)
    text = flow.detail_text()
    st = flow.current_stage()
    assert "forward mb 1" in text
    assert "FLOP" in text and "GB" in text and "&nbsp;ms" in text   # a number never wraps away from its unit
    assert f"{st.live_memory_by_tier['hbm'] / 1e9:.1f}&nbsp;GB" in text
    assert theme.RESOURCE_COLORS["compute"] in text and "Compute" in text
    assert "nan" not in text.lower()


def test_hover_readout(flow):
    st = flow.current_stage()
    lane = flow.lanes().index(st.lane)
    mid = (st.start_s + st.end_s) / 2 * flow._scale
    text = flow.hover_text_at(mid, lane)
    assert st.name in text and ("ms" in text or " s" in text) and "binding" in text
    assert flow.hover_text_at(mid, lane + 0.5) == ""


def test_set_focus_selects_without_echo(qtbot, flow):
    name = flow.current_stage().name
    flow.step(10)
    other = flow.current_stage().name
    with qtbot.assertNotEmitted(flow.stageFocused):
        flow.set_focus("stage", name)
        flow.set_focus("workload", other)  # not a stage: ignored
    assert flow.current_stage().name == name


def test_inference_request_flow(qtbot, infer_results):
    panel = FlowPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 650)
    panel.update_results(infer_results)
    assert panel.phase_names() == ["prefill", "decode"]  # the cache fits: no offload or onload
    panel.set_detailed(True)
    assert panel.lanes() == ["GPU (TP group)"]
    assert panel.stage_count() == 33
    assert panel.current_stage().name.startswith("prefill")
    bars = panel.bars()
    assert bars[-1][2] == pytest.approx(infer_results.infer["request_s"], rel=1e-6)
    qtbot.keyClick(panel, QtCore.Qt.Key.Key_Right)
    assert panel.current_stage().name.startswith("decode steps 1-32")
    assert "Bandwidth" in panel.detail_text()


def test_highlight_survives_an_update(flow, train_results):
    flow.select(7)
    name = flow.current_stage().name
    flow.update_results(evaluate(train_results.scenario.replace(zero=3)))
    assert flow.current_stage().name == name


# --- phases: the step at the seed's granularity ----------------------------------------------------

def test_training_opens_on_the_five_phases(qtbot, phase_flow, train_results):
    assert not phase_flow.detailed()
    assert phase_flow.phase_names() == ["data load", "forward", "backward", "gradient sync", "optimizer"]
    assert phase_flow.step_count() == 5
    assert "Phase 1 of 5: data load" in phase_flow.position_label.text()
    qtbot.keyClick(phase_flow, QtCore.Qt.Key.Key_Right)
    ph = phase_flow.current_phase()
    assert ph.name == "forward"
    items = stages(train_results.scenario, train_results)
    members = [items[i] for i in ph.members]
    # every micro-batch's forward is in the phase, no backward is
    assert sum(st.name.startswith("forward mb") for st in members) == sum(
        st.name.startswith("forward mb") for st in items)
    assert not any(st.name.startswith("backward") for st in members)
    # the phase's bars keep their colour, the rest fade
    brushes = phase_flow.bars_item.opts["brushes"]
    assert all(brushes[i].color().alpha() == 255 for i in ph.members)
    assert all(b.color().alpha() < 255 for i, b in enumerate(brushes) if i not in set(ph.members))
    x0, x1, _, _ = phase_flow.highlight_rect()
    assert x0 == pytest.approx(ph.start_s, rel=1e-9, abs=1e-12) and x1 == pytest.approx(ph.end_s, rel=1e-9)
    assert "Forward" in phase_flow.detail_text() and "nan" not in phase_flow.detail_text().lower()


def test_a_phase_fills_the_width_when_zoomed(phase_flow):
    """In a 1-phase view even the shortest phase (the prefetched data load) spans most of the chart."""
    for i, ph in enumerate(phase_flow._phases):
        phase_flow.select(i)
        lo, hi = phase_flow.plot.getViewBox().viewRange()[0]
        a, b = ph.start_s * phase_flow._scale, ph.end_s * phase_flow._scale
        assert lo <= a and b <= hi
        assert (b - a) / (hi - lo) > 0.8, ph.name


def test_time_ticks_carry_their_own_unit():
    from trinity_desktop.ui.flow_readout import time_ticks

    assert [t for _, t in time_ticks(0.0, 4.16e-5, 1.0)] == ["0 s", "20 µs", "40 µs"]
    assert time_ticks(0.0, 41.0, 1e3) == [(0.0, "0 s"), (20.0, "20 ms"), (40.0, "40 ms")]   # axis in ms


def test_phases_cover_every_busy_bar_once_except_the_grouped_ones(train_results):
    from trinity_desktop.model.views.phases import phases

    items = stages(train_results.scenario, train_results)
    groups = phases(items, "train")
    counted = [i for ph in groups for i in ph.members]
    busy = [i for i, st in enumerate(items) if st.kind != "idle"]
    assert sorted(set(counted)) == busy
    # the optimizer phase ends the step
    assert groups[-1].name == "optimizer" and groups[-1].end_s == pytest.approx(train_results.time_total, rel=1e-9)


def test_inference_phases_with_kv_offload():
    from trinity_desktop.model.views.phases import phases

    sc = default_scenario().replace(kind="decode", gpus=8, batch=8, prompt_len=126976, gen_len=4096)
    r = evaluate(sc)
    names = [ph.name for ph in phases(stages(sc, r), "decode")]
    assert names[0] == "prefill" and "decode" in names
    if any(st.kind == "memory-transfer" for st in stages(sc, r)):
        assert {"KV offload", "KV onload"} <= set(names)


def test_play_walks_the_whole_step_in_under_15_seconds(qtbot, phase_flow):
    assert phase_flow.play_duration_ms() <= 15_000
    phase_flow.set_detailed(True)  # hundreds of bars: Play steps faster
    assert phase_flow.stage_count() > 100
    assert phase_flow.play_duration_ms() <= 15_000


def test_forward_and_backward_are_far_apart_in_colour():
    from trinity_desktop.ui.flow_panel import ROLE_COLORS

    def lab_lightness(hex_color):
        c = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
        return 116 * y ** (1 / 3) - 16

    f, b = ROLE_COLORS["forward"], ROLE_COLORS["backward"]
    assert abs(lab_lightness(f) - lab_lightness(b)) > 8
    rf, gf, bf = (int(f[i:i + 2], 16) for i in (1, 3, 5))
    rb, gb, bb = (int(b[i:i + 2], 16) for i in (1, 3, 5))
    assert bb - gb > 0 > bf - gf  # backward leans blue (purple), forward leans yellow (orange)


def test_toggling_detail_keeps_the_place(qtbot, phase_flow):
    phase_flow.select(2)  # backward
    phase_flow.set_detailed(True)
    assert phase_flow.current_stage().name.startswith(("backward", "recompute", "comm"))
    phase_flow.set_detailed(False)
    assert phase_flow.current_phase().name == "backward"


# --- outcomes panel ---------------------------------------------------------------------------------

def test_variants_and_binding_labels(outcomes):
    assert outcomes.variant_names() == [v.name for v in VARIANTS]
    labels = outcomes.binding_labels()
    assert labels["baseline"] == "memory"
    assert labels["+ KV quantisation"] == "n/a"
    for v in outcomes.variants():  # hot = constrained: each variant's binding resource is its highest pressure
        if v.results is not None:
            p = v.results.pressure
            assert labels[v.name] == max(("memory", "bandwidth", "compute"), key=lambda k: getattr(p, k))
    texts = outcomes.binding_texts()   # the applicable rows only: KV quantisation is listed apart
    assert len(texts) == len(VARIANTS) - 1
    base = outcomes.variants()[0]
    assert texts[0] == (f"{fmt_seconds(base.time_total)} ✗ {base.memory_total / 1e9:.0f} GB > "
                        f"{base.capacity / 1e9:.0f} GB")   # baseline does not fit: memory binds
    # selective recompute fits at 66 GB (memory pressure 0.83 binds); so does FlashAttention at 64 GB (0.79): its
    # compute pressure is 0.73 of the rate the H100's best GEMMs reach (pressure.achievable_compute)
    shown = [v.name for v in outcomes.variants() if v.results is not None]
    assert labels["+ FlashAttention"] == "memory" and texts[shown.index("+ FlashAttention")].endswith("· Memory")
    # listed apart, grouped by reason (each in full in the hover), and off the slides with the editing controls
    assert "No KV cache in a training step: + KV quantisation." in outcomes.na_label.text()
    assert "+ KV quantisation: no KV cache in a training step" in outcomes.na_label.toolTip()
    assert outcomes.na_label.property("editingControl") is True


def test_outcomes_title_states_the_fastest_that_fits(outcomes):
    fitting = [v for v in outcomes.variants() if v.results is not None and v.fits]
    best = min(fitting, key=lambda v: v.time_total)
    assert title_text(outcomes.time_plot) == (f"Baseline does not fit: {best.name} is the fastest that does, "
                                              f"{fmt_seconds(best.time_total)} per step")


def test_drawn_values_are_the_models(outcomes):
    rows = {v.name: v for v in outcomes.variants()}
    for name in ("baseline", "+ full recompute", "+ offload"):
        v = rows[name]
        drawn = outcomes.part_values(name)
        assert sum(drawn.values()) == pytest.approx(v.time_total, rel=1e-9)
        assert drawn["idle"] == pytest.approx(v.time_by_stage.get("pipeline_bubble", 0.0), rel=1e-9)
        assert drawn["compute"] == pytest.approx(v.time_by_stage["compute"], rel=1e-9)
    outlined = outcomes.outlined()
    assert "baseline" not in outlined and "+ FlashAttention" not in outlined  # memory binds: no time part outlined
    for name, (start, width) in outlined.items():          # compute binds: the compute part, from 0
        assert rows[name].binding == "compute"
        assert start == 0.0 and width == pytest.approx(rows[name].time_by_stage["compute"])
    with pytest.raises(ValueError):
        outcomes.part_values("+ KV quantisation")          # not drawn


def test_add_current_scenario(qtbot, outcomes, train_results):
    current = evaluate(train_results.scenario.replace(recompute="full", zero=3))
    outcomes.update_results(current)
    qtbot.mouseClick(outcomes.add_button, QtCore.Qt.MouseButton.LeftButton)
    assert outcomes.variant_names()[-1] == "current scenario 1"
    assert outcomes.binding_labels()["current scenario 1"] == current.bottleneck
    assert outcomes.part_values("current scenario 1")["compute"] == pytest.approx(current.time["compute"], rel=1e-9)
    outcomes.add_current()
    assert outcomes.variant_names()[-2:] == ["current scenario 1", "current scenario 2"]
    # the variants follow the new base scenario; added rows stay as they were
    assert len(outcomes.variant_names()) == len(VARIANTS) + 2
    qtbot.mouseClick(outcomes.clear_button, QtCore.Qt.MouseButton.LeftButton)
    assert outcomes.variant_names() == [v.name for v in VARIANTS]
    assert outcomes.add_button.toolTip() and outcomes.add_button.accessibleName()


def test_outcomes_hover_readouts(outcomes):
    t = outcomes.hover_text_at("time", 1.0, 0.0)
    assert t.startswith("baseline") and " s" in t and "does not fit" in t
    m = outcomes.hover_text_at("time", 1.0, 1.0)
    assert "+ selective recompute" in m and "GB" in m and "HBM" in m
    assert outcomes.hover_text_at("time", 0.0, 7.0) == ""   # KV quantisation is not a bar
    for text in (t, m):
        assert "nan" not in text.lower()


def test_every_bar_text_ends_inside_the_view(outcomes):
    vb = outcomes.time_plot.getViewBox()
    right = vb.sceneBoundingRect().right()
    for item in outcomes.bind_texts[:len(outcomes.binding_texts())]:
        assert item.sceneBoundingRect().right() <= right + 1


def test_outcomes_for_inference(qtbot, infer_results):
    panel = OutcomesPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 650)
    panel.update_results(infer_results)
    labels = panel.binding_labels()
    assert labels["baseline"] == "bandwidth" and labels["+ KV quantisation"] == "bandwidth"
    assert sum(1 for v in labels.values() if v == "n/a") == 6


def test_fonts_and_no_nan_on_screen(flow, outcomes):
    for w in (flow, outcomes):
        for label in w.findChildren(QtWidgets.QLabel):
            assert label.font().pointSize() >= 11
            assert "nan" not in label.text().lower().replace("nan>", "")
    for item in outcomes.bind_texts:
        assert not any(math.isnan(c) for c in (item.pos().x(), item.pos().y()))


def test_phase_readout_states_hidden_and_exposed_communication(qtbot, shown_panel):
    """With DualPipe-style overlap on (formulas/overlap.py), the forward phase says how much communication hid."""
    from trinity_desktop.model.inputs import presets

    hw, arch = presets.hardware_presets()["h800-sxm"], presets.model_presets()["mixtral-8x7b"]
    sc = default_scenario().replace(hardware=hw, model=arch, gpus=128, gpus_per_node=4, tp=1, pp=4, ep=8, cp=1,
                                    zero=1, micro_batch=1, global_batch=256, seq_len=4096, ep_comm_overlap=True)
    r = evaluate(sc)
    panel = shown_panel(FlowPanel, r)
    qtbot.keyClick(panel, QtCore.Qt.Key.Key_Right)
    text = panel.detail_text()
    assert "hidden behind compute" in text and "exposed" in text and "nan" not in text.lower()
    assert r.train["communication_overlapped"] > 0


def test_breakdown_labels_the_hidden_communication(shown_panel):
    """The time bar's exposed-communication label adds the communication hidden behind compute."""
    from trinity_desktop.model.inputs import presets
    from trinity_desktop.ui.breakdown_panel import BreakdownPanel

    hw, arch = presets.hardware_presets()["h800-sxm"], presets.model_presets()["mixtral-8x7b"]
    sc = default_scenario().replace(hardware=hw, model=arch, gpus=128, gpus_per_node=4, tp=1, pp=4, ep=8, cp=1,
                                    zero=1, micro_batch=1, global_batch=256, seq_len=4096, ep_comm_overlap=True)
    panel = shown_panel(BreakdownPanel, evaluate(sc))
    texts = [item.toPlainText() for item in panel.time_bar.labels]
    exposed = [t for t in texts if t.startswith("Exposed communication")]
    assert len(exposed) == 1 and "hidden)" in exposed[0] and "nan" not in exposed[0].lower()


def test_thin_bars_get_no_separator_that_would_paint_them_out(qtbot):
    """DeepSeek-V3's decode groups each spend 47 ms of a 20.8-s request in the EP all-to-all: under a 1.5-px
    separator in the plot's background colour those bars vanished at 1366 (an empty lane). Separators are
    drawn only while every bar is at least 1% of the request."""
    from PySide6 import QtCore

    from trinity_desktop import session_file
    from trinity_desktop.deck import example_decks

    (path,) = [p for p in example_decks() if p.stem == "serving"]
    _, deck = session_file.load(path)
    panel = FlowPanel()
    qtbot.addWidget(panel)
    panel.update_results(evaluate(deck.slides[0].scenario))
    assert any(lane == "EP all-to-all" for lane, *_ in panel.bars())
    assert panel.bars_item.opts["pen"].style() == QtCore.Qt.PenStyle.NoPen
    panel.update_results(evaluate(default_scenario().replace(kind="decode", gpus=8)))   # 33 bars, each >= 2.6%
    assert panel.bars_item.opts["pen"].style() != QtCore.Qt.PenStyle.NoPen
