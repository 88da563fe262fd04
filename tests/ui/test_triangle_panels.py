"""Triangle navigator and trade-off explorer: positions, arrows and bubbles equal what the model computed."""

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.model.views.workloads import evaluate_library, workload_scenario  # noqa: E402
from trinity_desktop.ui import theme  # noqa: E402
from trinity_desktop.ui.plot_widgets import title_text  # noqa: E402
from trinity_desktop.ui.tradeoff_panel import Y_TICKS, TradeoffPanel, symlog  # noqa: E402
from trinity_desktop.ui.triangle_panel import CORNERS, SQRT3_2, TrianglePanel, triangle_point  # noqa: E402

H100 = presets.hardware_presets()["h100-sxm"]


@pytest.fixture(scope="module")
def train_results():
    return evaluate(default_scenario())


@pytest.fixture(scope="module")
def decode_results():
    return evaluate(workload_scenario(presets.workload_library()["long-context-decode"], H100))


@pytest.fixture
def triangle(shown_panel, train_results):
    return shown_panel(TrianglePanel, train_results)


@pytest.fixture
def explorer(shown_panel, train_results):
    return shown_panel(TradeoffPanel, train_results)


# ---------------------------------------------------------------------------------------------- geometry
def test_triangle_geometry_corners_and_centroid():
    assert np.allclose(triangle_point(1.0, 0.0, 0.0), CORNERS["compute"])
    assert np.allclose(triangle_point(0.0, 1.0, 0.0), CORNERS["bandwidth"])
    assert np.allclose(triangle_point(0.0, 0.0, 2.0), CORNERS["memory"])   # clipped to 1: not fitting = corner
    assert np.allclose(triangle_point(0.3, 0.3, 0.3), (0.5, SQRT3_2 / 3))
    pts = triangle_point(np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.0, 0.0]))
    assert pts.shape == (2, 2)                                             # broadcasts


# ---------------------------------------------------------------------------------------------- triangle
def test_markers_are_placed_by_the_computed_pressures(triangle, train_results):
    rows = {r.key: r for r in evaluate_library(H100, train_results.scenario) if r.results is not None}
    pos = triangle.marker_positions()
    assert set(pos) == set(rows)
    for key, row in rows.items():
        assert pos[key] == pytest.approx(tuple(triangle_point(*row.results.pressure.as_tuple())), abs=1e-12)
    assert triangle.current_position() == pytest.approx(
        tuple(triangle_point(*train_results.pressure.as_tuple())), abs=1e-12)
    for x, y in pos.values():                                               # inside the triangle
        assert -1e-9 <= y <= SQRT3_2 + 1e-9 and y <= math.sqrt(3) * x + 1e-9 and y <= math.sqrt(3) * (1 - x) + 1e-9


def test_hover_explains_the_position_in_numbers(triangle):
    row = next(r for r in evaluate_library(H100) if r.key == "long-context-decode")
    text = triangle.hover_text_for("long-context-decode")
    p = row.results.pressure
    assert row.name in text
    assert f"Memory pressure {p.memory:.2f}" in text
    assert f"{row.results.memory_total / 1e9:.1f} GB of 80 GB" in text
    assert f"Binding resource: {row.results.bottleneck.capitalize()}" in text
    assert "GPU·s" in text and "nan" not in text.lower()
    assert "Current scenario" in triangle.hover_text_for("current")


def test_click_and_focus(triangle, qtbot):
    with qtbot.waitSignal(triangle.workloadActivated) as sig:
        triangle.click_workload("moe-pretrain")
    assert sig.args == ["moe-pretrain"]
    triangle.set_focus("workload", "moe-pretrain")
    assert triangle.focus_ring.data.size == 1
    x, y = triangle.marker_positions()["moe-pretrain"]
    assert triangle.focus_ring.data[0]["x"] == pytest.approx(x)
    triangle.set_focus("", "")
    assert triangle.focus_ring.data.size == 0
    # A hovered technique previews its move from the current scenario.
    triangle.set_focus("technique", "recompute-full")
    assert triangle.preview_visible()
    triangle.set_focus("technique", "kv-fp8")                               # not applicable to training
    assert not triangle.preview_visible()


def test_hovering_a_marker_requests_focus(triangle, qtbot):
    x, y = triangle.marker_positions()["dense-pretrain"]
    with qtbot.waitSignal(triangle.focusRequested) as sig:
        triangle._hover_moved(x, y)
    assert sig.args == ["workload", "dense-pretrain"]


def test_technique_path_arrows_follow_the_model(triangle, train_results):
    keys = ["recompute-full", "zero-3", "kv-fp8", "offload-optimizer"]
    triangle.show_path(keys)
    steps = tq.path(train_results.scenario, keys, skip_inapplicable=True)
    segments = triangle.arrow_segments()
    assert len(segments) == len(steps) - 1 == 3                             # kv-fp8 skipped (training)
    applied = ["recompute-full", "zero-3", "offload-optimizer"]
    for (x0, y0, x1, y1, colour), (_, before), (_, after), key in zip(segments, steps[:-1], steps[1:], applied,
                                                                     strict=True):
        assert (x0, y0) == pytest.approx(tuple(triangle_point(*before.pressure.as_tuple())))
        assert (x1, y1) == pytest.approx(tuple(triangle_point(*after.pressure.as_tuple())))
        assert colour == theme.RESOURCE_COLORS[tq.load_techniques()[key].spent]
    # Full recomputation relieves memory: the arrow heads away from the memory corner.
    x0, y0, x1, y1, _ = segments[0]
    mx, my = CORNERS["memory"]
    assert math.hypot(x1 - mx, y1 - my) > math.hypot(x0 - mx, y0 - my)
    assert "Not applied here" in triangle.caption.text()
    triangle.show_path([])
    assert triangle.arrow_segments() == []


def test_apply_path_emits_the_end_scenario(triangle, qtbot, train_results):
    triangle.show_path(["zero-3", "recompute-full"])
    with qtbot.waitSignal(triangle.scenarioRequested) as sig:
        triangle.apply_button.click()
    sc = sig.args[0]
    assert sc.zero == 3 and sc.recompute == "full" and sc.techniques == ("zero-3", "recompute-full")


def test_library_is_recomputed_only_when_the_hardware_changes(triangle, train_results, monkeypatch):
    import trinity_desktop.ui.triangle_panel as module
    calls = []
    monkeypatch.setattr(module, "evaluate_library", lambda hw, base=None: calls.append(hw) or evaluate_library(hw, base))
    triangle.update_results(evaluate(train_results.scenario.replace(zero=2)))
    assert calls == []
    a100 = presets.hardware_presets()["a100-80gb-sxm"]
    triangle.update_results(evaluate(train_results.scenario.replace(hardware=a100)))
    assert calls == [a100]
    assert "A100" in triangle.plot.titleLabel.text


# ---------------------------------------------------------------------------------------------- explorer
def test_bubbles_equal_the_computed_effects(explorer, train_results):
    explorer.set_direction("bandwidth", "memory")
    bubbles = explorer.bubbles()
    expected = {t.key for t in tq.techniques_in_direction("bandwidth", "memory")}
    assert set(bubbles) == expected
    for key, (x, y, _size, colour, enabled) in bubbles.items():
        e = tq.technique_effect(train_results.scenario, key)
        assert enabled == e.applicable
        if enabled:
            assert (x, y) == pytest.approx((e.saved_pct, e.spent_pct))
            assert colour == theme.RESOURCE_COLORS["bandwidth"]
        else:
            assert colour != theme.RESOURCE_COLORS["bandwidth"]
        assert math.isfinite(x) and math.isfinite(y)
    assert not bubbles["cxl-memory-pool"][4] and not bubbles["kv-offload"][4]
    # Bubble size grows with the relevance weight.
    t = tq.load_techniques()
    assert bubbles["zero-2"][2] > bubbles["offload-activations"][2]
    assert t["zero-2"].relevance > t["offload-activations"].relevance
    assert explorer._plot_xy["zero-3"][1] == pytest.approx(float(symlog(bubbles["zero-3"][1])))


def test_every_bubble_is_named_and_a_tick_lies_beyond_the_outermost(shown_panel, train_results, qtbot):
    """At the 1366 dock's size the default direction's headline bubble (full recomputation, +27% compute) had
    no name (no room between it and the plot's top) and the y ticks stopped at +10%. The y range reaches the
    ticks beyond the outermost bubbles, and every bubble is named."""
    explorer = shown_panel(TradeoffPanel, train_results, size=(517, 680))
    qtbot.wait(50)
    ys = [y for x, y in explorer._plot_xy.values()]
    (_, _), (lo, hi) = explorer.plot.getViewBox().viewRange()
    ticks = [float(symlog(v)) for v in Y_TICKS]
    assert any(max(ys) < t <= hi for t in ticks) and any(lo <= t < min(ys) for t in ticks)
    assert explorer.hidden_labels == set()
    assert all(explorer.labels[k].isVisible() for k in explorer._plot_xy)


def test_arrows_run_from_the_scenario_to_each_effect(explorer, train_results):
    """One arrow per applicable technique, from the origin (this scenario) to its computed point, in the spent
    resource's colour, with a head; the title names the technique that saves the most."""
    explorer.set_direction("bandwidth", "memory")
    xs, ys = explorer.arrow_lines.getData()
    drawn = {k: v for k, v in explorer.bubbles().items() if v[4]}
    assert len(xs) == 2 * len(drawn) and np.all(xs[0::2] == 0) and np.all(ys[0::2] == 0)
    ends = np.array(sorted(zip(xs[1::2], ys[1::2], strict=True)))
    assert ends == pytest.approx(np.array(sorted(explorer._plot_xy.values())))
    assert explorer.arrow_lines.opts["pen"].color().name().upper() == theme.RESOURCE_COLORS["bandwidth"]
    assert set(explorer.heads) == set(drawn)
    best = max(drawn, key=lambda k: tq.technique_effect(train_results.scenario, k).saved_pct)
    e = tq.technique_effect(train_results.scenario, best)
    assert title_text(explorer.plot) == (f"{tq.load_techniques()[best].name} saves the most memory: "
                                         f"−{e.saved_pct:.0f}% for {'+' if e.spent_pct >= 0 else '−'}"
                                         f"{abs(e.spent_pct):.0f}% bandwidth")
    assert explorer.offer_text() == ""


def test_an_empty_direction_offers_the_nearest_workload_where_it_applies(explorer, qtbot):
    explorer.set_direction("memory", "compute")        # prefix caching: prefill only, not this training step
    assert explorer.bubbles() and not any(v[4] for v in explorer.bubbles().values())
    assert explorer.empty_text.isVisible() and "applies to this" in explorer.empty_text.toPlainText()
    offer = explorer.offer_text()
    assert offer.startswith("Open ") and "Prefix caching" in offer
    with qtbot.waitSignal(explorer.scenarioRequested) as sig:
        explorer._take_offer()
    assert tq.applicable("prefix-caching", sig.args[0])[0]
    # A direction the catalogue has nothing for offers its reverse, one click away.
    explorer.set_direction("bandwidth", "compute")
    assert explorer.offer_text() == "Show the reverse: " + tq.direction_label("compute", "bandwidth")
    explorer._take_offer()
    assert explorer.direction() == ("compute", "bandwidth")


def test_direction_switch_changes_the_bubbles(explorer, qtbot):
    explorer.set_direction("bandwidth", "memory")
    first = set(explorer.bubbles())
    explorer.direction_combo.setCurrentIndex(tq.DIRECTIONS.index(("compute", "memory")))
    assert explorer.direction() == ("compute", "memory")
    second = set(explorer.bubbles())
    assert first.isdisjoint(second) and "recompute-full" in second
    assert "Compute spent" in explorer.plot.getAxis("left").labelText
    assert "Memory saved" in explorer.plot.getAxis("bottom").labelText
    with pytest.raises(ValueError):
        explorer.set_direction("memory", "memory")


def test_hover_shows_deltas_with_units_and_the_citation(explorer):
    explorer.set_direction("bandwidth", "memory")
    text = explorer.hover_text_for("zero-3")
    assert "Rajbhandari" in text and "2020" in text and "ZeRO" in text
    assert "GB" in text and "%" in text and "scale-out +" in text
    assert "nan" not in text.lower()
    explorer.set_direction("compute", "bandwidth")
    grey = explorer.hover_text_for("split-computing")
    assert "Not modelled yet" in grey


def test_clicking_a_bubble_applies_the_technique(explorer, qtbot, train_results):
    explorer.set_direction("compute", "memory")
    got = []
    explorer.scenarioRequested.connect(lambda sc: got.append(("scenario", sc)))
    explorer.techniqueApplied.connect(lambda key: got.append(("technique", key)))
    assert explorer.click_technique("recompute-full")
    assert got == [("scenario", tq.apply("recompute-full", train_results.scenario)),
                   ("technique", "recompute-full")]
    assert got[0][1].recompute == "full" and got[0][1].techniques == ("recompute-full",)
    # A grey bubble does nothing.
    with qtbot.assertNotEmitted(explorer.scenarioRequested):
        assert not explorer.click_technique("kv-fp8")


def test_explorer_for_inference_and_focus(explorer, decode_results, qtbot):
    explorer.update_results(decode_results)
    explorer.set_direction("compute", "memory")
    b = explorer.bubbles()
    assert b["kv-fp8"][4] and not b["recompute-full"][4]
    assert b["kv-fp8"][0] > 0                                              # memory saved
    explorer.set_focus("technique", "kv-fp8")
    assert explorer.focused() == "kv-fp8" and explorer.focus_ring.data.size == 1
    explorer.set_focus("workload", "x")
    assert explorer.focus_ring.data.size == 0
    x, y = explorer._plot_xy["kv-fp8"]
    with qtbot.waitSignal(explorer.focusRequested) as sig:
        explorer._hover_moved(x, y)
    assert sig.args == ["technique", "kv-fp8"]


def test_controls_have_tooltips_and_accessible_names(triangle, explorer):
    for widget in (triangle.technique_list, triangle.apply_button, triangle.clear_button,
                   explorer.direction_combo, triangle.caption, explorer.caption):
        assert widget.toolTip() and widget.accessibleName()
