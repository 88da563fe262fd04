"""Trade-off explorer: every drawn bubble is named on screen, beside it or by a number on it and the key under
the chart (at the 1920 x 1080 layout's dock size, 8 bubbles of 'spend bandwidth -> save memory' had 7 unnamed)."""

import math
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402

from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.views import techniques as tq  # noqa: E402
from trinity_desktop.ui import label_layout as ll  # noqa: E402
from trinity_desktop.ui.tradeoff_panel import TradeoffPanel  # noqa: E402

DOCK_SIZES = [
    (784, 530),
    (517, 680),
]  # the explorer's panel in the default layout at 1920 x 1080 and 1366 x 768


@pytest.fixture(scope="module")
def train_results():
    return evaluate(default_scenario())


def _shown_texts(panel: TradeoffPanel) -> str:
    """Every text a person can read on the panel: the plot's visible text items and the visible labels."""
    scene = panel.plot.scene()
    texts = [
        i.toPlainText().replace("\n", " ")
        for i in scene.items()
        if isinstance(i, pg.TextItem) and i.isVisible()
    ]
    texts += [w.text() for w in panel.findChildren(type(panel.caption)) if w.isVisible()]
    return "\n".join(texts).replace("\u2028", " ")


@pytest.mark.parametrize("size", DOCK_SIZES)
@pytest.mark.parametrize("direction", tq.DIRECTIONS)
def test_every_drawn_bubble_is_named_on_screen(shown_panel, qtbot, train_results, size, direction):
    panel = shown_panel(TradeoffPanel, train_results, size)
    panel.set_direction(*direction)
    qtbot.wait(30)
    names = tq.load_techniques()
    shown = " ".join(_shown_texts(panel).split())  # wrapped names read as one line
    for key, (_x, _y, _size, _color, enabled) in panel.bubbles().items():
        if enabled:
            assert names[key].name in shown, f"{names[key].name!r} is drawn but not named on screen"


def test_a_number_sits_on_its_bubble_and_the_key_names_it(shown_panel, qtbot, train_results):
    panel = shown_panel(TradeoffPanel, train_results, DOCK_SIZES[0])
    panel.set_direction("bandwidth", "memory")
    qtbot.wait(30)
    assert panel.hidden_labels, "a crowded direction at this size numbers some bubbles"
    vb = panel.plot.getViewBox()
    key_text = panel.key.key_text()
    names = tq.load_techniques()
    for key in panel.hidden_labels:
        number = panel.key.numbers[key]
        assert f"{number} {names[key].name}" in key_text
        item = next(
            i for i in panel.key.items if i.isVisible() and str(number) in i.toPlainText().split(", ")
        )
        centre = item.mapToScene(item.boundingRect().center())
        bx, by = ll.scene_point(vb, *panel._plot_xy[key])
        grouped = len(item.toPlainText().split(", ")) > 1
        if not grouped:
            assert math.hypot(centre.x() - bx, centre.y() - by) <= panel.bubbles()[key][2] / 2
    assert panel.key.label.isVisible() and "…" not in key_text


def test_no_key_when_every_bubble_is_named(shown_panel, qtbot, train_results):
    panel = shown_panel(TradeoffPanel, train_results, (1400, 1000))
    panel.set_direction("compute", "memory")
    qtbot.wait(30)
    assert not panel.hidden_labels and not panel.key.label.isVisible() and panel.key.key_text() == ""


@pytest.mark.parametrize("size", [*DOCK_SIZES, (517, 600), (700, 900)])
@pytest.mark.parametrize("direction", tq.DIRECTIONS)
def test_the_not_applicable_list_shows_whole_rows(shown_panel, qtbot, train_results, size, direction):
    """No row of the list is cut through its text at the box's bottom (it showed half a row at both sizes)."""
    panel = shown_panel(TradeoffPanel, train_results, size)
    panel.set_direction(*direction)
    qtbot.wait(30)
    view = panel.na_list
    if not view.isVisible():
        return
    shown = view.viewport().rect()
    rows = [view.visualItemRect(view.item(i)) for i in range(view.count())]
    seen = [r for r in rows if r.intersects(shown)]
    assert seen, "the list shows at least one row"
    for r in seen:
        assert shown.contains(r), f"row {r} is cut by the list's box {shown}"


@pytest.mark.parametrize("size", [*DOCK_SIZES, (700, 600)])
@pytest.mark.parametrize("direction", tq.DIRECTIONS)
def test_the_spend_axis_labels_are_a_line_apart(shown_panel, qtbot, train_results, size, direction):
    """On a low chart '+1%', '0%' and '−1%' printed on each other (1920 x 1080, 'spend bandwidth')."""
    from PySide6 import QtGui

    from trinity_desktop.ui import plot_widgets as pw

    panel = shown_panel(TradeoffPanel, train_results, size)
    panel.set_direction(*direction)
    qtbot.wait(30)
    vb = panel.plot.getViewBox()
    lo, hi = vb.viewRange()[1]
    ticks = panel.plot.getAxis("left")._tickLevels[0]
    ys = sorted(ll.scene_point(vb, 0.0, pos)[1] for pos, _ in ticks if lo <= pos <= hi)
    line = QtGui.QFontMetrics(pw.font()).lineSpacing()
    assert len(ys) >= 2
    gaps = [b - a for a, b in zip(ys, ys[1:], strict=False)]
    assert min(gaps) >= line - 0.5, f"tick labels {min(gaps):.1f} px apart, a line is {line} px"
