"""Roofline and tiled-IO panels: what they draw equals the model, hover read-outs, log10 text placement."""

import dataclasses
import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.formulas import flash_io
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.uncertainty import propagate
from trinity_desktop.model.views.roofline import decode_sweep, roofline  # noqa: E402
from trinity_desktop.ui.plot_widgets import si_decade, title_text  # noqa: E402
from trinity_desktop.ui.roofline_panel import SWEEP_GEMM, RooflinePanel  # noqa: E402
from trinity_desktop.ui.tiled_io_panel import TiledIOPanel  # noqa: E402
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds  # noqa: E402

HW = presets.hardware_presets()
MODELS = presets.model_presets()


@pytest.fixture(scope="module")
def default_results():
    return evaluate(default_scenario())


@pytest.fixture(scope="module")
def decode_results():
    return evaluate(Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=16))


@pytest.fixture
def panel(qtbot):
    p = RooflinePanel()
    qtbot.addWidget(p)
    p.set_hardware_choices(HW)
    p.resize(1000, 650)
    p.show()
    return p


def test_renders_every_ceiling_and_point(panel, default_results):
    panel.update_results(default_results)
    r = roofline(default_results.scenario)
    drawn = panel.ceiling_items()
    assert set(drawn) == {c.name for c in r.ceilings}
    for c in r.ceilings:
        xs, ys = drawn[c.name]
        assert panel.ceiling_curves[c.name].isVisible()
        if c.kind == "compute":
            np.testing.assert_allclose(ys, c.value)                 # horizontal, in FLOP/s (not log10)
            assert xs[0] == pytest.approx(max(c.value / 3.35e12, panel._x_range[0]))
        else:
            np.testing.assert_allclose(ys / xs, c.value)            # diagonal: y = bandwidth · x
    # The HBM roof meets the BF16 roof at the ridge, 295 FLOP/B.
    assert panel.ridge_marker.getOriginalDataset()[0][0] == pytest.approx(295.34, abs=0.01)
    points = panel.point_items()
    assert list(points) == [p.name for p in r.points]
    for p in r.points:
        x, y = points[p.name]
        assert x == pytest.approx(p.intensity) and y == pytest.approx(p.attainable_flops_per_s)
    assert all(math.isfinite(v) for xy in points.values() for v in xy)


def test_log_axis_text_sits_at_log10_coordinates(panel, default_results):
    panel.update_results(default_results)
    r = roofline(default_results.scenario)
    for c in r.ceilings:
        label = panel.ceiling_label(c.name)
        pos = label.pos()
        if c.kind == "compute":
            assert pos.y() == pytest.approx(math.log10(c.value))
            assert c.name in label.toPlainText()
        else:
            assert pos.y() - pos.x() == pytest.approx(math.log10(c.value))   # on the line y = x + log10(bw)
    ridge = panel.ridge_text
    assert "ridge 295 FLOP/B" in ridge.toPlainText()
    assert ridge.pos().x() == pytest.approx(math.log10(r.ridge_flop_per_byte), abs=0.05)
    # The view range is in log10 units too, and the tick labels read as decades with SI prefixes.
    (x0, x1), (y0, y1) = panel.plot.getViewBox().viewRange()
    assert y0 <= math.log10(989.4e12) <= y1 and x0 < 0 < x1
    assert panel.plot.getAxis("left").logTickStrings([12.0, 12.5, 15.0], 1.0, 1.0) == ["1 T", "", "1 P"]
    assert si_decade(1e13) == "10 T" and si_decade(0.1) == "0.1"


def test_hover_shows_the_readout(panel, qtbot, default_results):
    panel.update_results(default_results)
    r = roofline(default_results.scenario)
    for p in r.points:
        text = panel.hover_text_for(p.name)
        assert p.name in text and "FLOPs:" in text and "bytes:" in text and "FLOP/B" in text
        assert "FLOP/s" in text and "predicted time" in text and p.bound_by in text
    p = r.point("TP all-reduce")
    assert "scale-up" in panel.hover_text_for(p.name) and "0.25 FLOP/B" in panel.hover_text_for(p.name)
    # Through the scene: moving the mouse onto a marker shows it and emits pointHovered.
    qtbot.waitExposed(panel)
    from PySide6 import QtCore

    vb = panel.plot.getViewBox()
    target = r.point("optimizer step")
    scene_pos = vb.mapViewToScene(QtCore.QPointF(math.log10(target.intensity),
                                                 math.log10(target.attainable_flops_per_s)))
    with qtbot.waitSignal(panel.pointHovered, timeout=1000) as blocker:
        panel.plot.scene().sigMouseMoved.emit(scene_pos)
    assert blocker.args == ["optimizer step"]
    assert panel.hover.item.isVisible() and "optimizer step" in panel.hover.item.toPlainText()
    with qtbot.waitSignal(panel.pointHovered, timeout=1000) as blocker:
        panel.hover.leave()
    assert blocker.args == [""]


def test_changing_the_hardware_moves_the_roofs(panel, default_results):
    panel.update_results(default_results)
    before = panel.ceiling_items()
    items = dict(panel.ceiling_curves)
    a100 = evaluate(default_results.scenario.replace(hardware=HW["a100-80gb-sxm"]))
    panel.update_results(a100)
    after = panel.ceiling_items()
    assert after["HBM"][1][0] / after["HBM"][0][0] == pytest.approx(2.039e12)
    assert before["HBM"][1][0] / before["HBM"][0][0] == pytest.approx(3.35e12)
    assert after["BF16/FP16"][1][0] == pytest.approx(312e12)
    assert "FP8/INT8" not in after and not panel.ceiling_curves["FP8/INT8"].isVisible()
    assert panel.ceiling_curves["HBM"] is items["HBM"]              # long-lived items, updated in place
    assert "ridge 153 FLOP/B" in panel.ridge_text.toPlainText()
    assert panel.ceiling_label("HBM").pos().y() - panel.ceiling_label("HBM").pos().x() == pytest.approx(
        math.log10(2.039e12))


def test_decode_sweep_moves_the_point(panel, decode_results):
    panel.update_results(decode_results)
    panel.set_sweep("batch", 1)
    x1, y1 = panel.decode_marker()
    assert x1 == pytest.approx(1.0, rel=0.01) and y1 == pytest.approx(3.35e12, rel=0.01)
    panel.set_sweep("batch", 64)
    x64, _ = panel.decode_marker()
    assert x64 == pytest.approx(64 * x1, rel=0.05)
    panel.set_sweep("batch", 4096)
    x, y = panel.decode_marker()
    assert x > 295 and y == pytest.approx(989.4e12)               # walked past the ridge: compute-bound
    assert "compute-bound from batch ≈ 296" in panel.sweep_layer.crossing_text.toPlainText()
    assert "compute" in panel.hover_text_for(SWEEP_GEMM)
    # The trace is the model's sweep.
    s = decode_sweep(decode_results.scenario, batch=panel.sweep_layer.values())
    xs = np.concatenate([panel.sweep_layer.gemm_trace.getOriginalDataset()[0], panel.sweep_layer.gemm_trace_nofit.getOriginalDataset()[0]])
    assert set(np.round(xs, 6)) == set(np.round(s.intensity, 6))
    # Context mode: the KV-fit limit is marked, and the step point moves left as the context grows.
    panel.set_sweep("context", 2048)
    sx_short, _ = panel.decode_step_marker()
    panel.set_sweep("context", 1 << 20)
    sx_long, _ = panel.decode_step_marker()
    assert sx_long < sx_short
    limit = panel.sweep().kv_fit_limit_context
    assert panel.sweep_layer.kv_marker.isVisible() and f"{limit / 1e3:.3g}k tokens" in panel.sweep_layer.kv_text.toPlainText()
    with pytest.raises(ValueError):
        panel.set_sweep("nope", 1)


def test_title_states_the_binding_roof_and_the_time(panel, default_results, decode_results):
    """Decode streams its weights from HBM: the title says so, with the model's time per output token."""
    panel.update_results(decode_results)
    sc = decode_results.scenario
    assert title_text(panel.plot) == (f"Decode is HBM-bound at batch {sc.batch}: "
                                      f"{fmt_seconds(decode_results.time_total)} per token")
    panel.update_results(default_results)   # training: its GEMMs run at the compute peak
    assert title_text(panel.plot) == (f"Training is compute-bound at global batch {default_results.scenario.global_batch}"
                                      f": {fmt_seconds(default_results.time_total)} per step")


def test_compare_hardware_overlays_up_to_three(panel, default_results):
    panel.update_results(default_results)
    panel.set_compared_hardware(["a100-80gb-sxm", "mi300x", "b200", "h200-sxm"])
    assert panel.compared_hardware() == ["a100-80gb-sxm", "mi300x", "b200"]
    hbm = panel.compared_ceiling_items("a100-80gb-sxm")["HBM"]
    assert hbm[1][0] / hbm[0][0] == pytest.approx(2.039e12)
    pts = panel.compared_point_items("mi300x")
    assert set(pts) == {p.name for p in roofline(default_results.scenario.replace(hardware=HW["mi300x"])).points}
    assert panel.compare_layer.points[2].isVisible()
    name = "optimizer step @ b200"
    assert "NVIDIA B200" in panel.hover_text_for(name)
    assert not panel.compare_layer.actions["h200-sxm"].isEnabled()       # the fourth choice is disabled
    panel.set_compared_hardware([])
    assert panel.compared_hardware() == [] and not panel.compare_layer.points[0].isVisible()


def test_tiled_io_panel(qtbot, default_results):
    p = TiledIOPanel()
    qtbot.addWidget(p)
    p.resize(1000, 650)
    p.update_results(default_results)
    sc = default_results.scenario
    m = sc.hardware.sram_per_core_bytes
    heads = sc.model.heads / sc.tp
    t = p.totals()
    assert t["standard"] == pytest.approx(float(flash_io.standard_attention_hbm_bytes(
        sc.seq_len, 128, heads, sc.micro_batch, masked=True)))
    assert t["flash"] == pytest.approx(float(flash_io.flash_attention_hbm_bytes(sc.seq_len, 128, heads,
                                                                                 sc.micro_batch, m)))
    bc, br = flash_io.block_sizes(m, 128)
    assert p.grid_shape() == (math.ceil(8192 / br), math.ceil(8192 / bc))
    assert p.drawn_shape() == p.grid_shape()
    assert p.cell_values("flash").sum() * heads * sc.micro_batch == pytest.approx(t["flash"])
    ratio = f"{t['standard'] / t['flash']:.1f}× fewer"
    assert ratio in p.totals_label.text()
    # The finding is the title: the ratio and both totals with their unit; the bars are the totals.
    title = title_text(p.plots["bytes"])
    assert ratio in title and fmt_bytes(t["flash"]) in title and fmt_bytes(t["standard"]) in title
    assert p.bar_values() == pytest.approx(t)
    # One query block's row: every key tile, standard above tiled (Theorem 2: the tiling moves fewer bytes).
    row_std, row_fa = p.tile_bars["standard"].opts["height"], p.tile_bars["flash"].opts["height"]
    assert len(row_std) == len(row_fa) == p.grid_shape()[1]
    assert (row_std[:-1] > row_fa[:-1]).all() and row_std.sum() > row_fa.sum()   # the last tile may be partial
    assert f"visits {p.grid_shape()[1]} key tiles" in title_text(p.plots["tiles"])
    # A long prompt is drawn aggregated, and says so.
    long = evaluate(Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3.1-70b"], kind="prefill", gpus=8,
                             prompt_len=131072))
    p.update_results(long)
    assert max(p.drawn_shape()) <= 256 < max(p.grid_shape())
    assert "tiles per cell" in p.note_label.text() and "each cell sums" in p.note_label.toolTip()
    assert "FlashAttention" in p.hover_text_at("flash", 0.5, 0.5)
    assert p.decode_kv_read_bytes() == 0.0                  # prefill: no decode step


def test_tiled_io_decode_states_the_decode_step(qtbot, default_results):
    """A decode scenario's bars are its prompt's prefill; the decode step's KV bytes are said beside them."""
    p = TiledIOPanel()
    qtbot.addWidget(p)
    dec = evaluate(dataclasses.replace(default_results.scenario, kind="decode"))
    p.update_results(dec)
    kv = {q.name: q.bytes for q in roofline(dec.scenario).points}["decode KV-cache reads"]
    assert p.decode_kv_read_bytes() == pytest.approx(kv) and kv > 0
    assert fmt_bytes(kv) + "</b> per output token" in p.totals_label.text()
    assert "per layer of prefill" in title_text(p.plots["bytes"])


@pytest.fixture(scope="module")
def decode_bands(decode_results):
    return propagate(decode_results.scenario, samples=64, sensitivity=False)


@pytest.mark.parametrize("bands", [False, True], ids=["no-band", "band"])
@pytest.mark.parametrize("size", [(517, 687), (784, 503)], ids=["1366-dock", "1920-dock"])
def test_no_compute_label_has_a_line_through_it(panel, qtbot, default_results, decode_results, decode_bands, size,
                                                 bands):
    """H100's roofs are a factor 2 apart (FP8 1979, BF16 989, TF32 495 TFLOP/s) and the band's flat edges (peak x
    compute_efficiency at its range's ends) run between them: no label's glyphs sit on another roof's line or a
    band edge drawn through them; a label that must sit over one (the scenario format's always has a place) is on
    the plot's background, over the line, which it hides there."""
    panel.resize(*size)
    panel.show()
    qtbot.waitExposed(panel)
    results = decode_results if bands else default_results
    panel.update_results(results)
    levels = []
    if bands:
        panel.set_bands(decode_bands)
        levels = [v for v, _ in panel.band_layer.flat_edges()]
        assert len(levels) == 2
    vb = panel.plot.getViewBox()
    roofs = [c for c in panel.roofline_result().ceilings if c.kind == "compute"]
    lines = {c.name: (vb.mapViewToScene(pg.Point(0.0, math.log10(c.value))).y(), panel.ceiling_curves[c.name])
             for c in roofs}
    lines |= {f"band edge {i}": (vb.mapViewToScene(pg.Point(0.0, math.log10(v))).y(), panel.band_layer.fill.low)
              for i, v in enumerate(levels)}
    for c in roofs:
        label = panel.ceiling_label(c.name)
        if not label.isVisible():
            continue
        box = label.mapRectToScene(label.boundingRect())
        glyphs = box.adjusted(0, 4, 0, -4)   # a TextItem's box has a 4 px margin round its glyphs
        crossed = [n for n, (y, _) in lines.items() if n != c.name and glyphs.top() < y < glyphs.bottom()]
        if crossed:
            assert label.knockout and label.fill.color().name() == panel.plot_widget.backgroundBrush().color().name(), \
                f"{c.name}'s label sits on the {crossed} line"
            assert all(label.zValue() > lines[n][1].zValue() for n in crossed)
    main = panel.ceiling_label("BF16/FP16")
    assert main.isVisible() and "BF16" in main.toPlainText() and "BF16/FP16" not in panel.hidden_labels
