"""The scale-over-time docks (issue 25): each builds, draws the current scenario, states a computed finding in its
title, and is registered in the dock registry."""

import numpy as np
import pytest

from trinity_desktop.docks import DOCKS
from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.claims.scale import recompute_scenario
from trinity_desktop.model.formulas.batch_law import scenario_batch
from trinity_desktop.model.formulas.retrieval import spill_points
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.views.test_time import compare
from trinity_desktop.ui.batch_law_panel import BatchLawPanel
from trinity_desktop.ui.memory_wall_panel import MemoryWallPanel
from trinity_desktop.ui.retrieval_panel import RetrievalPanel
from trinity_desktop.ui.test_time_panel import TestTimePanel

H100 = hardware_presets()["h100-sxm"]


@pytest.fixture(scope="module")
def results():
    return evaluate(recompute_scenario())


def _title(chart) -> str:
    return chart.plot._full_title[0]


def test_registered():
    names = {d.name for d in DOCKS}
    assert {"retrieval", "memory_wall", "batch_law", "test_time"} <= names


def test_retrieval_panel(qtbot, results):
    p = RetrievalPanel()
    qtbot.addWidget(p)
    p.update_results(results)
    spill = spill_points(768, "hnsw", H100)
    assert p.summary()["tier_at_10m"] == "host"
    assert "78M" in _title(p.chart) and f"{spill['host'] / 1e6:.3g}M" in _title(p.chart)
    p.view_combo.setCurrentIndex(1)
    assert "query" in _title(p.chart) and "host DRAM" in _title(p.chart)
    p.index_combo.setCurrentIndex(2)   # DiskANN: SSD only
    assert "SSD" in _title(p.chart)


def test_memory_wall_names_every_fitted_line_beside_its_end_off_the_rings(shown_panel, qtbot, results):
    """In the 1366 layout (a 517 × 703 dock) "HBM bytes 1.74×" had no place at the crowded line ends: it sat
    at the far left on the scenario's rings, and once the rings were obstacles it vanished. The names now
    stack down a column right of the ends, with room for the widest."""
    from trinity_desktop.ui import label_layout as ll
    from trinity_desktop.ui.memory_wall_panel import RING_PX

    p = shown_panel(MemoryWallPanel, results, (517, 703))
    qtbot.waitUntil(lambda: all(i.isVisible() for i in p.fit_labels.items[:len(p.fit_labels.points)]), timeout=3000)
    vb = p.chart.plot.getViewBox()
    rx, ry = p.ring.getData()
    rings = [ll.box_of(*(c - RING_PX / 2 for c in ll.scene_point(vb, x, y)), RING_PX, RING_PX) for x, y in zip(rx, ry, strict=True)]
    ends = ll.scene_point(vb, p.fit_labels.points[0][0], 0.0)[0]
    assert len(p.fit_labels.points) == 5 and rings
    for item in p.fit_labels.items[:5]:
        r = item.sceneBoundingRect()
        box = (r.left(), r.top(), r.right(), r.bottom())
        assert r.left() > ends and not any(ll.overlaps(box, ring, 0.0) for ring in rings), item.toPlainText()


def test_memory_wall_panel(qtbot, results):
    p = MemoryWallPanel()
    qtbot.addWidget(p)
    p.update_results(results)
    g = p.growth()
    assert f"{g['peak_flops']:.2f}×" in _title(p.chart)
    named = {text: bold for _x, _y, text, bold in p.fit_labels.points}   # each fitted line named with its rate
    assert named[f"FLOP/s {g['peak_flops']:.2f}×"] is True and f"HBM B/s {g['hbm_bw']:.2f}×" in named
    assert all(x > max(d.year for d in p.wall.devices) for x, *_ in p.fit_labels.points)   # right of the data
    p.view_combo.setCurrentIndex(1)
    assert f"{g['model_memory']:.2f}×" in _title(p.chart) and "DeepSeek-V3" in _title(p.chart)
    assert not p.fit_labels.points   # the growth lines' names leave with them


def test_batch_law_panel(qtbot, results):
    p = BatchLawPanel()
    qtbot.addWidget(p)
    p.update_results(results)
    sc = results.scenario
    b = scenario_batch(sc.global_batch, sc.seq_len, results.params_active)
    assert f"{b.batch_tokens / 1e6:.3g}M" in _title(p.chart) and f"{b.optimal_tokens / 1e6:.3g}M" in _title(p.chart)
    # the two numbers the title compares are on the chart too: the star and the law's ring at the same compute
    labels = [text for _x, _y, text, _bold in p.labels.points]
    assert labels == [f"your run {b.batch_tokens / 1e6:.3g}M", f"optimum {b.optimal_tokens / 1e6:.3g}M"]
    assert list(p.optimum.getData()[0]) == pytest.approx([np.log10(b.compute)])
    infer = evaluate(Scenario(hardware=H100, model=model_presets()["llama-3-8b"], kind="decode", gpus=1))
    p.update_results(infer)
    assert "grew 15.7×" in _title(p.chart) and p.labels.points == []


def test_test_time_panel(qtbot, results):
    p = TestTimePanel()
    qtbot.addWidget(p)
    p.update_results(results)
    c = compare(H100, 0.70)
    assert f"{c.crossover_tokens:,.0f} tokens" in _title(p.chart)
    p.target_combo.setCurrentIndex(1)
    assert "80%" in _title(p.chart)


def test_a_view_focus_opens_the_view(qtbot, results):
    """A slide's focus ("view", key) opens that view with its combo; another focus leaves the view alone."""
    r = RetrievalPanel()
    qtbot.addWidget(r)
    r.update_results(results)
    r.set_focus("view", "time")
    assert r.view == "time" and r.view_combo.currentData() == "time" and r.published.isVisible()
    r.set_focus("technique", "native-sparse-attention")
    assert r.view == "time"
    w = MemoryWallPanel()
    qtbot.addWidget(w)
    w.update_results(results)
    w.set_focus("view", "capacity")
    assert w.view == "capacity" and "DeepSeek-V3" in _title(w.chart)
    w.set_focus("view", "time")   # not one of its views
    assert w.view == "capacity"


def test_memory_wall_ridge_view(qtbot, results):
    """The ridge view: peak FLOP/s / HBM bandwidth per device with its fitted drift; the newest device's ridge is
    its datasheet ratio (GB300 NVL72 per GPU: peak bf16 / HBM bandwidth)."""
    from trinity_desktop.model.views.memory_wall import memory_wall

    wall = memory_wall()
    fit = [d for d in wall.devices if d.in_fit]
    newest = max(fit, key=lambda d: d.year)
    hw = hardware_presets()[newest.key]
    assert newest.ridge == pytest.approx(hw.peak_flops["bf16"] / hw.hbm_bw, rel=1e-9)
    p = MemoryWallPanel()
    qtbot.addWidget(p)
    p.update_results(results)
    p.set_focus("view", "ridge")
    title = _title(p.chart)
    assert f"{wall.growth['ridge'].per_2y:.2f}×" in title and f"{newest.ridge:.0f} FLOP per byte" in title
    assert p.ridge_points.isVisible() and not p.points["peak_flops"].isVisible()
    assert f"{3.0 / 1.6:.2f}×" in p.chart.caption.text()


def test_a_line_under_the_chosen_index_is_named_with_it(qtbot, results):
    """In the bytes view DiskANN's line lies under HNSW's (graph and full vectors on either tier): its name was
    placed off both lines, next to nothing. It is named with the chosen line; IVF-PQ keeps its own name."""
    p = RetrievalPanel()
    qtbot.addWidget(p)
    p.update_results(results)
    names = [text for _x, _y, text, _bold in p.line_labels.points]
    assert names[0] == "HNSW and DiskANN" and "IVF-PQ" in names and "DiskANN" not in names[1:]
