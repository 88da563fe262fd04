"""Disaggregated serving in the app (#23): the Scenario form's pool fields, the triangle's pools joined by the
bandwidth edge, the flow's pool lanes and title."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402

from trinity_desktop.model import Scenario, evaluate  # noqa: E402
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets  # noqa: E402
from trinity_desktop.model.views.pool_points import pool_points  # noqa: E402
from trinity_desktop.ui.controls import ScenarioControls  # noqa: E402
from trinity_desktop.ui.flow_panel import FlowPanel  # noqa: E402
from trinity_desktop.ui.triangle_panel import TrianglePanel, triangle_point  # noqa: E402


@pytest.fixture(scope="module")
def pooled():
    hw, m = hardware_presets(), model_presets()
    sc = Scenario(hardware=hw["h100-sxm"], model=m["llama-3-70b"], kind="decode", gpus=8, batch=32,
                  prompt_len=4096, gen_len=512, prefill_gpus=8, decode_gpus=8)
    return evaluate(sc)


def test_the_form_shows_the_pools_and_reports_their_edits(qtbot, pooled):
    form = ScenarioControls()
    qtbot.addWidget(form)
    form.show_scenario(pooled.scenario.replace(prefill_gpus=0, decode_gpus=0))
    assert form.widgets["prefill_gpus"].text() == "off" and form.widgets["decode_tp"].text() == "as replica"
    form.show_scenario(pooled.scenario)
    assert form.widgets["prefill_gpus"].value() == 8
    with qtbot.waitSignal(form.edited) as edit:
        form.widgets["kv_transfer_layerwise"].setChecked(True)
    assert edit.args == [{"kv_transfer_layerwise": True}]


def test_the_triangle_joins_the_two_pools_with_the_bandwidth_edge(shown_panel, pooled):
    panel = shown_panel(TrianglePanel, pooled)
    pools = pool_points(pooled)
    prefill, decode = panel.pools.positions()
    assert prefill == pytest.approx(tuple(triangle_point(*pools.prefill.as_tuple())))
    assert decode == pytest.approx(tuple(triangle_point(*pools.decode.as_tuple())))
    assert pools.prefill_binding == "compute" and prefill[1] > decode[1]  # prefill sits towards Compute
    assert "1.34 GB per request in 4.20 ms over scale-out" in panel.caption.text()
    panel.update_results(evaluate(pooled.scenario.replace(prefill_gpus=0, decode_gpus=0)))
    assert panel.pools.positions() is None and "Squares" not in panel.caption.text()


def test_the_flow_has_a_lane_per_pool_and_says_so_in_its_title(shown_panel, pooled):
    panel = shown_panel(FlowPanel, pooled)
    assert panel.headline.text().startswith("Disaggregated request:")
    assert "KV 1.34 GB in 4.2 ms over scale-out" in panel.headline.text()


def test_one_edit_sets_or_clears_both_pools(qtbot, pooled):
    form = ScenarioControls()
    qtbot.addWidget(form)
    form.show_scenario(pooled.scenario.replace(prefill_gpus=0, decode_gpus=0))
    with qtbot.waitSignal(form.edited) as edit:
        form.widgets["prefill_gpus"].setValue(8)
    assert edit.args == [{"prefill_gpus": 8, "decode_gpus": 8}]
    form.show_scenario(pooled.scenario.replace(decode_gpus=16))
    with qtbot.waitSignal(form.edited) as edit:
        form.widgets["prefill_gpus"].setValue(0)
    assert edit.args == [{"prefill_gpus": 0, "decode_gpus": 0}]


def test_labels_keep_off_the_pools_edge(shown_panel, pooled):
    panel = shown_panel(TrianglePanel, pooled, size=(683, 700))
    points, radii = panel.pools.obstacles()
    assert len(points) == 25 and max(radii.values()) == 9.0
    (x0, y0), (x1, y1) = panel.pools.positions()
    assert points["pool-edge:0"] == pytest.approx((x0, y0)) and points["pool-edge:24"] == pytest.approx((x1, y1))
    vb = panel.plot.getViewBox()
    shown = [item for item in panel.text.marker_labels.values() if item.isVisible() and item.toPlainText()]
    assert shown
    for x, y in points.values():
        at = vb.mapViewToScene(pg.Point(x, y))
        assert not any(item.sceneBoundingRect().contains(at) for item in shown)


def test_hovering_a_pool_reads_out_its_pressures_and_the_edge(shown_panel, pooled):
    panel = shown_panel(TrianglePanel, pooled)
    prefill, _ = panel.pools.positions()
    text = panel._hover_at(*prefill)
    assert "Prefill pool (one prompt per instance)" in text and "1.34 GB per request" in text
    assert panel.hover_text_for("pool:decode").startswith("Decode pool")
