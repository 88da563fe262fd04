"""Slide transitions: intermediate Results between two scenarios, so bars, markers and curves glide.

Numbers that both results share (memory and time components, bytes per link, pressures, totals) are
interpolated linearly; anything else takes the target's value. Results of different kinds (a training
step and a decode step) have nothing to glide between, so the transition jumps.

Curves that panels compute from the scenario itself (roofline traces, residency curves) glide too:
`CurveTween` records every visible curve's data before a slide change and moves each point to its new
position, for curves whose point count is unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import pyqtgraph as pg

from trinity_desktop.model import Pressure, Results

DURATION_MS = 300


def _mix(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


def _mix_map(a: Mapping[str, float], b: Mapping[str, float], t: float) -> dict[str, float]:
    return {k: _mix(a.get(k, 0.0), v, t) for k, v in b.items()}


def can_glide(a: Results, b: Results) -> bool:
    return a.kind == b.kind and set(a.memory) == set(b.memory) and set(a.time) == set(b.time)


def interpolate(a: Results, b: Results, t: float) -> Results:
    """Results a fraction t (0..1) of the way from a to b; t = 1 gives b itself."""
    if t >= 1.0 or not can_glide(a, b):
        return b
    p = Pressure(*(_mix(x, y, t) for x, y in zip(a.pressure.as_tuple(), b.pressure.as_tuple(), strict=True)))
    return dataclasses.replace(
        b, memory=_mix_map(a.memory, b.memory, t), memory_total=_mix(a.memory_total, b.memory_total, t),
        capacity=_mix(a.capacity, b.capacity, t), time=_mix_map(a.time, b.time, t),
        time_total=_mix(a.time_total, b.time_total, t), flops=_mix(a.flops, b.flops, t),
        bytes_by_link=_mix_map(a.bytes_by_link, b.bytes_by_link, t), pressure=p,
        train=_mix_map(a.train, b.train, t), infer=_mix_map(a.infer, b.infer, t))


def _curves(root) -> list[pg.PlotDataItem]:
    items = []
    for view in root.findChildren(pg.GraphicsView):
        if view.isVisible() and view.scene() is not None:
            items += [it for it in view.scene().items() if isinstance(it, pg.PlotDataItem) and it.isVisible()]
    return items


def _data(item: pg.PlotDataItem):
    x, y = item.getOriginalDataset()
    if x is None or y is None:
        return None
    return np.array(x, dtype=float), np.array(y, dtype=float)


def _point_count(item: pg.PlotDataItem) -> int:
    x, _ = item.getOriginalDataset()
    return -1 if x is None else len(x)


class CurveTween:
    """Glide every visible curve under `root` from its data at construction to its data at `capture_after`."""

    def __init__(self, root):
        self.root = root
        self.before = {id(it): (it, _data(it)) for it in _curves(root)}
        self.pairs: list[tuple[pg.PlotDataItem, tuple, tuple]] = []

    def capture_after(self) -> int:
        """Pair each curve's old and new data (same point count, finite, changed); returns how many glide."""
        for item in _curves(self.root):
            old = self.before.get(id(item))
            new = _data(item)
            if old is None or old[1] is None or new is None or old[0] is not item:
                continue
            (x0, y0), (x1, y1) = old[1], new
            same = x0.shape == x1.shape and y0.shape == y1.shape
            if same and all(np.all(np.isfinite(a)) for a in (x0, y0, x1, y1)) and not (
                    np.array_equal(x0, x1) and np.array_equal(y0, y1)):
                self.pairs.append((item, (x0, y0), (x1, y1)))
        return len(self.pairs)

    def apply(self, t: float) -> None:
        """Move each paired curve a fraction t of the way. A curve its panel has since redrawn with another
        point count (a sweep shown, the next edit) is the panel's again: gliding it would put the old count of
        points under the panel's per-point pens and symbols."""
        self.pairs = [pair for pair in self.pairs if _point_count(pair[0]) == len(pair[2][0])]
        for item, (x0, y0), (x1, y1) in self.pairs:
            if t >= 1.0:
                item.setData(x1, y1)
            else:
                item.setData(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)
