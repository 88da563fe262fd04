"""Quantisation quality: published perplexity against storage per format, the cliff where quality falls faster
than storage shrinks (model/views/quant_quality.py), and beside it the bits per weight each stored format
really takes, scales and zero points included (model/base/dtypes.py WEIGHT_FORMAT, ggml-common.h et al.).
A click on a format bar sets the scenario's weight format (`editRequested`). Narrow docks stack the charts.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.base.dtypes import WEIGHT_FORMATS_STORED
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.quant_quality import low_bit_points, quality_curve
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.chart_layout import frame_panel, restack
from trinity_desktop.ui.point_labels import PointLabels

QUIET = theme.FALLBACK_COLOR
HOT = theme.RESOURCE_COLORS["compute"]
STORAGE = theme.RESOURCE_COLORS["memory"]
SEED_PAIR = ("q4_k", "q2_k")   # the seed's "2-bit saves 43%" read on stored formats
LOW_BIT = theme.RESOURCE_COLORS["bandwidth"]
QUALITY_MIN_STACKED_PX = 200   # stacked (a 1366 x 768 dock): the quality chart keeps ~115 px of plot, the bars the rest
LOG_TOP = 3.7   # the quality chart's top, log10 of the % rise (a row above it is named in the caption)
SHORT_NAMES = {"gptq4_g128": "GPTQ4 g128", "awq4_g128": "AWQ4 g128", "nf4_dq": "NF4 + DQ"}


def log_rise(delta_pct) -> np.ndarray:
    """log10 of the perplexity rise in % (floored at 0.01%), the quality chart's y."""
    return np.log10(np.maximum(np.asarray(delta_pct, dtype=float), 0.01))


def bits_text(bits: float) -> str:
    return f"{bits:.4f}".rstrip("0").rstrip(".")


def short_name(f) -> str:
    return SHORT_NAMES.get(f.key, f.name.removeprefix("GGUF "))


def quality_title(curve) -> str:
    """The finding: where quality starts to fall faster than storage shrinks."""
    k = curve.cliff
    if k is None:
        return f"{curve.model}: no step loses quality faster than it saves storage"
    before, at = curve.points[k - 1], curve.points[k]
    return (f"{curve.model}: from {before.format} to {at.format} perplexity rises {curve.step_ratio[k - 1]:.1f}× "
            f"faster than storage shrinks; +{curve.delta_pct[-1]:.1f}% at Q2_K")


def storage_title() -> str:
    bits = {f.key: f.effective_bits for f in WEIGHT_FORMATS_STORED}
    a, b = SEED_PAIR
    saved = 1.0 - bits[b] / bits[a]
    return f"As stored, Q4_K → Q2_K saves {saved:.1%}, not 50%"


def off_scale_text() -> str:
    """The low-bit rows above the chart's top, named with their perplexity."""
    off = [p for p in low_bit_points() if log_rise([p.delta_pct])[0] > LOG_TOP]
    return "".join(f" ({p.method} {p.bits}-bit, perplexity {p.perplexity:,.0f}, is off the scale)" for p in off)


class QuantQualityPanel(QtWidgets.QWidget):
    editRequested = QtCore.Signal(dict)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("QuantQualityPanel")
        self.setAccessibleName("Quantisation quality: perplexity and stored bits per weight format")
        self.curve = quality_curve()
        c = self.curve

        self.quality_widget = pg.PlotWidget(background=theme.THEMES[theme.current_theme()]["plot_bg"])
        self.quality_widget.setAccessibleName("Perplexity rise against bits per weight chart")
        self.quality_widget.setAccessibleDescription(
            "Points: published perplexity rise over fp16 (%, log scale) against bits per weight: circles, each "
            "llama.cpp format of Llama 2 70B (the highlighted step is the cliff); triangles, GPTQ and AWQ at group "
            "128 on Llama-3-8B (Huang et al. 2024).")
        self.qplot: pg.PlotItem = self.quality_widget.getPlotItem()
        pw.style_plot(self.qplot, f"Published perplexity ({c.model}; ▲ Llama-3-8B)", left="ppl rise",
                      bottom="bits per weight of the whole file")   # llama.cpp's mixes keep some tensors wider
        pw.freeze_view(self.qplot)
        self.qplot.showGrid(x=True, y=True, alpha=0.2)
        self.qplot.getAxis("left").setTicks([[(float(e), f"{10.0 ** e:g}%") for e in (-1, 1, 3)],
                                             [(float(e), f"{10.0 ** e:g}%") for e in (0, 2)]])
        x = np.array(c.bits[1:])   # fp16 (16 bits, 0%) is the reference, stated in the caption
        y = log_rise(c.delta_pct[1:])
        self.line = pg.PlotDataItem(x, y, pen=pg.mkPen(QUIET, width=2))
        self.qplot.addItem(self.line)
        k = c.cliff
        if k is not None:
            cx, cy = np.array(c.bits[k - 1:]), log_rise(c.delta_pct[k - 1:])
            self.cliff_line = pg.PlotDataItem(cx, cy, pen=pg.mkPen(HOT, width=4))
            self.qplot.addItem(self.cliff_line)
        self.points = pg.ScatterPlotItem(x, y, size=10, brush=pg.mkBrush(STORAGE), pen=pg.mkPen(STORAGE))
        self.qplot.addItem(self.points)
        self.low_bit = [p for p in low_bit_points() if log_rise([p.delta_pct])[0] <= LOG_TOP]
        same = {}   # rows with the same bits and perplexity share one marker and one label ("GPTQ/AWQ 3-bit")
        for p in self.low_bit:
            same.setdefault((p.stored_bits, p.perplexity), []).append(p.method)
        hx = np.array([p.stored_bits for p in self.low_bit])
        hy = log_rise([p.delta_pct for p in self.low_bit])
        self.low_bit_points = pg.ScatterPlotItem(hx, hy, size=12, symbol="t1", brush=pg.mkBrush(LOW_BIT),
                                                 pen=pg.mkPen(LOW_BIT))
        self.qplot.addItem(self.low_bit_points)
        self.qplot.setXRange(float(min(x.min(), hx.min())) - 0.4, float(x.max()) + 0.8, padding=0)
        self.qplot.setYRange(-1.2, LOG_TOP + 0.3, padding=0)
        self.qlabels = PointLabels(self.qplot, len(x) + len(hx), steps=0)   # beside its point or in the hover
        order = sorted(range(len(x)), key=lambda i: -y[i])
        rises = np.array(c.delta_pct[1:])
        self.qlabels.set([(float(x[i]), float(y[i]), f"{c.points[i + 1].format} +{rises[i]:.2f}%",
                           k is not None and i + 1 >= k) for i in order]
                         + [(float(hx[j]), float(hy[j]), f"{'/'.join(same[(p.stored_bits, p.perplexity)])} {p.bits}-bit "
                             f"+{p.delta_pct:,.0f}%", False) for j, p in enumerate(self.low_bit)
                            if same[(p.stored_bits, p.perplexity)][0] == p.method],
                         lines=[tuple(zip(x, y, strict=True))])
        self.qhover = pw.HoverReadout(self.qplot, self.quality_hover)
        pw.LeaveFilter(self.quality_widget, self.qhover.leave)

        self.bits_widget = pg.PlotWidget(background=theme.THEMES[theme.current_theme()]["plot_bg"])
        self.bits_widget.setAccessibleName("Effective bits per weight of each stored format chart")
        self.bits_widget.setAccessibleDescription("Horizontal bars: effective bits per weight as stored; the "
                                                  "code bits are the bar's inner tick. Click a bar to use it.")
        self.bplot: pg.PlotItem = self.bits_widget.getPlotItem()
        pw.style_plot(self.bplot, storage_title(), bottom="bits per weight of the format")   # its own finding
        pw.freeze_view(self.bplot)
        formats = WEIGHT_FORMATS_STORED
        ys = np.arange(len(formats), dtype=float)[::-1]
        eff = np.array([f.effective_bits for f in formats])
        brushes = [pg.mkBrush(HOT if f.key in SEED_PAIR else STORAGE) for f in formats]
        self.bars = pg.BarGraphItem(x0=np.zeros_like(eff), y=ys, height=0.7, width=eff, brushes=brushes,
                                    pen=pg.mkPen(None))
        self.bplot.addItem(self.bars)
        code = np.array([f.code_bits for f in formats])
        self.code_ticks = pg.ScatterPlotItem(code, ys, symbol="|", size=18, pen=pg.mkPen(theme.plot_text_color(),
                                                                                           width=2))
        self.bplot.addItem(self.code_ticks)
        self.bplot.getAxis("left").setTicks([[(float(yy), short_name(f)) for yy, f in zip(ys, formats, strict=True)], []])
        self.value_labels = []
        for yy, f in zip(ys, formats, strict=True):
            label = pw.label_item(bits_text(f.effective_bits), anchor=(0, 0.5), bold=f.key in SEED_PAIR)
            label.setPos(f.effective_bits + 0.1, yy)
            self.bplot.addItem(label, ignoreBounds=True)
            self.value_labels.append(label)
        self.bplot.setXRange(0, float(eff.max()) * 1.45, padding=0)
        self.bplot.setYRange(-0.7, len(formats) - 0.3, padding=0)
        self.current_format = ""
        self.bplot.getViewBox().sigResized.connect(self.show_value_labels)
        self.bhover = pw.HoverReadout(self.bplot, self.bits_hover)
        pw.LeaveFilter(self.bits_widget, self.bhover.leave)
        self.bits_widget.scene().sigMouseClicked.connect(self._clicked)
        self._ys = ys

        self.caption = QtWidgets.QLabel(
            f"Circles: llama.cpp quantize README ({c.model}); triangles: Huang et al. 2024, Llama-3-8B at group 128"
            f"{off_scale_text()}. Cliff: a step's share of the perplexity rise exceeds its share of the storage "
            "saved.")   # Kurtic et al. 2024's finding is in the hover: the caption leaves the stacked chart its room
        self.caption.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.caption.setToolTip(
            f"{c.model}: fp16 {c.points[0].size_gib:g} GiB, perplexity {c.points[0].perplexity:g}. The K-quant "
            "files are llama.cpp's mixes (some tensors kept wider), so their bits per weight exceed the pure "
            "format's. Kurtic et al. 2024 (Llama 3.1, over 500,000 evaluations): FP8 effectively lossless, tuned "
            "INT8 1–3% lower accuracy, INT4 weight-only rivals 8-bit.")
        self.caption.setObjectName("QuantQualityCaption")
        self.caption.setWordWrap(True)
        self.caption.setFont(pw.font(11))
        self.caption.setAccessibleName("Quality chart sources")

        self.title = QtWidgets.QLabel(f"{quality_title(c)}.")   # the storage finding titles the bars
        self.title.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.title.setObjectName("QuantQualityTitle")
        self.title.setWordWrap(True)
        self.title.setFont(pw.font(14, bold=True))
        self.title.setAccessibleName("Quantisation quality finding")
        self.plots = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        self.plots.addWidget(self.quality_widget, 3)
        self.plots.addWidget(self.bits_widget, 2)
        frame_panel(self, None, self.title, self.plots, self.caption)

    def resizeEvent(self, event):  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if restack(self, self.plots):
            stacked = self.plots.direction() == QtWidgets.QBoxLayout.Direction.TopToBottom
            self.plots.setStretch(0, 1 if stacked else 3)   # stacked: the thirteen bars get the taller share,
            self.plots.setStretch(1, 2)
            self.quality_widget.setMinimumHeight(QUALITY_MIN_STACKED_PX if stacked else 0)   # its points a plot

    def update_results(self, results: Results) -> None:
        """The published points do not depend on the scenario; the current weight format's bar is bold."""
        current = results.scenario.weight_dtype
        self.current_format = current
        for label, f in zip(self.value_labels, WEIGHT_FORMATS_STORED, strict=True):
            label.setText(bits_text(f.effective_bits) + ("  ← current" if f.key == current else ""))
        self.show_value_labels()

    def show_value_labels(self, *_) -> None:
        """Each bar's value beside it when the rows are tall enough for a line of text; on a short dock the
        seed pair's and the current format's first, then every row that keeps a free line from those shown
        (the hover names every bar's bits)."""
        vb = self.bplot.getViewBox()
        (_y0, _y1) = vb.viewRange()[1]
        pitch = vb.height() / max(_y1 - _y0, 1e-9)
        if pitch <= 0:
            return
        line = QtGui.QFontMetricsF(self.value_labels[0].textItem.font()).height()
        gap = max(1, math.ceil(line / pitch))   # rows a label needs between itself and the next shown
        rows = range(len(WEIGHT_FORMATS_STORED))
        first = [i for i in rows if WEIGHT_FORMATS_STORED[i].key in (*SEED_PAIR, self.current_format)]
        shown: list[int] = []
        for i in first + [i for i in rows if i not in first]:
            if all(abs(i - j) >= gap for j in shown):
                shown.append(i)
        for i, label in enumerate(self.value_labels):
            label.setVisible(i in shown)

    def quality_hover(self, x: float, y: float) -> str:
        c = self.curve
        near = [abs(b - x) + abs(d - y) for b, d in zip(c.bits[1:], log_rise(c.delta_pct[1:]), strict=True)]
        low = [abs(p.stored_bits - x) + abs(d - y) for p, d in
               zip(self.low_bit, log_rise([p.delta_pct for p in self.low_bit]), strict=True)]
        if low and min(low) < min(near):
            p = self.low_bit[int(np.argmin(low))]
            return pw.hover_html([(f"{p.method} {p.bits}-bit, group {p.group} ({p.model})", True),
                                  (f"{p.stored_bits:.3f} bits per weight as stored (fp16 scale + {p.bits}-bit zero "
                                   f"per group); WikiText2 perplexity {p.perplexity:g} vs {p.fp16_perplexity:g} fp16, "
                                   f"+{p.delta_pct:,.1f}%", False),
                                  (f"source: {p.source} (LLaMA3-8B post-training quantization table)", False)])
        i = int(np.argmin(near))
        p = c.points[i + 1]
        return pw.hover_html([(f"{p.format} ({p.model})", True),
                              (f"{p.size_gib:g} GiB = {c.bits[i + 1]:.2f} bits per weight; perplexity "
                               f"{p.perplexity:g}, +{c.delta_pct[i + 1]:.2f}% over fp16", False),
                              ("step ratio " + f"{c.step_ratio[i]:.2f} (quality share / storage share)", False),
                              (f"source: {p.source}", False)])

    def _format_at(self, y: float) -> int | None:
        i = int(round(len(WEIGHT_FORMATS_STORED) - 1 - y))
        return i if 0 <= i < len(WEIGHT_FORMATS_STORED) else None

    def bits_hover(self, _x: float, y: float) -> str:
        i = self._format_at(y)
        if i is None:
            return ""
        f = WEIGHT_FORMATS_STORED[i]
        return pw.hover_html([(f.name, True), (f"{f.effective_bits:g} bits per weight = {f.code_bits:g} + "
                                               f"{f.overhead_bits:g} / {f.block}", False), (f.layout, False),
                              (f"source: {f.source}; click to use it as the weight format", False)])

    def _clicked(self, event) -> None:
        point = pw.clicked_view_point(self.bplot, event)
        if point is not None and (i := self._format_at(point.y())) is not None:
            self.editRequested.emit({"weight_dtype": WEIGHT_FORMATS_STORED[i].key})
