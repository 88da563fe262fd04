"""The roofline's decode sweep: a slider over batch (1 … 4096) or context (1k … 1M tokens) moving the decode
GEMMs (★) and the decode step with its KV reads (◆) along their traces, solid within HBM, dotted beyond,
with the KV-fit limit (✗) and the GEMMs' ridge crossing. Numbers come from `model.roofline.decode_sweep`.

A layer the panel owns: it holds its controls (`mode_combo`, `slider`, `slider_label`) and its items, evaluates
the sweep for the scenario it is handed (`evaluate`), and tells the panel through `on_change(rerange)` when the
user moves the slider (False) or switches between batch and context (True: the view's range follows).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.views.roofline import batch_values, context_values, decode_sweep
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.roofline_style import (
    BANDWIDTH,
    COMPUTE,
    MEMORY,
    MODES,
    NOFIT_COLOR,
    SWEEP_GEMM,
    SWEEP_STEP,
    fmt_count,
    fmt_intensity,
)
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_flops_rate, fmt_seconds


@dataclass(frozen=True)
class SweepNotes:
    """The sweep's on-plot notes for the text layer to place: the GEMMs' ridge crossing (shown in batch mode)
    and the KV-fit limit beside its ✗ at `kv_pos` (data units; shown when the limit is inside the sweep)."""

    crossing: pg.TextItem
    show_crossing: bool
    kv: pg.TextItem
    show_kv: bool
    kv_pos: tuple[float, float]


class RooflineSweep:
    """The decode sweep's traces, markers and notes on `plot`, and its controls."""

    def __init__(self, plot: pg.PlotItem, on_change: Callable[[bool], None]):
        self._on_change = on_change
        self._scenario: Scenario | None = None
        self.sweep: dict | None = None
        self.mode = "batch"
        self.kv_pos = (1.0, 1.0)
        self._initialised = False
        # traces within HBM / beyond it, and the markers at the slider
        self.gemm_trace = pg.PlotDataItem(pen=pg.mkPen(theme.plot_text_color(), width=2))
        self.gemm_trace_nofit = pg.PlotDataItem(pen=pg.mkPen(NOFIT_COLOR, width=2, style=QtCore.Qt.PenStyle.DotLine))
        self.step_trace = pg.PlotDataItem(pen=pg.mkPen(theme.plot_text_color(), width=2, style=QtCore.Qt.PenStyle.DashLine))
        self.step_trace_nofit = pg.PlotDataItem(pen=pg.mkPen(NOFIT_COLOR, width=2, style=QtCore.Qt.PenStyle.DotLine))
        for item in (self.gemm_trace, self.gemm_trace_nofit, self.step_trace, self.step_trace_nofit):
            item.setZValue(5)
            plot.addItem(item)
        self.gemm_marker = pg.PlotDataItem(pen=None, symbol="star", symbolSize=22)
        self.step_marker = pg.PlotDataItem(pen=None, symbol="d", symbolSize=16)
        self.kv_marker = pg.PlotDataItem(pen=None, symbol="x", symbolSize=16, symbolBrush=MEMORY,
                                         symbolPen=pg.mkPen(MEMORY, width=3))
        for item in (self.gemm_marker, self.step_marker, self.kv_marker):
            item.setZValue(20)
            plot.addItem(item)
        self.crossing_text = pw.label_item("", anchor=(1, 1))
        self.kv_text = pw.label_item("", color=MEMORY, anchor=(1, 1), bold=True)
        for item in (self.crossing_text, self.kv_text):
            plot.addItem(item, ignoreBounds=True)

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
        self.mode_combo.currentIndexChanged.connect(self._mode_changed)
        self.slider.valueChanged.connect(self._slider_moved)
        self._set_slider_values()

    # ------------------------------------------------------------------ the slider
    def values(self) -> np.ndarray:
        """The slider's stops in the current mode (batch sizes or context lengths)."""
        return batch_values() if self.mode == "batch" else context_values()

    def value(self) -> float:
        return float(self.values()[self.slider.value()])

    def _set_slider_values(self) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(self.values()) - 1)
        self.slider.blockSignals(False)

    def _select_value(self, value: float) -> None:
        i = int(np.argmin(np.abs(np.log(self.values()) - math.log(max(value, 1.0)))))
        self.slider.blockSignals(True)
        self.slider.setValue(i)
        self.slider.blockSignals(False)

    def _mode_changed(self, _index: int) -> None:
        mode = self.mode_combo.currentData()
        if mode == self.mode:
            return
        self.mode = mode
        self._set_slider_values()
        sc = self._scenario
        if sc is not None:
            self._select_value(float(sc.batch if mode == "batch" else sc.prompt_len + sc.gen_len))
            self._draw()
            self._on_change(True)

    def _slider_moved(self, _value: int) -> None:
        if self.sweep is None:
            self._update_slider_label()
            return
        self._draw_markers()
        self._on_change(False)

    def set_sweep(self, mode: str, value: float) -> None:
        """Switch the sweep to "batch" or "context" and move the slider to the stop nearest `value`."""
        if mode not in MODES:
            raise ValueError(f"sweep mode must be one of {', '.join(MODES)}, not {mode!r}")
        index = list(MODES).index(mode)
        if self.mode_combo.currentIndex() != index:
            self.mode_combo.setCurrentIndex(index)
        self._select_value(float(value))
        self._slider_moved(self.slider.value())

    def _update_slider_label(self) -> None:
        v = self.value()
        self.slider_label.setText(f"batch {v:,.0f}" if self.mode == "batch" else f"context {fmt_count(v)} tokens")

    # ------------------------------------------------------------------ model and drawing
    def evaluate(self, scenario: Scenario) -> None:
        """The sweep for `scenario` (the first one also puts the slider at its batch), traces and markers."""
        self._scenario = scenario
        if not self._initialised:
            self._initialised = True
            self._select_value(float(scenario.batch))
        self._draw()

    def _draw(self) -> None:
        values = self.values()
        sc = self._scenario
        self.sweep = s = decode_sweep(sc, batch=values) if self.mode == "batch" else decode_sweep(sc, context=values)
        fits = s.fits
        # Within HBM solid; beyond it dotted grey (one point of overlap so the path is continuous).
        last = int(np.max(np.nonzero(fits)[0])) if fits.any() else -1
        for trace, nofit, key_x, key_y in ((self.gemm_trace, self.gemm_trace_nofit, "intensity",
                                            "attainable_flops_per_s"),
                                           (self.step_trace, self.step_trace_nofit, "step_intensity",
                                            "step_attainable_flops_per_s")):
            x, y = getattr(s, key_x), np.maximum(getattr(s, key_y), 1.0)
            trace.setData(x[: last + 1], y[: last + 1])
            start = max(last, 0)
            nofit.setData(x[start:] if last < len(x) - 1 else x[:0], y[start:] if last < len(x) - 1 else y[:0])
        self._draw_markers()

    def _draw_markers(self) -> None:
        self._update_slider_label()
        s, sc = self.sweep, self._scenario
        i = self.slider.value()
        fits = bool(s.fits[i])
        g_color = COMPUTE if s.bound[i] else BANDWIDTH
        st_color = COMPUTE if s.step_bound[i] else BANDWIDTH
        self.gemm_marker.setData([s.intensity[i]], [max(s.attainable_flops_per_s[i], 1.0)],
                                 symbolBrush=g_color if fits else pw.plot_background(),
                                 symbolPen=pg.mkPen(theme.plot_text_color(), width=1.5))
        self.step_marker.setData([s.step_intensity[i]], [max(s.step_attainable_flops_per_s[i], 1.0)],
                                 symbolBrush=st_color if fits else pw.plot_background(),
                                 symbolPen=pg.mkPen(theme.plot_text_color(), width=1.5))
        # KV-fit limit on the step trace (memory colour), in the current sweep variable.
        if self.mode == "context":
            limit = s.kv_fit_limit_context
            at = decode_sweep(sc, context=[max(limit, 1.0)]) if limit > 0 else None
            text = (f"KV cache full beyond {fmt_count(limit)} tokens (batch {sc.batch})" if limit > 0
                    else "weights alone exceed HBM")
        else:
            limit = s.kv_fit_limit_batch
            at = decode_sweep(sc, batch=[max(limit, 1.0)]) if limit > 0 else None
            text = f"KV cache full beyond batch {limit:,.0f}" if limit > 0 else "weights alone exceed HBM"
        lo, hi = self.values()[0], self.values()[-1]
        show = bool(at is not None and lo <= limit <= hi)
        self.kv_marker.setVisible(show)
        self.kv_text.setVisible(show)
        if show:
            x, y = float(at.step_intensity[0]), float(at.step_attainable_flops_per_s[0])
            self.kv_marker.setData([x], [y])
            self.kv_text.setText("✗ " + text)
            self.kv_pos = (x, y)
        # Ridge crossing of the decode GEMMs: the knee (ridge, peak).
        self.crossing_text.setText(f"decode GEMMs compute-bound from batch ≈ {math.ceil(s.ridge_batch):,}")
        self.crossing_text.setVisible(self.mode == "batch")

    # ------------------------------------------------------------------ what other layers read
    def notes(self) -> SweepNotes:
        return SweepNotes(self.crossing_text, self.mode == "batch", self.kv_text,
                          bool(self.kv_text.toPlainText()) and self.kv_marker.isVisible(), self.kv_pos)

    def marks(self) -> list[tuple[float, float]]:
        """(intensity, attainable FLOP/s) of the visible markers: obstacles for every label."""
        out = []
        for marker in (self.gemm_marker, self.step_marker, self.kv_marker):
            x, y = marker.getOriginalDataset()
            if marker.isVisible() and x is not None and len(x):
                out.append((float(x[0]), float(y[0])))
        return out

    def extents(self) -> tuple[list[float], list[float]]:
        """(intensities, attainable FLOP/s) the view must hold for the sweep."""
        s = self.sweep
        if s is None:
            return [], []
        return ([float(s.step_intensity.min()), float(s.intensity.max())],
                [float(s.step_attainable_flops_per_s.min())])

    def hover_points(self) -> list[tuple[str, float, float]]:
        if self.sweep is None:
            return []
        (gx, gy), (sx, sy) = self.decode_marker(), self.decode_step_marker()
        return [(SWEEP_GEMM, gx, gy), (SWEEP_STEP, sx, sy)]

    def decode_marker(self) -> tuple[float, float]:
        """(intensity FLOP/B, attainable FLOP/s) of the decode GEMM marker, in data units."""
        x, y = self.gemm_marker.getOriginalDataset()
        return float(x[0]), float(y[0])

    def decode_step_marker(self) -> tuple[float, float]:
        x, y = self.step_marker.getOriginalDataset()
        return float(x[0]), float(y[0])

    def hover_text(self, which: str) -> str:
        """The read-out of the GEMM (SWEEP_GEMM) or step (SWEEP_STEP) marker at the slider."""
        s, i = self.sweep, self.slider.value()
        where = f"batch {s.batch[i]:,.0f}, context {fmt_count(float(s.context[i]))}"
        if which == SWEEP_GEMM:
            f, b, x, a, bound = (s.gemm_flops[i], s.weights_bytes[i], s.intensity[i],
                                 s.attainable_flops_per_s[i], s.bound[i])
            title = "Decode GEMMs (weights streamed)"
        else:
            f, b, x, a, bound = (s.step_flops[i], s.step_bytes[i], s.step_intensity[i],
                                 s.step_attainable_flops_per_s[i], s.step_bound[i])
            title = "Decode step: GEMMs + KV-cache reads (one kernel on the roofline)"
        lines = [title, f"({where}; per token step, one GPU, {self._scenario.weight_dtype} weights)",
                 f"FLOPs: {fmt_flops(float(f))}", f"bytes: {fmt_bytes(float(b))} over HBM",
                 f"intensity: {fmt_intensity(float(x))}", f"attainable: {fmt_flops_rate(float(a))}",
                 f"predicted time: {fmt_seconds(float(f) / float(a)) if a > 0 else '—'} (roofline)",
                 "binding roof: " + ("compute (" + s.dtype.upper() + ")" if bound else "HBM bandwidth"),
                 f"KV cache held: {fmt_bytes(float(s.kv_bytes[i]))}"
                 + ("" if s.fits[i] else " — weights + KV exceed 90% of HBM")]
        return "\n".join(lines)
