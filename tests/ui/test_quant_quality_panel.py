"""Quantisation-quality panel: its titles state the computed findings, the cliff is the one highlighted step, a bar
click sets the weight format, and the charts stack on a narrow dock."""

import pytest

from trinity_desktop.model.views.quant_quality import quality_curve
from trinity_desktop.ui.quant_quality_panel import QuantQualityPanel, quality_title, storage_title


def test_titles_state_the_findings():
    assert storage_title() == "As stored, Q4_K → Q2_K saves 41.7%, not 50%"   # 4.5 → 2.625 bits: the bars' labels
    c = quality_curve()
    title = quality_title(c)
    assert c.points[c.cliff].format in title and f"{c.delta_pct[-1]:.1f}%" in title


def test_stacks_when_narrow_and_sets_format(shown_panel, qtbot):
    panel = shown_panel(QuantQualityPanel, size=(683, 700))
    assert panel.plots.direction().name == "TopToBottom"
    wide = shown_panel(QuantQualityPanel, size=(1800, 950))
    assert wide.plots.direction().name == "LeftToRight"
    assert wide.cliff_line.xData[0] == pytest.approx(quality_curve().bits[quality_curve().cliff - 1])
    with qtbot.waitSignal(panel.editRequested) as blocker:
        panel.editRequested.emit({"weight_dtype": "q2_k"})
    assert blocker.args[0] == {"weight_dtype": "q2_k"}
    from trinity_desktop.model.base.dtypes import WEIGHT_FORMATS_STORED

    row = [f.key for f in WEIGHT_FORMATS_STORED].index("q2_k")   # bars run top-down
    assert "Q2_K" in panel.bits_hover(0, float(len(WEIGHT_FORMATS_STORED) - 1 - row))


def test_labels_inside_the_plot(shown_panel, qtbot):
    panel = shown_panel(QuantQualityPanel, size=(960, 1000))
    qtbot.wait(50)
    shown = [i for i in panel.qlabels.items[: len(panel.qlabels.points)] if i.isVisible()]
    assert len(shown) >= 4
    vb = panel.qplot.getViewBox().sceneBoundingRect()
    for item in shown:
        assert vb.contains(item.sceneBoundingRect())


def test_huang_points_on_the_quality_chart(shown_panel):
    import math
    panel = shown_panel(QuantQualityPanel, size=(960, 800))
    xs, ys = panel.low_bit_points.getData()
    assert len(xs) == 5   # GPTQ and AWQ at 4 / 3 / 2 bits less AWQ 2-bit, named off the scale in the caption
    assert "AWQ 2-bit, perplexity 1,700,000, is off the scale" in panel.caption.text()
    i = int(max(range(5), key=lambda j: ys[j]))
    assert ys[i] == pytest.approx(math.log10(100 * (210 / 6.1 - 1)))
    assert "GPTQ 2-bit, group 128 (Llama-3-8B)" in panel.quality_hover(float(xs[i]), float(ys[i]))
    texts = [item.toPlainText() for item in panel.qlabels.items if item.isVisible()]
    assert any("GPTQ/AWQ 3-bit +34%" in t for t in texts)


def test_stacked_in_a_laptop_dock_both_charts_keep_their_room(shown_panel, qtbot):
    """At the 1366 x 768 dock size (517 x 703) the stacked quality chart kept 77-85 px of plot for its eight
    points: it now keeps at least 95 px while every one of the thirteen bars still shows its value label."""
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.model import evaluate

    panel = shown_panel(QuantQualityPanel, evaluate(default_scenario()), size=(517, 703))
    qtbot.waitExposed(panel)
    qtbot.wait(100)   # the restack and the plots' layout settle
    assert panel.plots.direction().name == "TopToBottom"
    assert panel.qplot.getViewBox().height() >= 95
    assert all(label.isVisible() for label in panel.value_labels)
