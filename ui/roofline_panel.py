"""Roofline panel: every ceiling of the chosen hardware, the scenario's kernels as points, a decode sweep.

Log-log axes (pyqtgraph `setLogMode`): curves and markers are PlotDataItems given in data units (FLOP/B,
FLOP/s) and transformed by pyqtgraph; every TextItem is placed in log10 coordinates. Items are created once
(pools keyed by ceiling name or compare slot) and updated with setData / setPos.

The panel is composed of layer objects around one plot, one module each: this one holds the ceilings' lines,
the points, the ridge and the view range, and hands every layer a `RooflineFrame` (roofline_frame.py: the Results,
their Roofline, the ranges); `roofline_sweep` the decode sweep and its controls, `roofline_compare` compared
devices and their menu, `roofline_labels` every on-plot text and the legend, `roofline_stage` the step-through
flow's highlighted stage, `roofline_hover` the read-outs, `roofline_band` the uncertainty band (the model's
attainable FLOP/s between the efficiency ranges' ends); `roofline_style` what they share. A layer reads no state
of the panel's: it gets what it draws through its own methods' arguments, and tells the panel of a user's change
through the callback it was built with.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.search.uncertainty import Uncertainty
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.roofline import Roofline, roofline
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.roofline_band import BAND_LEGEND, BAND_SWATCH, RooflineBand
from trinity_desktop.ui.roofline_compare import RooflineCompare
from trinity_desktop.ui.roofline_frame import RooflineFrame, compute_roof_name, px_per_decade
from trinity_desktop.ui.roofline_hover import RooflineHover
from trinity_desktop.ui.roofline_info import INFO_TOOLTIP, info_rows
from trinity_desktop.ui.roofline_labels import RooflineLabels
from trinity_desktop.ui.roofline_speculative import speculative_title
from trinity_desktop.ui.roofline_stage import RooflineStage
from trinity_desktop.ui.roofline_style import BANDWIDTH, COMPUTE, LINK_SYMBOLS, SWEEP_GEMM
from trinity_desktop.ui.roofline_sweep import RooflineSweep
from trinity_desktop.ui.wrap_layout import control_row

__all__ = ["SWEEP_GEMM", "RooflinePanel"]


class RooflinePanel(QtWidgets.QWidget):
    """Roofline of the scenario's hardware with its operating points, a decode sweep, and compared devices."""

    pointHovered = QtCore.Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("RooflinePanel")
        self.setAccessibleName("Roofline: attainable FLOP/s against arithmetic intensity")
        self._results: Results | None = None
        self._roof: Roofline | None = None
        self._hovered = ""
        self._x_range = (0.01, 1e5)
        self._last_x = 1e3
        self._y_range = (1e9, 1e16)

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
        self.ridge_line = pg.PlotDataItem(pen=pg.mkPen(theme.plot_text_color(), width=1, style=QtCore.Qt.PenStyle.DotLine))
        self.plot.addItem(self.ridge_line)
        self.ridge_marker = pg.PlotDataItem(pen=None, symbol="o", symbolSize=9, symbolBrush=theme.plot_text_color(),
                                            symbolPen=pg.mkPen(pw.plot_background()))
        self.plot.addItem(self.ridge_marker)
        self.points_item = pg.PlotDataItem(pen=None, symbolSize=13)

        # --- layers, each with its own items on the plot (back to front as before) ----------------
        self.text_layer = RooflineLabels(self.plot)
        self.text_layer.ceiling_lines = self.ceiling_curves
        self.sweep_layer = RooflineSweep(self.plot, self._sweep_changed)
        self.plot.addItem(self.points_item)
        self.compare_layer = RooflineCompare(self.plot, self._compare_changed)
        self.stage_layer = RooflineStage(self.plot)
        self.band_layer = RooflineBand(self.plot)
        self.hover_layer = RooflineHover(self.plot, self.sweep_layer, self.stage_layer, self.compare_layer,
                                         self.band_layer)
        self.ridge_text = self.text_layer.ridge_text
        self.legend_label = self.text_layer.legend_label

        self.hover = pw.HoverReadout(self.plot, self.hover_text_at, on_move=self._hover_moved,
                                     on_leave=self._hover_left)
        pw.LeaveFilter(self.plot_widget, self.hover.leave)
        self.plot.getViewBox().sigResized.connect(pw.NextPass(self, self._resized).poke)   # once per burst

        # --- controls -----------------------------------------------------------------------------
        sweep = self.sweep_layer
        slider_box = QtWidgets.QWidget()
        slider_row = QtWidgets.QHBoxLayout(slider_box)
        slider_row.setContentsMargins(0, 0, 0, 0)
        slider_row.addWidget(sweep.slider, 1)
        slider_row.addWidget(sweep.slider_label)
        slider_box.setMinimumWidth(260)
        slider_box.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Preferred)
        controls = control_row((("Decode sweep:", sweep.mode_combo), slider_box, self.compare_layer.button),
                               pw.font(12))

        self.info_label = QtWidgets.QLabel("No scenario evaluated yet.")
        self.info_label.setObjectName("RooflineInfo")
        self.info_label.setFont(pw.font(11))
        self.info_label.setWordWrap(True)
        self.info_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.info_label.setAccessibleName("Roofline summary")
        self.info_label.setToolTip(INFO_TOOLTIP)

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.legend_label)
        layout.addLayout(controls)
        layout.addWidget(self.info_label)

    # ------------------------------------------------------------------ inputs
    def update_results(self, results: Results) -> None:
        self._results = results
        self._roof = roof = roofline(results.scenario)
        self.stage_layer.refresh(results, roof)
        self._update_ceilings()
        self._update_points()
        self.sweep_layer.evaluate(results.scenario)
        self.compare_layer.evaluate(results.scenario)
        self._set_ranges()   # and the legend
        self._layout_labels()
        self._update_info()
        self._update_title()
        self.stage_layer.draw()
        self._layout_stage_label()

    def set_hardware_choices(self, hardware: dict[str, Hardware]) -> None:
        """The devices offered in the compare menu (keys → Hardware)."""
        self.compare_layer.set_hardware_choices(hardware)

    def set_compared_hardware(self, keys) -> None:
        self.compare_layer.set_keys(keys)

    def set_bands(self, u: Uncertainty | None) -> None:
        """Show the band for the bands `u` of the scenario shown; None (bands off or stale) hides it."""
        self.band_layer.set_bands(u)
        self.band_layer.draw(self.frame())
        if self._roof is not None:
            self._update_legend()  # its entry comes and goes with the band (unchanged entries cost nothing)
            self._layout_labels()  # the compute labels keep off its edges

    def set_sweep(self, mode: str, value: float) -> None:
        """Switch the sweep to "batch" or "context" and move the slider to the stop nearest `value`."""
        self.sweep_layer.set_sweep(mode, value)

    def show_stage(self, name: str, numbers: dict) -> None:
        """Follow the step-through flow: highlight the operating point of stage `name` (`numbers` is
        `Stage.as_dict()`); `show_stage("", {})` clears."""
        self.stage_layer.show(name, numbers, self._roof)
        if self._roof is None:
            return
        p = self.stage_layer.point()
        if p is not None:
            (x_lo, x_hi), (y_lo, y_hi) = self._x_range, self._y_range
            if not (x_lo < p[0] < x_hi and y_lo < p[1] < y_hi):   # outside the view: re-range (rare)
                self._set_ranges()
                self._layout_labels()
        self.stage_layer.draw()
        self._layout_stage_label()

    def frame(self) -> RooflineFrame | None:
        """What every layer draws from: the Results shown, their Roofline and the view's ranges."""
        if self._results is None or self._roof is None:
            return None
        return RooflineFrame(self._results, self._roof, self._x_range, self._y_range)

    def _sweep_changed(self, rerange: bool) -> None:
        if self._results is None:
            return
        if rerange:
            self._set_ranges()
        self._layout_labels()
        self._update_info()

    def _compare_changed(self) -> None:
        if self._results is None:
            return
        self.compare_layer.evaluate(self._results.scenario)
        self._set_ranges()   # and the legend
        self._layout_labels()
        self._update_info()

    def _update_legend(self) -> None:
        extra = self.compare_layer.legend_entries()
        if self.band_layer.visible:
            extra.append(("▬", BAND_SWATCH, BAND_LEGEND))
        self.text_layer.update_legend(self._roof, extra)

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
    def _update_ceilings(self) -> None:
        roof = self._roof
        main_dtype_roof = compute_roof_name(roof)
        names = {c.name for c in roof.ceilings}
        for c in roof.ceilings:
            if c.name not in self.ceiling_curves:
                self.ceiling_curves[c.name] = pg.PlotDataItem()
                self.plot.addItem(self.ceiling_curves[c.name])
            main = c.name == main_dtype_roof or c.link == "hbm"
            color = COMPUTE if c.kind == "compute" else BANDWIDTH
            self.ceiling_curves[c.name].setPen(pg.mkPen(color, width=3.5 if main else 1.6))
        for name, curve in self.ceiling_curves.items():
            curve.setVisible(name in names)
        self.text_layer.set_ceilings(roof)

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
        self.text_layer.set_points(pts)

    # ------------------------------------------------------------------ ranges and labels
    def _right_decade(self, lx0: float, last: float) -> int:
        """The x range's right end (a whole decade): a factor 20 past the last point, and wide enough at the
        current plot width that the compute roofs' labels fit right of the last point."""
        lx1 = math.ceil(last + math.log10(20.0))
        width = self.plot.getViewBox().width()
        room = self.text_layer.compute_label_width(self._roof) + 24.0
        if width > 2 * room:
            lx1 = max(lx1, math.ceil((last - room * lx0 / width) / (1.0 - room / width)))
        return lx1

    def _resized(self, *_) -> None:
        """A new plot size: name the roofs for it, widen the x range if their labels need it, place the labels."""
        if self._roof is None:
            return
        self.text_layer.retext_ceilings(self._roof)
        if self._x_range[1] != 10.0 ** self._right_decade(math.log10(self._x_range[0]), math.log10(self._last_x)):
            self._set_ranges()
        self._layout_labels()

    def _set_ranges(self) -> None:
        if self._roof is None:
            return
        roof = self._roof
        xs = [p.intensity for p in roof.points] + [roof.ridge_flop_per_byte]
        ys = [p.attainable_flops_per_s for p in roof.points if p.attainable_flops_per_s > 0]
        peaks = [c.value for c in roof.ceilings if c.kind == "compute"]
        sweep_xs, sweep_ys = self.sweep_layer.extents()
        compare_xs, compare_ys, compare_peaks = self.compare_layer.extents()
        xs += sweep_xs + compare_xs
        ys += sweep_ys + compare_ys
        peaks += compare_peaks
        own = self.stage_layer.own_point()
        if own is not None:
            xs.append(own[0])
            ys.append(own[1])
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
        # Geometry depends on the x range: redraw the ceilings (main and compared), the ridge and the band.
        frame = self.frame()
        for c in roof.ceilings:
            self.ceiling_curves[c.name].setData(*frame.geometry(c))
        self.compare_layer.draw(self._x_range)
        ridge = roof.ridge_flop_per_byte
        self.ridge_line.setData([ridge, ridge], [y_lo, frame.peak])
        self.ridge_marker.setData([ridge], [frame.peak])
        self.band_layer.draw(frame)
        self._update_legend()   # the band's entry comes and goes with it

    def _marks(self) -> list[tuple[float, float]]:
        """The points' and the sweep's markers (intensity, attainable FLOP/s), as obstacles for the labels."""
        return [(p.intensity, p.attainable_flops_per_s) for p in self._roof.points] + self.sweep_layer.marks()

    def _layout_labels(self, *_) -> None:
        frame = self.frame()
        if frame is None:
            return
        ridge = (frame.roof.ridge_flop_per_byte, frame.peak)   # where the ridge marker is
        self.text_layer.layout(frame, [*self._marks(), ridge], self.sweep_layer.notes(), self.band_layer.flat_edges())
        self._layout_stage_label()

    def _layout_stage_label(self) -> None:
        frame = self.frame()
        if frame is None:
            return
        notes = self.sweep_layer.notes()
        self.stage_layer.layout(frame, px_per_decade(self.plot),
                                self.text_layer.obstacle_texts(self._roof) + [notes.crossing, notes.kv],
                                self._marks())

    def _update_info(self) -> None:
        r, s = self._results, self.sweep_layer.sweep
        if r is None or s is None:
            return
        rows = info_rows(r, s, self.sweep_layer.slider.value(), list(self.compare_layer.errors()))
        self.info_label.setText("<br>".join(rows))

    # ------------------------------------------------------------------ hover
    def hover_text_at(self, lx: float, ly: float) -> str:
        return self.hover_layer.text_at(self.frame(), lx, ly)

    def hover_text_for(self, point_name: str) -> str:
        """The read-out for an operating point (or a sweep marker), with units."""
        return self.hover_layer.text_for(self.frame(), point_name)

    def _hover_moved(self, lx: float, ly: float) -> None:
        name = self.hover_layer.point_at(self.frame(), lx, ly)
        if name != self._hovered:
            self._hovered = name
            self.pointHovered.emit(name)

    def _hover_left(self) -> None:
        if self._hovered:
            self._hovered = ""
            self.pointHovered.emit("")

    # ------------------------------------------------------------------ for tests and export
    def ceiling_items(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Ceiling name → (xs, ys) as drawn, in data units (FLOP/B, FLOP/s), not log10."""
        if self._roof is None:
            return {}
        return {c.name: tuple(np.asarray(a, dtype=float) for a in self.ceiling_curves[c.name].getOriginalDataset())
                for c in self._roof.ceilings}

    def point_items(self) -> dict[str, tuple[float, float]]:
        """Operating point name → (intensity, attainable FLOP/s) as drawn, in data units."""
        if self._roof is None:
            return {}
        xs, ys = self.points_item.getOriginalDataset()
        return {p.name: (float(x), float(y)) for p, x, y in zip(self._roof.points, xs, ys, strict=True)}

    def ceiling_label(self, name: str) -> pg.TextItem:
        return self.text_layer.ceiling_labels[name]

    def roofline_result(self) -> Roofline | None:
        return self._roof

    @property
    def hidden_labels(self) -> set[str]:
        """Names of the texts with no free place on the plot (the hover still names them)."""
        return self.text_layer.hidden_labels

    def legend_texts(self) -> list[str]:
        return self.text_layer.legend_texts()

    def sweep(self) -> dict | None:
        return self.sweep_layer.sweep

    def sweep_value(self) -> float:
        return self.sweep_layer.value()

    def decode_marker(self) -> tuple[float, float]:
        """(intensity FLOP/B, attainable FLOP/s) of the decode GEMM marker, in data units."""
        return self.sweep_layer.decode_marker()

    def decode_step_marker(self) -> tuple[float, float]:
        return self.sweep_layer.decode_step_marker()

    def compared_hardware(self) -> list[str]:
        return list(self.compare_layer.keys)

    def compared_ceiling_items(self, key: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return self.compare_layer.ceiling_items(key)

    def compared_point_items(self, key: str) -> dict[str, tuple[float, float]]:
        return self.compare_layer.point_items(key)

    def band_visible(self) -> bool:
        return self.band_layer.visible

    def band_values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(intensity FLOP/B, low, high attainable FLOP/s) as drawn, in data units; None when hidden."""
        return self.band_layer.values()

    def band_text_at(self, lx: float, ly: float) -> str:
        return self.band_layer.text_at(lx, ly)

    def highlighted_stage(self) -> tuple[str, float, float] | None:
        """(stage name, intensity FLOP/B, attainable FLOP/s) of the highlighted point; None when none."""
        return self.stage_layer.highlighted_stage() if self._roof is not None else None

    def highlighted_point_name(self) -> str:
        return self.stage_layer.highlighted_point_name()

    def related_point_names(self) -> tuple[str, ...]:
        return self.stage_layer.related_point_names()

    def stage_label_text(self) -> str:
        return self.stage_layer.label_text()
