"""The roofline's highlighted flow stage: its point (or the kernels it maps to) ringed, and a boxed label.

`show_stage(name, numbers)` follows the step-through flow's highlighted stage (`stage_operating_point`);
the label is placed beside the ring where it covers the fewest labels and markers. A layer the panel owns: it
holds its items and the stage shown, and draws from the `Roofline` and `RooflineFrame` it is handed; the texts
and markers its label keeps off come from the panel (`layout`).
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.roofline import (
    INTENSITY_CAP,
    STAGE_POINT,
    Roofline,
    stage_bytes,
    stage_duration,
    stage_operating_point,
)
from trinity_desktop.model.views.stages import refreshed_stage
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.roofline_frame import RooflineFrame, text_rect_px
from trinity_desktop.ui.roofline_style import (
    COMPUTE,
    LINK_WORDS,
    STAGE_LABEL_CHARS,
    STAGE_RING,
    fmt_intensity,
    short_name,
)
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_flops_rate, fmt_seconds


class RooflineStage:
    """The highlighted stage's point, rings, leader and label on `plot`."""

    def __init__(self, plot: pg.PlotItem):
        self.stage: tuple[str, dict] | None = None          # (name, numbers) as last shown
        self.target: tuple[str, tuple[str, ...], str, float, float] | None = None
        self._roof: Roofline | None = None
        no_brush = pg.mkBrush(None)
        self.marker = pg.PlotDataItem(pen=None, symbol="p", symbolSize=20, symbolBrush=COMPUTE,
                                      symbolPen=pg.mkPen(theme.ON_LIGHT, width=1.5))
        self.halo = pg.PlotDataItem(pen=None, symbol="o", symbolSize=36, symbolBrush=no_brush,
                                    symbolPen=pg.mkPen(pw.plot_background(), width=7))
        self.ring = pg.PlotDataItem(pen=None, symbol="o", symbolSize=36, symbolBrush=no_brush,
                                    symbolPen=pg.mkPen(STAGE_RING, width=3))
        self.related = pg.PlotDataItem(pen=None, symbol="o", symbolSize=26, symbolBrush=no_brush,
                                       symbolPen=pg.mkPen(STAGE_RING, width=1.8, style=QtCore.Qt.PenStyle.DashLine))
        self.leader = pg.PlotDataItem(pen=pg.mkPen(STAGE_RING, width=1.5))
        self.text = pg.TextItem("", color=theme.ON_LIGHT, fill=pg.mkBrush(theme.ON_DARK),
                                border=pg.mkPen(STAGE_RING, width=1.5), anchor=(0, 1))
        self.text.setFont(pw.font(12, bold=True))
        for z, item in ((24, self.related), (25, self.halo), (26, self.ring), (27, self.marker), (26, self.leader),
                        (30, self.text)):
            item.setZValue(z)
            item.setVisible(False)
            plot.addItem(item, ignoreBounds=item is self.text)

    def show(self, name: str, numbers: dict, roof: Roofline | None) -> None:
        """Follow the step-through flow: stage `name` (`numbers` is `Stage.as_dict()`: kind, lane, start_s, end_s,
        flops, bytes_by_link, ...); `show("", {}, roof)` clears. The mapping is `stage_operating_point`."""
        self.stage = (name, dict(numbers or {})) if name else None
        self.resolve(roof)

    def refresh(self, results: Results, roof: Roofline) -> None:
        """New results: the stage of the same name in them (`refreshed_stage`), mapped onto `roof`."""
        self.stage = refreshed_stage(results, self.stage)
        self.resolve(roof)

    def resolve(self, roof: Roofline | None) -> None:
        """(primary, related, note, intensity, attainable) for the current stage on `roof`."""
        self._roof = roof
        self.target = None
        if self.stage is None or roof is None:
            return
        _, numbers = self.stage
        primary, related, note = stage_operating_point(numbers, {p.name: p.role for p in roof.points})
        x = y = 0.0
        if primary == STAGE_POINT:
            flops = float(numbers.get("flops", 0.0))
            nbytes, _ = stage_bytes(numbers)
            x = min(flops / nbytes, INTENSITY_CAP)
            y = max(flops / stage_duration(numbers), 1.0)
        elif primary:
            p = roof.point(primary)
            x, y = p.intensity, max(p.attainable_flops_per_s, 1.0)
        self.target = (primary, related, note, float(x), float(y))

    def own_point(self) -> tuple[float, float] | None:
        """(intensity, attainable FLOP/s) of the stage's own marker (a stage drawn as one kernel), or None."""
        t = self.target
        return (t[3], t[4]) if t is not None and t[0] == STAGE_POINT else None

    def point(self) -> tuple[float, float] | None:
        """Where the ring is, or None (no stage, or a stage with no point)."""
        t = self.target
        return (t[3], t[4]) if t is not None and t[0] else None

    def highlighted_stage(self) -> tuple[str, float, float] | None:
        """(stage name, intensity FLOP/B, attainable FLOP/s) of the highlighted point, in data units; None
        when no stage is shown or the stage has no operating point (idle, host transfers)."""
        p = self.point()
        return None if p is None else (self.stage[0], *p)

    def highlighted_point_name(self) -> str:
        """The operating point the stage maps to (`STAGE_POINT` for the stage's own marker), or ""."""
        return self.target[0] if self.target is not None else ""

    def related_point_names(self) -> tuple[str, ...]:
        """The kernels circled (dashed) as part of the highlighted stage."""
        return self.target[1] if self.target is not None else ()

    def label_text(self) -> str:
        """The on-plot stage label as plain text ("" when hidden)."""
        return self.text.toPlainText() if self.text.isVisible() else ""

    def draw(self) -> None:
        t, roof = self.target, self._roof
        items = (self.marker, self.halo, self.ring, self.related, self.leader, self.text)
        if t is None:
            for item in items:
                item.setVisible(False)
            return
        name, numbers = self.stage
        primary, related, note, x, y = t
        short = name if len(name) <= STAGE_LABEL_CHARS else name[: STAGE_LABEL_CHARS - 1] + "…"
        if primary:
            for item in (self.halo, self.ring):
                item.setData([x], [y])
                item.setVisible(True)
            own = primary == STAGE_POINT
            if own:
                color = theme.RESOURCE_COLORS.get(str(numbers.get("binding", "")), theme.FALLBACK_COLOR)
                self.marker.setData([x], [y], symbolBrush=color)
            self.marker.setVisible(own)
            pts = [roof.point(r) for r in related]
            self.related.setData([p.intensity for p in pts], [max(p.attainable_flops_per_s, 1.0) for p in pts])
            self.related.setVisible(bool(pts))
            what = "" if own else f"→ {short_name(primary)}: "   # own marker: the hover says how it is drawn
            self.text.setText(f"stage: {short}\n{what}{fmt_intensity(x)}, {fmt_flops_rate(y)}")
        else:
            for item in items[:-1]:
                item.setVisible(False)
            self.text.setText(f"stage: {short}\n{note}")
        self.text.setVisible(True)

    def layout(self, frame: RooflineFrame, px: tuple[float, float], avoid_texts: list[pg.TextItem],
               marks: list[tuple[float, float]]) -> None:
        """Place the stage label (log10 coordinates, pixels measured) beside its ring, inside the view, where it
        covers the fewest of `avoid_texts` and `marks` (nearest first), with a leader line when it had to move
        away; a stage with no point gets its note in the emptiest corner."""
        t = self.target
        if not self.text.isVisible() or t is None:
            self.leader.setVisible(False)
            return
        px_x, px_y = px
        lx0, lx1 = (math.log10(v) for v in frame.x_range)
        ly0, ly1 = (math.log10(v) for v in frame.y_range)
        view = QtCore.QRectF(lx0 * px_x, -ly1 * px_y, (lx1 - lx0) * px_x, (ly1 - ly0) * px_y)
        self.text.setFont(pw.font(12 if view.width() >= 520 else 11, bold=True))
        metrics = QtGui.QFontMetrics(self.text.textItem.font())
        lines = self.text.toPlainText().split("\n")
        w = max(metrics.horizontalAdvance(line) for line in lines) + 14
        h = metrics.lineSpacing() * len(lines) + 10
        avoid = [text_rect_px(item, px_x, px_y) for item in avoid_texts if item.isVisible() and item.toPlainText()]
        avoid += [QtCore.QRectF(math.log10(x) * px_x - 9, -math.log10(max(y, 1.0)) * px_y - 9, 18, 18)
                  for x, y in marks]
        if t[0]:
            mx, my = math.log10(t[3]) * px_x, -math.log10(t[4]) * px_y
            avoid.append(QtCore.QRectF(mx - 20, my - 20, 40, 40))   # the ring itself
            candidates = []
            for d in (22.0, 40.0, 70.0, 110.0, 160.0, 220.0):
                candidates += [(mx - w / 2, my + d), (mx + d, my - h / 2), (mx - w - d, my - h / 2),
                               (mx - w / 2, my - d - h), (mx + d * 0.7, my + d * 0.7), (mx - w - d * 0.7, my + d * 0.7),
                               (mx + d * 0.7, my - d * 0.7 - h), (mx - w - d * 0.7, my - d * 0.7 - h)]
        else:
            mx = my = None
            m = 8.0
            candidates = [(view.right() - w - m, view.bottom() - h - m), (view.left() + m, view.bottom() - h - m),
                          (view.left() + m, view.top() + m), (view.right() - w - m, view.top() + m)]
        best, best_score = candidates[0], None
        for rank, (cx, cy) in enumerate(candidates):
            rect = QtCore.QRectF(cx, cy, w, h)
            score = (0 if view.contains(rect) else 1, sum(rect.intersects(a) for a in avoid), rank)
            if best_score is None or score < best_score:
                best, best_score = (cx, cy), score
        cx = max(min(best[0], view.right() - w - 2), view.left() + 2)   # the left edge wins when too wide
        cy = max(min(best[1], view.bottom() - h - 2), view.top() + 2)
        self.text.setAnchor((0, 0))
        self.text.setPos(cx / px_x, -cy / px_y)
        rect = QtCore.QRectF(cx, cy, w, h)
        if mx is None or math.hypot(min(max(mx, rect.left()), rect.right()) - mx,
                                    min(max(my, rect.top()), rect.bottom()) - my) <= 30:
            self.leader.setVisible(False)
            return
        # A leader from the ring's edge to the nearest point of the label box.
        nx, ny = min(max(mx, rect.left()), rect.right()), min(max(my, rect.top()), rect.bottom())
        dist = math.hypot(nx - mx, ny - my)
        sx, sy = mx + (nx - mx) * 18.0 / dist, my + (ny - my) * 18.0 / dist
        self.leader.setData([10.0 ** (sx / px_x), 10.0 ** (nx / px_x)],
                                  [10.0 ** (-sy / px_y), 10.0 ** (-ny / px_y)])
        self.leader.setVisible(True)

    def hover_text(self) -> str:
        """The read-out of the stage's own marker: the stage drawn as one kernel."""
        if self.stage is None:
            return ""
        name, numbers = self.stage
        flops = float(numbers.get("flops", 0.0))
        nbytes, link = stage_bytes(numbers)
        dur = stage_duration(numbers)
        lane = numbers.get("lane", "")
        lines = [f"Stage: {name}" + (f" ({lane})" if lane else ""),
                 "drawn as one kernel: FLOPs ÷ bytes, FLOPs ÷ stage time (per GPU)",
                 f"FLOPs: {fmt_flops(flops)}",
                 f"bytes: {fmt_bytes(nbytes)} over {LINK_WORDS.get(link, link)}",
                 f"intensity: {fmt_intensity(min(flops / nbytes, INTENSITY_CAP) if nbytes > 0 else 0.0)}",
                 f"achieved: {fmt_flops_rate(flops / dur if dur > 0 else 0.0)} (model time, with efficiencies)",
                 f"stage time: {fmt_seconds(dur)}",
                 f"binding resource: {numbers.get('binding', '—')}"]
        return "\n".join(lines)

