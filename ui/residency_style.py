"""Colours, ticks and labels of the KV-cache residency panel and its memory hierarchy chart."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtGui

from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.units import fmt_seconds

_CIVIDIS = pg.colormap.get("cividis")


def _cividis(v: float) -> str:
    return _CIVIDIS.map(v, mode="qcolor").name()


# HBM takes the memory resource colour; the slower tiers a dark-to-light cividis sequence, from 0.25 (at 0.12
# host DRAM was navy, 1.4:1 on the dark theme's plot); their capacity lines are dashed in the text colour.
TIER_COLORS = {"hbm": theme.RESOURCE_COLORS["memory"], "host": _cividis(0.25), "cxl": _cividis(0.5),
               "ssd": _cividis(0.88), "sram": theme.ACCENT_COLORS["pink"], "rdma": theme.FOCUS_COLOR}
MARKER_COLOR = theme.FOCUS_COLOR


def legend_fill() -> QtGui.QColor:
    """The legend's box: the theme's plot background, nearly opaque (never a light box on a dark plot)."""
    fill = QtGui.QColor(pw.plot_background())
    fill.setAlpha(220)
    return fill


def marker_text() -> str:
    """The marker's hue for its "current" label, made readable on the theme's plot background (the
    vermilion itself is 3.9:1 on white, under the 4.5:1 that text needs)."""
    return theme.readable(MARKER_COLOR, pw.plot_background())


def step_color() -> str:
    """The step-time curve and its axis: the theme's text colour, so it reads on every background."""
    return theme.plot_text_color()


def log_ticks(lo: float, hi: float, base2: bool) -> list[tuple[float, str]]:
    """Ticks at powers of 2 (tokens) or of 10, within [lo, hi] (data units), placed at log10."""
    ticks = []
    if base2:
        for e in range(0, 25):
            v = float(2 ** e)
            if lo * 0.999 <= v <= hi * 1.001:
                ticks.append(v)
        if len(ticks) > 9:
            ticks = ticks[:: 2] if ticks.index(ticks[-1]) % 2 == 0 else ticks[1:: 2]
    else:
        ticks = [10.0 ** e for e in range(-9, 10) if lo * 0.999 <= 10.0 ** e <= hi * 1.001]
    return [(math.log10(v), findings.count_text(v)) for v in ticks]


def time_label(seconds: float) -> str:
    return fmt_seconds(seconds).replace(".0 ", " ")
