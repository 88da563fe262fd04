"""Residency and matrix panels: what they draw equals the model, and they follow context and policy changes."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtWidgets  # noqa: E402

from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.step.kv_residency import residency_curve  # noqa: E402
from trinity_desktop.ui.matrix_panel import MatrixPanel  # noqa: E402
from trinity_desktop.ui.plot_widgets import title_text  # noqa: E402
from trinity_desktop.ui.residency_panel import ResidencyPanel  # noqa: E402
from trinity_desktop.ui.units import fmt_bytes  # noqa: E402


@pytest.fixture(scope="module")
def default_sc():
    from trinity_desktop.defaults import default_scenario
    return default_scenario()


@pytest.fixture(scope="module")
def serve():
    hw, m = presets.hardware_presets(), presets.model_presets()
    return Scenario(hardware=hw["h100-sxm"], model=m["llama-3-70b"], kind="decode", gpus=8, batch=16,
                    prompt_len=4096, gen_len=1024)


@pytest.fixture
def residency(shown_panel):
    return shown_panel(ResidencyPanel)


@pytest.fixture
def matrix(shown_panel):
    return shown_panel(MatrixPanel)


def test_residency_draws_the_model_for_the_default_scenario(residency, default_sc):
    residency.update_results(evaluate(default_sc))
    areas = residency.area_series()
    assert set(areas) == {"hbm", "host", "cxl", "ssd"}
    x = areas["hbm"][0]
    assert x[0] == 4096 and x[-1] == 1 << 20
    curve = residency_curve(default_sc, context=x, sessions=default_sc.batch)
    for name, (_, y) in areas.items():
        np.testing.assert_allclose(y, curve.resident[name])
        assert np.all(np.isfinite(y))
    xs, t = residency.step_time_series()
    assert np.all(np.diff(t) >= 0) and np.all(np.isfinite(t))
    assert residency.current_marker_x() == pytest.approx(default_sc.prompt_len + default_sc.gen_len)
    # capacity line for HBM = HBM left for the KV cache after weights and the 10% reserve
    hbm_line = residency.capacity_lines()["hbm"]
    assert hbm_line == pytest.approx((80e9 - 140.6e9 / 8 - 8e9) / 1e9, rel=0.01)
    text = residency.hover_text_at(1 << 20)
    assert "GB" in text and "tokens/s" in text and "nan" not in text.lower()
    residency.grab()


@pytest.mark.parametrize("size", [(517, 703), (1000, 650)])
def test_every_capacity_line_drawn_is_named(shown_panel, qtbot, default_sc, size):
    """In the 1366 layout (a 517 × 703 dock) only "CXL pool full" was named: the HBM line runs along the HBM
    fill's edge, where no name fits off the curves, and "Host DRAM full: 304 GB" was wider than the gap between
    the "current" line and the step curve. The caption names every line, cumulative as drawn, and the host
    line's own name reads "DRAM full" to fit."""
    panel = shown_panel(ResidencyPanel, evaluate(default_sc), size)
    qtbot.waitUntil(lambda: panel.cap_labels["host"].isVisible(), timeout=3000)
    lines = panel.capacity_lines()
    assert {"hbm", "host", "cxl"} <= set(lines)
    caption = panel.caption.text()
    assert "Dashed: each tier full, counted from 0 (HBM " in caption
    for name, gb in lines.items():
        assert f"{gb:,.0f} GB" in caption, name
    assert panel.cap_labels["host"].toPlainText().startswith("DRAM full: ")


def test_a_capped_cache_is_drawn_far_under_the_hbm_line(residency, serve):
    """StreamingLLM caps the cache at 1.3 GB: the chart was one green field under a line at the cap named
    "HBM full: 1 GB". The HBM line stays where HBM is full (what weights and the reserve leave), the y axis
    reaches it, and the cache is the thin band under it."""
    sc = serve.replace(kv_policy="streaming", kv_window=4096, kv_sinks=4)
    residency.update_results(evaluate(sc))
    hbm_free = (80e9 - 140.6e9 / 8 - 8e9) / 1e9
    assert residency.capacity_lines()["hbm"] == pytest.approx(hbm_free, rel=0.01)
    assert residency.cap_labels["hbm"].toPlainText() == f"HBM full: {hbm_free:,.0f} GB"
    (_, _), (_, top) = residency.plot.getViewBox().viewRange()
    cache = max(float(y.max()) for _, y in residency.area_series().values()) / 1e9
    assert top > hbm_free and cache < 0.05 * top


def test_residency_follows_context_policy_and_axis(residency, serve):
    residency.update_results(evaluate(serve))
    full_total = sum(y for _, y in residency.area_series().values())
    residency.update_results(evaluate(serve.replace(kv_policy="streaming")))
    stream_total = sum(y for _, y in residency.area_series().values())
    assert np.all(stream_total <= full_total) and stream_total[-1] < full_total[-1] / 100
    assert residency.kv_combo.currentText() == "streaming"
    residency.update_results(evaluate(serve.replace(prompt_len=100_000)))
    assert residency.current_marker_x() == pytest.approx(101_024)
    residency.set_axis("sessions")
    x, _ = residency.area_series()["hbm"]
    assert x[0] == 1 and x[-1] == 1024
    assert residency.current_marker_x() == pytest.approx(16)
    residency.set_axis("context")
    residency.set_policy("evict")
    areas = residency.area_series()
    assert areas["host"][1].max() == 0 and areas["ssd"][1].max() == 0
    residency.set_right_axis("tokens_per_s")
    with pytest.raises(ValueError):
        residency.set_axis("batch")


def test_residency_emits_policy_edits_and_is_accessible(residency, serve, qtbot):
    residency.update_results(evaluate(serve))
    with qtbot.waitSignal(residency.editRequested, timeout=1000) as sig:
        residency.kv_combo.activated.emit(2)
    assert sig.args == [{"kv_policy": "streaming"}]
    for w in residency.findChildren(QtWidgets.QComboBox):
        assert w.toolTip() and w.accessibleName()
    residency.tabs.setCurrentIndex(1)
    chart = residency.pyramid_graphics
    order = chart.tier_order()                               # fastest first: SRAM, HBM, ... NVMe
    latencies = [t.latency_s for t in chart._tiers]
    assert order[0] == "sram" and latencies == sorted(latencies)
    ticks = [text for _, text in chart.plot.getAxis("left")._tickLevels[0]]
    assert ticks[0].startswith("On-chip SRAM\n") and all("…" not in t for t in ticks)
    xs, ys = chart.points.getData()
    assert len(set(ys)) == len(ys)                           # one row per tier: no point on another
    assert residency.pyramid_labels[1].toPlainText() == fmt_bytes(chart._tiers[1].capacity_bytes)
    assert title_text(chart.plot).startswith("HBM streams ")


def test_matrix_panel_kv_and_sync(matrix, default_sc, qtbot):
    matrix.update_results(evaluate(default_sc))
    grid = matrix.kv_grid()
    assert grid.shape == (8, default_sc.prompt_len + default_sc.gen_len)
    assert np.all(grid == 1)                                  # full cache: every token kept
    matrix.update_results(evaluate(default_sc.replace(kv_policy="h2o")))
    grid = matrix.kv_grid()
    assert grid.mean() == pytest.approx(0.2, abs=1e-3)
    assert matrix.synthetic_label.isVisibleTo(matrix) and "seeded" in matrix.synthetic_label.text()
    matrix.update_results(evaluate(default_sc.replace(kv_policy="window", kv_window=1024, kv_dtype="fp8")))
    assert set(np.unique(matrix.kv_grid())) == {0, 2}
    assert not matrix.synthetic_label.isVisibleTo(matrix)

    matrix.set_view("sync")
    assert matrix.current_view() == "Dense gradient sync"
    M = matrix.sync_matrix()
    n = default_sc.dp
    assert M.shape == (n, n)
    np.testing.assert_allclose(M.sum(axis=1), 2 * (n - 1) / n * matrix.sync_info()["nbytes"])
    matrix.set_algorithm("in-network")
    M = matrix.sync_matrix()
    assert M.shape == (n + 1, n + 1)
    np.testing.assert_allclose(M[:n, n], (n - 1) / (n + 1) * matrix.sync_info()["nbytes"])
    kv_text, sync_text = matrix.summary_texts()
    assert "GB" in kv_text and "scale-out" in sync_text and "nan" not in sync_text.lower()
    assert matrix._sync_hover(n + 0.5, 0.5).startswith("rank 0")
    for w in matrix.findChildren(QtWidgets.QComboBox):
        assert w.toolTip() and w.accessibleName()
    matrix.grab()


def test_hierarchy_capacity_texts_keep_off_the_line(shown_panel, serve, qtbot):
    """#21: "250 GB" (host DRAM) sat on the dashed line at 1920x1080: every capacity text is drawn, whole
    inside the plot, on no point and no piece of the line."""
    from trinity_desktop.ui import label_layout as ll
    from trinity_desktop.ui.curve_obstacles import line_boxes

    residency = shown_panel(ResidencyPanel, evaluate(serve), size=(784, 470))
    residency.tabs.setCurrentIndex(1)
    chart = residency.pyramid_graphics
    qtbot.waitExposed(chart)
    chart.show_tiers(serve.hardware)
    vb = chart.plot.getViewBox()
    bounds = ll.view_bounds(vb)
    line = line_boxes([chart.line], bounds)
    xs, ys = chart.points.getData()
    points = [ll.scene_point(vb, float(x), float(y)) for x, y in zip(xs, ys, strict=True)]
    for item in chart.labels[:len(points)]:
        assert item.isVisible()
        r = item.mapRectToScene(item.boundingRect())
        box = (r.left(), r.top(), r.right(), r.bottom())
        assert ll.inside(box, bounds)
        assert not any(ll.overlaps(box, b, ll.PAD) for b in line)
        assert not any(ll.overlaps(box, (px - 9, py - 9, px + 9, py + 9), ll.PAD) for px, py in points)
