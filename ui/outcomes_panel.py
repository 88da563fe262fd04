"""System outcomes: each scenario variant's time, split by the resource it spends, in one chart.

Rows are the variants of `trinity_desktop.model.views.variants.compare(current scenario)` (baseline, + one
technique each) and any "current scenario" snapshots the user added. Each bar is the variant's step time (or
prefill time, or time per output token) with its stages summed by the resource they load (`time_part`): compute,
data movement (links and HBM), and the pipeline bubble's idle time. The part of the binding resource is
outlined; a variant that does not fit in HBM says so at its bar's end (memory binds it). Variants that do not
apply to this scenario are listed under the chart with the reason, never drawn. Hover a bar for its stages,
memory by component and bytes per link.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.variants import VariantResult, compare, variant_result
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.cost_readout import CostReadout
from trinity_desktop.ui.load_readout import LoadReadout
from trinity_desktop.ui.units import choose_time_unit, fmt_bytes, fmt_seconds

LINK_ORDER = ("hbm", "scale-up", "scale-out", "host")
LINK_LABELS = {"hbm": "HBM", "scale-up": "scale-up (NVLink)", "scale-out": "scale-out (network)",
               "host": "host link (PCIe)"}
MAX_ADDED = 4
TIME_TITLE = {"train": "step time", "prefill": "prefill time", "decode": "time per output token"}
PER = {"train": "step", "prefill": "prompt", "decode": "token"}
PARTS = ("compute", "bandwidth", "idle")   # left to right along each bar
PART_LABELS = {"compute": "Compute", "bandwidth": "Data movement (links, HBM)", "idle": "Pipeline bubble (idle)"}
# Time part (its role id, `Results.time` keys of training and inference) -> the resource its seconds load.
STAGE_RESOURCE = {"compute": "compute", "gradient_compression": "compute", "gemms": "compute",
                  "attention": "compute", "communication_exposed": "bandwidth", "optimizer": "bandwidth",
                  "offload_transfer": "bandwidth", "attention_kv_reads": "bandwidth",
                  "tp_comm": "bandwidth", "pipeline_bubble": "idle"}
BAR_HEIGHT = 0.62
OUTLINE_PX = 3


def time_part(stage: str) -> str:
    """The part of a bar a time stage adds to: "compute", "bandwidth" or "idle" (unknown stages: compute)."""
    return STAGE_RESOURCE.get(stage, "compute")


def part_colors() -> dict[str, str]:
    return {"compute": theme.RESOURCE_COLORS["compute"], "bandwidth": theme.RESOURCE_COLORS["bandwidth"],
            "idle": theme.MUTED_COLOR}


def split_by_part(time_by_stage) -> dict[str, float]:
    """Seconds per bar part: the stages summed by `time_part`."""
    out = dict.fromkeys(PARTS, 0.0)
    for stage, seconds in time_by_stage.items():
        out[time_part(stage)] += float(seconds)
    return out


class OutcomesPanel(QtWidgets.QWidget):
    """Variants as horizontal bars of time by resource; the binding part outlined; n/a variants listed apart."""

    focusRequested = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("OutcomesPanel")
        self.setAccessibleName("System outcomes: scenario variants side by side")
        self._results: Results | None = None
        self._base_key = None
        self._variants: list[VariantResult] = []
        self._added: list[VariantResult] = []
        self._rows: list[VariantResult] = []      # every row, applicable or not
        self._drawn: list[VariantResult] = []     # the applicable rows, top to bottom
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
        self.headline.setFont(pw.font(12))
        self.headline.setWordWrap(True)
        self.headline.setAccessibleName("Outcomes summary")
        self.headline.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names are shown as typed, never as HTML
        self.headline.setToolTip("Baseline: no recomputation, ZeRO-1, FlashAttention off, no offload, no "
                                 "compression (training); 16-bit full KV cache (inference). Each row adds one "
                                 "technique to the baseline.")

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("Variant comparison chart")
        self.graphics.setAccessibleDescription(
            "One bar per variant: its time split into compute, data movement and pipeline idle time; the part of "
            "the binding resource is outlined, a variant that does not fit in memory is marked at its bar's end. "
            "Hover a bar for its stages, memory and bytes per link.")
        self.time_plot: pg.PlotItem = self.graphics.addPlot()
        self.plots = {"time": self.time_plot}
        pw.style_plot(self.time_plot, bottom="time (s)")
        pw.freeze_view(self.time_plot)
        self.time_plot.getViewBox().invertY(True)
        self.time_plot.getAxis("left").setStyle(tickLength=0)
        self.time_plot.showGrid(x=True, y=False, alpha=0.25)
        self.part_items = {p: pg.BarGraphItem(x0=[0.0], width=[0.0], y=[0.0], height=BAR_HEIGHT,
                                              brush=part_colors()[p], pen=pg.mkPen(None)) for p in PARTS}
        for item in self.part_items.values():
            self.time_plot.addItem(item)
        self.outline = pg.BarGraphItem(x0=[0.0], width=[0.0], y=[0.0], height=BAR_HEIGHT, brush=None,
                                       pen=pg.mkPen(theme.plot_text_color(), width=OUTLINE_PX))
        self.outline.setZValue(5)
        self.time_plot.addItem(self.outline)
        self.bind_texts: list[pg.TextItem] = []
        self.time_plot.getViewBox().sigResized.connect(self._fit_x)
        self.hovers = {"time": pw.HoverReadout(self.time_plot, lambda x, y: self.hover_text_at("time", x, y))}
        pw.LeaveFilter(self.graphics, lambda: [h.leave() for h in self.hovers.values()])

        self.legend_label = QtWidgets.QLabel("")
        self.legend_label.setFont(pw.font())
        self.legend_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.legend_label.setWordWrap(True)
        self.legend_label.setAccessibleName("Outcomes legend")
        self.legend_label.setToolTip("What each part of a bar counts; the outlined part is the binding resource")
        self.na_label = QtWidgets.QLabel("")
        self.na_label.setFont(pw.font())
        self.na_label.setWordWrap(True)
        self.na_label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.na_label.setAccessibleName("Variants that do not apply here")
        self.na_label.setProperty("editingControl", True)   # an explorer's detail: off the slides (slide_controls)

        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.headline, 1)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.clear_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(buttons)
        self.load_readout = LoadReadout()  # load and latency targets (#23): shown where a request rate is set
        layout.addWidget(self.load_readout)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.legend_label)
        layout.addWidget(self.na_label)
        self.cost_readout = CostReadout()  # cost and energy per million tokens (#23)
        layout.addWidget(self.cost_readout)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if pw.is_theme_change(event) and self._rows:
            self.graphics.setBackground(pw.plot_background())
            self._redraw()

    # ------------------------------------------------------------------ update
    def update_results(self, results: Results) -> None:
        self._results = results
        self.load_readout.show_results(results)
        self.cost_readout.update_results(results)
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
        drawn = [v for v in rows if v.results is not None]
        self._drawn = drawn
        n = len(drawn)
        ys = np.arange(n, dtype=float)
        t_max = max((v.time_total for v in drawn), default=0.0)
        self._time_scale, self._time_unit = choose_time_unit(t_max)
        parts = [split_by_part(v.time_by_stage) for v in drawn]
        x0 = np.zeros(n)
        starts: dict[str, np.ndarray] = {}
        for p in PARTS:
            widths = np.array([s[p] for s in parts], dtype=float) * self._time_scale
            starts[p] = x0.copy()
            self.part_items[p].setOpts(x0=x0.copy(), width=widths, y=ys, height=BAR_HEIGHT, brush=part_colors()[p])
            x0 = x0 + widths
        # the binding part outlined (memory binds a variant that does not fit: no time part is outlined)
        bound = [(i, v.binding) for i, v in enumerate(drawn) if v.binding in ("compute", "bandwidth")]
        self.outline.setOpts(x0=[float(starts[b][i]) for i, b in bound],
                             width=[parts[i][b] * self._time_scale for i, b in bound],
                             y=[float(i) for i, _ in bound], height=BAR_HEIGHT,
                             pen=pg.mkPen(theme.plot_text_color(), width=OUTLINE_PX))
        self._set_row_names(drawn)
        self._set_bar_texts(drawn, x0)
        kinds = {v.results.kind for v in drawn}
        kind = next(iter(kinds)) if len(kinds) == 1 else ""
        pw.set_axis_label(self.time_plot, "bottom", f"{TIME_TITLE.get(kind, 'time')} ({self._time_unit})")
        self.time_plot.setYRange(-0.5, max(n, 1) - 0.5, padding=0.02)
        self._fit_x()
        self._update_titles(kind)
        self._update_legend(outlined=bool(bound))

    def _set_row_names(self, drawn: list[VariantResult]) -> None:
        """Variant names as the left axis' ticks, the axis as wide as the longest name (never cut)."""
        axis = self.time_plot.getAxis("left")
        axis.setTicks([[(float(i), v.name) for i, v in enumerate(drawn)]])
        widest = max((QtGui.QFontMetrics(pw.font()).horizontalAdvance(v.name) for v in drawn), default=40)
        axis.setWidth(widest + 16)

    def _set_bar_texts(self, drawn: list[VariantResult], ends: np.ndarray) -> None:
        """At each bar's end: its time, the binding resource, and "does not fit" with the memory it needs."""
        while len(self.bind_texts) < len(drawn):
            item = pw.label_item("", anchor=(0, 0.5))
            self.time_plot.addItem(item, ignoreBounds=True)
            self.bind_texts.append(item)
        for i, item in enumerate(self.bind_texts):
            item.setVisible(i < len(drawn))
            if i >= len(drawn):
                continue
            v = drawn[i]
            text = f" {fmt_seconds(v.time_total)} · {theme.RESOURCE_LABELS.get(v.binding, v.binding)}"
            if not v.fits:   # memory binds: the bar's end says by how much
                text = f" {fmt_seconds(v.time_total)} ✗ {v.memory_total / 1e9:.0f} GB > {v.capacity / 1e9:.0f} GB"
            item.setText(text)
            item.setColor(theme.readable(theme.BAD_COLOR, pw.plot_background()) if not v.fits
                          else theme.plot_text_color())
            item.setPos(float(ends[i]), float(i))

    def _fit_x(self, *_) -> None:
        """The x range leaves room right of each bar for its end text (measured in pixels): x_max is the
        largest end / (1 − text px / view px), so every text ends inside the view."""
        if not self._drawn:
            return
        view_px = max(self.time_plot.getViewBox().width(), 80.0)
        need = [v.time_total * self._time_scale / (1.0 - min(t.boundingRect().width() / view_px, 0.8))
                for v, t in zip(self._drawn, self.bind_texts, strict=False)]
        self.time_plot.setXRange(0, max(need + [1e-12]) * 1.02, padding=0)

    def _update_titles(self, kind: str) -> None:
        r = self._results
        if r is None:
            return
        sc = r.scenario
        what = (f"{sc.model.name} {'training' if r.kind == 'train' else r.kind} on {sc.gpus}× {sc.hardware.name}")
        self.headline.setText(f"{what}: one technique added per row")
        base = next((v for v in self._drawn if v.name == "baseline"), None)
        title = findings.best_variant_title([(v.name, v.time_total, v.fits) for v in self._drawn],
                                            base.time_total if base is not None else 0.0,
                                            base.fits if base is not None else True, PER.get(kind, "step"))
        pw.set_title(self.time_plot, pw.html_escape(title))
        na = [v for v in self._rows if v.results is None]
        entries = [(v.name, _reason(v.reason)) for v in na]   # grouped by reason, each in full in the hover
        self.na_label.setText(("Not applicable here (not drawn):\n" + findings.not_drawn_text(entries)) if na else "")
        self.na_label.setToolTip("\n\n".join(f"{name}: {reason}" for name, reason in entries))
        self.na_label.setVisible(bool(na))

    def _update_legend(self, outlined: bool = True) -> None:
        """The key: whole entries (marker and words joined by non-breaking spaces), wrapping only between them;
        "binding part" only when a part is outlined (where memory binds every row, none is)."""
        parts = [pw.key_entry("■", PART_LABELS[p], part_colors()[p]) for p in PARTS]
        parts += [pw.key_entry("<b>▭</b>", "binding part")] if outlined else []
        parts += [pw.key_entry("✗", "does not fit: memory needed > HBM per GPU")]
        self.legend_label.setText(pw.key_line(parts))

    # ------------------------------------------------------------------ read-outs
    def row_at(self, y: float) -> int:
        """Index into the drawn (applicable) rows at data y, or -1."""
        i = int(round(y))
        return i if 0 <= i < len(self._drawn) and abs(y - i) <= 0.45 else -1

    def hover_text_at(self, plot: str, x: float, y: float) -> str:
        """Read-out of the bar at data y: time by stage, memory by component and bytes per link."""
        if plot != "time":
            raise ValueError(f"plot must be time, not {plot!r}")
        i = self.row_at(y)
        if i < 0:
            return ""
        v = self._drawn[i]
        p = v.results.pressure
        lines = [f"{v.name}: {fmt_seconds(v.time_total)}, binding resource {v.binding}"
                 + ("" if v.fits else " (does not fit in HBM)")]
        lines += [f"  {theme.label_for(k, 'time')}: {fmt_seconds(s)}" for k, s in v.time_by_stage.items()]
        lines.append(f"Memory: {v.memory_total / 1e9:.1f} GB of {v.capacity / 1e9:.0f} GB HBM per GPU")
        lines += [f"  {theme.label_for(k)}: {b / 1e9:.1f} GB" for k, b in v.memory.items()]
        lines.append(f"Bytes per GPU per {'step' if v.results.kind == 'train' else 'pass'}: " + ", ".join(
            f"{LINK_LABELS[k]} {fmt_bytes(v.bytes_by_link.get(k, 0.0))}" for k in LINK_ORDER))
        lines.append(f"Pressures: compute {100 * p.compute:.0f}%, bandwidth {100 * p.bandwidth:.0f}%, "
                     f"memory {100 * p.memory:.0f}% of HBM")
        return "\n".join(lines)

    # ------------------------------------------------------------------ for tests
    def variant_names(self) -> list[str]:
        return [v.name for v in self._variants + self._added]

    def binding_labels(self) -> dict[str, str]:
        """Variant name -> binding resource shown ("n/a" where the technique does not apply)."""
        return {v.name: (v.binding if v.results is not None else "n/a") for v in self._rows}

    def binding_texts(self) -> list[str]:
        """The texts at the drawn bars' ends, top to bottom."""
        return [t.toPlainText().strip() for t in self.bind_texts[:len(self._drawn)]]

    def part_values(self, name: str) -> dict[str, float]:
        """Seconds per bar part drawn for one applicable variant."""
        i = [v.name for v in self._drawn].index(name)
        return {p: float(item.opts["width"][i]) / self._time_scale for p, item in self.part_items.items()}

    def outlined(self) -> dict[str, tuple[float, float]]:
        """Variant name -> (start, width) in seconds of its outlined (binding) part."""
        names = [v.name for v in self._drawn]
        ys, x0s, ws = (np.atleast_1d(self.outline.opts[k]) for k in ("y", "x0", "width"))
        return {names[int(y)]: (float(x) / self._time_scale, float(w) / self._time_scale)
                for y, x, w in zip(ys, x0s, ws, strict=True)}

    def variants(self) -> list[VariantResult]:
        return list(self._rows)


def _reason(reason: str) -> str:
    return reason.removeprefix("not applicable: ")
