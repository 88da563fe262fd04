"""The triangle's text layer: corner names, the edge captions and the marker labels.

The view is fitted in pixels (`fit_view`): the triangle fills the plot less fixed margins (`SIDE_PX`,
`TOP_PX`, `BOTTOM_PX`) that hold the corner names and the edge captions, so neither is ever cut. Each edge
carries its two captions (the paper's trade-off and its reverse) as two lines parallel to the edge,
stacked outward so they cannot overlap; where the edge is too short for the long wording the short one
is used, and where even that does not fit the captions give way (the hover names the corners). Marker
labels are placed by the shared placer (ui/label_layout.py) around their markers, avoiding every marker,
caption and corner name; a label with no free place is hidden and its marker's hover names it.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme

SQRT3_2 = math.sqrt(3.0) / 2.0
CORNERS = {"compute": (0.5, SQRT3_2), "bandwidth": (0.0, 0.0), "memory": (1.0, 0.0)}
# (corner a, corner b, (trade-off, reverse) in long and short wording): the abstract's trade-off first.
EDGE_CAPTIONS = (
    ("compute", "bandwidth", ("more computation → less bandwidth", "more bandwidth → less computation"),
     ("+compute → −bandwidth", "+bandwidth → −compute")),
    ("bandwidth", "memory", ("more bandwidth → less memory", "more memory → less bandwidth"),
     ("+bandwidth → −memory", "+memory → −bandwidth")),
    ("memory", "compute", ("more memory → less computation", "more computation → less memory"),
     ("+memory → −compute", "+compute → −memory")),
)
SIDE_PX, TOP_PX, BOTTOM_PX = 50.0, 36.0, 72.0   # room outside the triangle (pixels)
GAP_PX = 5.0
CAPTION_PT, MARKER_PT = 11, 11


class TriangleLabels:
    """Owns the triangle's TextItems and places them for the current view size."""

    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.vb = plot.getViewBox()
        self.upp = 1.0 / 400.0                    # data units per pixel (x and y alike)
        self.corner_labels: dict[str, pg.TextItem] = {}
        anchors = {"compute": (0.5, 1.0), "bandwidth": (0.3, 0.0), "memory": (0.7, 0.0)}
        for r in CORNERS:
            item = pw.label_item(theme.RESOURCE_LABELS[r], color=theme.RESOURCE_COLORS[r], anchor=anchors[r],
                                 size=14, bold=True)
            plot.addItem(item, ignoreBounds=True)
            self.corner_labels[r] = item
        self.edge_labels: list[pg.TextItem] = []
        for _ in range(2 * len(EDGE_CAPTIONS)):
            item = pg.TextItem("", color=theme.plot_text_color(), anchor=(0.5, 0.5))
            item.setFont(pw.font(CAPTION_PT))
            plot.addItem(item, ignoreBounds=True)
            self.edge_labels.append(item)
        self.current_label = pw.label_item("current", color=theme.plot_text_color(), bold=True)
        self.current_label.setZValue(41)
        plot.addItem(self.current_label, ignoreBounds=True)
        self.split_label = pw.label_item("", color=theme.plot_text_color())
        self.split_label.setVisible(False)
        plot.addItem(self.split_label, ignoreBounds=True)
        self.marker_labels: dict[str, pg.TextItem] = {}
        self.leaders = pg.PlotCurveItem(pen=pg.mkPen(theme.MUTED_COLOR, width=1), connect="pairs")
        self.leaders.setZValue(21)
        plot.addItem(self.leaders, ignoreBounds=True)
        self.hidden: set[str] = set()
        self._obstacles: list[ll.Box] = []
        self._placer = ll.LabelLayout()

    # ------------------------------------------------------------------ the frame
    def fit_view(self) -> None:
        """Set the view range so the triangle and its margins fill the plot at one scale on x and y, then
        place the corner names and edge captions outside the triangle."""
        w, h = max(self.vb.width(), 120.0), max(self.vb.height(), 120.0)
        self.upp = max(1.0 / max(w - 2 * SIDE_PX, 40.0), SQRT3_2 / max(h - TOP_PX - BOTTOM_PX, 40.0))
        span_x, span_y = w * self.upp, h * self.upp
        y0 = -BOTTOM_PX * self.upp - (span_y - SQRT3_2 - (TOP_PX + BOTTOM_PX) * self.upp) / 2
        self.vb.setRange(xRange=(0.5 - span_x / 2, 0.5 + span_x / 2), yRange=(y0, y0 + span_y), padding=0)
        u = self.upp
        self.corner_labels["compute"].setPos(0.5, SQRT3_2 + 3 * u)
        self.corner_labels["bandwidth"].setPos(0.0, -3 * u)
        self.corner_labels["memory"].setPos(1.0, -3 * u)
        self._obstacles = [box for item in self.corner_labels.values() for box in [self._box(item)]]
        self._place_captions()

    def _box(self, item: pg.TextItem) -> ll.Box:
        """An unrotated TextItem's box in scene pixels, from its position and anchor (its own transform is
        only brought up to date when it is painted)."""
        x, y = ll.scene_point(self.vb, item.pos().x(), item.pos().y())
        w, h = ll.text_size(item)
        left, top = x - item.anchor.x() * w, y - item.anchor.y() * h
        return (left, top, left + w, top + h)

    def _place_captions(self) -> None:
        edge_px = 1.0 / self.upp
        cx, cy = 0.5, SQRT3_2 / 3
        font = pw.font(CAPTION_PT)
        bounds = ll.view_bounds(self.vb)
        longest = max(ll.measure(t, font)[0] for edge in EDGE_CAPTIONS for t in edge[2])
        wording = 2 if longest + 30 <= edge_px else 3    # one wording on every edge
        for e, edge in enumerate(EDGE_CAPTIONS):
            a, b, texts = edge[0], edge[1], edge[wording]
            (ax, ay), (bx, by) = CORNERS[a], CORNERS[b]
            width = max(ll.measure(t, font)[0] for t in texts)
            line_h = ll.measure(texts[0], font)[1] - 4
            angle = math.degrees(math.atan2(by - ay, bx - ax))
            angle = angle - 180 if angle > 90 else angle + 180 if angle < -90 else angle
            mx, my = (ax + bx) / 2, (ay + by) / 2
            nx, ny = mx - cx, my - cy
            norm = math.hypot(nx, ny)
            below_corners = 24.0 if b == "memory" else 0.0   # the bottom edge's captions go under the corner names
            for k, text in enumerate(texts):
                item = self.edge_labels[2 * e + k]
                off = (GAP_PX + below_corners + (k + 0.5) * line_h) * self.upp
                item.setText(text)
                item.setAngle(angle)
                item.setPos(mx + off * nx / norm, my + off * ny / norm)
                sx, sy = ll.scene_point(self.vb, mx + off * nx / norm, my + off * ny / norm)
                boxes = ll.rotated_text(sx, sy, width, line_h, angle)
                fits = width + 30 <= edge_px and all(ll.inside(box, bounds) for box in boxes)
                item.setVisible(fits)
                if fits:
                    self._obstacles += boxes

    # ------------------------------------------------------------------ the markers' labels
    def set_marker_texts(self, texts: dict[str, str]) -> None:
        """One label per marker key (created once, removed when the key goes)."""
        for key in list(self.marker_labels):
            if key not in texts:
                self.plot.removeItem(self.marker_labels.pop(key))
        for key, text in texts.items():
            item = self.marker_labels.get(key)
            if item is None:
                item = pw.label_item(size=MARKER_PT)
                item.setZValue(22)
                self.plot.addItem(item, ignoreBounds=True)
                self.marker_labels[key] = item
            item.setText(text)
        self._placer.invalidate()

    def place(self, positions: dict[str, tuple[float, float]], radii_px: dict[str, float],
              current: tuple[float, float] | None, split: tuple[float, float] | None) -> None:
        """Place the current star's label, the split label and every marker label (most important first)."""
        marks: list[ll.Box] = []
        for key, (x, y) in positions.items():
            sx, sy = ll.scene_point(self.vb, x, y)
            r = radii_px.get(key, 6.0) + 1
            marks.append((sx - r, sy - r, sx + r, sy + r))
        items: list[tuple[str, pg.TextItem, float, float, float]] = []
        if current is not None:
            sx, sy = ll.scene_point(self.vb, *current)
            marks.append((sx - 15, sy - 15, sx + 15, sy + 15))
            items.append(("current", self.current_label, sx, sy, 16.0))
        if split is not None and self.split_label.toPlainText():
            sx, sy = ll.scene_point(self.vb, *split)
            marks.append((sx - 9, sy - 9, sx + 9, sy + 9))
            items.append(("split", self.split_label, sx, sy, 10.0))
        for key in sorted(positions, key=lambda k: -positions[k][1]):
            if key in self.marker_labels:
                sx, sy = ll.scene_point(self.vb, *positions[key])
                items.append((key, self.marker_labels[key], sx, sy, radii_px.get(key, 6.0) + 3))
        labels = []
        mid_x = ll.scene_point(self.vb, 0.5, 0.0)[0]
        for key, item, sx, sy, gap in items:
            w, h = ll.text_size(item)
            sides = ("right", "left", "above", "below", "above-right", "below-right", "above-left", "below-left")
            if sx > mid_x:   # right half: inward (left) first
                sides = ("left", "right", "above", "below", "above-left", "below-left", "above-right", "below-right")
            labels.append(ll.Label(key, w, h, ll.around(sx, sy, w, h, gap, sides) + self._beside(sx, sy, w, h)))
        boxes = self._placer.place(labels, ll.view_bounds(self.vb), tuple(self._obstacles + marks))
        self.hidden = set()
        lx: list[float] = []
        ly: list[float] = []
        for key, item, sx, sy, gap in items:
            box = boxes.get(key)
            ll.put(item, self.vb, box)
            if box is None:
                self.hidden.add(key)
                continue
            nx, ny = min(max(sx, box[0]), box[2]), min(max(sy, box[1]), box[3])
            if math.hypot(nx - sx, ny - sy) > gap + 12:   # moved away: a leader line to its marker
                for px, py in ((sx, sy), (nx, ny)):
                    p = self.vb.mapSceneToView(pg.Point(px, py))
                    lx.append(p.x())
                    ly.append(p.y())
        self.leaders.setData(lx, ly)

    def _beside(self, sx: float, sy: float, w: float, h: float) -> tuple[tuple[float, float], ...]:
        """Top-left corners in the free room beside the triangle, level with the marker (a leader line joins
        them): left of the left edge's captions for a marker in the left half, right of the right edge's
        otherwise; then one and two lines up or down."""
        apex_x, apex_y = ll.scene_point(self.vb, 0.5, SQRT3_2)
        left_x, base_y = ll.scene_point(self.vb, 0.0, 0.0)
        right_x = ll.scene_point(self.vb, 1.0, 0.0)[0]
        t = min(max((base_y - sy) / max(base_y - apex_y, 1.0), 0.0), 1.0)   # 0 at the base, 1 at the apex
        band = GAP_PX + 2 * 19.0 + 10.0                                     # the edge captions' band
        if sx <= apex_x:
            x = left_x + t * (apex_x - left_x) - band - w
        else:
            x = right_x - t * (right_x - apex_x) + band
        return tuple((x, sy - h / 2 + k * h) for k in (0, -1, 1, -2, 2))

    def set_split_text(self, text: str) -> None:
        self.split_label.setText(text)
        self.split_label.setVisible(bool(text))
        self._placer.invalidate()

