"""One home for on-plot label placement: no two labels overlap, none leaves its plot.

Every chart panel gives its labels to `LabelLayout.place`: each label has a size in pixels and a list of
candidate top-left corners in order of preference (`around` builds the usual right / left / above /
below ring around a marker; panels add their own, e.g. both sides of a line). The placer takes, label by
label in the order given (the most important first), the first candidate that

- lies inside the plot's bounds (so nothing is cut), and
- meets no obstacle (markers, fixed text) and no label placed before it.

A label with no such candidate is not drawn (`None`); the panel hides it and its hover read-out names the
item instead ("behind a hover"). Collisions are found with a uniform grid of bins (`SpatialIndex`), so a
placement costs O(labels × candidates) box tests against the few boxes in the touched bins, and
`LabelLayout` keeps the last answer: when nothing changed (same texts, anchors and plot size) it returns
the cached placement without testing anything. All geometry is in scene pixels (x right, y down).
`spread_by_size` is the one-dimensional case (labels in a column beside a bar or a list of points).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

Box = tuple[float, float, float, float]   # (left, top, right, bottom) in pixels, y down

SIDES = ("right", "left", "above", "below")
PAD = 3.0   # boxes may share this many pixels: a TextItem's box has a 4 px margin round its glyphs


def box_of(x: float, y: float, w: float, h: float) -> Box:
    return (x, y, x + w, y + h)


def overlaps(a: Box, b: Box, pad: float = 0.0) -> bool:
    """True when the boxes share more than `pad` pixels in both directions."""
    return min(a[2], b[2]) - max(a[0], b[0]) > pad and min(a[3], b[3]) - max(a[1], b[1]) > pad


def inside(box: Box, bounds: Box, margin: float = 0.0) -> bool:
    return (box[0] >= bounds[0] + margin and box[1] >= bounds[1] + margin
            and box[2] <= bounds[2] - margin and box[3] <= bounds[3] - margin)


class SpatialIndex:
    """Boxes filed in square bins of `cell` pixels; `hits` tests only the boxes in the bins a box touches.
    Only the bins inside `area` (the plot) are kept: a box reaching far outside it (a marker off the view, a
    line to infinity) costs no more than the plot's own bins."""

    def __init__(self, cell: float = 96.0, area: Box = (-4096.0, -4096.0, 8192.0, 8192.0)):
        self.cell = float(cell)
        c = self.cell
        self._limits = (int(area[0] // c) - 1, int(area[1] // c) - 1, int(area[2] // c) + 1, int(area[3] // c) + 1)
        self._bins: dict[tuple[int, int], list[Box]] = {}

    def _range(self, box: Box) -> tuple[range, range]:
        """The bins a box touches, within the area; none for a box with a NaN or infinite side."""
        if not all(math.isfinite(v) for v in box):
            return range(0), range(0)
        c, (i0, j0, i1, j1) = self.cell, self._limits
        return (range(max(int(box[0] // c), i0), min(int(box[2] // c), i1) + 1),
                range(max(int(box[1] // c), j0), min(int(box[3] // c), j1) + 1))

    def _cells(self, box: Box):
        columns, rows = self._range(box)
        for i in columns:
            for j in rows:
                yield i, j

    def add(self, box: Box) -> None:
        for cell in self._cells(box):
            self._bins.setdefault(cell, []).append(box)

    def hits(self, box: Box, pad: float = 0.0) -> bool:
        bins = self._bins
        x0, y0, x1, y1 = box
        columns, rows = self._range(box)
        for i in columns:
            for j in rows:
                for o in bins.get((i, j), ()):
                    if min(x1, o[2]) - max(x0, o[0]) > pad and min(y1, o[3]) - max(y0, o[1]) > pad:
                        return True
        return False


@dataclass(frozen=True)
class Label:
    """A label to place: `key` names it for the caller, `candidates` are top-left corners (pixels) in order
    of preference, all for a box of `width` × `height` pixels."""

    key: str
    width: float
    height: float
    candidates: tuple[tuple[float, float], ...]


def around(x: float, y: float, w: float, h: float, gap: float,
           sides: Sequence[str] = SIDES, steps: int = 0) -> tuple[tuple[float, float], ...]:
    """Top-left corners for a w × h label beside a point (x, y) at `gap` pixels, one per side in the order
    given ("right", "left", "above", "below", "above-right", "below-right", "above-left", "below-left",
    "right-up", "right-down"),
    then `steps` rings further out (one label height or width each) for crowded places."""
    out = []
    for k in range(steps + 1):
        dy, dx = k * h, k * (w / 2)
        spots = {"right": (x + gap + dx, y - h / 2), "left": (x - gap - w - dx, y - h / 2),
                 "above": (x - w / 2, y - gap - h - dy), "below": (x - w / 2, y + gap + dy),
                 "above-right": (x + gap * 0.7 + dx, y - gap * 0.7 - h - dy),
                 "below-right": (x + gap * 0.7 + dx, y + gap * 0.7 + dy),
                 "above-left": (x - gap * 0.7 - w - dx, y - gap * 0.7 - h - dy),
                 "below-left": (x - gap * 0.7 - w - dx, y + gap * 0.7 + dy),
                 # a column right of the point, one label height up or down per ring (names at lines' ends)
                 "right-up": (x + gap, y - h / 2 - dy), "right-down": (x + gap, y - h / 2 + dy)}
        out += [spots[s] for s in sides]
    return tuple(out)


def strip(x0: float, y0: float, x1: float, y1: float, thickness: float) -> list[Box]:
    """Boxes covering a band of `thickness` pixels along the segment (x0, y0)-(x1, y1): an obstacle for a
    line or a rotated text (one box per `thickness` of length, so a diagonal does not block its whole
    bounding box)."""
    length = math.hypot(x1 - x0, y1 - y0)
    n = max(int(length // max(thickness, 1.0)) + 1, 1)
    half = thickness / 2
    out = []
    for k in range(n + 1):
        cx, cy = x0 + (x1 - x0) * k / n, y0 + (y1 - y0) * k / n
        out.append((cx - half, cy - half, cx + half, cy + half))
    return out


def rotated_text(cx: float, cy: float, w: float, h: float, degrees: float) -> list[Box]:
    """Obstacle boxes for a w × h text centred on (cx, cy) and turned `degrees` counter-clockwise on screen.
    The text is cut into pieces about h long; each piece's box bounds that piece turned as drawn, so the
    boxes together cover the whole turned text (squares along its middle would leave its corners free, and a
    parallel label could sit there)."""
    a = math.radians(degrees)
    c, s = abs(math.cos(a)), abs(math.sin(a))
    n = max(math.ceil(w / max(h, 1.0)), 1)
    piece = w / n
    half_x, half_y = (piece * c + h * s) / 2, (piece * s + h * c) / 2
    out = []
    for k in range(n):
        t = (k + 0.5) * piece - w / 2
        px, py = cx + math.cos(a) * t, cy - math.sin(a) * t
        out.append((px - half_x, py - half_y, px + half_x, py + half_y))
    return out


def spread_by_size(centres: np.ndarray, sizes: np.ndarray, pad: float, lo: float, hi: float) -> np.ndarray:
    """Move label centres apart so neighbours' extents (`sizes`, in the same units) never overlap, with `pad`
    between them, keeping every label inside [lo, hi] where the total fits; the order of `centres` is kept."""
    c = np.asarray(centres, dtype=float)
    h = np.asarray(sizes, dtype=float)
    if c.size == 0:
        return c
    order = np.argsort(c, kind="stable")
    s, hs = c[order].copy(), h[order]
    s[0] = max(s[0], lo + hs[0] / 2)
    for i in range(1, s.size):
        s[i] = max(s[i], s[i - 1] + (hs[i - 1] + hs[i]) / 2 + pad)
    if s[-1] + hs[-1] / 2 > hi:
        s[-1] = hi - hs[-1] / 2
        for i in range(s.size - 2, -1, -1):
            s[i] = min(s[i], s[i + 1] - (hs[i] + hs[i + 1]) / 2 - pad)
    out = np.empty_like(s)
    out[order] = s
    return out


TICK_STRIDES = (16, 8, 4, 2, 1)


def thinned_tick_levels(ticks: Sequence[tuple[float, str]]) -> list[list[tuple[float, str]]]:
    """Axis ticks as disjoint pyqtgraph tick levels: every 16th tick, then the 8ths between them, ... then the
    rest (see `set_thinned_ticks`)."""
    levels = [[t for i, t in enumerate(ticks) if i % stride == 0 and not any(i % c == 0 for c in TICK_STRIDES[:k])]
              for k, stride in enumerate(TICK_STRIDES)]
    return [level for level in levels if level]


def set_thinned_ticks(axis: pg.AxisItem, ticks: Sequence[tuple[float, str]]) -> None:
    """Give `axis` these named ticks as thinned levels: pyqtgraph draws the first level always and each further
    level only while the texts fill at most 85% of the axis, so a short axis names every few ticks, evenly
    spaced, instead of overlapping them (`fit_plot_text` leaves such an axis alone)."""
    axis.thinned_ticks = True
    axis.setStyle(textFillLimits=[(0, 0.85)], maxTextLevel=len(TICK_STRIDES) - 1, maxTickLevel=len(TICK_STRIDES) - 1)
    axis.setTicks(thinned_tick_levels(ticks))


def place(labels: Iterable[Label], bounds: Box, obstacles: Iterable[Box] = (), pad: float = PAD,
          margin: float = 1.0, cell: float = 96.0) -> dict[str, Box | None]:
    """Greedy placement (see the module docstring): key → the box taken, or None (hide; hover instead)."""
    index = SpatialIndex(cell, bounds)
    for box in obstacles:
        index.add(box)
    out: dict[str, Box | None] = {}
    for label in labels:
        out[label.key] = None
        for x, y in label.candidates:
            box = box_of(x, y, label.width, label.height)
            if inside(box, bounds, margin) and not index.hits(box, pad):
                index.add(box)
                out[label.key] = box
                break
    return out


class LabelLayout:
    """`place` with a memory: the same labels, bounds and obstacles give the cached boxes at no cost."""

    def __init__(self, pad: float = PAD, margin: float = 1.0):
        self.pad, self.margin = pad, margin
        self._key: tuple | None = None
        self._boxes: dict[str, Box | None] = {}
        self.computed = 0   # how many placements were really computed (the rest came from the cache)

    def place(self, labels: Sequence[Label], bounds: Box, obstacles: Sequence[Box] = ()) -> dict[str, Box | None]:
        key = (tuple(labels), tuple(round(v, 1) for v in bounds), tuple(obstacles))
        if key != self._key:
            self._boxes = place(labels, bounds, obstacles, self.pad, self.margin)
            self._key = key
            self.computed += 1
        return self._boxes

    def invalidate(self) -> None:
        self._key = None


# --- pyqtgraph glue ------------------------------------------------------------------------------------
def text_size(item: pg.TextItem) -> tuple[float, float]:
    """The pixel size of an unrotated TextItem's box (its text and the document margins)."""
    rect = item.textItem.boundingRect()
    return rect.width(), rect.height()


def measure(text: str, font: QtGui.QFont, margin: float = 4.0) -> tuple[float, float]:
    """The pixel size a TextItem with this text and font will have (QTextDocument margin `margin`)."""
    metrics = QtGui.QFontMetricsF(font)
    lines = text.split("\n") or [""]
    return (max(metrics.horizontalAdvance(line) for line in lines) + 2 * margin,
            metrics.lineSpacing() * len(lines) + 2 * margin)


def view_bounds(vb: pg.ViewBox) -> Box:
    """The ViewBox's area in scene pixels: everything placed inside it is drawn uncut."""
    r = vb.sceneBoundingRect()
    return (r.left(), r.top(), r.right(), r.bottom())


def scene_point(vb: pg.ViewBox, x: float, y: float) -> tuple[float, float]:
    """A data point (view coordinates, log10 for log axes) in scene pixels."""
    p = vb.mapViewToScene(QtCore.QPointF(x, y))
    return p.x(), p.y()


def put(item: pg.TextItem, vb: pg.ViewBox, box: Box | None) -> None:
    """Show `item` with its top-left corner at the box's (scene pixels), or hide it when `box` is None."""
    if box is None:
        item.setVisible(False)
        return
    item.setAnchor((0, 0))
    item.setPos(vb.mapSceneToView(QtCore.QPointF(box[0], box[1])))
    item.setVisible(True)
