"""Labels over curves: an on-plot text that a drawn line (a data curve, a reference line) runs through.

A text lying over a line hides part of the line and reads through it; neither carries its message. For every
visible text inside a plot's ViewBox (an on-plot label; the legend's entries sit in their box and are not
on-plot labels) the glyph box, shrunk by `INSET_PX` so a leader line that ends at the label's edge does not
count, is tested against every visible line of the view, in viewport pixels: each `PlotCurveItem` segment
(a `PlotDataItem`'s curve, a fill's edge drawn with a pen) and each `InfiniteLine`, where the line is visible
(inside its ViewBox). Segments are clipped to the box by Liang-Barsky (exact, vectorised).
"""

from __future__ import annotations

import numpy as np

from trinity_desktop.audit_text import SceneText

INSET_PX = 3.0
LEADER_PX = 3.0


def _in_view_box(item) -> bool:
    import pyqtgraph as pg

    parent = item.parentItem()
    while parent is not None:
        if isinstance(parent, pg.LegendItem):
            return False
        if isinstance(parent, pg.ViewBox):
            return True
        parent = parent.parentItem()
    return False


def _drawn(item) -> bool:
    """True for a line that leaves ink: visible, opaque enough, with a pen that draws."""
    from PySide6 import QtCore

    if not item.isVisible() or item.effectiveOpacity() <= 0.05:
        return False
    pen = item.opts.get("pen") if hasattr(item, "opts") and isinstance(item.opts, dict) else None
    pen = pen if pen is not None and hasattr(pen, "style") else getattr(item, "pen", None)
    if pen is None or not hasattr(pen, "style"):
        return True
    return pen.style() != QtCore.Qt.PenStyle.NoPen and pen.color().alpha() > 12


def _segments(item, to_view) -> np.ndarray:
    """The item's line as (n, 4) viewport-pixel segments x0, y0, x1, y1."""
    import pyqtgraph as pg

    transform = item.deviceTransform(to_view)
    if isinstance(item, pg.InfiniteLine):
        rect = item.boundingRect()
        mid = rect.center().y()
        ends = [transform.map(rect.left(), mid), transform.map(rect.right(), mid)]
        return np.array([[ends[0][0], ends[0][1], ends[1][0], ends[1][1]]], float)
    x, y = item.getData()
    if x is None or len(x) < 2:
        return np.zeros((0, 4))
    x, y = np.asarray(x, float), np.asarray(y, float)
    m = transform
    px = m.m11() * x + m.m21() * y + m.dx()
    py = m.m12() * x + m.m22() * y + m.dy()
    connect = item.opts.get("connect", "all")
    if isinstance(connect, str) and connect == "pairs":
        n = len(px) // 2 * 2
        seg = np.stack([px[0:n:2], py[0:n:2], px[1:n:2], py[1:n:2]], axis=1)
    else:
        seg = np.stack([px[:-1], py[:-1], px[1:], py[1:]], axis=1)
        if isinstance(connect, np.ndarray) and len(connect) == len(px):
            seg = seg[connect[:-1].astype(bool)]
    return seg[np.isfinite(seg).all(axis=1)]


def _line_ends(item, seg: np.ndarray) -> np.ndarray:
    """(n, 2) booleans: is the segment's start / stop an end of its line (a leader line ends at its label)?
    Every segment of a "pairs" curve is a line of its own; a polyline has two ends."""
    ends = np.zeros((len(seg), 2), bool)
    connect = item.opts.get("connect", "all") if hasattr(item, "opts") and isinstance(item.opts, dict) else "all"
    if isinstance(connect, str) and connect == "pairs":
        ends[:] = True
    elif len(seg):
        ends[0, 0] = ends[-1, 1] = True
    return ends


def _leader_to(seg: np.ndarray, ends: np.ndarray, text_item, to_text) -> bool:
    """True when every segment through the label ends inside the label's box (its margin included, plus
    `LEADER_PX`): a leader line pointing at its label, not a line drawn through it."""
    r = text_item.boundingRect().adjusted(-LEADER_PX, -LEADER_PX, LEADER_PX, LEADER_PX)
    local = _mapped(seg, to_text)
    margin = text_item.document().documentMargin() + INSET_PX
    g = text_item.boundingRect().adjusted(margin, margin, -margin, -margin)
    hit = _crosses(local, (g.left(), g.top(), g.right(), g.bottom()))

    def inside(x, y):
        return (x >= r.left()) & (x <= r.right()) & (y >= r.top()) & (y <= r.bottom())

    start_in = ends[:, 0] & inside(local[:, 0], local[:, 1])
    stop_in = ends[:, 1] & inside(local[:, 2], local[:, 3])
    return bool(np.all((start_in | stop_in)[hit]))


def _mapped(seg: np.ndarray, m) -> np.ndarray:
    """Segments mapped by a QTransform (affine part)."""
    x0 = m.m11() * seg[:, 0] + m.m21() * seg[:, 1] + m.dx()
    y0 = m.m12() * seg[:, 0] + m.m22() * seg[:, 1] + m.dy()
    x1 = m.m11() * seg[:, 2] + m.m21() * seg[:, 3] + m.dx()
    y1 = m.m12() * seg[:, 2] + m.m22() * seg[:, 3] + m.dy()
    return np.stack([x0, y0, x1, y1], axis=1)


def _crosses(seg: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    """Which segments pass through the box (Liang-Barsky: the parameter range inside every slab is not empty)."""
    x0, y0, dx, dy = seg[:, 0], seg[:, 1], seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1]
    lo, hi = np.zeros(len(seg)), np.ones(len(seg))
    inside = np.ones(len(seg), bool)
    for p, q in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]), (dy, box[3] - y0)):
        parallel = np.abs(p) < 1e-12
        inside &= ~(parallel & (q < 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(parallel, 0.0, q / np.where(parallel, 1.0, p))
        lo = np.where(~parallel & (p < 0), np.maximum(lo, t), lo)
        hi = np.where(~parallel & (p > 0), np.minimum(hi, t), hi)
    return inside & (lo <= hi)


def _ancestors(item) -> list:
    out, parent = [], item.parentItem()
    while parent is not None:
        out.append(parent)
        parent = parent.parentItem()
    return out


def _line_name(item) -> str:
    from PySide6 import QtGui

    name = item.name() if hasattr(item, "name") and callable(item.name) else None
    label = getattr(item, "label", None)
    if not name and label is not None and hasattr(label, "toPlainText"):
        name = label.toPlainText().strip()
    if not name:
        color = item.pen.color().name() if isinstance(getattr(item, "pen", None), QtGui.QPen) else ""
        name = f"{type(item).__name__} {color}".strip()
    return f"line {name}"


def _knocked_out(text_item, line, stacking: dict) -> bool:
    """True when the label sits on an opaque box (a pyqtgraph TextItem's fill) stacked above the line: the box
    hides the line under the glyphs, so the line does not run through them on screen."""
    from PySide6 import QtCore

    host = text_item.parentItem()
    fill = getattr(host, "fill", None)
    if fill is None or not hasattr(fill, "style") or fill.style() == QtCore.Qt.BrushStyle.NoBrush:
        return False
    above = stacking.get(id(host), 1 << 30) < stacking.get(id(line), -1)   # scene.items(): top first
    return fill.color().alpha() >= 250 and above


def texts_on_curves(view, texts: list[SceneText]) -> list[tuple[str, str]]:
    """(label, line) for every on-plot label of the view that a visible line runs through (on screen: a label on
    an opaque box above the line hides it, `_knocked_out`)."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    to_view = view.viewportTransform()
    stacking = {id(item): i for i, item in enumerate(view.scene().items())}
    lines = []
    for item in view.scene().items():
        if isinstance(item, (pg.PlotCurveItem, pg.InfiniteLine)) and _drawn(item):
            clip = None
            parent = item.parentItem()
            while parent is not None and not isinstance(parent, pg.ViewBox):
                parent = parent.parentItem()
            if parent is not None:
                clip = parent.deviceTransform(to_view).mapRect(parent.boundingRect())
            seg = _segments(item, to_view)
            if len(seg):
                lines.append((item, (seg, _line_ends(item, seg)), clip))
    out = []
    for t in texts:
        if not isinstance(t.item, QtWidgets.QGraphicsTextItem) or not _in_view_box(t.item):
            continue
        r = t.polygon.boundingRect()
        to_text, ok = t.item.deviceTransform(to_view).inverted()   # a turned label is tested as drawn
        margin = t.item.document().documentMargin() + INSET_PX
        g = t.item.boundingRect().adjusted(margin, margin, -margin, -margin)
        if not ok or g.width() <= 0 or g.height() <= 0:
            continue
        box = (g.left(), g.top(), g.right(), g.bottom())
        for item, seg, clip in lines:
            seg, ends = seg
            if (item in _ancestors(t.item) or (clip is not None and not clip.intersects(r))
                    or _knocked_out(t.item, item, stacking)):
                continue   # a line's own label (InfiniteLine's) sits on it by design; a clipped-away line is not drawn
            if clip is not None:   # only the part of the line that is drawn
                drawn = _crosses(seg, (clip.left(), clip.top(), clip.right(), clip.bottom()))
                seg, ends = seg[drawn], ends[drawn]
            if len(seg) and _crosses(_mapped(seg, to_text), box).any() and not _leader_to(seg, ends, t.item, to_text):
                pair = (t.label, _line_name(item))
                if pair not in out:
                    out.append(pair)
    return out


HIDDEN_SHARE = 0.25   # a curve that changes fewer pixels than this share of its on-screen length is hidden
MIN_LENGTH_PX = 40.0


def hidden_curves(view) -> list[str]:
    """Data curves (pen 2 px or wider, at least `MIN_LENGTH_PX` on screen) that what is drawn over them
    hides: rendered with and without the curve, fewer pixels change than `HIDDEN_SHARE` of its length (a
    curve behind a fill, or drawn in the colour of what lies on it)."""
    import pyqtgraph as pg

    from trinity_desktop.audit_contrast import _grab

    to_view = view.viewportTransform()
    viewport = view.viewport().rect()
    shown = None
    out = []
    for item in view.scene().items():
        if not isinstance(item, pg.PlotCurveItem) or not _drawn(item) or not _in_view_box(item):
            continue
        pen = item.opts.get("pen")
        if not hasattr(pen, "widthF") or pen.widthF() < 2:
            continue
        seg = _segments(item, to_view)
        seg = seg[_crosses(seg, (0, 0, viewport.width(), viewport.height()))] if len(seg) else seg
        length = float(np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1]).sum()) if len(seg) else 0.0
        if length < MIN_LENGTH_PX:
            continue
        if shown is None:
            shown = _grab(view)
        item.setVisible(False)
        try:
            without = _grab(view)
        finally:
            item.setVisible(True)
        changed = int((np.abs(shown.astype(int) - without.astype(int)).max(axis=2) > 24).sum())
        if changed < HIDDEN_SHARE * length:
            out.append(f"{_line_name(item)} is hidden: {changed} px show of its {length:.0f} px")
    return out
