"""The roofline's text layer: ceiling labels, point labels, the ridge and sweep annotations, the legend.

Every on-plot text is placed by the shared placer's pieces (ui/label_layout.py) in scene pixels, most
important first: compute roofs (right end, above or below their line), bandwidth roofs (along their
diagonal), the points (around their marker; a leader line when moved away), then the ridge and the sweep
notes. A text with no free place inside the plot is hidden; the hover over its line or marker, and the
summary under the plot, still say it. Positions keep the log10 convention of the view (pyqtgraph does not
transform TextItems): a compute label sits at y = log10(peak), a bandwidth label on y = x + log10(bw).
A compute label never has another roof's line, or the uncertainty band's flat edge, through its glyphs; the
scenario format's label, when it has no place between its neighbours (roofs a factor 2 apart), and a label with a
place only over the band's edge, sit on the plot's background (a knock-out) instead. No other text has a drawn
line through its glyphs (ui/curve_obstacles.py tests every segment against the turned or upright glyph box): a
bandwidth label only its own diagonal beside it, a point label or note none (the leaders placed before included).
The placement is cached: an unchanged view, roofline and sweep step costs nothing. The legend is a
wrapped line of coloured glyphs under the plot, rebuilt only when its entries change.

A layer the panel owns: it holds the ceiling labels, the point labels with their leaders, the ridge note and the
legend, and places them from the `RooflineFrame`, the markers and the sweep's notes it is handed (`layout`).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.views.roofline import Ceiling, Roofline
from trinity_desktop.ui import curve_obstacles as co
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.roofline_frame import RooflineFrame, compute_roof_name, px_per_decade
from trinity_desktop.ui.roofline_style import (
    BANDWIDTH,
    COMPUTE,
    LINK_SYMBOLS,
    LINK_WORDS,
    NOFIT_COLOR,
    short_name,
)
from trinity_desktop.ui.roofline_sweep import SweepNotes
from trinity_desktop.ui.units import fmt_flops_rate, fmt_rate

GLYPHS = {"o": "●", "t": "▼", "s": "■", "d": "◆", "h": "⬢"}
MARK_PX = 8.0      # half the size of a point marker, as an obstacle
NARROW_PX = 700.0  # a plot narrower than this names compute roofs by their first format ("BF16")
KNOCKOUT_Z = 3     # a label on the plot's background: over the roofs (0), under the sweep's traces (5)
KNOCKOUT_LIFT_PX = 2.0
LABEL_RINGS = 3    # rings of places around a point marker, each a label's height (half its width) further out


class CeilingLabel(pg.TextItem):
    """A roof's label; `knockout` puts it on the current theme's plot background, hiding the lines under it
    (read whenever it is painted or restyled, so it follows a theme switch)."""

    knockout = False

    @property
    def fill(self) -> QtGui.QBrush:
        return pg.mkBrush(pw.plot_background() if self.knockout else None)

    @fill.setter
    def fill(self, _brush) -> None:   # TextItem.__init__ sets its own; the knock-out decides
        pass


class RooflineLabels:
    """Every on-plot text of the roofline on `plot`, and the legend under it."""

    def __init__(self, plot: pg.PlotItem):
        self._plot = plot
        self.ceiling_labels: dict[str, pg.TextItem] = {}
        self.point_labels: list[pg.TextItem] = []
        self.leaders = pg.PlotDataItem(pen=pg.mkPen(theme.MUTED_COLOR, width=1), connect="pairs")
        plot.addItem(self.leaders)
        self.ridge_text = pw.label_item("", anchor=(0, 0), bold=True)
        plot.addItem(self.ridge_text, ignoreBounds=True)
        self.legend_label = self._legend_widget()
        self.hidden_labels: set[str] = set()
        self._segments: list[np.ndarray] = []
        self._joined, self._joined_from = np.zeros((0, 4)), 0   # _segments as one array, and how many it holds
        self.ceiling_lines: dict[str, pg.PlotDataItem] = {}   # the panel's roof lines: a roof's label may touch its own
        self._key: tuple | None = None
        self._legend_entries: tuple = ()
        self._dtype = ""   # the scenario's number format: a shared roof's short name states it

    # ------------------------------------------------------------------ texts
    def ceiling_text(self, c: Ceiling) -> str:
        """"BF16/FP16 989 TFLOP/s"; on a narrow plot a shared compute roof names one format: the scenario's
        where it is one of them ("FP16 989 TFLOP/s" for an FP16 run), else its first; wide, the scenario's first."""
        if c.kind != "compute":
            return f"{c.name} {fmt_rate(c.value)}"
        formats = c.name.split("/")
        mine = next((f for f in formats if f.lower() == self._dtype), formats[0])
        wide = "/".join([mine, *(f for f in formats if f != mine)])   # the scenario's format first
        name = wide if self._plot.getViewBox().width() >= NARROW_PX else mine
        return f"{name} {fmt_flops_rate(c.value)}"

    def set_ceilings(self, roof: Roofline) -> None:
        """One label per ceiling of `roof` (the scenario format's and HBM's bold, the others secondary)."""
        self._dtype = roof.dtype
        main_dtype_roof = compute_roof_name(roof)
        names = {c.name for c in roof.ceilings}
        for c in roof.ceilings:
            if c.name not in self.ceiling_labels:
                label = CeilingLabel("", color=theme.plot_text_color(), anchor=(0, 0.5))
                self._plot.addItem(label, ignoreBounds=True)
                self.ceiling_labels[c.name] = label
            main = c.name == main_dtype_roof or c.link == "hbm"
            label = self.ceiling_labels[c.name]
            label.setText(self.ceiling_text(c))
            label.setColor(theme.plot_text_color() if main else pw.secondary_text(pw.plot_background()))
            label.setFont(pw.font(11, bold=main))
        for name, label in self.ceiling_labels.items():
            label.setVisible(name in names)

    def retext_ceilings(self, roof: Roofline) -> None:
        """Name the roofs for the plot's width (after a resize)."""
        for c in roof.ceilings:
            self.ceiling_labels[c.name].setText(self.ceiling_text(c))

    def compute_label_width(self, roof: Roofline) -> float:
        """The widest compute roof label, in pixels."""
        return max((ll.text_size(self.ceiling_labels[c.name])[0] for c in roof.ceilings if c.kind == "compute"),
                   default=0.0)

    def set_points(self, points) -> None:
        """One label per operating point (its short name)."""
        while len(self.point_labels) < len(points):
            item = pw.label_item("", anchor=(0, 0))
            item.setZValue(15)
            self._plot.addItem(item, ignoreBounds=True)
            self.point_labels.append(item)
        for i, item in enumerate(self.point_labels):
            if i < len(points):
                item.setText(short_name(points[i].name))
            item.setVisible(i < len(points))

    def obstacle_texts(self, roof: Roofline) -> list[pg.TextItem]:
        """The texts another label (the stage's) keeps off: point labels, compute roof labels, the ridge note."""
        return [*self.point_labels, *(self.ceiling_labels[c.name] for c in roof.ceilings if c.kind == "compute"),
                self.ridge_text]

    # ------------------------------------------------------------------ legend
    def _legend_widget(self) -> QtWidgets.QLabel:
        label = QtWidgets.QLabel("")
        label.setObjectName("RooflineLegend")
        label.setFont(pw.font(11))
        label.setWordWrap(True)
        label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        label.setAccessibleName("Roofline legend")
        label.setToolTip("Marker colour: the binding resource; marker shape: the link the bytes cross. Lines: the "
                         "decode sweep at the slider's batch or context.")
        return label

    def update_legend(self, roof: Roofline, extra: list[tuple[str, str, str]]) -> None:
        """The legend: resources, the links the points cross, the sweep's lines, then `extra` (glyph, colour,
        text) entries (compared devices, the band)."""
        entries = [("●", COMPUTE, "compute-bound"), ("●", BANDWIDTH, "bandwidth-bound")]
        for link in sorted({p.link for p in roof.points} - {"hbm"}):
            entries.append((GLYPHS.get(LINK_SYMBOLS.get(link, "o"), "●"), theme.MUTED_COLOR,
                            f"over the {LINK_WORDS.get(link, link)}"))
        entries += [("━", theme.plot_text_color(), "decode GEMMs (sweep ★)"),
                    ("╍", theme.plot_text_color(), "decode step + KV reads (◆)"),
                    ("┅", NOFIT_COLOR, "KV cache exceeds HBM"), *extra]
        entries = tuple(entries)
        if entries == self._legend_entries:
            return
        self._legend_entries = entries
        self.legend_label.setText(pw.key_line([pw.key_entry(glyph, text, color, marker_pt=13)
                                               for glyph, color, text in entries]))

    def legend_texts(self) -> list[str]:
        return [text for _, _, text in self._legend_entries]

    # ------------------------------------------------------------------ placement
    def layout(self, frame: RooflineFrame, marks: list[tuple[float, float]], notes: SweepNotes,
               band_levels: list[tuple[float, float]] = ()) -> None:
        """Place every text item (see the module docstring) around `marks` (markers in data units) and off the
        band's flat edges (`band_levels`); nothing is recomputed when nothing changed."""
        vb = self._plot.getViewBox()
        texts = [self.ridge_text, notes.crossing, notes.kv, *self.point_labels, *self.ceiling_labels.values()]
        roof = frame.roof
        key = (round(vb.width()), round(vb.height()), frame.x_range, frame.y_range,
               tuple(t.toPlainText() for t in texts), tuple(c.name for c in roof.ceilings), tuple(marks),
               tuple((p.name, p.intensity, p.attainable_flops_per_s) for p in roof.points),
               notes.show_crossing, notes.show_kv, notes.kv_pos, tuple(band_levels))
        if key == self._key:
            return
        self._key = key
        self.hidden_labels = set()
        bounds = ll.view_bounds(vb)
        index = ll.SpatialIndex(area=bounds)
        for x, y in marks:
            sx, sy = ll.scene_point(vb, math.log10(max(x, 1e-12)), math.log10(max(y, 1.0)))
            index.add((sx - MARK_PX, sy - MARK_PX, sx + MARK_PX, sy + MARK_PX))
        self._place_compute_labels(frame, index, bounds, vb, band_levels)
        lines = self._drawn_lines(bounds)
        self._place_bandwidth_labels(frame, index, bounds, vb, lines)
        self._segments = [*lines.values()]   # from here on no text sits on any drawn line, leaders included
        self._joined_from = -1
        self._place_point_labels(frame, index, bounds, vb)
        self._place_notes(frame, notes, index, bounds, vb)

    def _drawn_lines(self, bounds: ll.Box) -> dict[str, np.ndarray]:
        """Scene-pixel segments of every line drawn on the plot (roofs, the ridge's dotted line, the sweep,
        compared devices, the band's edges; not the leaders), keyed by the roof's name for a ceiling's own line."""
        own = {id(item): name for name, item in self.ceiling_lines.items()}
        drawn = [i for i in self._plot.items if isinstance(i, (pg.PlotDataItem, pg.PlotCurveItem, pg.InfiniteLine))
                 and i is not self.leaders and not (isinstance(i, pg.PlotDataItem) and i.opts.get("pen") is None)]
        return {own.get(id(item), f"#{k}"): co.line_segments([item], bounds) for k, item in enumerate(drawn)}

    def _take_clear(self, index: ll.SpatialIndex, bounds: ll.Box, box: ll.Box) -> bool:
        """`_take` for an upright text box that no drawn line (`_segments`) runs through."""
        cx, cy, w, h = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2, box[2] - box[0], box[3] - box[1]
        if len(self._segments) != self._joined_from:
            self._joined, self._joined_from = co.joined(self._segments), len(self._segments)
        if co.crosses_text(self._joined, cx, cy, w, h):
            return False
        return self._take(index, bounds, [box])

    def _take(self, index: ll.SpatialIndex, bounds: ll.Box, boxes: list[ll.Box]) -> bool:
        if all(ll.inside(b, bounds, 1.0) for b in boxes) and not any(index.hits(b, ll.PAD) for b in boxes):
            for b in boxes:
                index.add(b)
            return True
        return False

    def _place_compute_labels(self, frame: RooflineFrame, index, bounds, vb, band_levels) -> None:
        """Right end of each compute roof, above its line (below for lower roofs), then further left; never with
        another roof's line or the band's flat edge (`band_levels`: (FLOP/s, FLOP/B where it starts)) through its
        glyphs (a box's margin may touch one). A label that has a place only over the band's edge takes it on a
        knock-out; the scenario format's label with no place at all keeps its first one, on a knock-out."""
        hw, main_peak = frame.hardware, frame.peak
        roofs = sorted((c for c in frame.roof.ceilings if c.kind == "compute"),
                       key=lambda c: (c.value != main_peak, -c.value))

        def line(name: str, value: float, x0: float) -> tuple[str, float, float]:   # (name, y, left end) in pixels
            return (name, ll.scene_point(vb, 0.0, math.log10(value))[1],
                    ll.scene_point(vb, math.log10(max(x0, frame.x_range[0])), 0.0)[0])

        roof_lines = [line(c.name, c.value, c.value / hw.hbm_bw) for c in roofs]
        band_lines = [line("", value, x0) for value, x0 in band_levels]

        def free(box: ll.Box, own: str, lines) -> bool:
            return not any(name != own and box[1] + ll.PAD < y < box[3] - ll.PAD and box[2] > x0
                           for name, y, x0 in lines)

        for c in roofs:
            label = self.ceiling_labels[c.name]
            label.setAngle(0)
            label.rotateAxis = None
            w, h = ll.text_size(label)
            ly = math.log10(c.value)
            start_x = next(x0 for name, _, x0 in roof_lines if name == c.name)
            sy = ll.scene_point(vb, 0.0, ly)[1]
            sides = ("above", "below") if c.value >= main_peak else ("below", "above")
            candidates = []   # ((left, side), box), right end first
            for k in range(4):
                left = bounds[2] - 4 - w - k * 0.6 * w
                if left < start_x - 2:
                    break
                candidates += [((left, side), (left, sy - h if side == "above" else sy, left + w,
                                               sy if side == "above" else sy + h)) for side in sides]
            chosen, knockout = None, False
            for lines, knock in ((roof_lines + band_lines, False), (roof_lines, True)):
                chosen = next((cand for cand, box in candidates if free(box, c.name, lines)
                               and self._take(index, bounds, [box])), None)
                if chosen is not None or not band_lines:
                    knockout = knock and chosen is not None
                    break
            if chosen is None and c.value == main_peak:   # the scenario's roof is always named, on a knock-out
                chosen, knockout = (bounds[2] - 4 - w, "above"), True
                index.add((chosen[0], sy - h, chosen[0] + w, sy))
            if chosen is None:   # no room: hidden, still anchored on its line (the hover names the roof)
                self.hidden_labels.add(c.name)
            label.knockout = knockout
            label.setZValue(KNOCKOUT_Z if knockout else 0)
            left = chosen[0] if chosen else bounds[2] - 4 - w
            lift = KNOCKOUT_LIFT_PX / h if knockout else 0.0   # a knock-out keeps off its own (thick) line
            label.setAnchor((0, 1 + lift) if chosen is None or chosen[1] == "above" else (0, -lift))
            label.setPos(vb.mapSceneToView(QtCore.QPointF(left, sy)).x(), ly)
            label.setVisible(chosen is not None)
            label.update()

    def _place_bandwidth_labels(self, frame: RooflineFrame, index, bounds, vb, lines) -> None:
        """Along each diagonal, above it, at the first free stretch from its left end, with no other drawn line
        (`lines`: segments by roof name) through its glyphs."""
        px_x, px_y = px_per_decade(self._plot)
        angle = math.degrees(math.atan2(px_y, px_x))
        a = math.radians(angle)
        along, up = (math.cos(a), -math.sin(a)), (-math.sin(a), -math.cos(a))
        lx0, lx1 = (math.log10(v) for v in frame.x_range)
        ly0, ly1 = (math.log10(v) for v in frame.y_range)
        for c in sorted((c for c in frame.roof.ceilings if c.kind == "bandwidth"), key=lambda c: -c.value):
            label = self.ceiling_labels[c.name]
            xs, _ = frame.geometry(c)
            b = math.log10(c.value)
            x_start, x_end = max(lx0, ly0 - b), min(math.log10(float(xs[-1])), ly1 - b, lx1)
            w, h = ll.text_size(label)
            length_dec = w / math.hypot(px_x, px_y)   # the text's length, in decades of x
            others = co.joined(seg for name, seg in lines.items() if name != c.name)
            chosen = None
            for f in np.arange(0.0, 0.9, 0.025):   # from the line's left end rightward
                x = x_start + f * (x_end - x_start)
                if x + length_dec > x_end:
                    break
                sx, sy = ll.scene_point(vb, x, x + b)
                for side in (1.0, -1.0):   # above the line, then below it
                    cx = sx + along[0] * w / 2 + side * up[0] * h / 2
                    cy = sy + along[1] * w / 2 + side * up[1] * h / 2
                    if (not co.crosses_text(others, cx, cy, w, h, angle)
                            and self._take(index, bounds, ll.rotated_text(cx, cy, w, h - 8, angle))):
                        chosen = (x, side)
                        break
                if chosen:
                    break
            if chosen is None:   # no room: hidden, still anchored on its line (the hover names the roof)
                self.hidden_labels.add(c.name)
            x, side = chosen or (x_start, 1.0)
            label.rotateAxis = pg.Point(1, 1)
            label.setAnchor((0, 1) if side > 0 else (0, 0))
            label.setPos(x, x + b)
            label.updateTransform(force=True)
            label.setVisible(chosen is not None)

    def _place_point_labels(self, frame: RooflineFrame, index, bounds, vb) -> None:
        """Around each marker (right first), then further out; a leader line when the label sits a step away
        (its leader crossing no text placed before); else hidden. No drawn line runs through a label."""
        pts = frame.roof.points
        order = sorted(range(len(pts)), key=lambda i: (-pts[i].attainable_flops_per_s, pts[i].intensity))
        leaders: list[tuple[float, float, float, float]] = []
        for i in order:
            item = self.point_labels[i]
            w, h = ll.text_size(item)
            mx, my = ll.scene_point(vb, math.log10(pts[i].intensity), math.log10(max(pts[i].attainable_flops_per_s, 1.0)))
            sides = ("right", "below-right", "above-right", "left", "below", "above", "below-left", "above-left")
            box, leader = None, None
            for x, y in ll.around(mx, my, w, h, 9.0, sides, steps=LABEL_RINGS):
                cand = (x, y, x + w, y + h)
                nx, ny = min(max(mx, cand[0]), cand[2]), min(max(my, cand[1]), cand[3])
                far = math.hypot(nx - mx, ny - my) > 16
                if far and not self._leader_free(index, mx, my, nx, ny):
                    continue
                if self._take_clear(index, bounds, cand):
                    box, leader = cand, ((mx, my, nx, ny) if far else None)
                    break
            ll.put(item, vb, box)
            if box is None:
                self.hidden_labels.add(pts[i].name)
            elif leader is not None:
                leaders.append(leader)
                self._segments.append(np.array([leader]))
        xs, ys = [], []
        for sx0, sy0, sx1, sy1 in leaders:
            for px, py in ((sx0, sy0), (sx1, sy1)):
                p = vb.mapSceneToView(QtCore.QPointF(px, py))
                xs.append(10.0 ** p.x())
                ys.append(10.0 ** p.y())
        self.leaders.setData(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))

    @staticmethod
    def _leader_free(index, mx: float, my: float, nx: float, ny: float) -> bool:
        """True when a leader from the marker (mx, my) to its label's edge (nx, ny) crosses no text or marker
        placed before (its first `MARK_PX` + 1 pixels, inside its own marker, are not tested)."""
        length = math.hypot(nx - mx, ny - my)
        t = min((MARK_PX + 1) / max(length, 1e-9), 1.0)
        x0, y0 = mx + (nx - mx) * t, my + (ny - my) * t
        return not any(index.hits(b) for b in ll.strip(x0, y0, nx, ny, 2.0))

    def _place_notes(self, frame: RooflineFrame, notes: SweepNotes, index, bounds, vb) -> None:
        """The ridge (at the foot of its dotted line), the GEMMs' crossing (at the knee) and the KV-fit limit."""
        ridge, peak = frame.roof.ridge_flop_per_byte, frame.peak
        self.ridge_text.setText(f"datasheet ridge {ridge:,.0f} FLOP/B\n({frame.roof.dtype.upper()} peak / HBM)")
        rx, peak_y = ll.scene_point(vb, math.log10(ridge), math.log10(peak))
        w, h = ll.text_size(self.ridge_text)
        spots = [((rx - 4 - w, bounds[3] - 2 - h - k * h / 2), (1, 1)) for k in range(5)]
        spots += [((rx + 4, bounds[3] - 2 - h - k * h / 2), (0, 1)) for k in range(5)]
        self._put_note(self.ridge_text, index, bounds, vb, w, h, spots, "ridge")
        notes.crossing.setVisible(False)
        if notes.show_crossing:   # the knee, in batch terms
            w, h = ll.text_size(notes.crossing)
            spots = [((rx - 6 - w, peak_y - h - 2), (1, 1)), ((rx - 6 - w, peak_y + 4), (1, 0)),
                     ((rx - 6 - w, peak_y - 2 * h - 2), (1, 1)), ((bounds[0] + 4, peak_y - h - 2), (0, 1))]
            self._put_note(notes.crossing, index, bounds, vb, w, h, spots, "crossing")
        if notes.show_kv:
            x, y = notes.kv_pos
            kx, ky = ll.scene_point(vb, math.log10(x), math.log10(max(y, 1.0)))
            w, h = ll.text_size(notes.kv)
            spots = [((cx, cy), (0, 0)) for cx, cy in ll.around(kx, ky, w, h, 10.0, ll.SIDES + ("above-left",
                                                                                                 "below-left"))]
            self._put_note(notes.kv, index, bounds, vb, w, h, spots, "kv")

    def _put_note(self, item: pg.TextItem, index, bounds, vb, w, h, spots, name: str) -> None:
        """The first free spot (top-left corner, anchor to keep) for a note, or hide it."""
        for (x, y), anchor in spots:
            if self._take_clear(index, bounds, (x, y, x + w, y + h)):
                item.setAnchor(anchor)
                p = vb.mapSceneToView(QtCore.QPointF(x + anchor[0] * w, y + anchor[1] * h))
                item.setPos(p.x(), p.y())
                item.setVisible(True)
                return
        item.setVisible(False)
        self.hidden_labels.add(name)
