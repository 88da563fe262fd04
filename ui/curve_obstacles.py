"""Drawn lines as obstacles for on-plot labels: a label never sits on a curve or a reference line.

`line_boxes(items)` gives the scene-pixel boxes (`label_layout.Box`) that cover every visible curve
(`PlotCurveItem`, a `PlotDataItem`'s curve) and `InfiniteLine` of `items`, `label_layout.strip` boxes along
each drawn segment, so that `SpatialIndex.hits` / `LabelLayout.place` keep labels off them. Only the part of
a line inside `bounds` (the plot's scene rect) is covered: a line running to infinity costs no more than
the plot's width.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pyqtgraph as pg

from trinity_desktop.ui import label_layout as ll

THICKNESS_PX = 6.0   # a line's pen plus a little air on each side


def _scene_points(item, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    parent = item.parentItem()
    while parent is not None and not isinstance(parent, pg.ViewBox):
        parent = parent.parentItem()
    if parent is not None:
        parent.updateMatrix()   # a range set since the last paint moves the line now, not at the next paint
    m = item.sceneTransform()
    return m.m11() * x + m.m21() * y + m.dx(), m.m12() * x + m.m22() * y + m.dy()


def _segments(item) -> np.ndarray:
    """The item's drawn line as (n, 4) scene-pixel segments."""
    if isinstance(item, pg.PlotDataItem):
        item = item.curve
    if isinstance(item, pg.InfiniteLine):
        r = item.boundingRect()
        xs, ys = _scene_points(item, np.array([r.left(), r.right()]), np.array([r.center().y()] * 2))
        return np.array([[xs[0], ys[0], xs[1], ys[1]]])
    x, y = item.getData()
    if x is None or len(x) < 2:
        return np.zeros((0, 4))
    sx, sy = _scene_points(item, np.asarray(x, float), np.asarray(y, float))
    if item.opts.get("connect") == "pairs":
        n = len(sx) // 2 * 2
        seg = np.stack([sx[0:n:2], sy[0:n:2], sx[1:n:2], sy[1:n:2]], axis=1)
    else:
        seg = np.stack([sx[:-1], sy[:-1], sx[1:], sy[1:]], axis=1)
    return seg[np.isfinite(seg).all(axis=1)]


def _clipped(seg: np.ndarray, bounds: ll.Box) -> np.ndarray:
    """Segments cut to the bounds (Liang-Barsky); those wholly outside dropped."""
    x0, y0, dx, dy = seg[:, 0], seg[:, 1], seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1]
    lo, hi, keep = np.zeros(len(seg)), np.ones(len(seg)), np.ones(len(seg), bool)
    for p, q in ((-dx, x0 - bounds[0]), (dx, bounds[2] - x0), (-dy, y0 - bounds[1]), (dy, bounds[3] - y0)):
        flat = np.abs(p) < 1e-12
        keep &= ~(flat & (q < 0))
        t = np.where(flat, 0.0, q / np.where(flat, 1.0, p))
        lo = np.where(~flat & (p < 0), np.maximum(lo, t), lo)
        hi = np.where(~flat & (p > 0), np.minimum(hi, t), hi)
    keep &= lo <= hi
    lo, hi = lo[keep], hi[keep]
    s = seg[keep]
    d = s[:, 2:] - s[:, :2]
    return np.concatenate([s[:, :2] + d * lo[:, None], s[:, :2] + d * hi[:, None]], axis=1)


def line_boxes(items: Iterable, bounds: ll.Box, thickness: float = THICKNESS_PX) -> list[ll.Box]:
    """Boxes covering the visible lines of `items` inside `bounds`."""
    out: list[ll.Box] = []
    for item in items:
        if not item.isVisible():
            continue
        seg = _segments(item)
        if not len(seg):
            continue
        for x0, y0, x1, y1 in _clipped(seg, bounds):
            out += ll.strip(float(x0), float(y0), float(x1), float(y1), thickness)
    return out


def line_segments(items: Iterable, bounds: ll.Box) -> np.ndarray:
    """The visible lines of `items` inside `bounds`, as (n, 4) scene-pixel segments (for an exact test)."""
    parts = [_clipped(seg, bounds) for item in items if item.isVisible() and len(seg := _segments(item))]
    return np.concatenate(parts) if parts else np.zeros((0, 4))


def crosses_text(segments: np.ndarray, cx: float, cy: float, w: float, h: float, degrees: float = 0.0,
                 inset: float = 4.0) -> bool:
    """True when a segment runs through the glyphs of a w × h text centred on (cx, cy), turned `degrees`
    counter-clockwise on screen; `inset` pixels of the box's margin may be touched (a TextItem's 4 px
    document margin holds no glyph). The segments are turned into the text's frame and clipped to its box."""
    hw, hh = w / 2 - inset, h / 2 - inset
    if not len(segments) or hw <= 0 or hh <= 0:
        return False
    r = math.hypot(hw, hh)   # the turned box lies inside this circle: segments whose extent misses it cannot cross
    xs, ys = segments[:, [0, 2]], segments[:, [1, 3]]
    near = ((xs.max(axis=1) >= cx - r) & (xs.min(axis=1) <= cx + r)
            & (ys.max(axis=1) >= cy - r) & (ys.min(axis=1) <= cy + r))
    if not near.any():
        return False
    segments = segments[near]
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    x, y = segments[:, [0, 2]] - cx, segments[:, [1, 3]] - cy
    u, v = x * c - y * s, x * s + y * c   # along the text (screen: (cos a, -sin a)), and across it
    local = np.stack([u[:, 0], v[:, 0], u[:, 1], v[:, 1]], axis=1)
    return bool(len(_clipped(local, (-hw, -hh, hw, hh))))


def joined(parts: Iterable[np.ndarray]) -> np.ndarray:
    """Segment arrays as one (n, 4) array, so one `crosses_text` call tests them all."""
    parts = [p for p in parts if len(p)]
    return np.concatenate(parts) if parts else np.zeros((0, 4))
