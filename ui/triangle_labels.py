"""The triangle's text layer: corner names, the edge captions and the marker labels.

The view is fitted in pixels (`fit_view`): the triangle fills the plot less fixed margins (`SIDE_PX`,
`TOP_PX`, `BOTTOM_PX`) that hold the corner names and the edge captions, so neither is ever cut. Each edge
carries its two captions (the paper's trade-off and its reverse) as two lines parallel to the edge,
stacked outward so they cannot overlap; where the edge is too short for the long wording the short one
is used, and where even that does not fit the captions give way (the hover names the corners). Marker
labels are placed by the shared placer's greedy rule (ui/label_layout.py) around their markers or beside
the triangle, avoiding every marker, edge, caption and corner name, and no leader line runs through a
caption, a corner name or another label (`_place`); where the edge has room, its captions slide along it to
free a label (`_slides`). A label with no free place is hidden and its marker's hover names it.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme

SQRT3_2 = math.sqrt(3.0) / 2.0
CORNERS = {"compute": (0.5, SQRT3_2), "bandwidth": (0.0, 0.0), "memory": (1.0, 0.0)}
CENTROID = (0.5, SQRT3_2 / 3)   # equal pressures; drawn as a "+"
CENTROID_PX = 7.0               # half the centroid's obstacle box (its 12-px "+" and a pixel round it)
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
SLIDES = (0.0, -0.5, 0.5, -1.0, 1.0)   # a caption pair's slide along its edge, as a share of the free room
CURRENT_WEIGHT, CAPTION_WEIGHT = 10, 100   # what hiding the star's label, or a caption, costs against a label
MIN_SLIDE_PX = 10.0   # an edge whose captions can slide less than this each way keeps them in the middle
RINGS = 2   # rings further out round a marker, tried after the room beside the triangle
BESIDE_STEPS = 8   # half-lines up and down that a label beside the triangle may move from its marker's level
OUTLINE_PX = 4.0   # the edges' obstacle strips
GLYPH_INSET_PX = 5.0   # a label's glyphs lie this far inside its box (its 4 px text margin and a pixel)


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
        self._caption_boxes: list[ll.Box] = []
        self._corner_boxes: list[ll.Box] = []
        self._shifts: tuple[float, ...] = (0.0,) * len(EDGE_CAPTIONS)
        self._search_key: tuple | None = None
        self._boxes: dict[str, ll.Box | None] = {}

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
        self._corner_boxes = [self._box(item) for item in self.corner_labels.values()]
        self._search_key = None
        self._place_captions(self._shifts)

    def _box(self, item: pg.TextItem) -> ll.Box:
        """An unrotated TextItem's box in scene pixels, from its position and anchor (its own transform is
        only brought up to date when it is painted)."""
        x, y = ll.scene_point(self.vb, item.pos().x(), item.pos().y())
        w, h = ll.text_size(item)
        left, top = x - item.anchor.x() * w, y - item.anchor.y() * h
        return (left, top, left + w, top + h)

    def _caption_layout(self, shifts: tuple[float, ...]) -> list[tuple]:
        """Each edge caption as (item, text, angle, data position, obstacle boxes, fits), its edge's pair slid
        along the edge by `shifts[e]` (a share, -1 to 1, of the room the edge leaves beside the captions)."""
        edge_px = 1.0 / self.upp
        cx, cy = 0.5, SQRT3_2 / 3
        font = pw.font(CAPTION_PT)
        bounds = ll.view_bounds(self.vb)
        longest = max(ll.measure(t, font)[0] for edge in EDGE_CAPTIONS for t in edge[2])
        wording = 2 if longest + 30 <= edge_px else 3    # one wording on every edge
        out = []
        for e, edge in enumerate(EDGE_CAPTIONS):
            a, b, texts = edge[0], edge[1], edge[wording]
            (ax, ay), (bx, by) = CORNERS[a], CORNERS[b]
            width = max(ll.measure(t, font)[0] for t in texts)
            line_h = ll.measure(texts[0], font)[1] - 4
            angle = math.degrees(math.atan2(by - ay, bx - ax))
            angle = angle - 180 if angle > 90 else angle + 180 if angle < -90 else angle
            slide = shifts[e] * self._room(e) * self.upp   # data units along the edge
            mx, my = (ax + bx) / 2 + slide * (bx - ax), (ay + by) / 2 + slide * (by - ay)   # the edge is 1 long
            nx, ny = (ax + bx) / 2 - cx, (ay + by) / 2 - cy
            norm = math.hypot(nx, ny)
            below_corners = 24.0 if b == "memory" else 0.0   # the bottom edge's captions go under the corner names
            for k, text in enumerate(texts):
                off = (GAP_PX + below_corners + (k + 0.5) * line_h) * self.upp
                x, y = mx + off * nx / norm, my + off * ny / norm
                boxes = ll.rotated_text(*ll.scene_point(self.vb, x, y), width, line_h, angle)
                fits = width + 30 <= edge_px and all(ll.inside(box, bounds) for box in boxes)
                out.append((self.edge_labels[2 * e + k], text, angle, (x, y), boxes, fits))
        return out

    def _room(self, e: int) -> float:
        """How far (pixels) edge e's captions may slide each way from its middle, their 15 px ends kept."""
        font = pw.font(CAPTION_PT)
        longest = max(ll.measure(t, font)[0] for edge in EDGE_CAPTIONS for t in edge[2])
        texts = EDGE_CAPTIONS[e][2 if longest + 30 <= 1.0 / self.upp else 3]
        return max(1.0 / self.upp - max(ll.measure(t, font)[0] for t in texts) - 30, 0.0) / 2

    def _place_captions(self, shifts: tuple[float, ...]) -> None:
        """Show the edge captions slid by `shifts`; the shown ones become obstacles for the marker labels."""
        self._shifts = shifts
        self._caption_boxes = []
        for item, text, angle, pos, boxes, fits in self._caption_layout(shifts):
            item.setText(text)
            item.setAngle(angle)
            item.setPos(*pos)
            item.setVisible(fits)
            if fits:
                self._caption_boxes += boxes
        self._obstacles = self._corner_boxes + self._caption_boxes

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
        self._search_key = None

    def place(self, positions: dict[str, tuple[float, float]], radii_px: dict[str, float],
              current: tuple[float, float] | None, split: tuple[float, float] | None) -> None:
        """Place the current star's label, the split label and every marker label (most important first)."""
        cx, cy = ll.scene_point(self.vb, *CENTROID)   # the centroid's "+" (6 px each way) is never written over
        marks: list[ll.Box] = [(cx - CENTROID_PX, cy - CENTROID_PX, cx + CENTROID_PX, cy + CENTROID_PX)]
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
        mid_x = ll.scene_point(self.vb, 0.5, 0.0)[0]
        spots = []
        for key, item, sx, sy, gap in items:
            w, h = ll.text_size(item)
            sides = ("right", "left", "above", "below", "above-right", "below-right", "above-left", "below-left")
            if sx > mid_x:   # right half: inward (left) first
                sides = ("left", "right", "above", "below", "above-left", "below-left", "above-right", "below-right")
            ring = ll.around(sx, sy, w, h, gap, sides, steps=RINGS)   # the ring next to the marker, then further out
            spots.append((key, sx, sy, gap, w, h, ring[:len(sides)] + self._beside(sx, sy, w, h) + ring[len(sides):]))
        bounds = ll.view_bounds(self.vb)
        key = (tuple(spots), bounds, tuple(marks), tuple(self._corner_boxes), self.upp)
        if key != self._search_key:   # slide the captions off the leader lines, then keep the answer
            self._search_key = key
            self._place_captions(self._slides(spots, bounds, marks))
            self._boxes = _place(spots, bounds, self._obstacles + marks + self._outline(), self._obstacles)
        boxes = self._boxes
        self.hidden = set()
        lx: list[float] = []
        ly: list[float] = []
        for key, item, sx, sy, gap in items:
            box = boxes.get(key)
            ll.put(item, self.vb, box)
            if box is None:
                self.hidden.add(key)
                continue
            leader = _leader(sx, sy, box, gap)
            if leader is not None:   # moved away: a leader line to its marker
                for px, py in (leader[:2], leader[2:]):
                    p = self.vb.mapSceneToView(pg.Point(px, py))
                    lx.append(p.x())
                    ly.append(p.y())
        self.leaders.setData(lx, ly)

    def _outline(self) -> list[ll.Box]:
        """The triangle's edges as obstacle strips: no label is laid over them."""
        corners = [ll.scene_point(self.vb, *CORNERS[r]) for r in ("compute", "bandwidth", "memory", "compute")]
        return [box for a, b in zip(corners[:-1], corners[1:], strict=True) for box in ll.strip(*a, *b, OUTLINE_PX)]

    def _slides(self, spots: list[tuple], bounds: ll.Box, marks: list[ll.Box]) -> tuple[float, ...]:
        """Where along its edge each caption pair goes: edge by edge, the first slide (the middle first) that
        hides the fewest labels, the current star's counting `CURRENT_WEIGHT`, a caption's `CAPTION_WEIGHT`."""
        def cost(shifts: tuple[float, ...]) -> int:
            layout = self._caption_layout(shifts)
            captions = [box for *_, boxes, fits in layout if fits for box in boxes]
            placed = _place(spots, bounds, self._corner_boxes + captions + marks + outline, self._corner_boxes + captions)
            return (CAPTION_WEIGHT * sum(not fits for *_, fits in layout)
                    + sum(CURRENT_WEIGHT if k == "current" else 1 for k, box in placed.items() if box is None))

        outline = self._outline()
        best = (0.0,) * len(EDGE_CAPTIONS)
        best_cost = cost(best)
        for e in range(len(EDGE_CAPTIONS)):
            if self._room(e) < MIN_SLIDE_PX:   # the captions fill their edge: nothing to slide
                continue
            for share in SLIDES[1:]:
                if best_cost == 0:
                    return best
                trial = best[:e] + (share,) + best[e + 1:]
                c = cost(trial)
                if c < best_cost:
                    best, best_cost = trial, c
        return best

    def _beside(self, sx: float, sy: float, w: float, h: float) -> tuple[tuple[float, float], ...]:
        """Top-left corners in the free room beside the triangle (a leader line joins them to the marker):
        left of the left edge's captions for a marker in the left half, right of the right edge's otherwise;
        level with the marker first, then half a line at a time up and down (`BESIDE_STEPS` each way), so a
        leader can reach the side past the captions' ends; each as far out as at the marker's level, then
        as at its own."""
        apex_x, apex_y = ll.scene_point(self.vb, 0.5, SQRT3_2)
        left_x, base_y = ll.scene_point(self.vb, 0.0, 0.0)
        right_x = ll.scene_point(self.vb, 1.0, 0.0)[0]
        band = GAP_PX + 2 * 19.0 + 10.0                                     # the edge captions' band
        def x_at(y: float) -> float:   # the left of a label beside the edge at height y (the band outside it)
            t = min(max((base_y - y) / max(base_y - apex_y, 1.0), 0.0), 1.0)   # 0 at the base, 1 at the apex
            if sx <= apex_x:
                return left_x + t * (apex_x - left_x) - band - w
            return right_x - t * (right_x - apex_x) + band

        out = []
        for k in sorted(range(-BESIDE_STEPS, BESIDE_STEPS + 1), key=abs):
            top = sy - h / 2 + k * h / 2
            out += [(x, top) for x in dict.fromkeys((x_at(sy), x_at(top + h / 2)))]   # the marker's level, the label's
        return tuple(out)

    def set_split_text(self, text: str) -> None:
        self.split_label.setText(text)
        self.split_label.setVisible(bool(text))
        self._search_key = None



def _place(spots: list[tuple], bounds: ll.Box, obstacles: list[ll.Box], texts: list[ll.Box]) -> dict[str, ll.Box | None]:
    """The shared placer's greedy rule (ui/label_layout.py: first candidate inside the plot meeting no obstacle
    and no label placed before), and no leader line through a text: a candidate whose leader would cross one
    of `texts` (captions, corner names) or a placed label, or that lies on a leader already drawn, is passed
    over."""
    index = ll.SpatialIndex(96.0, bounds)
    for box in obstacles:
        index.add(box)
    glyphs: list[ll.Box] = []
    leaders: list[tuple[float, float, float, float]] = []
    out: dict[str, ll.Box | None] = {}
    for key, sx, sy, gap, w, h, corners in spots:
        out[key] = None
        for x, y in corners:
            box = ll.box_of(x, y, w, h)
            if not ll.inside(box, bounds, 1.0) or index.hits(box, ll.PAD):
                continue
            leader = _leader(sx, sy, box, gap)
            if leader is not None and any(_segment_meets(leader, b) for b in texts + glyphs):
                continue
            g = (box[0] + GLYPH_INSET_PX, box[1] + GLYPH_INSET_PX, box[2] - GLYPH_INSET_PX, box[3] - GLYPH_INSET_PX)
            if any(_segment_meets(line, g) for line in leaders):
                continue
            index.add(box)
            glyphs.append(g)
            if leader is not None:
                leaders.append(leader)
            out[key] = box
            break
    return out


def _leader(sx: float, sy: float, box: ll.Box, gap: float) -> tuple[float, float, float, float] | None:
    """The leader line from a marker at (sx, sy) to the nearest point of its label's box, or None when the
    label sits beside its marker (within `gap` + 12 px) and needs none."""
    nx, ny = min(max(sx, box[0]), box[2]), min(max(sy, box[1]), box[3])
    return (sx, sy, nx, ny) if math.hypot(nx - sx, ny - sy) > gap + 12 else None


def _segment_meets(seg: tuple[float, float, float, float], box: ll.Box) -> bool:
    """Does the segment pass through the box? (Liang-Barsky: the parameter range inside every slab is not empty.)"""
    x0, y0, x1, y1 = seg
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]), (dy, box[3] - y0)):
        if abs(p) < 1e-12:
            if q < 0:
                return False
        elif p < 0:
            lo = max(lo, q / p)
        else:
            hi = min(hi, q / p)
    return lo <= hi
