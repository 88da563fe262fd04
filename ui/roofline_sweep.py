"""The roofline's decode sweep: a slider over batch (1 … 4096) or context (1k … 1M tokens) moving the decode
GEMMs (★) and the decode step with its KV reads (◆) along their traces, solid within HBM, dotted beyond,
with the KV-fit limit (✗) and the GEMMs' ridge crossing. Numbers come from `model.roofline.decode_sweep`.
Mixed into RooflinePanel, whose controls (`mode_combo`, `slider`, `slider_label`) and items it drives.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from trinity_desktop.model.views.decode_sweep import DecodeSweep
from trinity_desktop.model.views.roofline import batch_values, context_values, decode_sweep
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.roofline_style import BANDWIDTH, COMPUTE, MODES, fmt_count


class RooflineSweep:
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
        self._update_markers()

    def _update_markers(self) -> None:
        self._update_slider_label()
        s = self._sweep
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
        sc = self._results.scenario
        if self._mode == "context":
            limit = s.kv_fit_limit_context
            at = decode_sweep(sc, context=[max(limit, 1.0)]) if limit > 0 else None
            text = (f"KV cache full beyond {fmt_count(limit)} tokens (batch {sc.batch})" if limit > 0
                    else "weights alone exceed HBM")
        else:
            limit = s.kv_fit_limit_batch
            at = decode_sweep(sc, batch=[max(limit, 1.0)]) if limit > 0 else None
            text = f"KV cache full beyond batch {limit:,.0f}" if limit > 0 else "weights alone exceed HBM"
        lo, hi = self._values()[0], self._values()[-1]
        show = bool(at is not None and lo <= limit <= hi)
        self.kv_marker.setVisible(show)
        self.kv_text.setVisible(show)
        if show:
            x, y = float(at.step_intensity[0]), float(at.step_attainable_flops_per_s[0])
            self.kv_marker.setData([x], [y])
            self.kv_text.setText("✗ " + text)
            self._kv_pos = (x, y)
        self._kv_text_plain = text
        # Ridge crossing of the decode GEMMs: the knee (ridge, peak).
        rb = s.ridge_batch
        self.crossing_text.setText(f"decode GEMMs compute-bound from batch ≈ {math.ceil(rb):,}")
        self.crossing_text.setVisible(self._mode == "batch")

    def decode_marker(self) -> tuple[float, float]:
        """(intensity FLOP/B, attainable FLOP/s) of the decode GEMM marker, in data units."""
        x, y = self.gemm_marker.getOriginalDataset()
        return float(x[0]), float(y[0])

    def decode_step_marker(self) -> tuple[float, float]:
        x, y = self.step_marker.getOriginalDataset()
        return float(x[0]), float(y[0])

    def sweep(self) -> DecodeSweep | None:
        return self._sweep
