"""The memory wall's 1-2-5 log axis (issue #21): ticks at 1, 2 and 5 of each decade, every one labelled and
read whole where the axis has room, and whole decades where it has not (no label crowding the next)."""

from __future__ import annotations

import math

import pytest

pg = pytest.importorskip("pyqtgraph")

from trinity_desktop.ui.axes import TICK_ROOM_PX, OneTwoFiveAxis  # noqa: E402


def test_one_two_five_ticks_labelled_whole(qapp):
    axis = OneTwoFiveAxis("left")
    axis.setLogMode(False, True)
    levels = axis.logTickValues(math.log10(0.15), math.log10(12.0), 400, [])
    assert len(levels) == 1
    assert axis.logTickStrings(levels[0][1], 1.0, 1.0) == ["0.2", "0.5", "1", "2", "5", "10"]
    assert axis.logTickStrings([math.log10(2000.0), math.log10(3.0)], 1.0, 1.0) == ["2 k", ""]


def test_a_short_axis_falls_back_to_decades(qapp):
    axis = OneTwoFiveAxis("left")
    axis.setLogMode(False, True)
    lo, hi = -3.0, 3.0
    size = 19 * TICK_ROOM_PX - 1  # 19 ticks at 1-2-5 would crowd
    levels = axis.logTickValues(lo, hi, size, pg.AxisItem("left").tickValues(lo, hi, size))
    labelled = [
        t
        for _s, values in levels
        for t, text in zip(values, axis.logTickStrings(values, 1.0, 1.0), strict=True)
        if text
    ]
    assert all(abs(t - round(t)) < 1e-9 for t in labelled)
