"""The roofline's layers are objects around a plot, not mixins of the panel: each works on a bare plot from what
its methods are handed (a RooflineFrame, a scenario), and tells its owner of a user's change by its callback."""

from __future__ import annotations

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtWidgets  # noqa: E402

from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs import presets  # noqa: E402
from trinity_desktop.model.views.roofline import roofline  # noqa: E402
from trinity_desktop.ui.curve_obstacles import crosses_text  # noqa: E402
from trinity_desktop.ui.roofline_compare import RooflineCompare  # noqa: E402
from trinity_desktop.ui.roofline_frame import RooflineFrame, ceiling_geometry  # noqa: E402
from trinity_desktop.ui.roofline_labels import RooflineLabels  # noqa: E402
from trinity_desktop.ui.roofline_panel import RooflinePanel  # noqa: E402
from trinity_desktop.ui.roofline_sweep import RooflineSweep  # noqa: E402

HW = presets.hardware_presets()


@pytest.fixture(scope="module")
def decode():
    return evaluate(Scenario(hardware=HW["h100-sxm"], model=presets.model_presets()["llama-3-8b"], kind="decode",
                             gpus=1, batch=16))


@pytest.fixture
def plot(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(700, 450)
    item = widget.getPlotItem()
    item.setLogMode(x=True, y=True)
    return widget, item


def test_the_panel_has_no_mixins():
    assert RooflinePanel.__mro__[1] is QtWidgets.QWidget


def test_ceiling_geometry_in_a_frame(decode):
    roof = roofline(decode.scenario)
    frame = RooflineFrame(decode, roof, (0.01, 1e5), (1e9, 1e16))
    hbm = next(c for c in roof.ceilings if c.link == "hbm")
    xs, ys = frame.geometry(hbm)
    # the HBM roof rises to the highest compute roof: FP8 1978.9 TFLOP/s / 3.35 TB/s = 590.7 FLOP/B
    assert xs[-1] == pytest.approx(1978.9e12 / 3.35e12) and ys[-1] == pytest.approx(1978.9e12)
    bf16 = next(c for c in roof.ceilings if c.name == "BF16/FP16")
    xs, ys = ceiling_geometry(bf16, roof, decode.scenario.hardware, (0.01, 1e5))
    assert xs.tolist() == pytest.approx([989.4e12 / 3.35e12, 1e5]) and ys.tolist() == [989.4e12, 989.4e12]


def test_sweep_layer_on_a_bare_plot_calls_back(plot, decode):
    _, item = plot
    calls = []
    sweep = RooflineSweep(item, calls.append)
    sweep.evaluate(decode.scenario)
    assert sweep.value() == 16 and sweep.slider_label.text() == "batch 16"   # the first scenario's batch
    sweep.set_sweep("batch", 1)
    assert calls == [False]                                                  # the slider moved: no re-range
    x, y = sweep.decode_marker()
    assert x == pytest.approx(1.0, rel=0.01) and y == pytest.approx(3.35e12, rel=0.01)
    sweep.set_sweep("context", 32768)
    assert calls[-2:] == [True, False] and sweep.mode == "context"          # mode switched: re-range, then moved
    assert sweep.notes().show_crossing is False


def test_compare_layer_on_a_bare_plot_calls_back(plot, decode):
    _, item = plot
    calls = []
    compare = RooflineCompare(item, lambda: calls.append(1))
    compare.set_hardware_choices(HW)
    compare.set_keys(["a100-80gb-sxm", "no-such-device"])
    assert calls == [1] and compare.keys == ["a100-80gb-sxm"]
    compare.evaluate(decode.scenario)
    compare.draw((0.01, 1e5))
    assert compare.points[0].isVisible() and not compare.points[1].isVisible()
    hbm = compare.ceiling_items("a100-80gb-sxm")["HBM"]
    assert hbm[1][0] / hbm[0][0] == pytest.approx(HW["a100-80gb-sxm"].hbm_bw)
    assert compare.legend_entries()[0][2] == HW["a100-80gb-sxm"].name


def test_labels_layer_places_from_a_frame(plot, qtbot, decode):
    widget, item = plot
    widget.show()
    qtbot.waitExposed(widget)
    roof = roofline(decode.scenario)
    frame = RooflineFrame(decode, roof, (1e-3, 1e6), (1e10, 1e17))
    item.setXRange(-3, 6, padding=0)
    item.setYRange(10, 17, padding=0)
    sweep = RooflineSweep(item, lambda _: None)
    sweep.evaluate(decode.scenario)
    labels = RooflineLabels(item)
    labels.set_ceilings(roof)
    labels.set_points(roof.points)
    labels.layout(frame, [(p.intensity, p.attainable_flops_per_s) for p in roof.points], sweep.notes())
    main = labels.ceiling_labels["BF16/FP16"]
    assert main.isVisible() and main.pos().y() == pytest.approx(math.log10(989.4e12))
    assert "ridge 295 FLOP/B" in labels.ridge_text.toPlainText()
    assert "BF16/FP16" not in labels.hidden_labels


def test_a_line_crosses_a_text_only_through_its_glyph_box_as_turned():
    """A 100 x 20 px text centred on the origin: a segment along its 45° axis runs through it; the same segment
    moved 15 px across it (beyond half its height) misses it turned, and crosses it upright; the 4 px margin is free."""
    import numpy as np

    along = np.array([[-30.0, 30.0, 30.0, -30.0]])            # screen y down: the text's axis at 45°
    beside = along + 15.0 * math.sqrt(0.5)                    # 15 px across the turned text
    assert crosses_text(along, 0.0, 0.0, 100.0, 20.0, 45.0)
    assert not crosses_text(beside, 0.0, 0.0, 100.0, 20.0, 45.0)
    assert crosses_text(beside, 0.0, 0.0, 100.0, 20.0, 0.0)
    assert crosses_text(np.array([[-60.0, 5.0, 60.0, 5.0]]), 0.0, 0.0, 100.0, 20.0)
    assert not crosses_text(np.array([[-60.0, 7.0, 60.0, 7.0]]), 0.0, 0.0, 100.0, 20.0)


def test_many_segments_in_one_call_cross_as_any_one_of_them_does():
    """`crosses_text` on a joined array (with its reject of segments far from the text) says what testing each
    segment alone says, for random segments and random turned texts."""
    import numpy as np

    from trinity_desktop.ui.curve_obstacles import joined

    rng = np.random.default_rng(21)
    for _ in range(300):
        parts = [rng.uniform(-200, 200, size=(int(rng.integers(0, 4)), 4)) for _ in range(4)]
        cx, cy = rng.uniform(-100, 100, size=2)
        w, h, deg = rng.uniform(5, 160), rng.uniform(5, 40), rng.uniform(-90, 90)
        one_by_one = any(crosses_text(seg[None, :], cx, cy, w, h, deg) for part in parts for seg in part)
        assert crosses_text(joined(parts), cx, cy, w, h, deg) == one_by_one
