"""Roofline panel: every ceiling of the chosen hardware, the scenario's kernels as points, a decode sweep.

Log-log axes (pyqtgraph `setLogMode`): curves and markers are PlotDataItems given in data units (FLOP/B,
FLOP/s) and transformed by pyqtgraph; every TextItem is placed in log10 coordinates. Items are created once
(pools keyed by ceiling name or compare slot) and updated with setData / setPos.

The panel is composed of layers, one module each: this one holds the items, the ceilings, the points and
the view range; `roofline_sweep` the decode sweep and its controls, `roofline_compare` compared devices,
`roofline_labels` every on-plot text and the legend, `roofline_stage` the step-through flow's highlighted
stage, `roofline_hover` the read-outs, `roofline_band` the uncertainty band (the model's attainable FLOP/s
between the efficiency ranges' ends); `roofline_style` what they share.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.decode_sweep import DecodeSweep
from trinity_desktop.model.views.roofline import (
    STAGE_POINT,
    Ceiling,
    Roofline,
    roofline,
)
from trinity_desktop.model.views.stages import refreshed_stage
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.roofline_band import RooflineBand
from trinity_desktop.ui.roofline_compare import RooflineCompare
from trinity_desktop.ui.roofline_hover import RooflineHover
from trinity_desktop.ui.roofline_labels import RooflineLabels
from trinity_desktop.ui.roofline_speculative import speculative_title
from trinity_desktop.ui.roofline_stage import RooflineStage
from trinity_desktop.ui.roofline_style import (
    BANDWIDTH,
    COMPARE_STYLES,
    COMPUTE,
    LINK_SYMBOLS,
    MAX_COMPARE,
    MEMORY,
    MODES,
    NOFIT_COLOR,
    STAGE_RING,
    SWEEP_GEMM,
    fmt_count,
    short_name,
)
from trinity_desktop.ui.roofline_sweep import RooflineSweep
from trinity_desktop.ui.units import fmt_flops_rate, fmt_rate, fmt_seconds
from trinity_desktop.ui.wrap_layout import control_row

__all__ = ["SWEEP_GEMM", "RooflinePanel"]
NARROW_PX = 700.0    # a plot narrower than this names compute roofs by their first format ("BF16")


class RooflinePanel(RooflineSweep, RooflineCompare, RooflineStage, RooflineHover, RooflineLabels, RooflineBand,
                   QtWidgets.QWidget):
    """Roofline of the scenario's hardware with its operating points, a decode sweep, and compared devices."""

    pointHovered = QtCore.Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("RooflinePanel")
        self.setAccessibleName("Roofline: attainable FLOP/s against arithmetic intensity")
        self._results: Results | None = None
        self._roof: Roofline | None = None
        self._sweep: DecodeSweep | None = None
        self._hardware: dict[str, Hardware] = {}
        self._compare_keys: list[str] = []
        self._compare_roofs: list[tuple[str, Roofline | None, str]] = []   # (key, roofline or None, error)
        self._hovered = ""
        self._x_range = (0.01, 1e5)
        self._last_x = 1e3
        self._y_range = (1e9, 1e16)
        self._sweep_initialised = False
        self._mode = "batch"
        self._kv_pos = (1.0, 1.0)
        self._kv_text_plain = ""

        # --- plot -------------------------------------------------------------------------------
        self.plot_widget = pg.PlotWidget(background=pw.plot_background(), axisItems={
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
        self.ridge_line = pg.PlotDataItem(pen=pg.mkPen(theme.plot_text_color(), width=1, style=QtCore.Qt.PenStyle.DotLine))
        self.plot.addItem(self.ridge_line)
        self.ridge_marker = pg.PlotDataItem(pen=None, symbol="o", symbolSize=9, symbolBrush=theme.plot_text_color(),
                                            symbolPen=pg.mkPen(pw.plot_background()))
        self.plot.addItem(self.ridge_marker)
        self.ridge_text = pw.label_item("", anchor=(0, 0), bold=True)
        self.plot.addItem(self.ridge_text, ignoreBounds=True)

        # Decode sweep traces (within HBM / beyond it) and markers.
        self.gemm_trace = pg.PlotDataItem(pen=pg.mkPen(theme.plot_text_color(), width=2))
        self.gemm_trace_nofit = pg.PlotDataItem(pen=pg.mkPen(NOFIT_COLOR, width=2, style=QtCore.Qt.PenStyle.DotLine))
        self.step_trace = pg.PlotDataItem(pen=pg.mkPen(theme.plot_text_color(), width=2, style=QtCore.Qt.PenStyle.DashLine))
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
        self.leaders = pg.PlotDataItem(pen=pg.mkPen(theme.MUTED_COLOR, width=1), connect="pairs")
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
            item = pg.PlotDataItem(pen=None, symbolSize=11, symbolBrush=pg.mkBrush(pw.plot_background()),
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
                                            symbolPen=pg.mkPen(theme.ON_LIGHT, width=1.5))
        self.stage_halo = pg.PlotDataItem(pen=None, symbol="o", symbolSize=36, symbolBrush=no_brush,
                                          symbolPen=pg.mkPen(pw.plot_background(), width=7))
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
        self.stage_text = pg.TextItem("", color=theme.ON_LIGHT, fill=pg.mkBrush(theme.ON_DARK),
                                      border=pg.mkPen(STAGE_RING, width=1.5), anchor=(0, 1))
        self.stage_text.setFont(pw.font(12, bold=True))
        self.stage_text.setZValue(30)
        self.stage_text.setVisible(False)
        self.plot.addItem(self.stage_text, ignoreBounds=True)

        # The legend is a wrapped line under the plot: it never covers a roof or a point.
        self.legend_label = self._legend_widget()
        self.hidden_labels: set[str] = set()

        self.hover = pw.HoverReadout(self.plot, self.hover_text_at, on_move=self._hover_moved,
                                     on_leave=self._hover_left)
        pw.LeaveFilter(self.plot_widget, self.hover.leave)
        self.plot.getViewBox().sigResized.connect(self._resized)

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

        slider_box = QtWidgets.QWidget()
        slider_row = QtWidgets.QHBoxLayout(slider_box)
        slider_row.setContentsMargins(0, 0, 0, 0)
        slider_row.addWidget(self.slider, 1)
        slider_row.addWidget(self.slider_label)
        slider_box.setMinimumWidth(260)
        slider_box.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Preferred)
        controls = control_row((("Decode sweep:", self.mode_combo), slider_box, self.compare_button), pw.font(12))

        self.info_label = QtWidgets.QLabel("No scenario evaluated yet.")
        self.info_label.setObjectName("RooflineInfo")
        self.info_label.setFont(pw.font(11))
        self.info_label.setWordWrap(True)
        self.info_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.info_label.setAccessibleName("Roofline summary")
        self.info_label.setToolTip("Ridge crossing: the batch where the decode GEMMs reach the ridge (closed "
                                   "form R·S/2W). KV fit: where weights + KV cache exceed 90% of HBM. SRAM/L2 "
                                   "roofs are omitted (no published on-chip bandwidth in the presets); offload "
                                   "transfers are not points (no offload in the scenario).")

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.legend_label)
        layout.addLayout(controls)
        layout.addWidget(self.info_label)

        self.mode_combo.currentIndexChanged.connect(self._mode_changed)
        self.slider.valueChanged.connect(self._slider_moved)
        self._set_slider_values()

    # ------------------------------------------------------------------ inputs
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
        self._update_title()
        self._draw_stage()

    def _update_title(self) -> None:
        """The finding: the binding roof of the slowest of the main kernels (those counted in the first
        kernel's scope, e.g. per layer per micro-batch; the comparison-only kernel left out), and the step's
        time from the model."""
        r, roof = self._results, self._roof
        scope = roof.points[0].scope if roof.points else ""
        points = [p for p in roof.points if "comparison" not in p.name and p.scope == scope]
        if not points:
            return
        slowest = max(points, key=lambda p: p.time_s)
        bound = "compute" if slowest.resource == "compute" else slowest.bound_by
        phase, per, seconds = {"train": ("training", "step", r.time_total),
                               "prefill": ("prefill", "prompt", r.time_total),
                               "decode": ("decode", "token", r.time_total)}[r.kind]
        sc = r.scenario
        batch = f"global batch {sc.global_batch:,}" if r.kind == "train" else f"batch {sc.batch:,}"
        title = findings.bound_title(phase, bound, batch, seconds, per)
        if r.speculative is not None:  # speculative decoding (#23): the verify step against the ridge, the speed-up
            title = speculative_title(r.speculative, sc.batch)
        pw.set_title(self.plot, pw.html_escape(title))

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
            label.setText(self._ceiling_label_text(c))
            label.setColor(theme.plot_text_color() if main else pw.secondary_text(pw.plot_background()))
            label.setFont(pw.font(11, bold=main))
        for name, curve in self.ceiling_curves.items():
            curve.setVisible(name in self._ceilings)
            self.ceiling_labels[name].setVisible(name in self._ceilings)

    def _ceiling_label_text(self, c: Ceiling) -> str:
        """"BF16/FP16 989 TFLOP/s"; on a narrow plot a compute roof names its first format only."""
        if c.kind != "compute":
            return f"{c.name} {fmt_rate(c.value)}"
        name = c.name if self.plot.getViewBox().width() >= NARROW_PX else c.name.split("/")[0]
        return f"{name} {fmt_flops_rate(c.value)}"

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
            brushes.append(pg.mkBrush(pw.plot_background() if comparison else color))
            pens.append(pg.mkPen(color if comparison else theme.plot_text_color(), width=2.5 if comparison else 1))
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

    # ------------------------------------------------------------------ ranges, labels, legend
    def _right_decade(self, lx0: float, last: float) -> int:
        """The x range's right end (a whole decade): a factor 20 past the last point, and wide enough at the
        current plot width that the compute roofs' labels fit right of the last point."""
        lx1 = math.ceil(last + math.log10(20.0))
        width = self.plot.getViewBox().width()
        room = max((ll.text_size(self.ceiling_labels[c.name])[0] for c in self._roof.ceilings
                    if c.kind == "compute"), default=0.0) + 24.0
        if width > 2 * room:
            lx1 = max(lx1, math.ceil((last - room * lx0 / width) / (1.0 - room / width)))
        return lx1

    def _resized(self, *_) -> None:
        """A new plot size: name the roofs for it, widen the x range if their labels need it, place the labels."""
        if self._roof is not None:
            for c in self._roof.ceilings:
                self.ceiling_labels[c.name].setText(self._ceiling_label_text(c))
        if self._roof is not None and self._x_range[1] != 10.0 ** self._right_decade(
                math.log10(self._x_range[0]), math.log10(self._last_x)):
            self._set_ranges()
        self._layout_labels()

    def _set_ranges(self) -> None:
        if self._roof is None:
            return
        xs = [p.intensity for p in self._roof.points] + [self._roof.ridge_flop_per_byte]
        ys = [p.attainable_flops_per_s for p in self._roof.points if p.attainable_flops_per_s > 0]
        peaks = [c.value for c in self._roof.ceilings if c.kind == "compute"]
        if self._sweep is not None:
            xs += [float(self._sweep.step_intensity.min()), float(self._sweep.intensity.max())]
            ys += [float(self._sweep.step_attainable_flops_per_s.min())]
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
        x_lo = 10.0 ** math.floor(math.log10(max(min(xs + [0.1]) / 300.0, 1e-6)))
        self._last_x = max(xs)
        x_hi = 10.0 ** self._right_decade(math.log10(x_lo), math.log10(self._last_x))
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
        self._update_band()  # its x extent is the view's

    def _update_info(self) -> None:
        r, s = self._results, self._sweep
        if r is None or s is None:
            return
        sc = r.scenario
        ctx = sc.prompt_len + sc.gen_len / 2
        with_kv = (f"≈ {math.ceil(s.ridge_batch_with_kv):,}" if s.ridge_batch_with_kv > 0
                   else f"never (step intensity → {s.step_intensity_limit:.3g} FLOP/B &lt; ridge)")
        i = self.slider.value()
        parts = [
            f"<b>Decode</b> ({pw.html_escape(sc.model.name)}, {s.dtype.upper()}, {sc.weight_dtype} weights): GEMMs turn "
            f"compute-bound at batch ≈ <b>{math.ceil(s.ridge_batch):,}</b> (R·S/2W, datasheet ridge R; the "
            f"model's step time turns at ≈ {math.ceil(s.ridge_batch_achievable):,}, the achievable ridge "
            f"R·η_compute/η_HBM); including KV reads at "
            f"{fmt_count(ctx)} context: {with_kv}.",
            f"KV cache fits up to batch {s.kv_fit_limit_batch:,.0f} at this context, up to "
            f"{fmt_count(s.kv_fit_limit_context)} tokens at batch {sc.batch}.",
            f"At the slider: {fmt_seconds(float(s.time_per_token_s[i]))} per token step (roofline, one GPU)"
            + ("" if s.fits[i] else " — <span style='color:" + theme.BAD_COLOR + "'>does not fit in HBM</span>") + ".",
        ]
        errors = [f"{pw.html_escape(self._hardware[k].name)}: n/a ({pw.html_escape(e)})" for k, roof, e in self._compare_roofs
                  if roof is None]
        self.info_label.setText(" ".join(parts) + (f"<br><span style='color:{pw.secondary_text()}'>" + " ".join(errors)
                                                   + "</span>" if errors else ""))

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

