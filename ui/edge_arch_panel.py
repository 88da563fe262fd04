"""Edge architectures: how much faster a gated short-convolution hybrid (LFM2-1.2B: 10 conv + 6 attention
blocks) and an all-conv stack decode than attention (Llama-3.2-1B, same width and depth) as the context grows,
on an edge device (model/views/edge_arch.py), with the published 2x (Liquid AI) and the synthesis' claimed 2.5x as cited
lines; beside it the per-sequence state: attention's KV cache grows with the context, the conv state does not.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.base.dtypes import WEIGHT_FORMATS
from trinity_desktop.model.inputs.edge_architectures import block_stacks, speedup_points
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.edge_arch import (
    DEFAULT_DEVICE,
    HYBRID,
    HYBRIDS,
    context_reaching,
    edge_arch_curves,
)
from trinity_desktop.model.views.split import edge_devices
from trinity_desktop.ui import named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.chart_layout import frame_panel, restack
from trinity_desktop.ui.edge_findings import speedup_chart_title, state_chart_title
from trinity_desktop.ui.wrap_layout import control_row

SEED_SPEEDUP = 2.5   # the seed: "2.5x better cost ratios than attention on CPUs"
COLORS = {"attention": theme.FALLBACK_COLOR, "hybrid": theme.RESOURCE_COLORS["compute"],
          "conv": theme.RESOURCE_COLORS["bandwidth"]}
FORMATS = ("bf16", "int8", "q8_0", "q4_k", "q4_0", "q2_k")


def _k(tokens: float) -> str:
    return f"{tokens / 1024:.0f}k" if tokens >= 1024 else f"{tokens:.0f}"


def line_name(curve) -> str:
    """The short name a line is labelled with: the model, or what a hypothetical stack is made of."""
    if curve.role == "conv":
        return "all short-conv"
    if "hypothetical" in curve.name:
        return "all attention"
    return curve.name.split(" (")[0]


def edge_arch_title(curves) -> str:
    """The finding: the hybrid's speed-up at 4k tokens and where it reaches the published and claimed ratios."""
    hybrid = curves.by_role("hybrid")
    at4k = float(np.interp(np.log(4096), np.log(curves.context), hybrid.speedup))
    two = context_reaching(curves, 2.0)
    seed = context_reaching(curves, SEED_SPEEDUP)
    end = _k(curves.context[-1])
    reach = f"2× from {_k(two)}" if two else f"not 2× by {end}"
    seed_text = f"{SEED_SPEEDUP:g}× from {_k(seed)}" if seed else f"not {SEED_SPEEDUP:g}× by {end}"
    return f"{hybrid.name} decodes {at4k:.2f}× as fast as attention at 4k tokens; {reach}, {seed_text}"


class EdgeArchPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("EdgeArchPanel")
        self.setAccessibleName("Edge architectures: conv and hybrid decode speed-up over attention")
        self.curves = None
        self.efficiency = None
        devices = edge_devices()
        self.device_combo = named_combo.labelled_combo("Device", "Edge device the stacks decode on",
                                              [(d.name, k) for k, d in devices.items()])
        self.device_combo.setCurrentIndex(list(devices).index(DEFAULT_DEVICE))
        self.format_combo = named_combo.labelled_combo("Weights", "Weight format as stored (effective bits per weight)",
                                              [(f.upper(), f) for f in FORMATS if f in WEIGHT_FORMATS], min_chars=6)
        self.format_combo.setCurrentIndex(FORMATS.index("q4_k"))
        stacks = block_stacks()
        self.hybrid_combo = named_combo.labelled_combo("Hybrid", "LFM2 model (10 gated short-conv + 6 attention blocks)",
                                              [(stacks[k].name, k) for k in HYBRIDS], min_chars=9)
        self.hybrid_combo.setCurrentIndex(HYBRIDS.index(HYBRID))
        for combo in (self.device_combo, self.format_combo, self.hybrid_combo):
            combo.currentIndexChanged.connect(lambda _i: self.refresh())
        controls = control_row((("Hybrid", self.hybrid_combo), ("Device", self.device_combo),
                                ("Weights", self.format_combo)), pw.font())

        bg = theme.THEMES[theme.current_theme()]["plot_bg"]
        self.speed_widget = pg.PlotWidget(background=bg, axisItems={"bottom": pw.LogSIAxis("bottom")})
        self.speed_widget.setAccessibleName("Decode speed-up over attention against context chart")
        self.speed_widget.setAccessibleDescription("Lines: attention time / stack time per decoded token against "
                                                   "the tokens in context (log axis); dashed: published 2× and "
                                                   "the claimed 2.5×.")
        self.splot: pg.PlotItem = self.speed_widget.getPlotItem()
        pw.style_plot(self.splot, "Decode speed-up over attention", left="speed-up (×)", bottom="tokens in context")
        self.splot.setLogMode(x=True, y=True)
        self.splot.showAxis("right")
        self.splot.getAxis("right").setStyle(tickFont=pw.font(), tickLength=0)
        pw.freeze_view(self.splot)
        self.splot.showGrid(x=True, y=True, alpha=0.2)
        self.lines = {key: pg.PlotDataItem([], [], pen=pg.mkPen(color, width=4 if key == "hybrid" else 2))
                      for key, color in COLORS.items()}
        for line in self.lines.values():
            self.splot.addItem(line)
        fg = theme.plot_text_color()
        self.cited = [(p.value, f"{p.label.split(':')[0]}: {p.value:g}× published", p) for p in speedup_points()]
        self.cited = [(v, "LFM2: published" if p else t, p) for v, t, p in self.cited]
        self.cited.append((SEED_SPEEDUP, "claimed: by the synthesis", None))
        for value, _text, _p in self.cited:
            self.splot.addItem(pg.InfiniteLine(pos=float(np.log10(value)), angle=0, pen=pg.mkPen(fg, width=1.5,
                                                                                style=QtCore.Qt.PenStyle.DashLine)))
        self.shover = pw.HoverReadout(self.splot, self.speed_hover)
        pw.LeaveFilter(self.speed_widget, self.shover.leave)

        self.state_widget = pg.PlotWidget(background=bg, axisItems={"bottom": pw.LogSIAxis("bottom"),
                                                                    "left": pw.LogSIAxis("left")})
        self.state_widget.setAccessibleName("State memory per sequence against context chart")
        self.state_widget.setAccessibleDescription("Lines: KV cache plus conv state per sequence in bytes "
                                                   "against the context, log-log.")
        self.tplot: pg.PlotItem = self.state_widget.getPlotItem()
        pw.style_plot(self.tplot, "State per sequence", left="bytes", bottom="tokens in context")
        self.tplot.setLogMode(x=True, y=True)
        pw.freeze_view(self.tplot)
        self.tplot.showGrid(x=True, y=True, alpha=0.2)
        self.state_lines = {key: pg.PlotDataItem([], [], pen=pg.mkPen(color, width=4 if key == "hybrid" else 2))
                            for key, color in COLORS.items()}
        for line in self.state_lines.values():
            self.tplot.addItem(line)

        self.caption = QtWidgets.QLabel("")
        self.caption.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.caption.setObjectName("EdgeArchCaption")
        self.caption.setWordWrap(True)
        self.caption.setFont(pw.font(11))
        self.caption.setAccessibleName("Edge architecture sources")

        self.title = QtWidgets.QLabel("")
        self.title.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.title.setObjectName("EdgeArchTitle")
        self.title.setWordWrap(True)
        self.title.setFont(pw.font(14, bold=True))
        self.title.setAccessibleName("Edge architecture finding")
        self.plots = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        self.plots.addWidget(self.speed_widget, 3)
        self.plots.addWidget(self.state_widget, 2)
        frame_panel(self, controls, self.title, self.plots, self.caption)
        # the lines' key, under both charts: the three lines start together at 1x and the state chart's run a
        # few pixels apart, so names on the charts sat nearer another line (at 1366 the baseline's under the
        # hybrid's) and moved with every resize
        self.key = QtWidgets.QLabel("")
        self.key.setObjectName("EdgeArchKey")
        self.key.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.key.setWordWrap(True)
        self.key.setFont(pw.font())
        self.key.setAccessibleName("Line key")
        self.layout().insertWidget(self.layout().indexOf(self.caption), self.key)
        self.refresh()

    def resizeEvent(self, event):  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if restack(self, self.plots):   # stacked, 4:3: the bytes chart (a two-line title) had 80 px of plot at 3:2
            stacked = self.plots.direction() == QtWidgets.QBoxLayout.Direction.TopToBottom
            self.plots.setStretch(0, 4 if stacked else 3)
            self.plots.setStretch(1, 3 if stacked else 2)

    def update_results(self, results: Results) -> None:
        """The scenario's efficiencies apply to the device's peak and bandwidth."""
        if results.scenario.efficiency != self.efficiency:
            self.efficiency = results.scenario.efficiency
            self.refresh()


    def refresh(self) -> None:
        self.curves = c = edge_arch_curves(self.device_combo.currentData(), self.format_combo.currentData(),
                                           efficiency=self.efficiency, hybrid=self.hybrid_combo.currentData())
        lx = np.log10(c.context)
        for curve in c.curves:
            self.lines[curve.role].setData(c.context, curve.speedup)
            self.state_lines[curve.role].setData(c.context, curve.state_bytes)
        top = max(float(max(cur.speedup.max() for cur in c.curves)), SEED_SPEEDUP) * 1.15
        self.splot.setXRange(float(lx[0]), float(lx[-1]), padding=0.02)
        self.splot.setYRange(np.log10(0.6), float(np.log10(top)), padding=0)   # the 1x baseline off the bottom axis
        ticks = [(float(np.log10(v)), f"{v:g}") for v in (1, 1.5, 2, 4, 8, 16, 32) if v < top]
        self.splot.getAxis("left").setTicks([sorted(ticks), []])
        # the cited ratios are named on the right axis, next to their dashed lines
        self.splot.getAxis("right").setTicks([[(float(np.log10(v)), f"{text.split(':')[0]} {v:g}×")
                                               for v, text, _p in self.cited], []])
        ly = [np.log10(cur.state_bytes) for cur in c.curves]
        self.tplot.setXRange(float(lx[0]), float(lx[-1]), padding=0.02)
        self.tplot.setYRange(float(min(y.min() for y in ly)) - 0.3, float(max(y.max() for y in ly)) + 0.3, padding=0)
        entries = [pw.key_entry("━", line_name(cur), COLORS[cur.role]) for cur in c.curves]
        self.key.setText(pw.key_line([f"<b>{e}</b>" if cur.role == "hybrid" else e   # the highlighted line, bold
                                      for e, cur in zip(entries, c.curves, strict=True)]))
        name = line_name(c.by_role("hybrid"))
        pw.set_title(self.splot, pw.html_escape(speedup_chart_title(c, name)))   # each chart states its finding
        pw.set_title(self.tplot, pw.html_escape(state_chart_title(c, name)))
        device = edge_devices()[c.device].name.split(" (")[0]
        self.title.setText(f"{edge_arch_title(c)}.")   # the state chart's title tells how the state grows
        attention = c.by_role("attention").name
        self.caption.setText(   # short (the sources in the hover): the charts keep their height
            f"Batch-1 decode on {device}, {c.weight_dtype.upper()} weights: roofline time per token of each block's weight, "
            f"state and KV reads; {c.by_role('hybrid').name}: 10 short-conv + 6 GQA blocks. Dashed: Liquid AI's 2× "
            "and the synthesis' 2.5×.")
        self.caption.setToolTip(
            f"Attention: {attention}; {c.by_role('hybrid').name}: 10 gated short-conv + 6 GQA blocks (Transformers "
            "LFM2 docs); all short-conv: hypothetical. Dashed: Liquid AI's 2× (context not stated) and the synthesis' "
            "claimed 2.5×.")

    def speed_hover(self, x: float, _y: float) -> str:
        c = self.curves
        i = int(np.argmin(np.abs(np.log10(c.context) - x)))
        lines = [(f"{c.context[i]:.0f} tokens in context", True)]
        for curve in c.curves:
            lines.append((f"{curve.name}: {curve.time_s[i] * 1e3:.2f} ms/token, {curve.speedup[i]:.2f}×; "
                          f"{curve.bytes_read[i] / 1e6:.0f} MB read, {curve.flops[i] / 1e9:.2f} GFLOP, "
                          f"state {curve.state_bytes[i] / 1e6:.1f} MB", False))
        return pw.hover_html(lines)
