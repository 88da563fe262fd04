"""The roofline's uncertainty band (ui/roofline_band.py): the model's attainable FLOP/s between the efficiency
ranges' ends, hidden when bands are off or stale, under the points, in the theme's colours."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.uncertainty import efficiency_extremes, propagate
from trinity_desktop.ui import theme
from trinity_desktop.ui.bands import BAND_ALPHA
from trinity_desktop.ui.roofline_band import BAND_LEGEND
from trinity_desktop.ui.roofline_panel import RooflinePanel

HW = presets.hardware_presets()
MODELS = presets.model_presets()


def _decode(**kw) -> Scenario:
    return Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", **{"gpus": 1, "batch": 8, **kw})


@pytest.fixture
def panel(shown_panel):
    return shown_panel(RooflinePanel, evaluate(_decode()), size=(1300, 700))


def _bands(sc):
    return propagate(sc, samples=64, sensitivity=False)


@pytest.mark.parametrize("scenario", [_decode(), default_scenario(),
                                      _decode().replace(efficiency=_decode().efficiency.__class__(0.3, 0.9, 0.5))],
                         ids=["decode", "train", "own-efficiency"])
def test_band_brackets_the_point_estimate_attainable_curve(shown_panel, scenario):
    panel = shown_panel(RooflinePanel, evaluate(scenario), size=(1300, 700))
    assert panel.band_values() is None  # nothing until bands arrive
    panel.set_bands(_bands(scenario))
    x, lo, hi = panel.band_values()
    hw, eff = scenario.hardware, scenario.efficiency
    peak = hw.peak(panel.roofline_result().dtype)
    likely = np.minimum(peak * eff.compute, hw.hbm_bw * eff.hbm * x)
    assert np.all(lo <= likely * (1 + 1e-9)) and np.all(likely <= hi * (1 + 1e-9))
    assert np.all(hi > lo)
    assert np.all(hi <= np.minimum(peak, hw.hbm_bw * x) * (1 + 1e-9))  # never above the datasheet roofline
    low, high = efficiency_extremes(scenario)
    assert hi.max() == pytest.approx(peak * high.compute) and lo.max() == pytest.approx(peak * low.compute)
    (x0, x1), _ = panel._x_range, None
    assert x.min() == pytest.approx(x0) and x.max() == pytest.approx(x1)  # spans the view
    assert BAND_LEGEND in panel.legend_texts()


def test_band_hides_when_off_stale_or_of_another_scenario(panel):
    sc = _decode()
    panel.set_bands(_bands(sc))
    assert panel.band_values() is not None
    panel.set_bands(None)  # View > Uncertainty bands off (or the service hides stale bands)
    assert panel.band_values() is None and not panel.band_layer.fill.fill.isVisible()
    assert BAND_LEGEND not in panel.legend_texts()
    panel.set_bands(_bands(sc.replace(batch=64)))  # bands of another scenario
    assert panel.band_values() is None
    panel.set_bands(_bands(sc))
    assert panel.band_values() is not None
    panel.update_results(evaluate(sc.replace(batch=64)))  # an edit: the bands held are now stale
    assert panel.band_values() is None


def test_band_sits_under_points_and_reads_in_the_hover(panel):
    sc = _decode()
    panel.set_bands(_bands(sc))
    band = panel.band_layer.fill
    assert band.fill.zValue() < 0 and band.low.zValue() < 0 and band.high.zValue() < 0
    assert band.fill.zValue() < panel.points_item.zValue() and band.low.zValue() < panel.ceiling_curves[
        next(iter(panel.ceiling_curves))].zValue()
    # inside the band on the compute-bound side (far from every roof line): the range, named honestly
    low, high = efficiency_extremes(sc)
    peak = sc.hardware.peak(panel.roofline_result().dtype)
    lx = math.log10(panel._x_range[1]) - 0.5
    ly = math.log10(peak * low.compute * 1.02)  # just above the low edge, clear of the TF32 roof inside the band
    text = panel.band_text_at(lx, ly)
    assert text.startswith("attainable ") and "not percentiles" in text
    assert f"{low.compute:.0%}–{high.compute:.0%}" in text
    assert panel.hover_text_at(lx, ly) == text  # no point or roof there: the hover says the band
    assert panel.hover_text_at(lx, math.log10(peak * low.compute) - 0.3) == ""  # below the band: nothing
    panel.set_bands(None)
    assert panel.hover_text_at(lx, ly) == ""


def test_band_follows_the_theme(panel):
    panel.set_bands(_bands(_decode()))
    fill = panel.band_layer.fill.fill
    light = theme.THEMES["light"]["plot_fg"].lower()
    assert fill.brush().color().name() == light and fill.brush().color().alpha() == BAND_ALPHA
    try:
        theme.apply_theme("dark", panel)
        dark = theme.THEMES["dark"]["plot_fg"].lower()
        assert fill.brush().color().name() == dark and fill.brush().color().alpha() == BAND_ALPHA
        edge = panel.band_layer.fill.low.opts["pen"].color()
        assert edge.name() == dark and edge.alpha() == 2 * BAND_ALPHA  # restyling keeps it translucent
        panel.set_bands(_bands(_decode()))  # redrawn in the dark theme: the same colours
        assert fill.brush().color().name() == dark
    finally:
        theme.apply_theme("light", panel)
    assert fill.brush().color().name() == light


def test_bands_before_results_show_with_their_legend_entry(shown_panel):
    """A panel built after the bands arrived (docks are built lazily) gets them before its first results."""
    panel = shown_panel(RooflinePanel, None, size=(1300, 700))
    sc = _decode()
    panel.set_bands(_bands(sc))
    assert panel.band_values() is None
    panel.update_results(evaluate(sc))
    assert panel.band_values() is not None and BAND_LEGEND in panel.legend_texts()
