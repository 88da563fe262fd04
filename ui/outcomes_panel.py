"""System outcomes panel: scenario variants side by side, so the bottleneck shift shows at a glance.

Rows are the variants of `trinity_desktop.model.views.variants.compare(current scenario)` (baseline, + one
technique each) and any "current scenario" snapshots the user added. Columns: the binding resource (in its
theme colour), step time stacked by stage, memory per GPU by component against the HBM capacity, and bytes
moved per link (log scale). Items are long-lived: bar items per stage, component and link are created once
per name and updated with setOpts.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.variants import VariantResult, compare, variant_result
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds

LINK_ORDER = ("hbm", "scale-up", "scale-out", "host")
LINK_COLORS = {"hbm": "#56B4E9", "scale-up": "#0072B2", "scale-out": "#CC79A7", "host": "#D55E00"}
LINK_LABELS = {"hbm": "HBM", "scale-up": "scale-up (NVLink)", "scale-out": "scale-out (network)",
               "host": "host link (PCIe)"}
EXTRA_STAGE_COLORS = {"gradient_compression": "#CC79A7", "offload_transfer": "#009E73"}
STAGE_ORDER = ("compute", "communication_exposed", "pipeline_bubble", "optimizer", "gradient_compression",
               "offload_transfer", "GEMMs (weights)", "attention", "attention (KV reads)", "TP communication")
NA_COLOR = "#6E6E6E"
LOG_FLOOR_GB = 1e-3   # bytes below 1 MB per GPU are drawn at the floor of the log axis
MAX_ADDED = 4
TIME_TITLE = {"train": "step time", "prefill": "prefill time", "decode": "time per output token"}


def _stage_label(name: str) -> str:
    return theme.label_for(name, "time")


def _stage_color(name: str) -> str:
    return EXTRA_STAGE_COLORS.get(name) or theme.color_for(name)


class OutcomesPanel(QtWidgets.QWidget):
    """Variants x (binding resource, time by stage, memory by component, bytes per link)."""

    focusRequested = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("OutcomesPanel")
        self.setAccessibleName("System outcomes: scenario variants side by side")
        self._results: Results | None = None
        self._base_key = None
        self._variants: list[VariantResult] = []
        self._added: list[VariantResult] = []
        self._rows: list[VariantResult] = []
        self._time_scale, self._time_unit = 1.0, "s"

        self.add_button = QtWidgets.QPushButton("Add current scenario")
        self.add_button.setFont(pw.font(12))
        self.add_button.setToolTip("Add the scenario now in the editor as a row, to compare it with the variants "
                                   f"(keeps the last {MAX_ADDED})")
        self.add_button.setAccessibleName("Add the current scenario as a variant")
        self.add_button.clicked.connect(self.add_current)
        self.clear_button = QtWidgets.QPushButton("Clear added")
        self.clear_button.setFont(pw.font(12))
        self.clear_button.setToolTip("Remove the scenarios added with 'Add current scenario'")
        self.clear_button.setAccessibleName("Clear the added scenarios")
        self.clear_button.clicked.connect(self.clear_added)
        self.headline = QtWidgets.QLabel("No scenario evaluated yet.")
        self.headline.setFont(pw.font(13, bold=True))
        self.headline.setWordWrap(True)
        self.headline.setAccessibleName("Outcomes summary")
        self.headline.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names are shown as typed, never as HTML
        self.headline.setToolTip("Baseline: no recomputation, ZeRO-1, FlashAttention off, no offload, no "
                                 "compression (training); 16-bit full KV cache (inference). Each row adds one "
                                 "technique to the baseline.")

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.setAccessibleName("Variant comparison charts")
        self.graphics.setAccessibleDescription(
            "One row per variant. Columns: binding resource, time stacked by stage, memory per GPU by component "
            "with the HBM capacity marked, bytes moved per link per GPU on a log scale. Hover for the numbers.")
        self.bind_plot = self.graphics.addPlot(row=0, col=0)
        self.time_plot = self.graphics.addPlot(row=0, col=1)
        self.memory_plot = self.graphics.addPlot(row=0, col=2)
        self.bytes_plot = self.graphics.addPlot(row=0, col=3)
        self.plots = {"binding": self.bind_plot, "time": self.time_plot, "memory": self.memory_plot,
                      "bytes": self.bytes_plot}
        layout_ = self.graphics.ci.layout
        for col, stretch in enumerate((9, 10, 10, 10)):
            layout_.setColumnStretchFactor(col, stretch)
        pw.style_plot(self.bind_plot, "Variant · binding resource", bottom=" ")
        pw.style_plot(self.time_plot, "Time by stage", bottom="time (s)")
        pw.style_plot(self.memory_plot, "Memory per GPU", bottom="GB per GPU (10⁹ B)")
        pw.style_plot(self.bytes_plot, "Bytes per link", bottom="bytes per GPU (log)")
        for plot in self.plots.values():
            pw.freeze_view(plot)
            plot.getViewBox().invertY(True)
            plot.getAxis("left").setStyle(tickLength=0)
        for plot in (self.time_plot, self.memory_plot, self.bytes_plot):
            plot.setYLink(self.bind_plot)
            plot.getAxis("left").setTicks([[]])
            plot.getAxis("left").setWidth(4)
            plot.showGrid(x=True, y=False, alpha=0.25)
        self.bind_plot.getAxis("bottom").setTicks([[]])
        self.bind_plot.getAxis("left").setTicks([[]])
        self.bind_plot.getAxis("left").setWidth(2)
        self.bind_plot.getAxis("left").setPen(pg.mkPen(None))
        self.bind_plot.getAxis("bottom").setPen(pg.mkPen(None))
        self.bind_plot.setXRange(0, 1, padding=0)

        self.bind_bg = pg.BarGraphItem(x0=[0.0], width=[0.0], y=[0.0], height=0.8, brush="#ffffff",
                                       pen=pg.mkPen(None))
        self.bind_plot.addItem(self.bind_bg)
        self.bind_texts: list[pg.TextItem] = []
        self.name_texts: list[pg.TextItem] = []
        self.time_items: dict[str, pg.BarGraphItem] = {}
        self.memory_items: dict[str, pg.BarGraphItem] = {}
        self.link_items: dict[str, pg.BarGraphItem] = {}
        self.capacity_marks = pg.PlotCurveItem(pen=pg.mkPen("#222222", width=2, style=QtCore.Qt.PenStyle.DashLine),
                                               connect="pairs")
        self.memory_plot.addItem(self.capacity_marks)
        self.na_texts: list[pg.TextItem] = []
        self.time_plot.getViewBox().sigResized.connect(self._place_na)
        self.time_plot.getViewBox().sigRangeChanged.connect(self._place_na)   # rows move when the range does
        self.hovers = {name: pw.HoverReadout(plot, lambda x, y, n=name: self.hover_text_at(n, x, y))
                       for name, plot in self.plots.items()}
        pw.LeaveFilter(self.graphics, lambda: [h.leave() for h in self.hovers.values()])

        self.legend_label = QtWidgets.QLabel("")
        self.legend_label.setFont(pw.font())
        self.legend_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.legend_label.setWordWrap(True)
        self.legend_label.setAccessibleName("Outcomes legend")
        self.legend_label.setToolTip("Colours of the stages, memory components and links")

        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.headline, 1)
        top.addWidget(self.add_button)
        top.addWidget(self.clear_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.legend_label)

    def _place_na(self, *_) -> None:
        """Each "n/a" note level with its row, kept inside the plot and off the other notes (shared placer);
        a note with no room is hidden (the row's hover says why)."""
        vb = self.time_plot.getViewBox()
        shown = [(item, i) for item, i in zip(self.na_texts, getattr(self, "_na_rows", []), strict=False)]
        labels = []
        bounds = ll.view_bounds(vb)
        for k, (item, i) in enumerate(shown):
            w, h = ll.text_size(item)
            _, sy = ll.scene_point(vb, 0.0, float(i))
            top = min(max(sy - h / 2, bounds[1] + 1), bounds[3] - h - 1)
            labels.append(ll.Label(str(k), w, h, ((bounds[0] + 2, top),)))
        boxes = ll.place(labels, bounds)
        for k, (item, _) in enumerate(shown):
            ll.put(item, vb, boxes.get(str(k)))

    # ------------------------------------------------------------------ update
    def update_results(self, results: Results) -> None:
        self._results = results
        if results.scenario != self._base_key:
            self._variants = compare(results.scenario)
            self._base_key = results.scenario
        self._redraw()

    def add_current(self) -> None:
        """Add the scenario of the latest `update_results` as a row named "current scenario N"."""
        if self._results is None:
            return
        n = len(self._added) + 1
        while f"current scenario {n}" in self.variant_names():
            n += 1
        self._added.append(variant_result(f"current scenario {n}", self._results))
        self._added = self._added[-MAX_ADDED:]
        self._redraw()

    def clear_added(self) -> None:
        if not self._added:
            return
        self._added = []
        self._redraw()

    def _redraw(self) -> None:
        rows = self._variants + self._added
        if not rows:  # nothing to show yet (no results, nothing added): pyqtgraph cannot draw zero bars
            return
        self._rows = rows
        n = len(rows)
        ys = np.arange(n, dtype=float)
        ok = [v for v in rows if v.results is not None]
        metrics = QtGui.QFontMetrics(pw.font())

        # --- names and binding column ------------------------------------------------------------
        # the variant names are text items inside the binding column (pixel-exact widths, no axis guessing)
        labels = [v.name for v in rows]
        name_px = max((metrics.horizontalAdvance(t) for t in labels), default=60) + 10
        bind_px = QtGui.QFontMetrics(pw.font(12, bold=True)).horizontalAdvance("Bandwidth ✗") + 16
        width_px = name_px + bind_px + 8
        self.graphics.ci.layout.setColumnFixedWidth(0, width_px)
        split = name_px / width_px
        while len(self.name_texts) < n:
            item = pw.label_item("", anchor=(1, 0.5))
            self.bind_plot.addItem(item)
            self.name_texts.append(item)
        for i, item in enumerate(self.name_texts):
            item.setVisible(i < n)
            if i < n:
                item.setText(labels[i])
                item.setColor("#222222" if rows[i].results is not None else NA_COLOR)
                item.setPos(split - 0.01, i)
        tints = []
        for v in rows:
            c = QtGui.QColor(theme.RESOURCE_COLORS.get(v.binding, "#EEEEEE") if v.results is not None else "#EEEEEE")
            c.setAlpha(70 if v.results is not None else 255)
            tints.append(pg.mkBrush(c))
        self.bind_bg.setOpts(x0=np.full(n, split), width=np.full(n, 1.0 - split), y=ys, height=0.8, brushes=tints,
                             pens=[pg.mkPen(None)] * n)
        while len(self.bind_texts) < n:
            item = pw.label_item("", anchor=(0.5, 0.5), bold=True, size=12)
            self.bind_plot.addItem(item)
            self.bind_texts.append(item)
        for i, item in enumerate(self.bind_texts):
            if i < n:
                v = rows[i]
                if v.results is None:
                    item.setText("n/a")
                    item.setColor(NA_COLOR)
                else:
                    item.setText(theme.RESOURCE_LABELS.get(v.binding, v.binding)
                                 + ("" if v.fits else " ✗"))
                    item.setColor(_darker(theme.RESOURCE_COLORS.get(v.binding, "#222222")))
                item.setPos((1.0 + split) / 2.0, i)
                item.setVisible(True)
            else:
                item.setVisible(False)
        self.bind_plot.setYRange(-0.5, max(n, 1) - 0.5, padding=0.01)

        # --- time by stage -------------------------------------------------------------------------
        t_max = max((v.time_total for v in ok), default=0.0)
        self._time_scale, self._time_unit = pw.choose_time_unit(t_max)
        names = [s for s in STAGE_ORDER if any(s in v.time_by_stage for v in ok)]
        names += sorted({s for v in ok for s in v.time_by_stage} - set(names))
        self._stack(self.time_plot, self.time_items, names, rows, lambda v, s: v.time_by_stage.get(s, 0.0)
                    * self._time_scale, _stage_color, 0.6)
        kinds = {v.results.kind for v in ok}
        title = TIME_TITLE.get(next(iter(kinds)), "time") if len(kinds) == 1 else "time"
        pw.set_axis_label(self.time_plot, "bottom", f"{title} ({self._time_unit})")
        self.time_plot.setXRange(0, max(t_max * self._time_scale, 1e-12) * 1.05, padding=0)

        # --- memory by component with HBM capacity marks --------------------------------------------
        comps = list(dict.fromkeys(c for v in ok for c in v.memory))
        self._stack(self.memory_plot, self.memory_items, comps, rows, lambda v, c: v.memory.get(c, 0.0) / 1e9,
                    theme.color_for, 0.6)
        xs, yv = [], []
        for i, v in enumerate(rows):
            if v.results is not None:
                xs += [v.capacity / 1e9] * 2
                yv += [i - 0.42, i + 0.42]
        self.capacity_marks.setData(np.asarray(xs, float), np.asarray(yv, float))
        m_max = max([v.memory_total / 1e9 for v in ok] + [v.capacity / 1e9 for v in ok] + [1e-9])
        self.memory_plot.setXRange(0, m_max * 1.05, padding=0)

        # --- bytes per link, grouped, log10(GB) ----------------------------------------------------
        floor = math.log10(LOG_FLOOR_GB)
        top = floor + 1.0
        offsets = {k: -0.27 + 0.18 * i for i, k in enumerate(LINK_ORDER)}
        for link in LINK_ORDER:
            item = self.link_items.get(link)
            if item is None:
                item = pg.BarGraphItem(x0=[0.0], width=[0.0], y=[0.0], height=0.16, brush=LINK_COLORS[link],
                                       pen=pg.mkPen(None))
                self.bytes_plot.addItem(item)
                self.link_items[link] = item
            widths = []
            for v in rows:
                gb = v.bytes_by_link.get(link, 0.0) / 1e9 if v.results is not None else 0.0
                val = math.log10(gb) - floor if gb > LOG_FLOOR_GB else 0.0
                widths.append(max(val, 0.0))
                top = max(top, floor + val)
            item.setOpts(x0=np.full(n, floor), width=np.asarray(widths), y=ys + offsets[link], height=0.16,
                         brush=LINK_COLORS[link], pen=pg.mkPen(None))
        hi = math.ceil(top + 0.05)
        step = max(1, math.ceil((hi - int(floor)) / 3))
        self.bytes_plot.getAxis("bottom").setTicks([[(k, fmt_bytes(10.0 ** (k + 9)))
                                                     for k in range(int(floor), hi + 1, step)]])
        self.bytes_plot.setXRange(floor, hi, padding=0)

        # --- not-applicable reasons across the data columns ----------------------------------------
        na_rows = [(i, v) for i, v in enumerate(rows) if v.results is None]
        while len(self.na_texts) < len(na_rows):
            item = pw.label_item("", color=NA_COLOR, anchor=(0, 0.5))
            self.time_plot.addItem(item)
            self.na_texts.append(item)
        for k, item in enumerate(self.na_texts):
            if k < len(na_rows):
                i, v = na_rows[k]
                kind = self._results.kind if self._results is not None else "train"
                item.setText("n/a for " + ("training" if kind == "train" else "inference"))
                item.setPos(0.0, i)
                item.setVisible(True)
            else:
                item.setVisible(False)
        self._na_rows = [i for i, _ in na_rows]
        self._place_na()

        self._update_headline_and_legend(names, comps)

    def _stack(self, plot, items: dict, names: list[str], rows: list[VariantResult], value, color, height) -> None:
        n = len(rows)
        ys = np.arange(n, dtype=float)
        x0 = np.zeros(n)
        for name in names:
            item = items.get(name)
            if item is None:
                item = pg.BarGraphItem(x0=[0.0], width=[0.0], y=[0.0], height=height, brush=color(name),
                                       pen=pg.mkPen("w", width=1))
                plot.addItem(item)
                items[name] = item
            widths = np.array([value(v, name) if v.results is not None else 0.0 for v in rows], dtype=float)
            item.setOpts(x0=x0.copy(), width=widths, y=ys, height=height, brush=color(name),
                         pen=pg.mkPen("w", width=1))
            item.setVisible(True)
            x0 = x0 + widths
        for name, item in items.items():
            if name not in names:
                item.setVisible(False)

    def _update_headline_and_legend(self, stage_names: list[str], comps: list[str]) -> None:
        bindings = [v.binding for v in self._rows if v.results is not None]
        shift = " → ".join(dict.fromkeys(bindings))
        r = self._results
        if r is None:
            return
        sc = r.scenario
        what = (f"{sc.model.name} training on {sc.gpus}× {sc.hardware.name}" if r.kind == "train"
                else f"{sc.model.name} {r.kind} on {sc.gpus}× {sc.hardware.name}")
        self.headline.setText(f"{what}: binding resource across variants: {shift}")

        def sq(color: str, text: str) -> str:
            return f"<span style='color:{color}'>■</span>&nbsp;{pw.html_escape(text)}"

        time_parts = [sq(_stage_color(s), _stage_label(s)) for s in stage_names]
        mem_parts = [sq(theme.color_for(c), theme.label_for(c)) for c in comps] + ["<b>- - -</b>&nbsp;HBM capacity"]
        link_parts = [sq(LINK_COLORS[k], LINK_LABELS[k]) for k in LINK_ORDER]
        self.legend_label.setText("<br>".join(f"<b>{head}:</b> " + " &nbsp; ".join(parts) for head, parts in
                                              (("Time", time_parts), ("Memory", mem_parts), ("Links", link_parts))))

    # ------------------------------------------------------------------ read-outs
    def row_at(self, y: float) -> int:
        i = int(round(y))
        return i if 0 <= i < len(self._rows) and abs(y - i) <= 0.45 else -1

    def hover_text_at(self, plot: str, x: float, y: float) -> str:
        """Read-out for data point (x, y) of plot "binding", "time", "memory" or "bytes"."""
        i = self.row_at(y)
        if i < 0:
            return ""
        v = self._rows[i]
        if v.results is None:
            return f"{v.name}\n{v.reason}"
        if plot == "binding":
            p = v.results.pressure
            return (f"{v.name}: binding resource {v.binding}\npressures: compute {100 * p.compute:.0f}%, "
                    f"bandwidth {100 * p.bandwidth:.0f}%, memory {100 * p.memory:.0f}% of HBM"
                    + ("" if v.fits else "\ndoes not fit in HBM"))
        if plot == "time":
            lines = [f"{v.name}: {fmt_seconds(v.time_total)}"]
            lines += [f"  {_stage_label(k)}: {fmt_seconds(s)}" for k, s in v.time_by_stage.items()]
            return "\n".join(lines)
        if plot == "memory":
            lines = [f"{v.name}: {v.memory_total / 1e9:.1f} GB of {v.capacity / 1e9:.0f} GB HBM per GPU"]
            lines += [f"  {theme.label_for(k)}: {b / 1e9:.1f} GB" for k, b in v.memory.items()]
            return "\n".join(lines)
        if plot == "bytes":
            lines = [f"{v.name}: bytes per GPU per {'step' if v.results.kind == 'train' else 'pass'}"]
            lines += [f"  {LINK_LABELS[k]}: {fmt_bytes(v.bytes_by_link.get(k, 0.0))}" for k in LINK_ORDER]
            return "\n".join(lines)
        raise ValueError(f"plot must be binding, time, memory or bytes, not {plot!r}")

    # ------------------------------------------------------------------ for tests
    def variant_names(self) -> list[str]:
        return [v.name for v in self._variants + self._added]

    def binding_labels(self) -> dict[str, str]:
        """Variant name -> binding resource shown ("n/a" where the technique does not apply)."""
        return {v.name: (v.binding if v.results is not None else "n/a") for v in self._rows}

    def binding_texts(self) -> list[str]:
        return [t.toPlainText() for t in self.bind_texts[:len(self._rows)]]

    def time_values(self, name: str) -> dict[str, float]:
        """Seconds per stage drawn for one variant."""
        i = [v.name for v in self._rows].index(name)
        return {k: float(item.opts["width"][i]) / self._time_scale for k, item in self.time_items.items()
                if item.isVisible() and float(item.opts["width"][i]) > 0}

    def memory_values(self, name: str) -> dict[str, float]:
        """GB per component drawn for one variant."""
        i = [v.name for v in self._rows].index(name)
        return {k: float(item.opts["width"][i]) for k, item in self.memory_items.items()
                if item.isVisible() and float(item.opts["width"][i]) > 0}

    def variants(self) -> list[VariantResult]:
        return list(self._rows)


def _darker(color: str) -> str:
    """The resource colour darkened for text on its own light tint (contrast)."""
    return QtGui.QColor(color).darker(150).name()
