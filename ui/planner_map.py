"""The layout planner's map (best step time over two layout axes): its contours, its best cell ringed, and its
axes restyled with the theme, so that a search after a theme change never draws tick text in the old colour.

Contours follow the log10 step time at three levels between cells where a layout fits
(pyqtgraph's marching-squares `isocurve`); the ring marks the map's fastest cell (`planner_search.map_best`).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_seconds

RING_INSET = 0.06  # the ring sits this far inside its cell (cell units): it never touches the next cell
RING_PX = 3.0  # the ring's outer (text-colour) pen; an inner background pen makes it read on any cell
COLORBAR_LABEL = "best step time"


def best_cell(plan) -> tuple[int, int] | None:
    """The (x, y) index of the map's fastest cell, or None when no layout fits."""
    t = np.asarray(plan.map_time, float)
    if not np.isfinite(t).any():
        return None
    i, j = np.unravel_index(int(np.argmin(np.where(np.isfinite(t), t, np.inf))), t.shape)
    return int(i), int(j)


def contour_segments(logt, finite, lo: float, hi: float):
    """Contour segments of log step time at three levels, only between fitting cells: (xs, ys) in connect="pairs"
    order and, per level drawn, (its time text, its segments' midpoints) for the labels."""
    nx, ny = logt.shape
    filled = np.where(finite, logt, hi)
    levels = np.linspace(lo, hi, 5)[1:-1] if hi - lo > 1e-6 and min(nx, ny) >= 2 else []
    xs, ys, lines = [], [], []
    for level in levels:
        seg = np.asarray(pg.functions.isocurve(filled, level, connected=False), float).reshape(-1, 2, 2)
        cells = np.concatenate([np.floor(seg), np.ceil(seg)], axis=1).astype(int)
        cells[..., 0] = np.clip(cells[..., 0], 0, nx - 1)
        cells[..., 1] = np.clip(cells[..., 1], 0, ny - 1)
        seg = seg[finite[cells[..., 0], cells[..., 1]].all(axis=1)] + 0.5
        xs += list(seg[:, :, 0].reshape(-1))
        ys += list(seg[:, :, 1].reshape(-1))
        if len(seg):
            lines.append((fmt_seconds(10**level), seg.mean(axis=1)))  # segment midpoints
    return np.asarray(xs, float), np.asarray(ys, float), lines


class MapMarks:
    """The best cell's ring on the map, and the map's and colour bar's text in the theme's colour."""

    def __init__(self, plot: pg.PlotItem, colorbar: pg.ColorBarItem) -> None:
        self.plot, self.colorbar = plot, colorbar
        self.outer = pg.PlotCurveItem()
        self.inner = pg.PlotCurveItem()
        for z, item in enumerate((self.outer, self.inner), start=5):
            item.setZValue(z)
            plot.addItem(item, ignoreBounds=True)
        self.cell: tuple[int, int] | None = None
        self.restyle()

    def show_best(self, cell: tuple[int, int] | None) -> None:
        """Ring the cell (x, y index), or hide the ring when nothing fits."""
        self.cell = cell
        if cell is None:
            for item in (self.outer, self.inner):
                item.setData([], [])
            return
        x0, y0 = cell[0] + RING_INSET, cell[1] + RING_INSET
        x1, y1 = cell[0] + 1 - RING_INSET, cell[1] + 1 - RING_INSET
        xs, ys = [x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0]
        for item in (self.outer, self.inner):
            item.setData(xs, ys)

    def restyle(self) -> None:
        """The theme's colours on the ring, the map's axes and the colour bar's axis (its label included)."""
        ink, background = theme.plot_text_color(), pw.plot_background()
        self.outer.setPen(pg.mkPen(ink, width=RING_PX + 2))
        self.inner.setPen(pg.mkPen(background, width=RING_PX - 1.5))
        for axis in (self.plot.getAxis("left"), self.plot.getAxis("bottom"), self.colorbar.axis):
            axis.setTextPen(pg.mkPen(ink))
            axis.setPen(pg.mkPen(ink))
        self.colorbar.axis.setLabel(COLORBAR_LABEL, **{"font-size": pw.LABEL_SIZE, "color": ink})
