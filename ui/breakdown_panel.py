"""Breakdown panel: memory per GPU by component (against HBM capacity) and time by stage, one scenario.

Reads a `Results`; keeps its pyqtgraph items and updates them in place on every `update_results`.
`show_stage(name, numbers)` follows the step-through flow: the live memory of that stage on the memory bar,
its segment outlined in the time bar (`time_segments_for_stage`).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.recompute import claim_against_computed
from trinity_desktop.model.views.stages import refreshed_stage
from trinity_desktop.ui import breakdown_hover as hover
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.breakdown_summary import summary_line
from trinity_desktop.ui.chart_layout import set_stacked
from trinity_desktop.ui.stacked_bar import StackedBar
from trinity_desktop.ui.stage_segments import time_segments_for_stage
from trinity_desktop.ui.units import choose_time_unit, fmt_value

STACK_BELOW_PX = 640   # a panel narrower than this stacks the memory bar above the time bar
BAD_COLOR = theme.BAD_COLOR  # the "does not fit" red (text and line), distinct from the component colours
TIME_TITLES = {"train": "Step time", "prefill": "Prefill time", "decode": "Time per output token"}
BAR_TICKS = {"train": "one step", "prefill": "one prompt", "decode": "one token"}
LINE_OVERHANG = 0.08   # x units the capacity / needs lines reach past the bar (its leaders end at 0.53)


STAGE_COLOR = theme.ON_LIGHT  # the followed stage: black on a white halo, readable on every segment colour


def _tier_gb(numbers: dict, tier: str) -> float:
    v = float(dict(numbers.get("live_memory_by_tier") or {}).get(tier, 0.0) or 0.0)
    return v / 1e9 if math.isfinite(v) and v > 0 else 0.0


def _underlined() -> QtGui.QFont:
    """The highlighted segment's label: underlined, same width as the others (bold would overflow the room the
    bar measured for its labels)."""
    f = pw.font()
    f.setUnderline(True)
    return f


class BreakdownPanel(QtWidgets.QWidget):
    """Two stacked bars (memory per GPU, time by stage) and a one-line summary of the scenario."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("BreakdownPanel")
        self.setAccessibleName("Breakdown: memory per GPU and time by stage")
        self._results: Results | None = None
        self._recompute_cache: tuple[Results | None, list[str]] = (None, [])
        self._time_scale, self._time_unit = 1.0, "s"

        self.memory_widget = pg.PlotWidget(background=pw.plot_background())
        self.time_widget = pg.PlotWidget(background=pw.plot_background())
        self.memory_plot: pg.PlotItem = self.memory_widget.getPlotItem()
        self.time_plot: pg.PlotItem = self.time_widget.getPlotItem()
        self.plots = {"memory": self.memory_plot, "time": self.time_plot}
        self.memory_widget.setAccessibleName("Memory per GPU chart")
        self.memory_widget.setAccessibleDescription(
            "Stacked bar of memory per GPU by component in decimal gigabytes, with the HBM capacity line. "
            "Hover a segment for its size and share.")
        self.time_widget.setAccessibleName("Time by stage chart")
        self.time_widget.setAccessibleDescription(
            "Stacked bar of the step (or prefill, or per-token) time by stage. Hover a segment for its "
            "duration and share.")

        for plot in self.plots.values():
            pw.freeze_view(plot)
            plot.showGrid(x=False, y=True, alpha=0.25)
        pw.style_plot(self.memory_plot, "Memory per GPU", left="GB per GPU (10⁹ B)")
        pw.style_plot(self.time_plot, "Time by stage", left="time (s)")
        self.memory_plot.getAxis("bottom").setTicks([[(0.0, "one GPU")]])
        self.time_plot.getAxis("bottom").setTicks([[(0.0, "")]])

        self.memory_bar = StackedBar(self.memory_plot)
        self.time_bar = StackedBar(self.time_plot)

        self.capacity_line = pg.InfiniteLine(
            pos=0.0, angle=0, pen=pg.mkPen(theme.plot_text_color(), width=2, style=QtCore.Qt.PenStyle.DashLine))
        self.memory_plot.addItem(self.capacity_line, ignoreBounds=True)
        self.capacity_text = pw.label_item("", anchor=(1, 1), bold=True)
        self.memory_plot.addItem(self.capacity_text, ignoreBounds=True)
        self.need_line = pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen(BAD_COLOR, width=3))
        self.need_line.setVisible(False)
        self.memory_plot.addItem(self.need_line, ignoreBounds=True)
        self.need_text = pw.label_item("", color=BAD_COLOR, anchor=(1, 1), bold=True)
        self.need_text.setVisible(False)
        self.memory_plot.addItem(self.need_text, ignoreBounds=True)
        # the capacity and needs lines stop just past the bar: its side labels, right of it, are never crossed
        self.memory_plot.getViewBox().sigXRangeChanged.connect(self._span_lines)

        # The stage the step-through flow highlights: live memory as a line across the memory bar (black on a
        # white halo), its segment(s) outlined in the time bar, and a line of numbers below the plots.
        self._stage: tuple[str, dict] | None = None
        self.live_halo = pg.PlotCurveItem(pen=pg.mkPen(theme.ON_DARK, width=8))
        self.live_line = pg.PlotCurveItem(pen=pg.mkPen(STAGE_COLOR, width=3.5))
        self.live_leader = pg.PlotCurveItem(pen=pg.mkPen(STAGE_COLOR, width=1.2))
        self.live_text = pw.label_item("", anchor=(1, 0.5), bold=True)  # coloured when drawn
        for z, item in ((9, self.live_halo), (10, self.live_line), (10, self.live_leader), (11, self.live_text)):
            item.setZValue(z)
            item.setVisible(False)
            self.memory_plot.addItem(item, ignoreBounds=True)
        self.time_halo = pg.PlotCurveItem(pen=pg.mkPen(theme.ON_DARK, width=7), connect="pairs")
        self.time_outline = pg.PlotCurveItem(pen=pg.mkPen(STAGE_COLOR, width=3), connect="pairs")
        for z, item in ((9, self.time_halo), (10, self.time_outline)):
            item.setZValue(z)
            item.setVisible(False)
            self.time_plot.addItem(item, ignoreBounds=True)
        self._time_segments: list[str] = []

        self.memory_hover = pw.HoverReadout(self.memory_plot, lambda x, y: self.hover_text_at("memory", x, y))
        self.time_hover = pw.HoverReadout(self.time_plot, lambda x, y: self.hover_text_at("time", x, y))
        pw.LeaveFilter(self.memory_widget, self.memory_hover.leave)
        pw.LeaveFilter(self.time_widget, self.time_hover.leave)

        self.fit_label = QtWidgets.QLabel("")
        self.fit_label.setObjectName("BreakdownFitLabel")
        self.fit_label.setFont(pw.font(13, bold=True))
        self.fit_label.setStyleSheet(f"color: {BAD_COLOR};")
        self.fit_label.setWordWrap(True)   # a long message wraps inside the panel, never widens the dock
        self.fit_label.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.fit_label.setAccessibleName("Fit status")
        self.fit_label.setToolTip("Shown when the per-GPU memory exceeds the accelerator's HBM capacity.")
        self.fit_label.setVisible(False)

        self.summary_label = QtWidgets.QLabel("No scenario evaluated yet.")
        self.summary_label.setObjectName("BreakdownSummary")
        self.summary_label.setFont(pw.font(12))
        self.summary_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.summary_label.setWordWrap(True)
        self.summary_label.setAccessibleName("Scenario summary")
        self.summary_label.setToolTip(
            "MFU: model FLOPs utilisation (model FLOPs per second / peak). TTFT: time to first token "
            "(the prefill of the batch's prompts, all arriving at once; Poisson arrivals: System outcomes). TPOT: time per output token (decode). Binds: the resource under the most "
            "pressure (memory whenever it does not fit), not the largest part of the time.")
        self.summary_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)

        self.stage_label = QtWidgets.QLabel("")
        self.stage_label.setObjectName("BreakdownStageLabel")
        self.stage_label.setFont(pw.font(12))
        self.stage_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.stage_label.setWordWrap(True)
        self.stage_label.setAccessibleName("Highlighted stage")
        self.stage_label.setToolTip("The stage highlighted in the step-through flow: the memory live on one GPU "
                                    "at that moment (black line on the memory bar) and the part of the time "
                                    "bar it belongs to (outlined).")
        self.stage_label.setVisible(False)
        self._stage_plain = ""

        self.plots_layout = plots = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        plots.setContentsMargins(0, 0, 0, 0)
        plots.addWidget(self.memory_widget, 1)
        plots.addWidget(self.time_widget, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(plots, 1)
        layout.addWidget(self.stage_label)
        layout.addWidget(self.fit_label)
        layout.addWidget(self.summary_label)
        self._summary_plain = ""

    # ------------------------------------------------------------------ update
    def update_results(self, results: Results) -> None:
        self._results = results
        self._stage = refreshed_stage(results, self._stage)
        self._update_memory(results)
        self._update_time(results)
        self._update_summary(results)
        self._draw_stage()

    # ------------------------------------------------------------------ the highlighted flow stage
    def show_stage(self, name: str, numbers: dict) -> None:
        """Follow the step-through flow: mark the memory live on one GPU during stage `name` (`numbers` is
        `Stage.as_dict()`: live_memory_by_tier {hbm, host} in bytes, kind, lane, ...) and outline the time
        segment it belongs to; `show_stage("", {})` clears."""
        self._stage = (name, dict(numbers or {})) if name else None
        if self._results is not None:
            self._update_memory(self._results)   # the y range and the left margin make room for the marker
        self._draw_stage()

    def live_memory_marker(self) -> float | None:
        """The live HBM marker in GB per GPU (decimal), or None when no stage is followed."""
        if self._stage is None or self._results is None:
            return None
        return _tier_gb(self._stage[1], "hbm")

    def live_host_memory(self) -> float | None:
        """Live host memory of the followed stage in GB per GPU, or None."""
        if self._stage is None or self._results is None:
            return None
        return _tier_gb(self._stage[1], "host")

    def highlighted_time_segments(self) -> list[str]:
        """The time-bar segments outlined for the followed stage."""
        return list(self._time_segments)

    def stage_text(self) -> str:
        """The followed stage's line below the plots, as plain text ("" when none)."""
        return self._stage_plain

    def _live_label_text(self) -> str:
        if self._stage is None:
            return ""
        # Short, so the bar keeps its room; the stage's full name is in the bold line below the plots.
        numbers = self._stage[1]
        text = f"live at this stage:\n{_tier_gb(numbers, 'hbm'):.1f} GB"
        host = _tier_gb(numbers, "host")
        return text + (f"\n+ {host:.1f} GB host" if host > 0 else "")

    def _draw_stage(self) -> None:
        mem_items = (self.live_halo, self.live_line, self.live_leader, self.live_text)
        for label in self.time_bar.labels:
            label.setFont(pw.font(bold=False))
        self._time_segments = []
        if self._results is None or self._stage is None:
            for item in mem_items + (self.time_halo, self.time_outline):
                item.setVisible(False)
            self.stage_label.setVisible(False)
            self.stage_label.setText("")
            self._stage_plain = ""
            return
        r = self._results
        name, numbers = self._stage
        live, host = _tier_gb(numbers, "hbm"), _tier_gb(numbers, "host")
        # Memory: a line across the bar at the live HBM, its label left of the bar, clear of the other labels.
        bar = self.memory_bar
        x0, x1 = bar.x - bar.width / 2 - 0.08, bar.x + bar.width / 2 + 0.08
        for item in (self.live_halo, self.live_line):
            item.setData(np.array([x0, x1]), np.array([live, live]))
            item.setVisible(True)
        self.live_text.setText(self._live_label_text())
        self.live_text.setColor(theme.plot_text_color())  # left of the bar, on the view's background
        label_x = bar.x - bar.width / 2 - 0.12
        y = self._live_label_y(live)
        self.live_text.setPos(label_x, y)
        self.live_text.setVisible(True)
        self.live_leader.setData(np.array([label_x + 0.01, x0]), np.array([y, live]))
        self.live_leader.setVisible(abs(y - live) > 1e-12)
        # Time: outline the segment(s) the stage belongs to and underline their labels.
        present = [n for n, v in zip(self.time_bar.names, self.time_bar.values, strict=True) if v > 0]
        self._time_segments = time_segments_for_stage(numbers, r.kind, present)
        rects: list[list[float]] = []
        tb = self.time_bar
        previous = False
        for i, seg in enumerate(tb.names):
            chosen = seg in self._time_segments
            if chosen:
                tb.labels[i].setFont(_underlined())
                if previous:   # adjacent segments share one outline
                    rects[-1][3] += float(tb.values[i])
                else:
                    rects.append([tb.x - tb.width / 2 - 0.04, float(tb.bottoms[i]), tb.width + 0.08,
                                  float(tb.values[i])])
            if chosen or tb.values[i] > 0:
                previous = chosen
        xs, ys = pw.rect_outline_points(rects)
        for item in (self.time_halo, self.time_outline):
            item.setData(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
            item.setVisible(bool(rects))
        # The line of numbers below the plots.
        cap = float(r.capacity) / 1e9
        share = f" ({100 * live / cap:.0f}% of {cap:.0f} GB HBM)" if cap > 0 else ""
        lane = numbers.get("lane", "")
        if r.kind != "train" and self._time_segments and self._time_segments == present:
            segs = f"the whole bar ({BAR_TICKS.get(r.kind, '')})"
        else:
            segs = ", ".join(theme.label_for(sg, "time") for sg in self._time_segments) or "—"
        host_text = f" + {host:.1f} GB host" if host > 0 else ""
        parts = [f"Stage: {name}" + (f" ({lane})" if lane else ""),
                 f"live per GPU: {live:.1f} GB{share}{host_text}", f"time segment: {segs}"]
        over = live > cap > 0
        self._stage_plain = " · ".join(parts) + (" · does not fit" if over else "")
        html = (f"<b>▶ {pw.html_escape(parts[0])}</b> &nbsp;·&nbsp; {pw.html_escape(parts[1])}"
                f" &nbsp;·&nbsp; {pw.html_escape(parts[2])}")
        if over:
            html += f" &nbsp;·&nbsp; <b><span style='color:{BAD_COLOR}'>✗ does not fit</span></b>"
        self.stage_label.setText(html)
        self.stage_label.setVisible(True)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """Stack the two bars on a narrow panel: each then has the width its side labels need."""
        set_stacked(self.plots_layout, event.size().width() < STACK_BELOW_PX)
        super().resizeEvent(event)

    def _live_label_y(self, live: float) -> float:
        """y of the live label's centre: at the line, or moved just clear of the capacity / needs labels."""
        (_, _), (y0, y1) = self.memory_plot.getViewBox().viewRange()
        px = max(self.memory_plot.getViewBox().height(), 100.0) / max(y1 - y0, 1e-12)   # pixels per GB
        line_px = QtGui.QFontMetrics(pw.font(bold=True)).lineSpacing()
        half = (self.live_text.toPlainText().count("\n") + 1) * line_px / 2 / px + 2 / px
        taken = []
        for item in (self.capacity_text, self.need_text):
            if item.isVisible() and item.toPlainText():
                y = item.pos().y()
                lines = item.toPlainText().count("\n") + 1
                h = lines * line_px / px
                top = y + h * item.anchor.y()   # anchor y 1: the text's bottom at the position (above it)
                taken.append((top - h, top))
        candidates = [live] + [b - half for b, _ in taken] + [t + half for _, t in taken]
        candidates = [c for c in candidates if y0 + half <= c <= y1 - half] or [live]
        free = [c for c in candidates if all(c + half <= b or c - half >= t for b, t in taken)]
        return min(free or [live], key=lambda c: abs(c - live))

    def _span_lines(self, *_) -> None:
        """The horizontal lines end `LINE_OVERHANG` past the bar's right edge (a share of the view's width)."""
        (x0, x1), _ = self.memory_plot.getViewBox().viewRange()
        end = self.memory_bar.x + self.memory_bar.width / 2 + LINE_OVERHANG
        share = min(max((end - x0) / max(x1 - x0, 1e-12), 0.0), 1.0)
        for line in (self.capacity_line, self.need_line):
            line.setSpan(0.0, share)

    def _update_memory(self, r: Results) -> None:
        names = list(r.memory)
        gb = [float(r.memory[n]) / 1e9 for n in names]
        total_gb = sum(gb)
        cap_gb = float(r.capacity) / 1e9
        live_gb = _tier_gb(self._stage[1], "hbm") if self._stage is not None else 0.0
        y_max = max(total_gb, cap_gb, live_gb, 1e-9) * 1.12
        texts = [f"{theme.label_for(n)}\n{v:.1f} GB" for n, v in zip(names, gb, strict=True)]
        hw = r.scenario.hardware
        cap_text = f"HBM {cap_gb:.0f} GB"
        need_text = f"✗ needs\n{total_gb:.1f} GB"   # two short lines: the bar's labels keep the width
        metrics = QtGui.QFontMetrics(pw.font(bold=True))
        live_w = max((metrics.horizontalAdvance(line) for line in self._live_label_text().split("\n")), default=0)
        need_w = max(metrics.horizontalAdvance(line) for line in need_text.split("\n"))
        self.memory_bar.left_px = max(metrics.horizontalAdvance(cap_text), live_w + 12, 0 if r.fits else need_w) + 24.0
        self.memory_plot.setYRange(0, y_max, padding=0)
        self.memory_bar.update(names, gb, texts, y_max)
        label_x = -self.memory_bar.width / 2 - 0.05
        self.capacity_line.setPos(cap_gb)
        self.capacity_text.setText(cap_text)
        # Above the capacity line, unless the red "needs" label (always higher) takes the space above.
        self.capacity_text.setAnchor((1, 1) if r.fits else (1, 0))
        self.capacity_text.setPos(label_x, cap_gb)
        if r.fits:
            self.need_line.setVisible(False)
            self.need_text.setVisible(False)
            self.fit_label.setVisible(False)
            self.fit_label.setText("")
            pw.set_title(self.memory_plot, pw.html_escape(self._memory_finding(r, total_gb, cap_gb)))
        else:
            self.need_line.setPos(total_gb)
            self.need_line.setVisible(True)
            self.need_text.setText(need_text)
            self.need_text.setPos(label_x, total_gb)
            self.need_text.setVisible(True)
            self.fit_label.setText(f"✗ Does not fit: needs {total_gb:.1f} GB per GPU, "
                                   f"{hw.name} has {cap_gb:.0f} GB HBM.")
            self.fit_label.setVisible(True)
            pw.set_title(self.memory_plot, pw.html_escape(self._memory_finding(r, total_gb, cap_gb)),
                         color=theme.readable(BAD_COLOR, pw.plot_background()))

    @staticmethod
    def _memory_finding(r: Results, total_gb: float, cap_gb: float) -> str:
        largest = max(r.memory, key=lambda k: r.memory[k]) if r.memory else ""
        return findings.memory_title(total_gb, cap_gb, theme.label_for(largest))

    def _update_time(self, r: Results) -> None:
        names = list(r.time)
        seconds = [float(r.time[n]) for n in names]
        total = float(r.time_total) if r.time_total > 0 else sum(seconds)
        self._time_scale, self._time_unit = choose_time_unit(total)
        vals = [s * self._time_scale for s in seconds]
        y_max = max(sum(vals), 1e-12) * 1.12
        texts = [f"{theme.label_for(n, 'time')}\n{fmt_value(v, self._time_unit)} · {hover.share(s, total)}"
                 for n, v, s in zip(names, vals, seconds, strict=True)]
        hidden = r.train.get("communication_overlapped", 0.0) if r.kind == "train" else 0.0  # formulas/overlap.py
        if hidden > 0 and "communication_exposed" in names:
            i = names.index("communication_exposed")
            texts[i] += f"\n(+{fmt_value(hidden * self._time_scale, self._time_unit)} hidden)"
        self.time_plot.setYRange(0, y_max, padding=0)
        self.time_bar.update(names, vals, texts, y_max)
        title = TIME_TITLES.get(r.kind, "Time")
        self.time_plot.getAxis("bottom").setTicks([[(0.0, BAR_TICKS.get(r.kind, ""))]])
        largest = max(r.time, key=lambda k: r.time[k]) if r.time else ""
        pw.set_title(self.time_plot, pw.html_escape(findings.time_title(
            title, total, theme.label_for(largest, "time"), float(r.time.get(largest, 0.0)))))
        pw.set_axis_label(self.time_plot, "left", f"{title.lower()} ({self._time_unit})")

    def _update_summary(self, r: Results) -> None:
        self._summary_plain, html = summary_line(r)
        self.summary_label.setText(html)

    # ------------------------------------------------------------------ read-outs
    def hover_text_at(self, plot: str, x: float, y: float) -> str:
        """The read-out shown when the mouse is at data coordinates (x, y) of plot "memory" or "time"
        (the texts: ui/breakdown_hover.py)."""
        r = self._results
        if r is None:
            return ""
        if plot == "memory":
            cap_gb = r.capacity / 1e9
            (_, _), (y0, y1) = self.memory_plot.getViewBox().viewRange()
            live = self.live_memory_marker()
            if live is not None and abs(y - live) <= 0.015 * (y1 - y0) \
                    and abs(x - self.memory_bar.x) <= self.memory_bar.width / 2 + 0.1:
                return hover.live_memory_text(self._stage[0], live, self.live_host_memory() or 0.0, cap_gb)
            i = self.memory_bar.segment_at(x, y)
            if i < 0:
                return hover.capacity_text(cap_gb, r.scenario.hardware.name) if abs(y - cap_gb) <= 0.02 * (y1 - y0) else ""
            name = self.memory_bar.names[i]
            claim = None
            if name == "activations" and r.kind == "train":  # the seed's recompute claim against this scenario
                if self._recompute_cache[0] is not r:
                    self._recompute_cache = (r, claim_against_computed(r.scenario))
                claim = self._recompute_cache[1]
            return hover.memory_part_text(name, self.memory_bar.values[i], self.memory_bar.total, cap_gb, claim)
        if plot == "time":
            i = self.time_bar.segment_at(x, y)
            if i < 0:
                return ""
            return hover.time_part_text(self.time_bar.names[i], self.time_bar.values[i] / self._time_scale,
                                        self.time_bar.total / self._time_scale, TIME_TITLES.get(r.kind, "time").lower())
        raise ValueError(f"plot must be 'memory' or 'time', not {plot!r}")

    # ------------------------------------------------------------------ for tests and export
    def memory_values(self) -> dict[str, float]:
        """GB per component, as drawn."""
        return {n: float(v) for n, v in zip(self.memory_bar.names, self.memory_bar.values, strict=True)}

    def time_values(self) -> dict[str, float]:
        """Seconds per stage, as drawn (the drawn unit converted back to seconds)."""
        return {n: float(v) / self._time_scale for n, v in zip(self.time_bar.names, self.time_bar.values, strict=True)}

    def time_unit(self) -> str:
        return self._time_unit

    def capacity_gb(self) -> float:
        return float(self.capacity_line.value())

    def fits(self) -> bool:
        return True if self._results is None else bool(self._results.fits)

    def does_not_fit_text(self) -> str:
        """The red 'does not fit' message, or "" when the scenario fits."""
        return "" if self.fits() else self.fit_label.text()

    def summary_text(self) -> str:
        """The summary line as plain text."""
        return self._summary_plain

    # ------------------------------------------------------------------ uncertainty band (ui/bands.py)
    def set_bands(self, u) -> None:
        """A p05–p95 whisker at the top of the time bar; hidden for None or bands of another scenario."""
        from trinity_desktop.ui.bands import Whisker, headline_band

        if not hasattr(self, "time_whisker"):
            self.time_whisker = Whisker(self.time_plot)
        r = self._results
        band = headline_band(u, r.kind) if r is not None else None
        if band is None or not math.isclose(band.point, r.time_total, rel_tol=1e-9):
            self.time_whisker.clear()
            return
        s = self._time_scale
        self.time_whisker.set(0.0, band.point * s, band.p05 * s, band.p95 * s)
        if band.p95 * s * 1.05 > self.time_plot.viewRange()[1][1]:
            self.time_plot.setYRange(0, band.p95 * s * 1.05, padding=0)

    def time_band(self) -> tuple[float, float] | None:
        """The whisker's (p05, p95) in seconds as drawn, or None when hidden."""
        w = getattr(self, "time_whisker", None)
        if w is None or not w.item.isVisible():
            return None
        o = w.item.opts
        centre = float(o["y"][0])
        return ((centre - float(o["bottom"][0])) / self._time_scale, (centre + float(o["top"][0])) / self._time_scale)
