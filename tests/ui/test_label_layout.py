"""The shared label placer (ui/label_layout.py) and the wrapping control row (ui/wrap_layout.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6 import QtWidgets

from trinity_desktop.ui.label_layout import PAD, Label, LabelLayout, around, inside, overlaps, place
from trinity_desktop.ui.wrap_layout import control_row

BOUNDS = (0.0, 0.0, 400.0, 300.0)


def test_a_label_goes_right_of_its_point_when_there_is_room():
    boxes = place([Label("a", 50, 20, around(100, 100, 50, 20, gap=8))], BOUNDS)
    assert boxes["a"] == (108.0, 90.0, 158.0, 110.0)


def test_a_label_flips_to_the_left_at_the_right_edge():
    boxes = place([Label("a", 50, 20, around(380, 100, 50, 20, gap=8))], BOUNDS)
    assert boxes["a"] == (322.0, 90.0, 372.0, 110.0)


def test_a_second_label_avoids_the_first_and_the_obstacles():
    marker = (95.0, 95.0, 105.0, 105.0)
    labels = [Label("a", 50, 20, around(100, 100, 50, 20, gap=8)), Label("b", 50, 20, around(104, 100, 50, 20, gap=12))]
    boxes = place(labels, BOUNDS, [marker])
    assert not overlaps(boxes["a"], boxes["b"]) and not overlaps(boxes["b"], marker)
    assert boxes["b"] == (42.0, 90.0, 92.0, 110.0)   # b flipped to the left of its point


def test_a_label_with_no_room_is_hidden():
    boxes = place([Label("a", 500, 20, around(100, 100, 500, 20, gap=8))], BOUNDS)
    assert boxes["a"] is None


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 400), st.floats(0, 300), st.integers(10, 120), st.integers(10, 40)),
                max_size=40))
def test_placed_labels_never_overlap_and_stay_inside(points):
    labels = [Label(str(i), w, h, around(x, y, w, h, gap=6, steps=2)) for i, (x, y, w, h) in enumerate(points)]
    boxes = [b for b in place(labels, BOUNDS).values() if b is not None]
    assert all(inside(b, BOUNDS) for b in boxes)
    assert not any(overlaps(a, b, PAD) for i, a in enumerate(boxes) for b in boxes[i + 1:])   # margins may touch


def test_an_unchanged_placement_comes_from_the_cache():
    layout = LabelLayout()
    labels = [Label("a", 50, 20, around(100, 100, 50, 20, gap=8))]
    first = layout.place(labels, BOUNDS)
    assert layout.place(list(labels), BOUNDS) is first and layout.computed == 1
    layout.place(labels, (0.0, 0.0, 300.0, 300.0))
    assert layout.computed == 2


def test_a_control_row_wraps_instead_of_widening_its_panel(qtbot):
    panel = QtWidgets.QWidget()
    qtbot.addWidget(panel)
    combos = []
    for i in range(4):
        combo = QtWidgets.QComboBox()
        combo.addItem(f"a fairly long choice number {i}")
        combos.append((f"Choice {i}", combo))
    row = control_row(combos)
    QtWidgets.QVBoxLayout(panel).addLayout(row)
    widest = max(row.itemAt(i).minimumSize().width() for i in range(row.count()))
    assert row.minimumSize().width() == widest
    assert row.heightForWidth(widest + 10) >= 3 * row.heightForWidth(10_000)


def test_obstacles_far_outside_or_not_finite_cost_nothing():
    """A box reaching far off the plot (presentation zoom maps markers to huge pixel values) or a NaN box
    is filed only in the plot's own bins: placement stays immediate and still right."""
    far = (-1e12, 150.0, 1e12, 160.0)               # a line across the plot, to infinity both ways
    nan = (float("nan"), 0.0, 10.0, 10.0)
    boxes = place([Label("a", 50, 20, around(100, 100, 50, 20, gap=8))], BOUNDS, [far, nan])
    assert boxes["a"] == (108.0, 90.0, 158.0, 110.0)
    blocked = place([Label("b", 50, 20, ((100.0, 145.0),))], BOUNDS, [far])
    assert blocked["b"] is None


def test_spread_by_size_keeps_labels_of_different_heights_apart_and_inside():
    """Labels of different heights (a wrapped one is taller) never overlap, keep their order and stay inside."""
    from trinity_desktop.ui.label_layout import spread_by_size

    centres = np.array([5.0, 5.1, 5.2, 0.5])
    sizes = np.array([1.0, 2.0, 1.0, 1.0])
    ys = spread_by_size(centres, sizes, pad=0.1, lo=0.0, hi=10.0)
    order = np.argsort(centres, kind="stable")
    s, h = ys[order], sizes[order]
    assert np.all(s[1:] - h[1:] / 2 >= s[:-1] + h[:-1] / 2 + 0.1 - 1e-12)
    assert np.all(ys - sizes / 2 >= -1e-12) and np.all(ys + sizes / 2 <= 10.0 + 1e-12)
    assert ys[3] == 0.5  # an isolated label stays at its segment
    top = spread_by_size(np.array([9.8, 9.9]), np.array([1.0, 1.0]), pad=0.0, lo=0.0, hi=10.0)
    assert top.tolist() == [8.5, 9.5]  # pushed down from the top edge


def test_thinned_tick_levels_are_disjoint_coarse_first_and_cover_every_tick():
    from trinity_desktop.ui.label_layout import thinned_tick_levels

    ticks = [(float(i), f"stage {i}") for i in range(34)]
    levels = thinned_tick_levels(ticks)
    flat = [t for level in levels for t in level]
    assert sorted(flat) == sorted(ticks) and len(flat) == len(ticks)   # every tick once
    assert [t[0] for t in levels[0]] == [0.0, 16.0, 32.0]              # the first (always drawn) level is sparse
    assert thinned_tick_levels([(0.5, "1")]) == [[(0.5, "1")]]
