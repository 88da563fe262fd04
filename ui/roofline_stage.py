"""The roofline's highlighted flow stage: its point (or the kernels it maps to) ringed, and a boxed label.

`show_stage(name, numbers)` follows the step-through flow's highlighted stage (`stage_operating_point`);
the label is placed beside the ring where it covers the fewest labels and markers. Mixed into
RooflinePanel, whose items and state (`_roof`, `stage_*`) it uses.
"""

from __future__ import annotations

import math

from PySide6 import QtCore, QtGui

from trinity_desktop.model.views.roofline import (
    INTENSITY_CAP,
    STAGE_POINT,
    stage_bytes,
    stage_duration,
    stage_operating_point,
)
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.roofline_style import LINK_WORDS, STAGE_LABEL_CHARS, fmt_intensity, short_name
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_flops_rate, fmt_seconds


class RooflineStage:
    def show_stage(self, name: str, numbers: dict) -> None:
        """Follow the step-through flow: highlight the operating point of stage `name` (`numbers` is
        `Stage.as_dict()`: kind, lane, start_s, end_s, flops, bytes_by_link, ...); `show_stage("", {})` clears.
        The mapping is `stage_operating_point`."""
        self._stage = (name, dict(numbers or {})) if name else None
        self._stage_target = self._resolve_stage()
        if self._roof is None:
            return
        target = self._stage_target
        if target is not None and target[0]:
            x, y = target[3], target[4]
            (x_lo, x_hi), (y_lo, y_hi) = self._x_range, self._y_range
            if not (x_lo < x < x_hi and y_lo < y < y_hi):   # outside the view: re-range (rare)
                self._set_ranges()
                self._layout_labels()
        self._draw_stage()

    def highlighted_stage(self) -> tuple[str, float, float] | None:
        """(stage name, intensity FLOP/B, attainable FLOP/s) of the highlighted point, in data units; None
        when no stage is shown or the stage has no operating point (idle, host transfers)."""
        t = self._stage_target
        if self._roof is None or self._stage is None or t is None or not t[0]:
            return None
        return self._stage[0], t[3], t[4]

    def highlighted_point_name(self) -> str:
        """The operating point the stage maps to (`STAGE_POINT` for the stage's own marker), or ""."""
        t = self._stage_target
        return t[0] if t is not None and self._stage is not None else ""

    def related_point_names(self) -> tuple[str, ...]:
        """The kernels circled (dashed) as part of the highlighted stage."""
        t = self._stage_target
        return t[1] if t is not None and self._stage is not None else ()

    def stage_label_text(self) -> str:
        """The on-plot stage label as plain text ("" when hidden)."""
        return self.stage_text.toPlainText() if self.stage_text.isVisible() else ""

    def _resolve_stage(self) -> tuple[str, tuple[str, ...], str, float, float] | None:
        """(primary, related, note, intensity, attainable) for the current stage and roofline."""
        if self._stage is None or self._roof is None:
            return None
        _, numbers = self._stage
        primary, related, note = stage_operating_point(numbers, {p.name: p.role for p in self._roof.points})
        x = y = 0.0
        if primary == STAGE_POINT:
            flops = float(numbers.get("flops", 0.0))
            nbytes, _ = stage_bytes(numbers)
            x = min(flops / nbytes, INTENSITY_CAP)
            y = max(flops / stage_duration(numbers), 1.0)
        elif primary:
            p = self._roof.point(primary)
            x, y = p.intensity, max(p.attainable_flops_per_s, 1.0)
        return primary, related, note, float(x), float(y)

    def _draw_stage(self) -> None:
        t = self._stage_target
        items = (self.stage_marker, self.stage_halo, self.stage_ring, self.stage_related, self.stage_leader,
                 self.stage_text)
        if self._roof is None or self._stage is None or t is None:
            for item in items:
                item.setVisible(False)
            return
        name, numbers = self._stage
        primary, related, note, x, y = t
        short = name if len(name) <= STAGE_LABEL_CHARS else name[: STAGE_LABEL_CHARS - 1] + "…"
        if primary:
            for item in (self.stage_halo, self.stage_ring):
                item.setData([x], [y])
                item.setVisible(True)
            own = primary == STAGE_POINT
            if own:
                color = theme.RESOURCE_COLORS.get(str(numbers.get("binding", "")), theme.FALLBACK_COLOR)
                self.stage_marker.setData([x], [y], symbolBrush=color)
            self.stage_marker.setVisible(own)
            pts = [self._roof.point(r) for r in related]
            self.stage_related.setData([p.intensity for p in pts], [max(p.attainable_flops_per_s, 1.0) for p in pts])
            self.stage_related.setVisible(bool(pts))
            what = "" if own else f"→ {short_name(primary)}: "   # own marker: the hover says how it is drawn
            self.stage_text.setText(f"stage: {short}\n{what}{fmt_intensity(x)}, {fmt_flops_rate(y)}")
        else:
            for item in items[:-1]:
                item.setVisible(False)
            self.stage_text.setText(f"stage: {short}\n{note}")
        self.stage_text.setVisible(True)
        self._layout_stage_label()

    def _layout_stage_label(self) -> None:
        """Place the stage label (log10 coordinates, pixels measured) beside its ring, inside the view, where it
        covers the fewest labels and markers (nearest first), with a leader line when it had to move away;
        a stage with no point gets its note in the emptiest corner."""
        t = self._stage_target
        if not self.stage_text.isVisible() or t is None or self._roof is None:
            self.stage_leader.setVisible(False)
            return
        px_x, px_y = self._px_per_decade()
        lx0, lx1 = (math.log10(v) for v in self._x_range)
        ly0, ly1 = (math.log10(v) for v in self._y_range)
        view = QtCore.QRectF(lx0 * px_x, -ly1 * px_y, (lx1 - lx0) * px_x, (ly1 - ly0) * px_y)
        self.stage_text.setFont(pw.font(12 if view.width() >= 520 else 11, bold=True))
        metrics = QtGui.QFontMetrics(self.stage_text.textItem.font())
        lines = self.stage_text.toPlainText().split("\n")
        w = max(metrics.horizontalAdvance(line) for line in lines) + 14
        h = metrics.lineSpacing() * len(lines) + 10
        texts = list(self.point_labels) + [self.ceiling_labels[c.name] for c in self._roof.ceilings
                                           if c.kind == "compute"]
        texts += [self.ridge_text, self.crossing_text, self.kv_text]
        avoid = [self._text_rect_px(item, px_x, px_y) for item in texts if item.isVisible() and item.toPlainText()]
        marks = [(p.intensity, p.attainable_flops_per_s) for p in self._roof.points]
        for marker in (self.gemm_marker, self.step_marker, self.kv_marker):
            x, y = marker.getOriginalDataset()
            if marker.isVisible() and x is not None and len(x):
                marks.append((float(x[0]), float(y[0])))
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
        self.stage_text.setAnchor((0, 0))
        self.stage_text.setPos(cx / px_x, -cy / px_y)
        rect = QtCore.QRectF(cx, cy, w, h)
        if mx is None or math.hypot(min(max(mx, rect.left()), rect.right()) - mx,
                                    min(max(my, rect.top()), rect.bottom()) - my) <= 30:
            self.stage_leader.setVisible(False)
            return
        # A leader from the ring's edge to the nearest point of the label box.
        nx, ny = min(max(mx, rect.left()), rect.right()), min(max(my, rect.top()), rect.bottom())
        dist = math.hypot(nx - mx, ny - my)
        sx, sy = mx + (nx - mx) * 18.0 / dist, my + (ny - my) * 18.0 / dist
        self.stage_leader.setData([10.0 ** (sx / px_x), 10.0 ** (nx / px_x)],
                                  [10.0 ** (-sy / px_y), 10.0 ** (-ny / px_y)])
        self.stage_leader.setVisible(True)

    def _stage_hover_text(self) -> str:
        if self._stage is None:
            return ""
        name, numbers = self._stage
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

