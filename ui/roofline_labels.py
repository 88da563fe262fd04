"""The roofline's text layer: ceiling labels, point labels, the ridge and sweep annotations, the legend.

Every on-plot text is placed by the shared placer's pieces (ui/label_layout.py) in scene pixels, most
important first: compute roofs (right end, above or below their line), bandwidth roofs (along their
diagonal), the points (around their marker; a leader line when moved away), then the ridge and the sweep
notes. A text with no free place inside the plot is hidden; the hover over its line or marker, and the
summary under the plot, still say it. Positions keep the log10 convention of the view (pyqtgraph does not
transform TextItems): a compute label sits at y = log10(peak), a bandwidth label on y = x + log10(bw).
The placement is cached: an unchanged view, roofline and sweep step costs nothing. The legend is a
wrapped line of coloured glyphs under the plot, rebuilt only when its entries change.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.roofline_band import BAND_LEGEND, BAND_SWATCH
from trinity_desktop.ui.roofline_style import (
    BANDWIDTH,
    COMPARE_STYLES,
    COMPUTE,
    LINK_SYMBOLS,
    LINK_WORDS,
    NOFIT_COLOR,
)

GLYPHS = {"o": "●", "t": "▼", "s": "■", "d": "◆", "h": "⬢"}
MARK_PX = 8.0      # half the size of a point marker, as an obstacle


class RooflineLabels:
    """Mixed into RooflinePanel: uses its items (ceiling_labels, point_labels, ridge_text, ...) and state."""

    _label_key: tuple | None = None
    _legend_entries: tuple = ()
    hidden_labels: set[str]

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

    def _update_legend(self) -> None:
        entries = [("●", COMPUTE, "compute-bound"), ("●", BANDWIDTH, "bandwidth-bound")]
        for link in sorted({p.link for p in self._roof.points} - {"hbm"}):
            entries.append((GLYPHS.get(LINK_SYMBOLS.get(link, "o"), "●"), theme.MUTED_COLOR,
                            f"over the {LINK_WORDS.get(link, link)}"))
        entries += [("━", theme.plot_text_color(), "decode GEMMs (sweep ★)"),
                    ("╍", theme.plot_text_color(), "decode step + KV reads (◆)"),
                    ("┅", NOFIT_COLOR, "KV cache exceeds HBM")]
        for slot, key in enumerate(self._compare_keys):
            entries.append(("╌", COMPARE_STYLES[slot][0], self._hardware[key].name))
        if self.band_visible():
            entries.append(("▬", BAND_SWATCH, BAND_LEGEND))
        entries = tuple(entries)
        if entries == self._legend_entries:
            return
        self._legend_entries = entries
        self.legend_label.setText(" &nbsp; ".join(
            f"<span style='color:{color}; font-size:13pt'>{glyph}</span>&nbsp;{pw.html_escape(text)}"
            for glyph, color, text in entries))

    def legend_texts(self) -> list[str]:
        return [text for _, _, text in self._legend_entries]

    def _px_per_decade(self) -> tuple[float, float]:
        vb = self.plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        return max(vb.width(), 1.0) / max(x1 - x0, 1e-9), max(vb.height(), 1.0) / max(y1 - y0, 1e-9)

    # ------------------------------------------------------------------ placement
    def _layout_labels(self, *_) -> None:
        """Place every text item (see the module docstring); nothing is recomputed when nothing changed."""
        if self._roof is None:
            return
        vb = self.plot.getViewBox()
        texts = [self.ridge_text, self.crossing_text, self.kv_text, *self.point_labels, *self.ceiling_labels.values()]
        key = (round(vb.width()), round(vb.height()), self._x_range, self._y_range,
               tuple(t.toPlainText() for t in texts), tuple(self._ceilings), self.kv_marker.isVisible(),
               tuple((p.name, p.intensity, p.attainable_flops_per_s) for p in self._roof.points),
               self.slider.value(), self._mode, tuple(self._compare_keys))
        if key == self._label_key:
            self._layout_stage_label()
            return
        self._label_key = key
        self.hidden_labels = set()
        bounds = ll.view_bounds(vb)
        index = ll.SpatialIndex(area=bounds)
        self._marks(index, vb)
        self._place_compute_labels(index, bounds, vb)
        self._place_bandwidth_labels(index, bounds, vb)
        self._place_point_labels(index, bounds, vb)
        self._place_notes(index, bounds, vb)
        for label in self.compare_labels:
            label.setVisible(False)   # the legend names compared devices
        self._layout_stage_label()

    def _marks(self, index: ll.SpatialIndex, vb) -> None:
        """Point markers, sweep markers and the ridge marker as obstacles."""
        marks = [(p.intensity, p.attainable_flops_per_s) for p in self._roof.points]
        for marker in (self.gemm_marker, self.step_marker, self.kv_marker, self.ridge_marker):
            x, y = marker.getOriginalDataset()
            if marker.isVisible() and x is not None and len(x):
                marks.append((float(x[0]), float(y[0])))
        for x, y in marks:
            sx, sy = ll.scene_point(vb, math.log10(max(x, 1e-12)), math.log10(max(y, 1.0)))
            index.add((sx - MARK_PX, sy - MARK_PX, sx + MARK_PX, sy + MARK_PX))

    def _take(self, index: ll.SpatialIndex, bounds: ll.Box, boxes: list[ll.Box]) -> bool:
        if all(ll.inside(b, bounds, 1.0) for b in boxes) and not any(index.hits(b, ll.PAD) for b in boxes):
            for b in boxes:
                index.add(b)
            return True
        return False

    def _place_compute_labels(self, index, bounds, vb) -> None:
        """Right end of each compute roof, above its line (below for lower roofs), then further left."""
        hw = self._results.scenario.hardware
        main_peak = hw.peak(self._roof.dtype)
        roofs = sorted((c for c in self._roof.ceilings if c.kind == "compute"),
                       key=lambda c: (c.value != main_peak, -c.value))
        for c in roofs:
            label = self.ceiling_labels[c.name]
            label.setAngle(0)
            label.rotateAxis = None
            w, h = ll.text_size(label)
            ly = math.log10(c.value)
            start_x = ll.scene_point(vb, math.log10(max(c.value / hw.hbm_bw, self._x_range[0])), ly)[0]
            sy = ll.scene_point(vb, 0.0, ly)[1]
            sides = ("above", "below") if c.value >= main_peak else ("below", "above")
            chosen = None
            for k in range(4):
                left = bounds[2] - 4 - w - k * 0.6 * w
                if left < start_x - 2:
                    break
                for side in sides:
                    top = sy - h if side == "above" else sy
                    if self._take(index, bounds, [(left, top, left + w, top + h)]):
                        chosen = (left, side)
                        break
                if chosen:
                    break
            if chosen is None:   # no room: hidden, still anchored on its line (the hover names the roof)
                self.hidden_labels.add(c.name)
            left = chosen[0] if chosen else bounds[2] - 4 - w
            label.setAnchor((0, 1) if chosen is None or chosen[1] == "above" else (0, 0))
            label.setPos(vb.mapSceneToView(QtCore.QPointF(left, sy)).x(), ly)
            label.setVisible(chosen is not None)

    def _place_bandwidth_labels(self, index, bounds, vb) -> None:
        """Along each diagonal, above it, at the first free stretch from its left end."""
        px_x, px_y = self._px_per_decade()
        angle = math.degrees(math.atan2(px_y, px_x))
        a = math.radians(angle)
        along, up = (math.cos(a), -math.sin(a)), (-math.sin(a), -math.cos(a))
        lx0, lx1 = (math.log10(v) for v in self._x_range)
        ly0, ly1 = (math.log10(v) for v in self._y_range)
        for c in sorted((c for c in self._roof.ceilings if c.kind == "bandwidth"), key=lambda c: -c.value):
            label = self.ceiling_labels[c.name]
            xs, _ = self.ceiling_curves[c.name].getOriginalDataset()
            b = math.log10(c.value)
            x_start, x_end = max(lx0, ly0 - b), min(math.log10(float(xs[-1])), ly1 - b, lx1)
            w, h = ll.text_size(label)
            length_dec = w / math.hypot(px_x, px_y)   # the text's length, in decades of x
            chosen = None
            for f in np.arange(0.0, 0.9, 0.025):   # from the line's left end rightward
                x = x_start + f * (x_end - x_start)
                if x + length_dec > x_end:
                    break
                sx, sy = ll.scene_point(vb, x, x + b)
                for side in (1.0, -1.0):   # above the line, then below it
                    cx = sx + along[0] * w / 2 + side * up[0] * h / 2
                    cy = sy + along[1] * w / 2 + side * up[1] * h / 2
                    if self._take(index, bounds, ll.rotated_text(cx, cy, w, h - 8, angle)):
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

    def _place_point_labels(self, index, bounds, vb) -> None:
        """Around each marker (right first); a leader line when the label sits a step away; else hidden."""
        pts = self._roof.points
        order = sorted(range(len(pts)), key=lambda i: (-pts[i].attainable_flops_per_s, pts[i].intensity))
        leader_x: list[float] = []
        leader_y: list[float] = []
        for i in order:
            item = self.point_labels[i]
            w, h = ll.text_size(item)
            mx, my = ll.scene_point(vb, math.log10(pts[i].intensity), math.log10(max(pts[i].attainable_flops_per_s, 1.0)))
            sides = ("right", "below-right", "above-right", "left", "below", "above", "below-left", "above-left")
            box = None
            for x, y in ll.around(mx, my, w, h, 9.0, sides, steps=1):
                if self._take(index, bounds, [(x, y, x + w, y + h)]):
                    box = (x, y, x + w, y + h)
                    break
            ll.put(item, vb, box)
            if box is None:
                self.hidden_labels.add(pts[i].name)
                continue
            nx, ny = min(max(mx, box[0]), box[2]), min(max(my, box[1]), box[3])
            if math.hypot(nx - mx, ny - my) > 16:
                for px, py in ((mx, my), (nx, ny)):
                    p = vb.mapSceneToView(QtCore.QPointF(px, py))
                    leader_x.append(10.0 ** p.x())
                    leader_y.append(10.0 ** p.y())
        self.leaders.setData(np.asarray(leader_x, dtype=float), np.asarray(leader_y, dtype=float))

    def _place_notes(self, index, bounds, vb) -> None:
        """The ridge (at the foot of its dotted line), the GEMMs' crossing (at the knee) and the KV-fit limit."""
        hw = self._results.scenario.hardware
        ridge = self._roof.ridge_flop_per_byte
        peak = hw.peak(self._roof.dtype)
        self.ridge_text.setText(f"datasheet ridge {ridge:,.0f} FLOP/B\n({self._roof.dtype.upper()} peak / HBM)")
        rx, peak_y = ll.scene_point(vb, math.log10(ridge), math.log10(peak))
        w, h = ll.text_size(self.ridge_text)
        spots = [((rx - 4 - w, bounds[3] - 2 - h - k * h / 2), (1, 1)) for k in range(5)]
        spots += [((rx + 4, bounds[3] - 2 - h - k * h / 2), (0, 1)) for k in range(5)]
        self._put_note(self.ridge_text, index, bounds, vb, w, h, spots, "ridge")
        self.crossing_text.setVisible(False)
        if self._mode == "batch":   # the knee, in batch terms
            w, h = ll.text_size(self.crossing_text)
            spots = [((rx - 6 - w, peak_y - h - 2), (1, 1)), ((rx - 6 - w, peak_y + 4), (1, 0)),
                     ((rx - 6 - w, peak_y - 2 * h - 2), (1, 1)), ((bounds[0] + 4, peak_y - h - 2), (0, 1))]
            self._put_note(self.crossing_text, index, bounds, vb, w, h, spots, "crossing")
        if self.kv_text.toPlainText() and self.kv_marker.isVisible():
            x, y = self._kv_pos
            kx, ky = ll.scene_point(vb, math.log10(x), math.log10(max(y, 1.0)))
            w, h = ll.text_size(self.kv_text)
            spots = [((cx, cy), (0, 0)) for cx, cy in ll.around(kx, ky, w, h, 10.0, ll.SIDES + ("above-left",
                                                                                                 "below-left"))]
            self._put_note(self.kv_text, index, bounds, vb, w, h, spots, "kv")

    def _put_note(self, item: pg.TextItem, index, bounds, vb, w, h, spots, name: str) -> None:
        """The first free spot (top-left corner, anchor to keep) for a note, or hide it."""
        for (x, y), anchor in spots:
            if self._take(index, bounds, [(x, y, x + w, y + h)]):
                item.setAnchor(anchor)
                p = vb.mapSceneToView(QtCore.QPointF(x + anchor[0] * w, y + anchor[1] * h))
                item.setPos(p.x(), p.y())
                item.setVisible(True)
                return
        item.setVisible(False)
        self.hidden_labels.add(name)

    @staticmethod
    def _text_rect_px(item: pg.TextItem, px_x: float, px_y: float) -> QtCore.QRectF:
        """An unrotated TextItem's box in the layout's pixel frame (x right, y down), from its log10 position
        and anchor."""
        metrics = QtGui.QFontMetrics(item.textItem.font())
        lines = item.toPlainText().split("\n")
        w = max(metrics.horizontalAdvance(line) for line in lines) + 4
        h = metrics.lineSpacing() * len(lines) + 2
        pos = item.pos()
        ax, ay = item.anchor.x(), item.anchor.y()
        x, y = pos.x() * px_x, -pos.y() * px_y
        return QtCore.QRectF(x - ax * w, y - ay * h, w, h)
