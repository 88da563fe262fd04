"""Split computing panel at the two docked sizes of the default layout (1920x1080: 784x519, wide and short;
1366x768: 517x703, tall and narrow): both charts keep a readable plot area, the energy axis names at least three
values, no label is drawn inside the latency chart's data, and each legend entry stays on one line."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtWidgets

from trinity_desktop.ui.split_panel import SplitPanel, _round_ticks

DOCK_SIZES = {"1920x1080": (784, 519), "1366x768": (517, 703)}
MIN_PLOT_PX = {"time": 120, "energy": 95}   # was about 85/45 (1920) and 160/50 (1366)


def _settle(qtbot, panel):
    qtbot.waitUntil(lambda: panel.time_plot.vb.sceneBoundingRect().height() > 0, timeout=2000)
    for _ in range(4):
        QtWidgets.QApplication.processEvents()


@pytest.mark.parametrize("screen", sorted(DOCK_SIZES))
def test_both_charts_keep_a_readable_plot_area(shown_panel, qtbot, screen):
    panel = shown_panel(SplitPanel, size=DOCK_SIZES[screen])
    _settle(qtbot, panel)
    assert panel.side_by_side() == (screen == "1920x1080")
    assert panel.time_plot.vb.sceneBoundingRect().height() >= MIN_PLOT_PX["time"]
    assert panel.energy_plot.vb.sceneBoundingRect().height() >= MIN_PLOT_PX["energy"]
    energy_ticks = panel.energy_plot.getAxis("left")._tickLevels[0]
    assert len([v for v, _ in energy_ticks if v > 0]) >= 3
    # the optimum is named in the key, never as text over the bars
    texts = [i for i in panel.time_plot.vb.addedItems if hasattr(i, "textItem")]
    assert texts == []
    assert "optimum:&nbsp;all&nbsp;device" in panel.legend_label.text()


def test_every_legend_entry_is_one_unbreakable_run():
    panel = SplitPanel()
    entries = panel.legend_label.text().split("&nbsp;&nbsp; ")
    assert len(entries) == 6   # three parts, energy, the optimum and (AlexNet on a phone) the least-energy split
    assert all(" " not in entry.replace("<span style=", "") for entry in entries)


@pytest.mark.parametrize("peak, expected", [(72.0, [0, 20, 40, 60]), (31.0, [0, 10, 20, 30]),
                                            (0.9, [0, 0.2, 0.4, 0.6, 0.8]), (100.0, [0, 20, 40, 60, 80, 100])])
def test_energy_ticks_are_round_and_at_least_three(peak, expected):
    assert [v for v, _ in _round_ticks(peak)] == pytest.approx(expected)


def test_the_energy_chart_marks_and_names_the_split_its_title_names(qtbot):
    """The energy chart's title named pool5 as the least-energy split while its ▼ sat on the latency
    optimum (all device) and no tick named pool5: its ▼ marks its own finding and that split is named."""
    panel = SplitPanel()
    qtbot.addWidget(panel)
    e = int(np.argmin(panel._table["energy_j"]))
    name = panel._profile.layer_names[e - 1]
    assert f"after {name}" in panel.energy_plot.titleLabel.text and e != panel.optimal_index()
    assert list(panel.energy_marker.getData()[0]) == [float(e)]
    assert (float(e), name) in panel.energy_plot.getAxis("bottom")._tickLevels[0]
    assert f"least&nbsp;energy:&nbsp;after&nbsp;{name}" in panel.legend_label.text()
