"""The Validation dock, the "what matters most" bars and the band service (computed off the UI thread)."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.uncertainty import propagate
from trinity_desktop.model.search.validation import published_runs
from trinity_desktop.ui.bands import BandService, range_text
from trinity_desktop.ui.validation_panel import ValidationPanel

HW = presets.hardware_presets()
MODELS = presets.model_presets()


def _train_175b(**kw) -> Scenario:
    return Scenario(hardware=HW["a100-80gb-sxm"], model=MODELS["korthikanti-175b"], kind="train", gpus=64, tp=8,
                    pp=8, global_batch=64, micro_batch=1, seq_len=2048, **kw)


@pytest.fixture
def panel(shown_panel, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TRINITY_DESKTOP_HOME", str(tmp_path))
    p = shown_panel(ValidationPanel, evaluate(_train_175b()), size=(1300, 650))
    qtbot.waitUntil(p.is_ready, timeout=120_000)
    return p


def test_every_published_run_is_a_point_with_its_band(panel):
    runs = published_runs()
    drawn = sum(len(item.xData) for item in panel.points.values())
    assert drawn == len(runs) == len(panel.rows)
    families = {r["family"] for r in panel.rows}
    assert families >= {"Ampere", "Hopper", "Blackwell", "Apple silicon"}
    assert set(panel.points) == {(r["kind"], r["family"]) for r in panel.rows}
    for (kind, family), item in panel.points.items():
        x, y = item.xData, item.yData  # the data as given (getData() is log10 on log axes)
        mine = [r for r in panel.rows if r["kind"] == kind and r["family"] == family]
        np.testing.assert_allclose(x, [r["measured"] for r in mine])
        np.testing.assert_allclose(y, [r["predicted"] for r in mine])
        # each whisker part is the part of one run's p05-p95 band that reaches past its marker: above the
        # predicted point up to p95, or below it down to p05 (a band inside its marker draws nothing)
        line = panel.band_lines[kind, family]
        bx, by = (np.zeros(0), np.zeros(0)) if line.xData is None else (line.xData, line.yData)
        assert len(bx) % 2 == 0 and len(bx) <= 4 * len(mine) and np.all(bx[0::2] == bx[1::2])
        for x0, ya, yb in zip(bx[0::2], by[0::2], by[1::2], strict=True):
            assert any(r["measured"] == x0 and (ya == pytest.approx(r["p95"]) and r["predicted"] < yb < ya
                                                or yb == pytest.approx(r["p05"]) and yb < ya < r["predicted"])
                       for r in mine)
    # the widest band (in decades) reaches past its marker on screen, so it shows
    widest = max(panel.rows, key=lambda r: np.log10(r["p95"] / r["p05"]))
    wx = panel.band_lines[widest["kind"], widest["family"]].xData
    assert wx is not None and widest["measured"] in set(wx)
    ix, iy = panel.identity.xData, panel.identity.yData
    np.testing.assert_allclose(ix, iy)
    assert "median |error|" in panel.summary.text() and "inference" in panel.summary.text()
    # marker by kind, colour by family, each named once in the legend (outside the view: it never covers a point)
    symbols = {kind: {item.opts["symbol"] for (k, _f), item in panel.points.items() if k == kind}
               for kind in ("training", "inference")}
    assert all(len(s) == 1 for s in symbols.values()) and symbols["training"] != symbols["inference"]
    brushes = {f: {pg_color(item) for (_k, g), item in panel.points.items() if g == f} for f in panel.families}
    assert all(len(b) == 1 for b in brushes.values()) and len(set().union(*brushes.values())) == len(brushes)
    assert [label.text for _, label in panel.legend.items] == ["training", "inference", *panel.families]
    assert panel.legend.parentItem() is not panel.scatter_plot.getViewBox()


def pg_color(item) -> str:
    import pyqtgraph as pg

    return pg.mkBrush(item.opts["symbolBrush"]).color().name()


def test_hover_names_the_run_and_its_source(panel):
    r = next(r for r in panel.rows if "175B, selective" in r["name"])
    text = panel.hover_text_at(np.log10(r["measured"]), np.log10(r["predicted"]))
    assert "175B" in text and "Table 5" in text and "13.8 s" in text and "Ampere" in text
    assert panel.hover_text_at(-3.0, 5.0) == ""
    ft = next(r for r in panel.rows if r["name"].startswith("GPT-175B, TP 8, batch 16"))
    text = panel.hover_text_at(np.log10(ft["measured"]), np.log10(ft["predicted"]))
    assert "inference request time" in text and "FasterTransformer" in text and "3706.23 ms" in text


def test_sensitivity_bars_show_the_dominant_assumption_on_top(panel):
    u = propagate(_train_175b(), samples=512)
    panel.set_bands(u)
    totals = panel.total_bars.opts["width"]
    assert max(totals) == pytest.approx(u.sensitivity["compute_efficiency"][1])
    ticks = panel.bar_plot.getAxis("left")._tickLevels[0]
    assert ticks[-1][1] == "Compute efficiency"  # the largest bar is drawn at the top
    assert "p05–p95" in panel.bar_note.text()
    panel.set_bands(None)
    assert len(panel.total_bars.opts["width"]) == 0


def test_band_service_computes_off_thread_and_coalesces_edits(qtbot):
    service = BandService(samples=256)
    a = _train_175b()
    b, c = a.replace(seq_len=1024), a.replace(seq_len=512)
    received = []
    service.bandsChanged.connect(received.append)
    with qtbot.waitSignal(service.bandsChanged, timeout=120_000, check_params_cb=lambda u: u is not None):
        service.request(a)
    assert received[0] is None  # nothing known yet: stale bands are hidden while computing
    assert received[-1].bands["time_per_step_s"].point == pytest.approx(evaluate(a).time_total, rel=1e-12)
    with qtbot.waitSignal(service.bandsChanged, timeout=120_000, check_params_cb=lambda u: u is not None and
                          u.bands["time_per_step_s"].point == pytest.approx(evaluate(c).time_total)):
        service.request(b)
        service.request(c)  # b may be skipped: only the latest scenario matters
    assert "p05–p95" in range_text(service.current)
    with qtbot.waitSignal(service.bandsChanged, timeout=5_000, check_params_cb=lambda u: u is None):
        service.set_enabled(False)
    assert service.current is None
    with qtbot.waitSignal(service.bandsChanged, timeout=5_000, check_params_cb=lambda u: u is not None):
        service.set_enabled(True)  # cached: immediate
    service.shutdown()


def test_residency_step_curve_band_brackets_the_curve(shown_panel):
    from trinity_desktop.ui.residency_panel import ResidencyPanel

    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=8)
    panel = shown_panel(ResidencyPanel, evaluate(sc))
    assert panel.step_band_values() is None
    panel.set_bands(propagate(sc, samples=64))
    lo, hi = panel.step_band_values()
    curve = panel._right_values()
    assert np.all(lo <= curve * (1 + 1e-9)) and np.all(hi >= curve * (1 - 1e-9))
    assert np.all(hi > lo)
    panel.set_bands(None)
    assert panel.step_band_values() is None


def test_attainable_range_spans_the_point_roofline():
    from trinity_desktop.model.inputs.scenario import Efficiency
    from trinity_desktop.model.search.uncertainty import efficiency_extremes
    from trinity_desktop.ui.bands import attainable_range

    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1)
    low, high = efficiency_extremes(sc)
    assert low == Efficiency(compute=0.35, hbm=0.6, network=0.5)
    assert high == Efficiency(compute=0.62, hbm=0.92, network=0.92)
    i = np.logspace(-1, 4, 50)
    peak, bw = HW["h100-sxm"].peak("bf16"), HW["h100-sxm"].hbm_bw
    lo, hi = attainable_range(i, peak, bw, low, high)
    point = np.minimum(peak * 0.5, bw * 0.8 * i)
    assert np.all(lo < point) and np.all(point < hi)
