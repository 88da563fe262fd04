"""Breakdown and heatmap panels: what they draw equals what the model computed; hover, click, focus."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtGui  # noqa: E402

from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views.workloads import evaluate_library  # noqa: E402
from trinity_desktop.ui import plot_widgets as pw  # noqa: E402
from trinity_desktop.ui import theme  # noqa: E402
from trinity_desktop.ui.breakdown_panel import BreakdownPanel  # noqa: E402
from trinity_desktop.ui.heatmap_panel import NA_VALUE, HeatmapPanel, row_heat, tick_name  # noqa: E402


@pytest.fixture(scope="module")
def hw():
    return presets.hardware_presets()


@pytest.fixture(scope="module")
def models():
    return presets.model_presets()


@pytest.fixture(scope="module")
def train_results(hw, models):
    sc = Scenario(hardware=hw["h100-sxm"], model=models["llama-3-70b"], kind="train", gpus=64, tp=8, pp=2,
                  global_batch=256, seq_len=8192)
    return evaluate(sc)


@pytest.fixture(scope="module")
def nofit_results(hw, models):
    sc = Scenario(hardware=hw["h100-sxm"], model=models["llama-3.1-405b"], kind="train", gpus=8, tp=8, pp=1,
                  zero=0, recompute="none", global_batch=8, seq_len=8192)
    return evaluate(sc)


@pytest.fixture
def breakdown(shown_panel):
    return shown_panel(BreakdownPanel, size=(900, 600))


@pytest.fixture
def heatmap(shown_panel):
    return shown_panel(HeatmapPanel, size=(900, 600))


def _no_nan(values):
    assert np.all(np.isfinite(np.asarray(list(values), dtype=float)))


# ---------------------------------------------------------------------------------------------- breakdown
def test_breakdown_draws_the_model_numbers(breakdown, train_results):
    r = train_results
    breakdown.update_results(r)
    mem = breakdown.memory_values()
    assert list(mem) == list(r.memory)
    for name, value in r.memory.items():
        assert mem[name] == pytest.approx(value / 1e9, rel=1e-12)
    assert breakdown.capacity_gb() == pytest.approx(r.scenario.hardware.hbm_bytes / 1e9)
    times = breakdown.time_values()
    assert list(times) == list(r.time)
    for name, value in r.time.items():
        assert times[name] == pytest.approx(value, rel=1e-12)
    _no_nan(mem.values())
    _no_nan(times.values())
    assert breakdown.time_unit() == "s"
    assert "Step time" in breakdown.time_plot.titleLabel.text


def test_breakdown_summary_shows_mfu_and_bottleneck(breakdown, train_results):
    breakdown.update_results(train_results)
    text = breakdown.summary_text()
    assert f"{100 * train_results.train['mfu']:.1f}%" in text
    assert "tokens/s" in text
    assert train_results.bottleneck in text
    assert f"{100 * train_results.train['mfu']:.1f}%" in breakdown.summary_label.text()
    assert breakdown.does_not_fit_text() == ""
    assert not breakdown.need_line.isVisible()


def test_breakdown_does_not_fit(breakdown, nofit_results, train_results):
    r = nofit_results
    assert not r.fits
    breakdown.update_results(r)
    text = breakdown.does_not_fit_text()
    assert "does not fit" in text.lower()
    assert f"{r.memory_total / 1e9:.1f} GB" in text
    assert breakdown.need_line.isVisible()
    assert breakdown.need_line.value() == pytest.approx(r.memory_total / 1e9)
    assert "needs" in breakdown.need_text.toPlainText()
    # Back to a fitting scenario: the red marks go away, the items are the same objects.
    line, bar = breakdown.need_line, breakdown.memory_bar.bar
    breakdown.update_results(train_results)
    assert breakdown.does_not_fit_text() == ""
    assert not breakdown.need_line.isVisible()
    assert breakdown.need_line is line and breakdown.memory_bar.bar is bar


def test_breakdown_hover_text(breakdown, train_results):
    r = train_results
    breakdown.update_results(r)
    gb = {n: v / 1e9 for n, v in r.memory.items()}
    # Middle of the weights segment (the first, at the bottom of the bar).
    text = breakdown.hover_text_at("memory", 0.0, gb["weights"] / 2)
    assert theme.label_for("weights") in text and "GB" in text
    assert f"{gb['weights']:.2f} GB" in text and "%" in text
    # Middle of the activations segment (the last one).
    y = sum(gb.values()) - gb["activations"] / 2
    assert theme.label_for("activations") in breakdown.hover_text_at("memory", 0.0, y)
    assert breakdown.hover_text_at("memory", 2.0, y) == ""          # beside the bar: nothing
    t = breakdown.hover_text_at("time", 0.0, r.time["compute"] / 2)
    assert theme.label_for("compute") in t and " s" in t and "%" in t
    with pytest.raises(ValueError):
        breakdown.hover_text_at("nope", 0, 0)


def test_breakdown_inference_kinds(breakdown, hw, models):
    for kind, title in (("prefill", "Prefill time"), ("decode", "Time per output token")):
        r = evaluate(Scenario(hardware=hw["h100-sxm"], model=models["llama-3-70b"], kind=kind, gpus=8))
        breakdown.update_results(r)
        assert title in breakdown.time_plot.titleLabel.text
        assert list(breakdown.memory_values()) == list(r.memory)
        for name, value in r.time.items():
            assert breakdown.time_values()[name] == pytest.approx(value, rel=1e-12)
        assert breakdown.time_unit() == "ms"
        summary = breakdown.summary_text()
        assert "TTFT" in summary and "TPOT" in summary and "tokens/s" in summary and "/token" in summary
        assert "nan" not in summary.lower()
        t = breakdown.hover_text_at("time", 0.0, breakdown.time_bar.values[0] / 2)
        assert "ms" in t


def test_breakdown_accessibility(breakdown):
    assert breakdown.accessibleName()
    for w in (breakdown.memory_widget, breakdown.time_widget, breakdown.summary_label, breakdown.fit_label):
        assert w.accessibleName()
    assert breakdown.summary_label.toolTip() and breakdown.fit_label.toolTip()
    assert set(breakdown.plots) == {"memory", "time"}


# ---------------------------------------------------------------------------------------------- heatmap
def test_heatmap_cells_equal_pressures(heatmap, hw):
    rows = evaluate_library(hw["h100-sxm"])
    heatmap.update_rows(rows, hw["h100-sxm"].name)
    values = heatmap.cell_values()
    assert values.shape == (len(rows), 3)
    assert np.all(np.isfinite(values))
    for i, row in enumerate(rows):
        assert row.results is not None
        np.testing.assert_allclose(values[i], row.results.pressure.as_tuple())
    assert heatmap.row_keys() == [r.key for r in rows]
    assert hw["h100-sxm"].name in heatmap.plot.titleLabel.text
    assert heatmap.cell_label(0, 0) == f"{values[0, 0]:.2f}"
    # The image drawn is columns x rows (pyqtgraph's image[x, y]).
    assert heatmap.image_item.image.shape[:2] == (3, len(rows))


def test_binding_cells_are_the_hottest_of_their_row(heatmap, hw):
    """A row whose binding pressure is 0.43 reads as hot as one at 1.0: colour is pressure ÷ the row's highest."""
    values = np.array([[0.43, 0.19, 0.40], [1.0, 0.08, 0.23], [NA_VALUE] * 3])
    heat = row_heat(values)
    assert heat[0] == pytest.approx([1.0, 0.19 / 0.43, 0.40 / 0.43]) and heat[1, 0] == 1.0
    assert (heat[2] == NA_VALUE).all()
    rows = evaluate_library(hw["h100-sxm"])
    heatmap.update_rows(rows, hw["h100-sxm"].name)
    image = heatmap.image_item.image                       # (column, row, rgba)
    top = heatmap.cmap.map(np.array([1.0]), mode="byte")[0]
    for i, row in enumerate(rows):
        if row.results is not None:
            j = ("compute", "bandwidth", "memory").index(row.results.bottleneck)
            assert tuple(image[j, i]) == tuple(top)


def test_row_names_are_whole_words_never_cut():
    metrics = QtGui.QFontMetrics(pw.font())
    name = "GPT-3 175B, Korthikanti et al. Table 3"
    assert tick_name(name, 2, 400, metrics) == name                      # room: the full name, one line
    assert tick_name(name, 1, 120, metrics) == "GPT-3 175B"              # no room: the short name
    two = tick_name("Split computing: the cloud half of an edge request", 2, 90, metrics)
    assert "…" not in two and two.replace("\n", " ") in ("Split computing", "Split computing: the cloud half "
                                                          "of an edge request")


def test_heatmap_na_rows_on_a_laptop(heatmap, hw):
    rows = evaluate_library(hw["m4-max"])
    heatmap.update_rows(rows, hw["m4-max"].name)
    values = heatmap.cell_values()
    na = [i for i, r in enumerate(rows) if r.results is None]
    assert na, "the laptop should be unable to run some library workloads"
    for i in na:
        assert np.all(values[i] == -1)
        assert heatmap.cell_label(i, 0) == "n/a"
        assert rows[i].error and rows[i].error in heatmap.hover_text_at(i, 0)
    ok = [i for i, r in enumerate(rows) if r.results is not None]
    for i in ok:
        np.testing.assert_allclose(values[i], rows[i].results.pressure.as_tuple())


def test_heatmap_hover_has_the_numbers(heatmap, hw):
    rows = evaluate_library(hw["h100-sxm"])
    heatmap.update_rows(rows, hw["h100-sxm"].name)
    r = rows[0]
    text = heatmap.hover_text_at(0, 2)
    assert r.name in text and r.description in text
    assert f"{r.results.memory_total / 1e9:.1f} GB" in text
    assert f"{r.results.capacity / 1e9:.0f} GB" in text
    assert f"{r.results.pressure.compute:.2f}" in text and f"{r.results.pressure.bandwidth:.2f}" in text
    assert "Binding resource" in text and " s" in text
    assert heatmap.hover_text_at(99, 0) == ""


def test_heatmap_click_and_hover_signals(heatmap, qtbot, hw):
    rows = evaluate_library(hw["h100-sxm"])
    heatmap.update_rows(rows, hw["h100-sxm"].name)
    with qtbot.waitSignal(heatmap.workloadActivated, timeout=1000) as blocker:
        heatmap.click_row(2)
    assert blocker.args == [rows[2].key]
    with qtbot.waitSignal(heatmap.workloadHovered, timeout=1000) as blocker:
        heatmap._hover_moved(1.5, 3.5)
    assert blocker.args == [rows[3].key]
    with qtbot.waitSignal(heatmap.workloadHovered, timeout=1000) as blocker:
        heatmap._hover_left()
    assert blocker.args == [""]


def test_heatmap_set_focus(heatmap, hw):
    rows = evaluate_library(hw["h100-sxm"])
    heatmap.update_rows(rows, hw["h100-sxm"].name)
    heatmap.set_focus(rows[4].key)
    assert heatmap.focused_row() == 4
    assert heatmap.focus_item.isVisible()
    xs, ys = heatmap.focus_item.getData()
    assert ys.min() == pytest.approx(4) and ys.max() == pytest.approx(5)
    assert xs.min() == pytest.approx(0) and xs.max() == pytest.approx(3)
    heatmap.set_focus("")
    assert heatmap.focused_row() == -1
    assert not heatmap.focus_item.isVisible()


def test_heatmap_update_keeps_items(heatmap, hw):
    heatmap.update_rows(evaluate_library(hw["h100-sxm"]), hw["h100-sxm"].name)
    image, labels, before = heatmap.image_item, list(heatmap.cell_labels), heatmap.cell_values()
    heatmap.update_rows(evaluate_library(hw["a100-80gb-sxm"]), hw["a100-80gb-sxm"].name)
    assert heatmap.image_item is image
    assert heatmap.cell_labels == labels                         # same row count: labels reused
    assert not np.allclose(heatmap.cell_values(), before)
    assert hw["a100-80gb-sxm"].name in heatmap.plot.titleLabel.text


def test_heatmap_bottleneck_outline_and_contrast(heatmap, hw):
    rows = evaluate_library(hw["h100-sxm"])
    heatmap.update_rows(rows, hw["h100-sxm"].name)
    xs, ys = heatmap.bottleneck_outer.getData()
    assert len(xs) == 8 * len(rows)                                # four segments per outlined cell
    # Light cells (high cividis) get black text, dark cells white.
    values = heatmap.cell_values()
    hi = np.unravel_index(np.argmax(values), values.shape)
    lo = np.unravel_index(np.argmin(values), values.shape)
    color = lambda i, j: heatmap.cell_labels[3 * i + j].color.name().upper()  # noqa: E731
    assert color(*hi) == "#000000"
    assert color(*lo) == "#FFFFFF"


def test_heatmap_memory_over_one_is_marked(heatmap, hw):
    rows = evaluate_library(hw["rtx-4090"])
    heatmap.update_rows(rows, hw["rtx-4090"].name)
    values = heatmap.cell_values()
    over = [i for i in range(len(rows)) if values[i, 2] > 1]
    assert over, "some library workloads should not fit in a 24 GB card"
    for i in over:
        assert "✗" in heatmap.cell_label(i, 2)
        assert "does not fit" in heatmap.hover_text_at(i, 2)
    assert np.all(heatmap.image_item.image[:, :, :3] >= 0)


def test_heatmap_real_mouse_click_and_hover(heatmap, qtbot, hw):
    """Through Qt events: the scene maps the pixel to the row and the panel emits its signals."""
    from PySide6 import QtCore

    rows = evaluate_library(hw["h100-sxm"])
    heatmap.update_rows(rows, hw["h100-sxm"].name)
    qtbot.waitExposed(heatmap)
    vb = heatmap.plot.getViewBox()
    scene_pos = vb.mapViewToScene(QtCore.QPointF(1.5, 2.5))
    with qtbot.waitSignal(heatmap.workloadHovered, timeout=1000) as hovered:
        heatmap.plot.scene().sigMouseMoved.emit(scene_pos)
    assert hovered.args == [rows[2].key]
    assert heatmap.hover.item.isVisible() and rows[2].name in heatmap.hover.item.toPlainText()
    point = heatmap.graphics.mapFromScene(scene_pos)
    with qtbot.waitSignal(heatmap.workloadActivated, timeout=2000) as clicked:
        qtbot.mouseClick(heatmap.graphics.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point)
    assert clicked.args == [rows[2].key]


def test_breakdown_hover_readout_follows_the_mouse(breakdown, train_results):
    from PySide6 import QtCore

    breakdown.update_results(train_results)
    vb = breakdown.memory_plot.getViewBox()
    breakdown.memory_plot.scene().sigMouseMoved.emit(vb.mapViewToScene(QtCore.QPointF(0.0, 1.0)))
    assert breakdown.memory_hover.item.isVisible()
    assert "Weights" in breakdown.memory_hover.item.toPlainText()
    breakdown.memory_hover.leave()
    assert not breakdown.memory_hover.item.isVisible()
