"""Roofline panel: every ceiling of the chosen hardware, the scenario's kernels as points, a decode sweep.

Log-log axes (pyqtgraph `setLogMode`): curves and markers are PlotDataItems given in data units (FLOP/B,
FLOP/s) and transformed by pyqtgraph; every TextItem is placed by hand in log10 coordinates. Items are
created once (pools keyed by ceiling name or compare slot) and updated with setData / setPos.
`show_stage(name, numbers)` follows the step-through flow's highlighted stage (`stage_operating_point`).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.errors import ValidationError
from trinity_desktop.model.evaluate import Results
from trinity_desktop.model.hardware import Hardware
from trinity_desktop.model.roofline import (
    INTENSITY_CAP,
    STAGE_POINT,
    Ceiling,
    OperatingPoint,
    Roofline,
    batch_values,
    context_values,
    decode_sweep,
    roofline,
    stage_bytes,
    stage_duration,
    stage_operating_point,
)
from trinity_desktop.model.stages import refreshed_stage
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_flops_rate, fmt_rate, fmt_seconds

COMPUTE = theme.RESOURCE_COLORS["compute"]
BANDWIDTH = theme.RESOURCE_COLORS["bandwidth"]
MEMORY = theme.RESOURCE_COLORS["memory"]
NOFIT_COLOR = "#999999"
# Compared hardware: Okabe-Ito hues not used for the resources, each with its own dash pattern.
COMPARE_STYLES = [("#CC79A7", QtCore.Qt.PenStyle.DashLine), ("#D55E00", QtCore.Qt.PenStyle.DotLine),
                  ("#555555", QtCore.Qt.PenStyle.DashDotLine)]
MAX_COMPARE = 3
LINK_SYMBOLS = {"hbm": "o", "sram": "o", "l2": "o", "scale-up": "t", "scale-out": "s", "host": "d", "nvme": "h"}
LINK_WORDS = {"hbm": "HBM", "sram": "SRAM", "l2": "L2", "scale-up": "scale-up link", "scale-out": "scale-out network",
              "host": "host link", "nvme": "NVMe"}
SHORT_NAMES = {"QKV GEMM": "QKV", "out-projection GEMM": "out-proj", "MLP up+gate GEMM": "MLP up",
               "MLP up GEMM": "MLP up", "MLP down GEMM": "MLP down", "attention (FlashAttention)": "FlashAttention",
               "attention (standard)": "standard attn", "optimizer step": "optimizer",
               "TP all-reduce": "TP all-reduce", "decode GEMMs (weights)": "decode GEMMs",
               "decode KV-cache reads": "KV reads"}
SWEEP_GEMM = "sweep: decode GEMMs"
SWEEP_STEP = "sweep: decode step (GEMMs + KV reads)"
HOVER_PX = 14.0
MODES = {"batch": "batch size", "context": "context length"}
STAGE_RING = "#000000"      # the highlight ring: black on a white halo reads on every fill and for every viewer
STAGE_LABEL_CHARS = 56


def short_name(name: str) -> str:
    """A point's on-plot label (the hover shows the full name)."""
    if name in SHORT_NAMES:
        return SHORT_NAMES[name]
    if name.endswith(" — comparison"):
        return short_name(name[: -len(" — comparison")]) + " (cmp)"
    if name.startswith("DP gradient"):
        return "DP grads"
    return name.split(" (")[0]


def fmt_intensity(value: float) -> str:
    if not math.isfinite(value):
        return "—"
    return f"{value:,.0f} FLOP/B" if value >= 100 else f"{value:.3g} FLOP/B"


def fmt_count(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.3g}M"
    if value >= 1e4:
        return f"{value / 1e3:.3g}k"
    return f"{value:,.0f}"


class RooflinePanel(QtWidgets.QWidget):
    """Roofline of the scenario's hardware with its operating points, a decode sweep, and compared devices."""

    pointHovered = QtCore.Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("RooflinePanel")
        self.setAccessibleName("Roofline: attainable FLOP/s against arithmetic intensity")
        self._results: Results | None = None
        self._roof: Roofline | None = None
        self._sweep: dict | None = None
        self._hardware: dict[str, Hardware] = {}
        self._compare_keys: list[str] = []
        self._compare_roofs: list[tuple[str, Roofline | None, str]] = []   # (key, roofline or None, error)
        self._hovered = ""
        self._x_range = (0.01, 1e5)
        self._y_range = (1e9, 1e16)
        self._sweep_initialised = False
        self._mode = "batch"
        self._kv_pos = (1.0, 1.0)
        self._kv_text_plain = ""

        # --- plot -------------------------------------------------------------------------------
        self.plot_widget = pg.PlotWidget(background="w", axisItems={
            "bottom": pw.LogSIAxis("bottom"), "left": pw.LogSIAxis("left")})
        self.plot_widget.setAccessibleName("Roofline chart")
        self.plot_widget.setAccessibleDescription(
            "Log-log roofline. Horizontal lines are compute peaks per number format, diagonal lines are "
            "data-movement roofs (HBM, scale-up, host, scale-out, NVMe). Markers are the scenario's kernels; "
            "hover one for its FLOPs, bytes, intensity, attainable FLOP/s, time and binding roof.")
        self.plot: pg.PlotItem = self.plot_widget.getPlotItem()
        self.plot.setLogMode(x=True, y=True)
        pw.style_plot(self.plot, "Roofline", left="attainable FLOP/s (dense)",
                      bottom="arithmetic intensity (FLOP per byte)")
        pw.freeze_view(self.plot)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plots = {"roofline": self.plot}

        self.ceiling_curves: dict[str, pg.PlotDataItem] = {}
        self.ceiling_labels: dict[str, pg.TextItem] = {}
        self._ceilings: dict[str, Ceiling] = {}
        self.ridge_line = pg.PlotDataItem(pen=pg.mkPen("#444444", width=1, style=QtCore.Qt.PenStyle.DotLine))
        self.plot.addItem(self.ridge_line)
        self.ridge_marker = pg.PlotDataItem(pen=None, symbol="o", symbolSize=9, symbolBrush="#222222",
                                            symbolPen=pg.mkPen("w"))
        self.plot.addItem(self.ridge_marker)
        self.ridge_text = pw.label_item("", anchor=(0, 0), bold=True)
        self.plot.addItem(self.ridge_text, ignoreBounds=True)

        # Decode sweep traces (within HBM / beyond it) and markers.
        self.gemm_trace = pg.PlotDataItem(pen=pg.mkPen("#333333", width=2))
        self.gemm_trace_nofit = pg.PlotDataItem(pen=pg.mkPen(NOFIT_COLOR, width=2, style=QtCore.Qt.PenStyle.DotLine))
        self.step_trace = pg.PlotDataItem(pen=pg.mkPen("#333333", width=2, style=QtCore.Qt.PenStyle.DashLine))
        self.step_trace_nofit = pg.PlotDataItem(pen=pg.mkPen(NOFIT_COLOR, width=2, style=QtCore.Qt.PenStyle.DotLine))
        for item in (self.gemm_trace, self.gemm_trace_nofit, self.step_trace, self.step_trace_nofit):
            item.setZValue(5)
            self.plot.addItem(item)
        self.gemm_marker = pg.PlotDataItem(pen=None, symbol="star", symbolSize=22)
        self.step_marker = pg.PlotDataItem(pen=None, symbol="d", symbolSize=16)
        self.kv_marker = pg.PlotDataItem(pen=None, symbol="x", symbolSize=16, symbolBrush=MEMORY,
                                         symbolPen=pg.mkPen(MEMORY, width=3))
        self.crossing_text = pw.label_item("", anchor=(1, 1))
        self.kv_text = pw.label_item("", color=MEMORY, anchor=(1, 1), bold=True)
        self.gemm_marker_text = pw.label_item("", anchor=(0, 1), bold=True)

        # Operating points.
        self.points_item = pg.PlotDataItem(pen=None, symbolSize=13)
        self.plot.addItem(self.points_item)
        self.leaders = pg.PlotDataItem(pen=pg.mkPen("#888888", width=1), connect="pairs")
        self.plot.addItem(self.leaders)
        self.point_labels: list[pg.TextItem] = []
        for item in (self.gemm_marker, self.step_marker, self.kv_marker):
            item.setZValue(20)
            self.plot.addItem(item)
        for item in (self.crossing_text, self.kv_text, self.gemm_marker_text):
            self.plot.addItem(item, ignoreBounds=True)

        # Compared hardware: per slot, a pool of ceiling curves, one scatter, one name label.
        self.compare_curves: list[dict[str, pg.PlotDataItem]] = [{} for _ in range(MAX_COMPARE)]
        self.compare_points: list[pg.PlotDataItem] = []
        self.compare_labels: list[pg.TextItem] = []
        for color, _ in COMPARE_STYLES:
            item = pg.PlotDataItem(pen=None, symbolSize=11, symbolBrush=pg.mkBrush("w"),
                                   symbolPen=pg.mkPen(color, width=2))
            item.setVisible(False)
            self.plot.addItem(item)
            self.compare_points.append(item)
            label = pw.label_item("", color=color, anchor=(1, 0), bold=True)
            label.setVisible(False)
            self.plot.addItem(label, ignoreBounds=True)
            self.compare_labels.append(label)

        # The stage the step-through flow highlights: its own point (a pentagon), a black ring on a white halo
        # around the point it maps to, dashed rings around the kernels it is made of, and a boxed label.
        self._stage: tuple[str, dict] | None = None          # (name, numbers) as last shown
        self._stage_target: tuple[str, tuple[str, ...], str, float, float] | None = None
        no_brush = pg.mkBrush(None)
        self.stage_marker = pg.PlotDataItem(pen=None, symbol="p", symbolSize=20, symbolBrush=COMPUTE,
                                            symbolPen=pg.mkPen("#000000", width=1.5))
        self.stage_halo = pg.PlotDataItem(pen=None, symbol="o", symbolSize=36, symbolBrush=no_brush,
                                          symbolPen=pg.mkPen("w", width=7))
        self.stage_ring = pg.PlotDataItem(pen=None, symbol="o", symbolSize=36, symbolBrush=no_brush,
                                          symbolPen=pg.mkPen(STAGE_RING, width=3))
        self.stage_related = pg.PlotDataItem(pen=None, symbol="o", symbolSize=26, symbolBrush=no_brush,
                                             symbolPen=pg.mkPen(STAGE_RING, width=1.8,
                                                                style=QtCore.Qt.PenStyle.DashLine))
        for z, item in ((24, self.stage_related), (25, self.stage_halo), (26, self.stage_ring),
                        (27, self.stage_marker)):
            item.setZValue(z)
            item.setVisible(False)
            self.plot.addItem(item)
        self.stage_leader = pg.PlotDataItem(pen=pg.mkPen(STAGE_RING, width=1.5))
        self.stage_leader.setZValue(26)
        self.stage_leader.setVisible(False)
        self.plot.addItem(self.stage_leader)
        self.stage_text = pg.TextItem("", color="#000000", fill=pg.mkBrush(255, 255, 255, 235),
                                      border=pg.mkPen(STAGE_RING, width=1.5), anchor=(0, 1))
        self.stage_text.setFont(pw.font(12, bold=True))
        self.stage_text.setZValue(30)
        self.stage_text.setVisible(False)
        self.plot.addItem(self.stage_text, ignoreBounds=True)

        # The legend sits beside the plot (its own layout column), so it never covers a roof or a point.
        self.legend = pg.LegendItem(labelTextSize="10pt", brush=pg.mkBrush(255, 255, 255, 0), verSpacing=-6)
        self.legend.setSizePolicy(QtWidgets.QSizePolicy.Policy.Fixed, QtWidgets.QSizePolicy.Policy.Fixed)
        self.plot.layout.addItem(self.legend, 2, 4)
        self.plot.layout.setAlignment(self.legend, QtCore.Qt.AlignmentFlag.AlignTop)
        self.plot.layout.setColumnStretchFactor(4, 0)
        self._legend_samples: list[pg.PlotDataItem] = []

        self.hover = pw.HoverReadout(self.plot, self.hover_text_at, on_move=self._hover_moved,
                                     on_leave=self._hover_left)
        pw.LeaveFilter(self.plot_widget, self.hover.leave)
        self.plot.getViewBox().sigResized.connect(self._layout_labels)

        # --- controls -----------------------------------------------------------------------------
        self.mode_combo = QtWidgets.QComboBox()
        for key, text in MODES.items():
            self.mode_combo.addItem(text, key)
        self.mode_combo.setAccessibleName("Sweep variable")
        self.mode_combo.setToolTip("What the slider sweeps for the decode point: the batch size (1 … 4096) or "
                                   "the context length each sequence holds (1k … 1M tokens).")
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setAccessibleName("Decode sweep slider")
        self.slider.setToolTip("Drag to move the decode point along the intensity axis (log-spaced stops).")
        self.slider_label = QtWidgets.QLabel("")
        self.slider_label.setMinimumWidth(150)
        self.slider_label.setFont(pw.font(12, bold=True))
        self.slider_label.setAccessibleName("Decode sweep value")
        self.compare_button = QtWidgets.QToolButton()
        self.compare_button.setText("Compare hardware ▾")
        self.compare_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        self.compare_button.setAccessibleName("Compare hardware")
        self.compare_button.setToolTip(f"Overlay up to {MAX_COMPARE} other devices' rooflines (dashed) and "
                                       "the same scenario's points on them (hollow markers).")
        self.compare_menu = QtWidgets.QMenu(self.compare_button)
        self.compare_button.setMenu(self.compare_menu)
        self.compare_actions: dict[str, QtGui.QAction] = {}

        controls = QtWidgets.QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        sweep_label = QtWidgets.QLabel("Decode sweep:")
        sweep_label.setFont(pw.font(12))
        controls.addWidget(sweep_label)
        controls.addWidget(self.mode_combo)
        controls.addWidget(self.slider, 1)
        controls.addWidget(self.slider_label)
        controls.addSpacing(12)
        controls.addWidget(self.compare_button)

        self.info_label = QtWidgets.QLabel("No scenario evaluated yet.")
        self.info_label.setObjectName("RooflineInfo")
        self.info_label.setFont(pw.font(11))
        self.info_label.setWordWrap(True)
        self.info_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.info_label.setAccessibleName("Roofline summary")
        self.info_label.setToolTip("Ridge crossing: the batch where the decode GEMMs reach the ridge (closed "
                                   "form R·S/2W). KV fit: where weights + KV cache exceed 90% of HBM.")

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.plot_widget, 1)
        layout.addLayout(controls)
        layout.addWidget(self.info_label)

        self.mode_combo.currentIndexChanged.connect(self._mode_changed)
        self.slider.valueChanged.connect(self._slider_moved)
        self._set_slider_values()

    # ------------------------------------------------------------------ inputs
    def set_hardware_choices(self, hardware: dict[str, Hardware]) -> None:
        """The devices offered in the compare menu (keys → Hardware)."""
        self._hardware = dict(hardware)
        self.compare_menu.clear()
        self.compare_actions = {}
        for key, hw in self._hardware.items():
            action = self.compare_menu.addAction(hw.name)
            action.setCheckable(True)
            action.setData(key)
            action.setChecked(key in self._compare_keys)
            action.toggled.connect(lambda checked, k=key: self._compare_toggled(k, checked))
            self.compare_actions[key] = action
        self._compare_keys = [k for k in self._compare_keys if k in self._hardware]
        self._sync_compare_actions()

    def set_compared_hardware(self, keys) -> None:
        keys = [k for k in keys if k in self._hardware][:MAX_COMPARE]
        self._compare_keys = keys
        for key, action in self.compare_actions.items():
            action.blockSignals(True)
            action.setChecked(key in keys)
            action.blockSignals(False)
        self._sync_compare_actions()
        if self._results is None:
            return
        self._update_compare()
        self._update_legend()
        self._set_ranges()
        self._layout_labels()
        self._update_info()

    def compared_hardware(self) -> list[str]:
        return list(self._compare_keys)

    def _compare_toggled(self, key: str, checked: bool) -> None:
        keys = [k for k in self._compare_keys if k != key]
        if checked:
            keys.append(key)
        self.set_compared_hardware(keys)

    def _sync_compare_actions(self) -> None:
        full = len(self._compare_keys) >= MAX_COMPARE
        for key, action in self.compare_actions.items():
            action.setEnabled(key in self._compare_keys or not full)
        n = len(self._compare_keys)
        self.compare_button.setText(f"Compare hardware ({n}) ▾" if n else "Compare hardware ▾")

    def update_results(self, results: Results) -> None:
        self._results = results
        self._roof = roofline(results.scenario)
        self._stage = refreshed_stage(results, self._stage)
        self._stage_target = self._resolve_stage()
        self._update_ceilings()
        self._update_points()
        if not self._sweep_initialised:
            self._sweep_initialised = True
            self._select_value(float(results.scenario.batch))
        self._update_sweep()
        self._update_compare()
        self._update_legend()
        self._set_ranges()
        self._layout_labels()
        self._update_info()
        self._draw_stage()

    # ------------------------------------------------------------------ the highlighted flow stage
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
        name, numbers = self._stage
        primary, related, note = stage_operating_point(name, numbers, [p.name for p in self._roof.points])
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

    # ------------------------------------------------------------------ ceilings and points
    def _geometry(self, c: Ceiling, roof: Roofline, hw: Hardware) -> tuple[np.ndarray, np.ndarray]:
        """(xs, ys) of a ceiling in data units: a compute roof runs from where the HBM roof meets it to the
        right edge; the HBM roof rises to the highest compute roof; other links rise to the scenario
        format's peak (their ridge)."""
        x_lo, x_hi = self._x_range
        peaks = [k.value for k in roof.ceilings if k.kind == "compute"]
        if c.kind == "compute":
            x0 = max(c.value / hw.hbm_bw, x_lo)
            return np.array([x0, x_hi]), np.array([c.value, c.value])
        top = max(peaks) if c.link == "hbm" else hw.peak(roof.dtype)
        x1 = min(top / c.value, x_hi)
        return np.array([x_lo, x1]), np.array([x_lo, x1]) * c.value

    def _update_ceilings(self) -> None:
        roof = self._roof
        self._ceilings = {c.name: c for c in roof.ceilings}
        main_dtype_roof = self._compute_roof_name(roof)
        for c in roof.ceilings:
            if c.name not in self.ceiling_curves:
                curve = pg.PlotDataItem()
                self.plot.addItem(curve)
                self.ceiling_curves[c.name] = curve
                label = pw.label_item("")
                self.plot.addItem(label, ignoreBounds=True)
                self.ceiling_labels[c.name] = label
            main = c.name == main_dtype_roof or c.link == "hbm"
            color = COMPUTE if c.kind == "compute" else BANDWIDTH
            width = 3.5 if main else 1.6
            self.ceiling_curves[c.name].setPen(pg.mkPen(color, width=width))
            label = self.ceiling_labels[c.name]
            value = fmt_flops_rate(c.value) if c.kind == "compute" else fmt_rate(c.value)
            label.setText(f"{c.name} {value}")
            label.setColor("#222222" if main else "#444444")
            label.setFont(pw.font(11, bold=main))
        for name, curve in self.ceiling_curves.items():
            curve.setVisible(name in self._ceilings)
            self.ceiling_labels[name].setVisible(name in self._ceilings)

    @staticmethod
    def _compute_roof_name(roof: Roofline) -> str:
        for c in roof.ceilings:
            if c.kind == "compute" and (roof.dtype in c.dtypes
                                        or {"bf16": "fp16", "fp16": "bf16", "tf32": "fp32"}.get(roof.dtype) in c.dtypes):
                return c.name
        return ""

    def _update_points(self) -> None:
        pts = self._roof.points
        xs = np.array([p.intensity for p in pts], dtype=float)
        ys = np.array([max(p.attainable_flops_per_s, 1.0) for p in pts], dtype=float)
        brushes, pens, symbols = [], [], []
        for p in pts:
            color = theme.RESOURCE_COLORS.get(p.resource, theme.FALLBACK_COLOR)
            comparison = p.name.endswith("— comparison")
            brushes.append(pg.mkBrush("w" if comparison else color))
            pens.append(pg.mkPen(color if comparison else "#222222", width=2.5 if comparison else 1))
            symbols.append(LINK_SYMBOLS.get(p.link, "o"))
        self.points_item.setData(xs, ys, symbol=symbols, symbolBrush=brushes, symbolPen=pens)
        while len(self.point_labels) < len(pts):
            item = pw.label_item("", anchor=(0, 0))
            item.setZValue(15)
            self.plot.addItem(item, ignoreBounds=True)
            self.point_labels.append(item)
        for i, item in enumerate(self.point_labels):
            if i < len(pts):
                item.setText(short_name(pts[i].name))
                item.setVisible(True)
            else:
                item.setVisible(False)

    # ------------------------------------------------------------------ sweep
    def _values(self) -> np.ndarray:
        return batch_values() if self._mode == "batch" else context_values()

    def _set_slider_values(self) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(self._values()) - 1)
        self.slider.blockSignals(False)

    def _select_value(self, value: float) -> None:
        values = self._values()
        i = int(np.argmin(np.abs(np.log(values) - math.log(max(value, 1.0)))))
        self.slider.blockSignals(True)
        self.slider.setValue(i)
        self.slider.blockSignals(False)

    def _mode_changed(self, _index: int) -> None:
        mode = self.mode_combo.currentData()
        if mode == self._mode:
            return
        self._mode = mode
        self._set_slider_values()
        if self._results is not None:
            sc = self._results.scenario
            self._select_value(float(sc.batch if mode == "batch" else sc.prompt_len + sc.gen_len))
            self._update_sweep()
            self._set_ranges()
            self._layout_labels()
            self._update_info()

    def _slider_moved(self, _value: int) -> None:
        if self._results is None:
            self._update_slider_label()
            return
        self._update_markers()
        self._layout_labels()
        self._update_info()

    def set_sweep(self, mode: str, value: float) -> None:
        """Switch the sweep to "batch" or "context" and move the slider to the stop nearest `value`."""
        if mode not in MODES:
            raise ValueError(f"sweep mode must be one of {', '.join(MODES)}, not {mode!r}")
        index = list(MODES).index(mode)
        if self.mode_combo.currentIndex() != index:
            self.mode_combo.setCurrentIndex(index)
        self._select_value(float(value))
        self._slider_moved(self.slider.value())

    def sweep_value(self) -> float:
        return float(self._values()[self.slider.value()])

    def _update_slider_label(self) -> None:
        v = self.sweep_value()
        self.slider_label.setText(f"batch {v:,.0f}" if self._mode == "batch" else f"context {fmt_count(v)} tokens")

    def _update_sweep(self) -> None:
        sc = self._results.scenario
        values = self._values()
        if self._mode == "batch":
            self._sweep = decode_sweep(sc, batch=values)
        else:
            self._sweep = decode_sweep(sc, context=values)
        s = self._sweep
        fits = s["fits"]
        # Within HBM solid; beyond it dotted grey (one point of overlap so the path is continuous).
        last = int(np.max(np.nonzero(fits)[0])) if fits.any() else -1
        for trace, nofit, key_x, key_y in ((self.gemm_trace, self.gemm_trace_nofit, "intensity",
                                            "attainable_flops_per_s"),
                                           (self.step_trace, self.step_trace_nofit, "step_intensity",
                                            "step_attainable_flops_per_s")):
            x, y = s[key_x], np.maximum(s[key_y], 1.0)
            trace.setData(x[: last + 1], y[: last + 1])
            start = max(last, 0)
            nofit.setData(x[start:] if last < len(x) - 1 else x[:0], y[start:] if last < len(x) - 1 else y[:0])
        self._update_markers()

    def _update_markers(self) -> None:
        self._update_slider_label()
        s = self._sweep
        i = self.slider.value()
        fits = bool(s["fits"][i])
        g_color = COMPUTE if s["bound"][i] else BANDWIDTH
        st_color = COMPUTE if s["step_bound"][i] else BANDWIDTH
        self.gemm_marker.setData([s["intensity"][i]], [max(s["attainable_flops_per_s"][i], 1.0)],
                                 symbolBrush=g_color if fits else "w", symbolPen=pg.mkPen("#222222", width=1.5))
        self.step_marker.setData([s["step_intensity"][i]], [max(s["step_attainable_flops_per_s"][i], 1.0)],
                                 symbolBrush=st_color if fits else "w", symbolPen=pg.mkPen("#222222", width=1.5))
        # KV-fit limit on the step trace (memory colour), in the current sweep variable.
        sc = self._results.scenario
        if self._mode == "context":
            limit = s["kv_fit_limit_context"]
            at = decode_sweep(sc, context=[max(limit, 1.0)]) if limit > 0 else None
            text = (f"KV cache full beyond {fmt_count(limit)} tokens (batch {sc.batch})" if limit > 0
                    else "weights alone exceed HBM")
        else:
            limit = s["kv_fit_limit_batch"]
            at = decode_sweep(sc, batch=[max(limit, 1.0)]) if limit > 0 else None
            text = f"KV cache full beyond batch {limit:,.0f}" if limit > 0 else "weights alone exceed HBM"
        lo, hi = self._values()[0], self._values()[-1]
        show = bool(at is not None and lo <= limit <= hi)
        self.kv_marker.setVisible(show)
        self.kv_text.setVisible(show)
        if show:
            x, y = float(at["step_intensity"][0]), float(at["step_attainable_flops_per_s"][0])
            self.kv_marker.setData([x], [y])
            self.kv_text.setText("✗ " + text)
            self._kv_pos = (x, y)
        self._kv_text_plain = text
        # Ridge crossing of the decode GEMMs: the knee (ridge, peak).
        rb = s["ridge_batch"]
        self.crossing_text.setText(f"decode GEMMs compute-bound from batch ≈ {math.ceil(rb):,}")
        self.crossing_text.setVisible(self._mode == "batch")

    def decode_marker(self) -> tuple[float, float]:
        """(intensity FLOP/B, attainable FLOP/s) of the decode GEMM marker, in data units."""
        x, y = self.gemm_marker.getOriginalDataset()
        return float(x[0]), float(y[0])

    def decode_step_marker(self) -> tuple[float, float]:
        x, y = self.step_marker.getOriginalDataset()
        return float(x[0]), float(y[0])

    def sweep(self) -> dict | None:
        return self._sweep

    # ------------------------------------------------------------------ compare
    def _update_compare(self) -> None:
        self._compare_roofs = []
        if self._results is None:
            return
        sc = self._results.scenario
        for slot in range(MAX_COMPARE):
            curves = self.compare_curves[slot]
            color, style = COMPARE_STYLES[slot]
            key = self._compare_keys[slot] if slot < len(self._compare_keys) else ""
            roof, error = None, ""
            if key:
                try:
                    roof = roofline(sc.replace(hardware=self._hardware[key]))
                except (ValidationError, KeyError, ValueError) as exc:
                    error = str(exc)
                self._compare_roofs.append((key, roof, error))
            drawn = set()
            if roof is not None:
                hw = self._hardware[key]
                for c in roof.ceilings:
                    if c.kind == "compute" and c.name != self._compute_roof_name(roof):
                        continue   # compared devices: only the scenario format's roof, to keep it readable
                    if c.kind == "bandwidth" and c.link not in ("hbm",):
                        continue
                    if c.name not in curves:
                        curves[c.name] = pg.PlotDataItem()
                        self.plot.addItem(curves[c.name])
                    curves[c.name].setPen(pg.mkPen(color, width=2.2, style=style))
                    curves[c.name].setData(*self._geometry(c, roof, hw))
                    drawn.add(c.name)
                pts = roof.points
                self.compare_points[slot].setData([p.intensity for p in pts],
                                                  [max(p.attainable_flops_per_s, 1.0) for p in pts],
                                                  symbol=[LINK_SYMBOLS.get(p.link, "o") for p in pts])
                self.compare_labels[slot].setText(hw.name)
            for name, curve in curves.items():
                curve.setVisible(name in drawn)
            self.compare_points[slot].setVisible(roof is not None)
            self.compare_labels[slot].setVisible(False)   # the legend names compared devices

    def compared_ceiling_items(self, key: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        for slot, (k, roof, _) in enumerate(self._compare_roofs):
            if k == key and roof is not None:
                return {n: tuple(np.asarray(a) for a in c.getOriginalDataset()) for n, c in self.compare_curves[slot].items()
                        if c.isVisible()}
        return {}

    def compared_point_items(self, key: str) -> dict[str, tuple[float, float]]:
        for k, roof, _ in self._compare_roofs:
            if k == key and roof is not None:
                return {p.name: (p.intensity, p.attainable_flops_per_s) for p in roof.points}
        return {}

    # ------------------------------------------------------------------ ranges, labels, legend
    def _set_ranges(self) -> None:
        if self._roof is None:
            return
        xs = [p.intensity for p in self._roof.points] + [self._roof.ridge_flop_per_byte]
        ys = [p.attainable_flops_per_s for p in self._roof.points if p.attainable_flops_per_s > 0]
        peaks = [c.value for c in self._roof.ceilings if c.kind == "compute"]
        if self._sweep is not None:
            xs += [float(self._sweep["step_intensity"].min()), float(self._sweep["intensity"].max())]
            ys += [float(self._sweep["step_attainable_flops_per_s"].min())]
        t = self._stage_target
        if self._stage is not None and t is not None and t[0] == STAGE_POINT:
            xs.append(t[3])
            ys.append(t[4])
        for _, roof, _ in self._compare_roofs:
            if roof is not None:
                xs += [p.intensity for p in roof.points] + [roof.ridge_flop_per_byte]
                ys += [p.attainable_flops_per_s for p in roof.points if p.attainable_flops_per_s > 0]
                peaks += [c.value for c in roof.ceilings if c.kind == "compute"]
        # Room left of the lowest point for the diagonal roofs' labels, right of the highest for the
        # compute roofs' labels, and below the lowest point.
        x_lo = 10.0 ** math.floor(math.log10(max(min(xs + [0.1]) / 30.0, 1e-6)))
        x_hi = 10.0 ** math.ceil(math.log10(max(xs) * 20.0))
        y_lo = 10.0 ** math.floor(math.log10(max(min(ys) / 100.0, 1.0)))
        y_hi = 10.0 ** math.ceil(math.log10(max(peaks) * 2.5))
        self._x_range, self._y_range = (x_lo, x_hi), (y_lo, y_hi)
        self.plot.setXRange(math.log10(x_lo), math.log10(x_hi), padding=0)
        self.plot.setYRange(math.log10(y_lo), math.log10(y_hi), padding=0)
        # Geometry depends on the x range: redraw the ceilings (main and compared).
        hw = self._results.scenario.hardware
        for c in self._roof.ceilings:
            self.ceiling_curves[c.name].setData(*self._geometry(c, self._roof, hw))
        self._update_compare()
        peak = hw.peak(self._roof.dtype)
        ridge = self._roof.ridge_flop_per_byte
        self.ridge_line.setData([ridge, ridge], [y_lo, peak])
        self.ridge_marker.setData([ridge], [peak])

    def _px_per_decade(self) -> tuple[float, float]:
        vb = self.plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        return max(vb.width(), 1.0) / max(x1 - x0, 1e-9), max(vb.height(), 1.0) / max(y1 - y0, 1e-9)

    def _layout_labels(self, *_) -> None:
        """Place every text item in log10 coordinates (pyqtgraph does not transform TextItems)."""
        if self._roof is None:
            return
        lx0, lx1 = (math.log10(v) for v in self._x_range)
        ly0, ly1 = (math.log10(v) for v in self._y_range)
        px_x, px_y = self._px_per_decade()
        line_h = QtGui.QFontMetrics(pw.font()).lineSpacing() / px_y   # one text line, in decades of y
        hw = self._results.scenario.hardware
        peak = hw.peak(self._roof.dtype)
        ridge = self._roof.ridge_flop_per_byte
        # Compute roofs: right end, above the line.
        main_peak = hw.peak(self._roof.dtype)
        for c in self._roof.ceilings:
            label = self.ceiling_labels[c.name]
            if c.kind == "compute":
                label.setAnchor((1, 1) if c.value >= main_peak else (1, 0))   # lower roofs: label below
                label.setAngle(0)
                label.setPos(lx1 - 0.01 * (lx1 - lx0), math.log10(c.value))
        # Bandwidth roofs: along the diagonal (rotated to the data direction (1, 1)), staggered in x so that
        # near-coincident links (host vs scale-out) do not overlap; the label sits on the visible part.
        bws = sorted((c for c in self._roof.ceilings if c.kind == "bandwidth"), key=lambda c: -c.value)
        metrics = QtGui.QFontMetrics(pw.font(bold=True))
        prev = None
        x_cursor = lx0 + 0.04 * (lx1 - lx0)
        for c in bws:
            label = self.ceiling_labels[c.name]
            lbw = math.log10(c.value)
            x = max(x_cursor, ly0 + 2.2 * line_h - lbw)
            if prev is not None and prev - lbw < 0.35:
                width_dec = metrics.horizontalAdvance(label.toPlainText()) / math.hypot(px_x, px_y)
                x = max(x, x_cursor + width_dec * 0.8)
            label.rotateAxis = pg.Point(1, 1)
            label.setAnchor((0, 1))
            label.setPos(x, x + lbw)
            label.updateTransform(force=True)
            x_cursor = x
            prev = lbw
        # The ridge: below-right of the knee.
        self.ridge_text.setText(f"ridge {ridge:,.0f} FLOP/B\n({self._roof.dtype.upper()} peak / HBM)")
        self.ridge_text.setAnchor((1, 1))
        self.ridge_text.setPos(math.log10(ridge) - 4.0 / px_x, ly0 + 0.25 * line_h)
        self.crossing_text.setPos(math.log10(ridge) - 0.05, math.log10(peak) + 0.15 * line_h)
        if self.kv_text.isVisible():
            x, y = self._kv_pos
            self.kv_text.setPos(math.log10(x) - 8.0 / px_x, math.log10(y) + 4.0 / px_y)
        # Compared devices: name at the right end of their roof, below it.
        for slot, (key, roof, _) in enumerate(self._compare_roofs):
            if roof is not None:
                p = self._hardware[key].peak(roof.dtype)
                self.compare_labels[slot].setPos(lx1 - 0.01 * (lx1 - lx0), math.log10(p))
        self._layout_point_labels(px_x, px_y)
        self._layout_stage_label()

    def _layout_point_labels(self, px_x: float, px_y: float) -> None:
        """Greedy placement of point labels in pixels: right of the marker, then below / above / left,
        avoiding labels already placed and the markers."""
        pts = self._roof.points
        metrics = QtGui.QFontMetrics(pw.font())
        h = metrics.lineSpacing()
        order = sorted(range(len(pts)), key=lambda i: (-pts[i].attainable_flops_per_s, pts[i].intensity))
        placed: list[QtCore.QRectF] = []
        marks = [(math.log10(p.intensity) * px_x, -math.log10(max(p.attainable_flops_per_s, 1.0)) * px_y)
                 for p in pts]
        for m in marks:
            placed.append(QtCore.QRectF(m[0] - 7, m[1] - 7, 14, 14))
        # Other text already placed: compute-roof labels, the ridge, the sweep annotations, the markers.
        others = [self.ceiling_labels[c.name] for c in self._roof.ceilings if c.kind == "compute"]
        others += [self.ridge_text, self.crossing_text, self.kv_text]
        for item in others:
            if item.isVisible() and item.toPlainText():
                placed.append(self._text_rect_px(item, px_x, px_y))
        for marker in (self.gemm_marker, self.step_marker):
            x, y = marker.getOriginalDataset()
            if x is not None and len(x):
                cx, cy = math.log10(x[0]) * px_x, -math.log10(max(y[0], 1.0)) * px_y
                placed.append(QtCore.QRectF(cx - 10, cy - 10, 20, 20))
        leader_x: list[float] = []
        leader_y: list[float] = []
        for i in order:
            item = self.point_labels[i]
            w = metrics.horizontalAdvance(item.toPlainText()) + 6
            mx, my = marks[i]
            candidates = [(mx + 9, my - h / 2), (mx + 9, my + 4), (mx + 9, my - h - 4), (mx - w - 9, my - h / 2),
                          (mx - w / 2, my + 9), (mx - w / 2, my - h - 9)]
            candidates += [(mx + 9, my + 4 + k * h) for k in range(1, 6)]
            chosen = candidates[0]
            for cx, cy in candidates:
                rect = QtCore.QRectF(cx, cy, w, h)
                if not any(rect.intersects(r) for r in placed):
                    chosen = (cx, cy)
                    break
            rect = QtCore.QRectF(chosen[0], chosen[1], w, h)
            placed.append(rect)
            item.setAnchor((0, 0))
            item.setPos(chosen[0] / px_x, -chosen[1] / px_y)
            # A leader line when the label had to move away from its marker.
            nx = min(max(mx, rect.left()), rect.right())
            ny = min(max(my, rect.top()), rect.bottom())
            if math.hypot(nx - mx, ny - my) > 14:
                leader_x += [10.0 ** (mx / px_x), 10.0 ** (nx / px_x)]
                leader_y += [10.0 ** (-my / px_y), 10.0 ** (-ny / px_y)]
        self.leaders.setData(np.asarray(leader_x, dtype=float), np.asarray(leader_y, dtype=float))

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

    def _update_legend(self) -> None:
        self.legend.clear()
        self._legend_samples = []

        def add(name: str, **opts) -> None:
            sample = pg.PlotDataItem(**opts)
            self._legend_samples.append(sample)
            self.legend.addItem(sample, name)

        def add_symbol(name: str, symbol: str, brush: str) -> None:
            sample = pg.ScatterPlotItem(symbol=symbol, brush=pg.mkBrush(brush), pen=pg.mkPen("#222222"), size=11)
            self._legend_samples.append(sample)
            self.legend.addItem(sample, name)

        add_symbol("compute-bound", "o", COMPUTE)
        add_symbol("bandwidth-bound", "o", BANDWIDTH)
        links = sorted({p.link for p in self._roof.points} - {"hbm"})
        for link in links:
            add_symbol(f"over the {LINK_WORDS.get(link, link)}", LINK_SYMBOLS.get(link, "o"), "#BBBBBB")
        add("decode GEMMs (sweep ★)", pen=pg.mkPen("#333333", width=2))
        add("decode step + KV reads (◆)", pen=pg.mkPen("#333333", width=2, style=QtCore.Qt.PenStyle.DashLine))
        add("KV cache exceeds HBM", pen=pg.mkPen(NOFIT_COLOR, width=2, style=QtCore.Qt.PenStyle.DotLine))
        for slot, key in enumerate(self._compare_keys):
            color, style = COMPARE_STYLES[slot]
            add(self._hardware[key].name, pen=pg.mkPen(color, width=2.2, style=style))

    def _update_info(self) -> None:
        r, s = self._results, self._sweep
        if r is None or s is None:
            return
        sc = r.scenario
        ctx = sc.prompt_len + sc.gen_len / 2
        with_kv = (f"≈ {math.ceil(s['ridge_batch_with_kv']):,}" if s["ridge_batch_with_kv"] > 0
                   else f"never (step intensity → {s['step_intensity_limit']:.3g} FLOP/B &lt; ridge)")
        i = self.slider.value()
        parts = [
            f"<b>Decode</b> ({pw.html_escape(sc.model.name)}, {s['dtype'].upper()}, {sc.weight_dtype} weights): GEMMs turn "
            f"compute-bound at batch ≈ <b>{math.ceil(s['ridge_batch']):,}</b> (R·S/2W); including KV reads at "
            f"{fmt_count(ctx)} context: {with_kv}.",
            f"KV cache fits up to batch {s['kv_fit_limit_batch']:,.0f} at this context, up to "
            f"{fmt_count(s['kv_fit_limit_context'])} tokens at batch {sc.batch}.",
            f"At the slider: {fmt_seconds(float(s['time_per_token_s'][i]))} per token step (roofline, one GPU)"
            + ("" if s["fits"][i] else " — <span style='color:#C0392B'>does not fit in HBM</span>") + ".",
        ]
        notes = ["SRAM/L2 roofs omitted: no published on-chip bandwidth in the presets.",
                 "Offload transfers are not points yet (no offload in the scenario)."]
        errors = [f"{pw.html_escape(self._hardware[k].name)}: n/a ({pw.html_escape(e)})" for k, roof, e in self._compare_roofs
                  if roof is None]
        self.info_label.setText(" ".join(parts) + "<br><span style='color:#555555'>" + " ".join(notes + errors)
                                + "</span>")

    # ------------------------------------------------------------------ hover
    def _point_index(self) -> list[tuple[str, float, float]]:
        out = []
        if self._roof is not None:
            out += [(p.name, p.intensity, p.attainable_flops_per_s) for p in self._roof.points]
        if self._sweep is not None:
            gx, gy = self.decode_marker()
            sx, sy = self.decode_step_marker()
            out += [(SWEEP_GEMM, gx, gy), (SWEEP_STEP, sx, sy)]
        t = self._stage_target
        if self._stage is not None and t is not None and t[0] == STAGE_POINT:
            out.append((STAGE_POINT, t[3], t[4]))
        for key, roof, _ in self._compare_roofs:
            if roof is not None:
                out += [(f"{p.name} @ {key}", p.intensity, p.attainable_flops_per_s) for p in roof.points]
        return out

    def point_at(self, lx: float, ly: float) -> str:
        """Name of the point within HOVER_PX pixels of view position (log10 x, log10 y), or ""."""
        px_x, px_y = self._px_per_decade()
        best, best_d = "", HOVER_PX
        for name, x, y in self._point_index():
            d = math.hypot((math.log10(x) - lx) * px_x, (math.log10(max(y, 1.0)) - ly) * px_y)
            if d <= best_d:
                best, best_d = name, d
        return best

    def ceiling_at(self, lx: float, ly: float) -> str:
        px_x, px_y = self._px_per_decade()
        for name, (xs, _ys) in self.ceiling_items().items():
            c = self._ceilings[name]
            if c.kind == "compute":
                if math.log10(xs[0]) <= lx <= math.log10(xs[-1]) and abs(ly - math.log10(c.value)) * px_y < 6:
                    return name
            elif math.log10(xs[0]) <= lx <= math.log10(xs[-1]):
                dy = abs(ly - (lx + math.log10(c.value))) * px_y
                if dy * px_x / math.hypot(px_x, px_y) < 6:
                    return name
        return ""

    def hover_text_at(self, lx: float, ly: float) -> str:
        name = self.point_at(lx, ly)
        if name:
            return self.hover_text_for(name)
        ceiling = self.ceiling_at(lx, ly)
        return self.ceiling_text(ceiling) if ceiling else ""

    def _hover_moved(self, lx: float, ly: float) -> None:
        name = self.point_at(lx, ly)
        if name != self._hovered:
            self._hovered = name
            self.pointHovered.emit(name)

    def _hover_left(self) -> None:
        if self._hovered:
            self._hovered = ""
            self.pointHovered.emit("")

    def ceiling_text(self, name: str) -> str:
        c = self._ceilings[name]
        hw = self._results.scenario.hardware
        if c.kind == "compute":
            what = f"{c.name} dense peak: {fmt_flops_rate(c.value)}"
            ridge = f"ridge with HBM: {c.value / hw.hbm_bw:,.0f} FLOP/B"
        else:
            what = f"{c.name} roof ({c.detail}): {fmt_rate(c.value)} per direction"
            ridge = f"meets the {self._roof.dtype.upper()} peak at {hw.peak(self._roof.dtype) / c.value:,.0f} FLOP/B"
        return f"{what}\n{ridge}\nsource: {c.source or '—'}"

    def _find_point(self, name: str) -> tuple[OperatingPoint | None, str]:
        if self._roof is not None:
            for p in self._roof.points:
                if p.name == name:
                    return p, self._results.scenario.hardware.name
        if " @ " in name:
            base, key = name.rsplit(" @ ", 1)
            for k, roof, _ in self._compare_roofs:
                if k == key and roof is not None:
                    for p in roof.points:
                        if p.name == base:
                            return p, self._hardware[key].name
        return None, ""

    def hover_text_for(self, point_name: str) -> str:
        """The read-out for an operating point (or a sweep marker): FLOPs, bytes, intensity, attainable
        FLOP/s, predicted time and the binding roof, with units."""
        if point_name in (SWEEP_GEMM, SWEEP_STEP) and self._sweep is not None:
            return self._sweep_text(point_name)
        if point_name == STAGE_POINT:
            return self._stage_hover_text()
        p, hw_name = self._find_point(point_name)
        if p is None:
            return ""
        bound = "compute-bound" if p.resource == "compute" else f"bandwidth-bound ({LINK_WORDS.get(p.link, p.link)})"
        lines = [p.name + ("" if hw_name == self._results.scenario.hardware.name else f" — {hw_name}"),
                 f"({p.scope})" if p.scope else "",
                 f"FLOPs: {fmt_flops(p.flops)}",
                 f"bytes: {fmt_bytes(p.bytes)} over {LINK_WORDS.get(p.link, p.link)}",
                 f"intensity: {fmt_intensity(p.intensity)}",
                 f"attainable: {fmt_flops_rate(p.attainable_flops_per_s)}",
                 f"predicted time: {fmt_seconds(p.time_s)} (roofline, datasheet peaks)",
                 f"binding roof: {p.bound_by} — {bound}"]
        if p.note:
            lines.append(p.note)
        return "\n".join(line for line in lines if line)

    def _sweep_text(self, which: str) -> str:
        s, i = self._sweep, self.slider.value()
        sc = self._results.scenario
        where = (f"batch {s['batch'][i]:,.0f}, context {fmt_count(float(s['context'][i]))}")
        if which == SWEEP_GEMM:
            f, b, x, a, bound = (s["gemm_flops"][i], s["weights_bytes"][i], s["intensity"][i],
                                 s["attainable_flops_per_s"][i], s["bound"][i])
            title = "Decode GEMMs (weights streamed)"
        else:
            f, b, x, a, bound = (s["step_flops"][i], s["step_bytes"][i], s["step_intensity"][i],
                                 s["step_attainable_flops_per_s"][i], s["step_bound"][i])
            title = "Decode step: GEMMs + KV-cache reads (one kernel on the roofline)"
        lines = [title, f"({where}; per token step, one GPU, {sc.weight_dtype} weights)",
                 f"FLOPs: {fmt_flops(float(f))}", f"bytes: {fmt_bytes(float(b))} over HBM",
                 f"intensity: {fmt_intensity(float(x))}", f"attainable: {fmt_flops_rate(float(a))}",
                 f"predicted time: {fmt_seconds(float(f) / float(a)) if a > 0 else '—'} (roofline)",
                 "binding roof: " + ("compute (" + s["dtype"].upper() + ")" if bound else "HBM bandwidth"),
                 f"KV cache held: {fmt_bytes(float(s['kv_bytes'][i]))}"
                 + ("" if s["fits"][i] else " — weights + KV exceed 90% of HBM")]
        return "\n".join(lines)

    # ------------------------------------------------------------------ for tests and export
    def ceiling_items(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Ceiling name → (xs, ys) as drawn, in data units (FLOP/B, FLOP/s), not log10."""
        out = {}
        for name in self._ceilings:
            xs, ys = self.ceiling_curves[name].getOriginalDataset()
            out[name] = (np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
        return out

    def point_items(self) -> dict[str, tuple[float, float]]:
        """Operating point name → (intensity, attainable FLOP/s) as drawn, in data units."""
        if self._roof is None:
            return {}
        xs, ys = self.points_item.getOriginalDataset()
        return {p.name: (float(x), float(y)) for p, x, y in zip(self._roof.points, xs, ys, strict=True)}

    def ceiling_label(self, name: str) -> pg.TextItem:
        return self.ceiling_labels[name]

    def roofline_result(self) -> Roofline | None:
        return self._roof
