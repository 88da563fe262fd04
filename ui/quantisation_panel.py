"""Quantisation panel: what narrower weights save (storage, bytes per token) and what they buy (decode
tokens/s against a latency target) for a small LLM on an edge device; beside it, what is assumed about quality
(not modelled), stated as assumptions next to the paper they lean on (GPTQ, reference "gptq"). On a narrow
panel the two charts stack; every bar value is placed by the shared placer (ui/label_layout.py) above or
inside its bar, and the dashed lines are keyed under the charts.

All numbers come from `trinity_desktop.model.views.on_device` (the core decode roofline).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.on_device import BITS, DEFAULT_TARGET_S, SMALL_MODELS, on_device_table
from trinity_desktop.model.views.split import edge_devices
from trinity_desktop.ui import findings, named_combo, theme
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.curve_obstacles import line_boxes
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds
from trinity_desktop.ui.wrap_layout import control_row

STORAGE_COLOR = theme.RESOURCE_COLORS["memory"]
RATE_COLOR = theme.RESOURCE_COLORS["bandwidth"]
MISS_COLOR = theme.MUTED_COLOR   # bars that miss the latency target (also marked ✗ in text)
CORE_DTYPE = {16: "bf16", 8: "int8", 4: "int4"}  # widths the Scenario can take as weight_dtype
STACK_BELOW_PX = 700   # a panel narrower than this stacks the two charts
NOTES_FROM_PX = 900    # ... and shows the quality notes in full only when at least this tall
MIN_CHART_PX = 200     # a chart never shrinks below this; the text under it gives way
QUALITY_ASSUMPTIONS = (
    ("4-bit", "assumed to keep output quality, structured output (JSON) included. GPTQ (Frantar et al. 2023) "
              "quantises 175B-parameter GPT models to 3–4 bits with negligible accuracy loss."),
    ("2-bit", "assumed to degrade output, structured formats first; small models lose more than the large "
              "ones GPTQ reports on."),
)


class QuantisationPanel(QtWidgets.QWidget):
    """Storage and decode speed at 16/8/4/3/2-bit weights for a small LLM on an edge device."""

    editRequested = QtCore.Signal(dict)  # {"weight_dtype": ...} when a bar with a core format is clicked
    focusRequested = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("QuantisationPanel")
        self.setAccessibleName("Quantisation: storage and decode speed per weight width")
        self._table: dict | None = None
        self._updating = False

        models = model_presets()
        self.model_combo = self._combo("Model", "Small LLM to quantise (sub-3B presets)",
                                       [(models[k].name, k) for k in SMALL_MODELS if k in models])
        self.device_combo = self._combo("Device", "Edge device that runs the decode",
                                        [(d.name, k) for k, d in edge_devices().items()])
        self.target_spin = QtWidgets.QSpinBox()
        self.target_spin.setRange(5, 2000)
        self.target_spin.setSingleStep(10)
        self.target_spin.setSuffix(" ms/token")
        self.target_spin.setValue(int(round(DEFAULT_TARGET_S * 1e3)))
        self.target_spin.setFont(pw.font())
        self.target_spin.setAccessibleName("Latency target")
        self.target_spin.setToolTip("Per-token latency target for decode (assumed interactive edge "
                                    "requirement: under 100 ms per token)")
        controls = control_row((("Model", self.model_combo), ("Device", self.device_combo),
                                ("Target", self.target_spin)), pw.font())

        self.storage_widget = pg.PlotWidget(background=pw.plot_background())
        self.rate_widget = pg.PlotWidget(background=pw.plot_background())
        self.storage_widget.setAccessibleName("Weight storage per bit width chart")
        self.storage_widget.setAccessibleDescription("Bars: weight storage in decimal GB at each weight width, "
                                                     "with the saving against 16-bit. Hover for details.")
        self.rate_widget.setAccessibleName("Decode tokens per second per bit width chart")
        self.rate_widget.setAccessibleDescription("Bars: batch-1 decode tokens/s at each weight width; the "
                                                  "dashed line is the latency target. Hover for details.")
        for widget in (self.storage_widget, self.rate_widget):
            widget.setMinimumHeight(MIN_CHART_PX)
        self.storage_plot: pg.PlotItem = self.storage_widget.getPlotItem()
        self.rate_plot: pg.PlotItem = self.rate_widget.getPlotItem()
        for plot in (self.storage_plot, self.rate_plot):
            pw.freeze_view(plot)
            plot.showGrid(x=False, y=True, alpha=0.25)
            plot.getAxis("bottom").setTicks([[(float(i), f"{b}-bit") for i, b in enumerate(BITS)], []])
        pw.style_plot(self.storage_plot, left="weights (GB)", bottom="weight width")
        pw.style_plot(self.rate_plot, left="tokens/s", bottom="weight width")
        x = np.arange(len(BITS), dtype=float)
        self.storage_bars = pg.BarGraphItem(x=x, height=np.zeros_like(x), width=0.65, brush=STORAGE_COLOR)
        self.rate_bars = pg.BarGraphItem(x=x, height=np.zeros_like(x), width=0.65, brush=RATE_COLOR)
        self.storage_plot.addItem(self.storage_bars)
        self.rate_plot.addItem(self.rate_bars)
        dash = QtCore.Qt.PenStyle.DashLine
        self.capacity_line = pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen(theme.plot_text_color(), width=2,
                                                                            style=dash))
        self.storage_plot.addItem(self.capacity_line, ignoreBounds=True)
        self.target_line = pg.InfiniteLine(pos=0.0, angle=0, pen=pg.mkPen(theme.plot_text_color(), width=2,
                                                                          style=dash))
        self.rate_plot.addItem(self.target_line, ignoreBounds=True)
        # the dashed lines are keyed under the charts, outside the data
        self.lines_label = QtWidgets.QLabel("")
        self.lines_label.setObjectName("QuantisationLines")
        self.lines_label.setFont(pw.font())
        self.lines_label.setWordWrap(True)
        self.lines_label.setAccessibleName("What the dashed lines mark")
        self.storage_labels = [self._bar_label(self.storage_plot) for _ in BITS]
        self.rate_labels = [self._bar_label(self.rate_plot) for _ in BITS]
        self.storage_hover = pw.HoverReadout(self.storage_plot, lambda x, y: self.hover_text_at("storage", x, y))
        self.rate_hover = pw.HoverReadout(self.rate_plot, lambda x, y: self.hover_text_at("rate", x, y))
        pw.LeaveFilter(self.storage_widget, self.storage_hover.leave)
        pw.LeaveFilter(self.rate_widget, self.rate_hover.leave)
        self.rate_widget.scene().sigMouseClicked.connect(self._clicked)
        for plot in (self.storage_plot, self.rate_plot):
            plot.getViewBox().sigResized.connect(self._place_labels)

        self.notes_box = QtWidgets.QGroupBox("Quality: stated assumptions — not model output")
        self.notes_box.setFont(pw.font(bold=True))
        self.notes_box.setAccessibleName("Quality assumptions")
        self.notes_box.setToolTip("Quality is not modelled. These are stated assumptions, with the paper they "
                                  "lean on; they are not results of this application.")
        self.notes_label = QtWidgets.QLabel(self._notes_html())
        self.notes_label.setObjectName("QuantisationCitedNotes")
        self.notes_label.setFont(pw.font(11))
        self.notes_label.setWordWrap(True)
        self.notes_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.notes_label.setAccessibleName("Quality assumptions text")
        self.notes_label.setMinimumWidth(220)
        box_layout = QtWidgets.QVBoxLayout(self.notes_box)
        box_layout.addWidget(self.notes_label)
        self.notes_box.setStyleSheet(f"QGroupBox {{ border: 2px dashed {theme.FALLBACK_COLOR}; margin-top: 14px; "
                                     "padding: 6px; }"
                                     "QGroupBox::title { subcontrol-origin: margin; left: 8px; }")

        self.summary_label = QtWidgets.QLabel("")
        self.summary_label.setObjectName("QuantisationSummary")
        self.summary_label.setFont(pw.font(12))
        self.summary_label.setWordWrap(True)
        self.summary_label.setAccessibleName("Quantisation summary")
        self.summary_label.setToolTip("Model output: bytes read per token and speed-up against 16-bit weights.")

        self.plots_layout = plots = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        plots.addWidget(self.storage_widget, 1)
        plots.addWidget(self.rate_widget, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(controls)
        layout.addLayout(plots, 1)
        layout.addWidget(self.lines_label)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.notes_box)

        self.model_combo.currentIndexChanged.connect(self._recompute)
        self.device_combo.currentIndexChanged.connect(self._recompute)
        self.target_spin.valueChanged.connect(self._recompute)
        self._updating = True
        self.device_combo.setCurrentIndex(max(self.device_combo.findData("phone-a17-pro"), 0))
        self.model_combo.setCurrentIndex(max(self.model_combo.findData("llama-3.2-3b"), 0))
        self._updating = False
        self._recompute()

    # ------------------------------------------------------------------ widgets
    def _combo(self, name: str, tip: str, items) -> QtWidgets.QComboBox:
        return named_combo.labelled_combo(name, tip, items, 14)

    def _bar_label(self, plot: pg.PlotItem) -> pg.TextItem:
        item = pw.label_item("", size=11)
        plot.addItem(item, ignoreBounds=True)
        return item

    @staticmethod
    def _headroom(plot: pg.PlotItem, top: float) -> float:
        """The y range's top: the tallest bar (or line) plus room for a one-line label above it."""
        label_px = QtGui.QFontMetrics(pw.font()).lineSpacing() + 10
        height = max(plot.getViewBox().height(), 3.0 * label_px)
        return max(top, 1e-9) / (1.0 - label_px / height)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """Stack the charts on a narrow panel so each keeps the width its bar labels need."""
        direction = (QtWidgets.QBoxLayout.Direction.TopToBottom if event.size().width() < STACK_BELOW_PX
                     else QtWidgets.QBoxLayout.Direction.LeftToRight)
        tall = event.size().height() >= NOTES_FROM_PX
        # A low panel keeps the charts; the notes stay in full in the box's tooltip.
        self.notes_label.setText(self._notes_html() if tall else
                                 "<i>Quality is not modelled: hover here for what practice reports.</i>")
        if self.plots_layout.direction() != direction:
            self.plots_layout.setDirection(direction)
        super().resizeEvent(event)
        QtCore.QTimer.singleShot(0, self._recompute)

    def _place_labels(self, *_) -> None:
        """Each bar's value on one line above it, or inside its top when the bar is taller than the room above
        (by the shared placer); the charts keep a line of headroom, so every value has a place."""
        if self._table is None:
            return
        for plot, bars, labels, line in ((self.storage_plot, self.storage_bars, self.storage_labels,
                                          self.capacity_line),
                                         (self.rate_plot, self.rate_bars, self.rate_labels, self.target_line)):
            vb = plot.getViewBox()
            heights = bars.opts["height"]
            bounds = ll.view_bounds(vb)
            line_y = ll.scene_point(vb, 0.0, float(line.value()))[1]
            requests = []
            for i, item in enumerate(labels):
                w, h = ll.text_size(item)
                cx, top = ll.scene_point(vb, float(i), float(heights[i]))
                # above the bar; where the dashed line runs there, just above or below the line; inside the top
                spots = ((cx - w / 2, top - h - 1), (cx - w / 2, line_y - h - 1), (cx - w / 2, line_y + 2),
                         (cx - w / 2, top + 2))
                requests.append(ll.Label(str(i), w, h, spots))
            boxes = ll.place(requests, bounds, line_boxes([line], bounds))   # never on the dashed line
            for i, item in enumerate(labels):
                ll.put(item, vb, boxes.get(str(i)))

    @staticmethod
    def _notes_html() -> str:
        items = "".join(f"<p><b>{pw.html_escape(w)}:</b> {pw.html_escape(t)}</p>" for w, t in QUALITY_ASSUMPTIONS)
        return (f"{items}<p><i>Assumptions, not computed here: this app models bytes and time, not accuracy."
                "</i></p><p><i>Storage in the charts is the nominal weight arithmetic: 50% less from 4 to 2 "
                "bits, 87.5% from 16 to 2 bits (no scales or outliers).</i></p>")

    # ------------------------------------------------------------------ state
    def target_s(self) -> float:
        return self.target_spin.value() / 1e3

    def _recompute(self, *_):
        if self._updating:
            return
        t = on_device_table(self.model_combo.currentData(), self.device_combo.currentData(), BITS,
                            target_s=self.target_s())
        self._table = t
        x = np.arange(len(BITS), dtype=float)
        gb = t["weight_bytes"] / 1e9
        cap_gb = t["capacity"] / 1e9
        show_cap = cap_gb <= 2.0 * gb.max()
        s_max = self._headroom(self.storage_plot, max(gb.max(), cap_gb if show_cap else 0.0))
        self.storage_bars.setOpts(x=x, height=gb, width=0.65)
        self.storage_plot.setYRange(0, s_max, padding=0)
        self.storage_plot.setXRange(-0.6, len(BITS) - 0.4, padding=0)
        for i, item in enumerate(self.storage_labels):
            item.setText(f"{gb[i]:.2f}")   # GB: the axis carries the unit
        self.capacity_line.setVisible(bool(show_cap))
        self.capacity_line.setPos(cap_gb)

        tps = t["tokens_per_s"]
        target_rate = 1.0 / self.target_s()
        r_max = self._headroom(self.rate_plot, max(tps.max(), target_rate))
        brushes = [pg.mkBrush(RATE_COLOR if ok else MISS_COLOR) for ok in t["meets_target"]]
        self.rate_bars.setOpts(x=x, height=tps, width=0.65, brushes=brushes)
        self.rate_plot.setYRange(0, r_max, padding=0)
        self.rate_plot.setXRange(-0.6, len(BITS) - 0.4, padding=0)
        for i, item in enumerate(self.rate_labels):
            mark = "✓" if t["meets_target"][i] else "✗"
            item.setText(f"{tps[i]:.3g} {mark}")
        self.target_line.setPos(target_rate)
        cap = f"device memory {cap_gb:.0f} GB" if show_cap else f"device memory {cap_gb:.0f} GB (above the chart)"
        self.lines_label.setText(f"Dashed lines: on the weights chart, {cap}; on the speed chart, the target {target_rate:.3g} tokens/s "
                                 f"({self.target_spin.value()} ms per token). ✓ meets it, ✗ misses it.")
        pw.set_title(self.storage_plot, pw.html_escape(findings.storage_title(BITS, gb, cap_gb)), size="13pt")
        pw.set_title(self.rate_plot, pw.html_escape(findings.speed_title(BITS, tps, t["meets_target"],
                                                                         self.target_spin.value())), size="13pt")

        dev = edge_devices()[self.device_combo.currentData()]
        read = t["bytes_per_token"]
        widths = ", ".join(f"{b}-bit {fmt_bytes(r)}" for b, r in zip(BITS, read, strict=True))
        fits = "" if t["fits"].all() else " ✗ 16-bit weights do not fit the device memory."
        self.summary_label.setText(
            f"Model output: 4-bit decodes {tps[BITS.index(4)] / tps[0]:.2f}× faster than 16-bit on {dev.name} "
            f"(batch 1).{fits}")
        self.summary_label.setToolTip(
            f"Batch 1, 512-token prompt. Bytes read per token: {widths}. Weights only: quantiser scales and "
            "zero-points are not counted.")
        self._place_labels()

    def _clicked(self, event) -> None:
        p = pw.clicked_view_point(self.rate_plot, event, left_only=False)
        if p is None:
            return
        i = int(round(p.x()))
        if 0 <= i < len(BITS) and abs(p.x() - i) <= 0.33 and BITS[i] in CORE_DTYPE:
            self.editRequested.emit({"weight_dtype": CORE_DTYPE[BITS[i]]})

    # ------------------------------------------------------------------ main-window interface
    def update_results(self, results: Results) -> None:
        """Follows the scenario's model when it is one of the small presets; otherwise keeps the choice."""
        key = results.scenario.model.key
        i = self.model_combo.findData(key)
        if i >= 0 and i != self.model_combo.currentIndex():
            self.model_combo.setCurrentIndex(i)

    def set_focus(self, what: str, key: str) -> None:
        if what == "model":
            i = self.model_combo.findData(key)
            if i >= 0:
                self.model_combo.setCurrentIndex(i)

    # ------------------------------------------------------------------ read-outs
    def hover_text_at(self, plot: str, x: float, y: float) -> str:
        t = self._table
        if t is None:
            return ""
        i = int(round(x))
        if not 0 <= i < len(BITS) or abs(x - i) > 0.33 or y < 0:
            return ""
        b = BITS[i]
        if plot == "storage":
            if y > t["weight_bytes"][i] / 1e9 * 1.02:
                return ""
            return (f"{b}-bit weights: {t['weight_bytes'][i] / 1e9:.3g} GB "
                    f"({100 * t['storage_saved'][i]:.1f}% less than 16-bit)\n"
                    f"with KV cache and 10% reserve: {t['memory_total'][i] / 1e9:.3g} GB of "
                    f"{t['capacity'] / 1e9:.0f} GB")
        if plot == "rate":
            if y > t["tokens_per_s"][i] * 1.02:
                return ""
            ok = "meets" if t["meets_target"][i] else "misses"
            return (f"{b}-bit: {t['tokens_per_s'][i]:.3g} tokens/s ({fmt_seconds(t['time_per_token_s'][i])} per "
                    f"token; {ok} the {self.target_spin.value()} ms target)\n"
                    f"reads {fmt_bytes(t['bytes_per_token'][i])} per token "
                    f"({100 * t['bandwidth_saved'][i]:.1f}% less than 16-bit)"
                    + (f"\nclick: set the scenario's weights to {CORE_DTYPE[b]}" if b in CORE_DTYPE else ""))
        raise ValueError(f"plot must be 'storage' or 'rate', not {plot!r}")

    # ------------------------------------------------------------------ accessors
    def storage_gb(self) -> np.ndarray:
        return np.asarray(self.storage_bars.opts["height"], dtype=float)

    def tokens_per_s(self) -> np.ndarray:
        return np.asarray(self.rate_bars.opts["height"], dtype=float)

    def meets_target(self) -> np.ndarray:
        return np.array(self._table["meets_target"])

    def notes_text(self) -> str:
        return self.notes_box.title() + "\n" + self._notes_html()

    def summary_text(self) -> str:
        return self.summary_label.text()

    def set_model(self, key: str) -> None:
        i = self.model_combo.findData(key)
        if i < 0:
            raise KeyError(f"unknown model {key!r}")
        self.model_combo.setCurrentIndex(i)

    def set_device(self, key: str) -> None:
        i = self.device_combo.findData(key)
        if i < 0:
            raise KeyError(f"unknown device {key!r}")
        self.device_combo.setCurrentIndex(i)

    def set_target_ms(self, ms: int) -> None:
        self.target_spin.setValue(int(ms))
