"""Validation: the model's predicted time against published, measured runs, and what matters most.

Left: one point per run of resources/published_runs.toml (model/search/validation.py) on log-log axes, measured on x,
predicted on y, both in seconds: a training run's step time, an inference run's request time (prefill + the
output tokens) or first-token time. The identity line is a perfect model; each run's p05-p95 band over the
assumption ranges is a vertical bar; marker by kind (circle: training, triangle: inference) and colour by hardware
family (GPU generation or SoC line), named in the legend; hover a point for its run, quantity, family, source and
error. The table is computed
once per efficiency set, off the UI thread, when the panel is first shown.
Right: "what matters most" for the current scenario: the total (wide bar) and first-order (narrow bar) Sobol
indices of the headline time for each assumption (model/search/uncertainty.py), fed by the band service
(ui/bands.py) through `set_bands`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.inputs.assumptions import available_sets
from trinity_desktop.model.inputs.presets import references
from trinity_desktop.model.search.uncertainty import Uncertainty
from trinity_desktop.model.search.validation import published_runs, run_rows
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui import findings, named_combo, theme, worker_relay
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.units import fmt_seconds

SAMPLES_PER_RUN = 256
HOVER_DECADES = 0.06  # a point is hovered within this distance in log10 units
# kind -> (legend name, marker); hardware family -> Okabe-Ito colour of the theme (the rest: the fallback)
SIDE_BY_SIDE_WIDTH = 1000  # px: room for the scatter and the bars' assumption names side by side
STACKED_MIN_HEIGHT = 600   # px: below it, stacking leaves the scatter too short for its axis title
SCATTER_MIN_VIEW_PX = 190  # stacked: the scatter's plot height (five decades of points read apart)
BAR_ROW_PX = 18            # stacked: a bar row holds its 11-pt assumption name without touching the next
LEGEND_COLUMNS = 3  # two kinds and up to four families in two rows: the legend fits half a 1366-wide dock
KIND_STYLE = {"training": ("training", "o"), "inference": ("inference", "t1")}
MARKER_PX = {"training": 10, "inference": 12}   # marker size by kind (a triangle reads at 12 px, a disc at 10)
WHISKER_MIN_PX = 2.0   # the shortest part of a band whisker drawn past its marker
FAMILY_COLORS = {"Ampere": theme.RESOURCE_COLORS["compute"], "Hopper": theme.RESOURCE_COLORS["bandwidth"],
                 "Blackwell": theme.RESOURCE_COLORS["memory"], "Apple silicon": theme.ACCENT_COLORS["pink"],
                 "Ada Lovelace": theme.ACCENT_COLORS["sky"]}
KINDS = ("training", "inference")
QUANTITY_TEXT = {"step_time_s": "training step time", "request_s": "inference request time (prefill + {g} output "
                 "tokens, batch {b})", "ttft_s": "first-token time (prefill of {s} tokens, batch {b})",
                 "time_per_output_token_s": "time per output token (batch {b})"}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def source_label(ref) -> str:
    """A legend name for a reference: "first author year", or a vendor document's own title."""
    if ref.authors in ("NVIDIA", "AMD", "Google"):
        return ref.title.split(":")[0].split(" (")[0]
    return f"{ref.authors.split(',')[0]} {ref.year}"


def quantity_text(row: dict) -> str:
    lay = row["layout"]
    return QUANTITY_TEXT[row["quantity"]].format(g=lay.get("gen_len"), b=lay.get("batch"), s=lay.get("prompt_len"))


SOBOL_KEY = ("Grey (wide) bar: total Sobol index (the share of the spread this assumption causes, with its "
             "interactions); vermillion (narrow) bar: first-order index (alone)")


class ValidationPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("ValidationPanel")
        self.setAccessibleName("Validation: predicted against measured published runs, and what matters most")
        self.rows: list[dict] = []
        self.set_name = "default"
        self.bands: Uncertainty | None = None
        self._requested: str | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="validation")
        self._closed = False
        worker_relay.install()   # the worker hands its rows over through it (never emits on this panel)
        refs = references()
        runs = published_runs()
        self.kinds = [k for k in KIND_STYLE if any(r.kind == k for r in runs)]
        self.families = list(dict.fromkeys(r.family for r in runs))
        self.source_names = {r.source: (source_label(refs[r.source]) if r.source in refs else r.source)
                             for r in runs}

        self.set_combo = named_combo.labelled_combo(
            "Efficiency set", "Assumption set the runs are predicted with: default (the stated assumptions) "
            "or calibrated (written by trinity-desktop validate --fit)", [("default", "default")])
        self.set_combo.currentIndexChanged.connect(lambda _i: self.choose_set(self.set_combo.currentData()))
        self.summary = QtWidgets.QLabel("Computing the published runs")
        self.summary.setObjectName("ValidationSummary")
        self.summary.setFont(pw.font(12))
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("Validation summary")
        self.summary.setToolTip("Median and worst |predicted / measured - 1| of each run's time (training step; "
                                "inference request or first token), over all runs and by kind")

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("Predicted against measured time, and sensitivity bars")
        self.graphics.setAccessibleDescription(
            "Left: log-log scatter, measured time in seconds across, predicted up, one point per published run "
            "(circles: training step time; triangles: inference request, first-token or per-token time; colour: "
            "hardware family) with its p05-p95 band; the dashed diagonal is a perfect prediction. Right: bars of the Sobol indices of the current "
            "scenario's headline time for each assumption.")
        # The scatter and, above it, its legend in one row of entries: outside the view, so that it never
        # covers a point however short the plot gets.
        scatter_column = self.graphics.addLayout(row=0, col=0)
        self.legend = pg.LegendItem(labelTextSize="11pt", labelTextColor=theme.plot_foreground(),
                                    colCount=LEGEND_COLUMNS)
        scatter_column.addItem(self.legend, row=0, col=0)
        self.legend.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed)
        scatter_column.layout.setRowStretchFactor(0, 0)
        scatter_column.layout.setRowStretchFactor(1, 1)
        scatter_column.layout.setContentsMargins(0, 0, 0, 0)
        self.legend.layout.setContentsMargins(2, 0, 2, 0)   # stacked at 1366 x 768 every row of pixels is the plot's
        self.graphics.ci.setContentsMargins(2, 2, 2, 2)
        self.scatter_plot = scatter_column.addPlot(row=1, col=0, axisItems={
            "bottom": pw.LogSIAxis("bottom"), "left": pw.LogSIAxis("left")})
        pw.style_plot(self.scatter_plot, "Predicted vs measured time",
                      left="predicted (s)", bottom="measured (s)")
        self.scatter_plot.setLogMode(x=True, y=True)
        # The axes keep room for their widest decade label and their title from the start: pyqtgraph sizes an
        # axis to its tick text only when it next paints, so ticks arriving with the runs would first be drawn
        # under the axis titles.
        ticks = QtGui.QFontMetrics(pw.font())
        title = QtGui.QFontMetrics(pw.font(int(float(pw.LABEL_SIZE.rstrip("pt"))))).height() + 8
        self.scatter_plot.getAxis("left").setWidth(ticks.horizontalAdvance("100 m") + 6 + 5 + title)
        self.scatter_plot.getAxis("bottom").setHeight(ticks.height() + 6 + 5 + title)
        pw.freeze_view(self.scatter_plot)
        self.identity = pg.PlotDataItem([], [], pen=pg.mkPen(theme.MUTED_COLOR, width=1.5,
                                                             style=QtCore.Qt.PenStyle.DashLine))
        self.scatter_plot.addItem(self.identity)
        # one series per (kind, family): marker by kind, colour by hardware family; the legend names each once
        self.band_lines: dict[tuple[str, str], pg.PlotDataItem] = {}
        self.points: dict[tuple[str, str], pg.PlotDataItem] = {}
        pairs = dict.fromkeys((r.kind, r.family) for r in runs)
        for kind in self.kinds:
            _label, symbol = KIND_STYLE[kind]
            for family in (f for f in self.families if (kind, f) in pairs):
                color = FAMILY_COLORS.get(family, theme.FALLBACK_COLOR)
                line = pg.PlotDataItem([], [], connect="pairs", pen=pg.mkPen(color, width=2))
                self.scatter_plot.addItem(line)
                self.band_lines[kind, family] = line
                pts = pg.PlotDataItem([], [], pen=None, symbol=symbol, symbolSize=MARKER_PX[kind],
                                      symbolBrush=color, symbolPen=pg.mkPen(theme.plot_text_color()))
                self.scatter_plot.addItem(pts)
                self.points[kind, family] = pts
        for kind in self.kinds:
            label, symbol = KIND_STYLE[kind]
            self.legend.addItem(pg.ScatterPlotItem(symbol=symbol, size=10, brush=None,
                                                   pen=pg.mkPen(theme.plot_text_color(), width=1.5)), label)
        for family in self.families:
            self.legend.addItem(pg.ScatterPlotItem(symbol="s", size=12, pen=pg.mkPen(theme.plot_text_color()),
                                                   brush=FAMILY_COLORS.get(family, theme.FALLBACK_COLOR)), family)
        self.hover = pw.HoverReadout(self.scatter_plot, self.hover_text_at, html=True)
        # a whisker's part past its marker is measured in pixels: drawn again when the view's scale changes
        self.scatter_plot.getViewBox().sigResized.connect(self._draw_bands)
        self.scatter_plot.getViewBox().sigYRangeChanged.connect(self._draw_bands)

        self.bar_plot = self.graphics.addPlot(row=0, col=1)
        pw.style_plot(self.bar_plot, "What matters most", bottom="Sobol index of the headline time")
        pw.freeze_view(self.bar_plot)
        # grey and vermillion: the scatter's key gives orange and blue to hardware families, so the bars take
        # neither (they read as Ampere and Hopper)
        self.total_bars = pg.BarGraphItem(x0=[], y=[], height=0.6, width=[],
                                          brush=pg.mkBrush(theme.MUTED_COLOR), pen=None)
        self.first_bars = pg.BarGraphItem(x0=[], y=[], height=0.25, width=[],
                                          brush=pg.mkBrush(theme.FOCUS_COLOR), pen=None)
        self.bar_plot.addItem(self.total_bars)
        self.bar_plot.addItem(self.first_bars)
        self.bar_plot.setXRange(0.0, 1.0, padding=0.02)
        self._wide = True
        self.bar_note = QtWidgets.QLabel("Sensitivity appears once the bands of the current scenario are computed "
                                         "(View ▸ Uncertainty bands).")
        self.bar_note.setObjectName("SensitivityNote")
        self.bar_note.setFont(pw.font(11))
        self.bar_note.setWordWrap(True)
        self.bar_note.setAccessibleName("Sensitivity note")
        self.bar_note.setToolTip(SOBOL_KEY)

        top = QtWidgets.QHBoxLayout()
        set_label = QtWidgets.QLabel("Efficiency set")
        set_label.setFont(pw.font())
        top.addWidget(set_label)
        top.addWidget(self.set_combo)
        top.addStretch(1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.summary)   # its own row: beside the combo it took five lines of a 517-px dock
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.bar_note)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """A theme change: the background, the legend's text and every marker's outline in the new theme."""
        super().changeEvent(event)
        if pw.is_theme_change(event):
            self.graphics.setBackground(pw.plot_background())
            theme.restyle_markers(self.points.values())
            theme.restyle_markers([sample.item for sample, _label in self.legend.items], width=1.5)
            self.legend.setLabelTextColor(theme.plot_foreground())
            for _sample, label in self.legend.items:   # setLabelTextColor only stores the colour: redraw the text
                label.setText(label.text)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """Side by side when wide, or when too short to stack: stacked in a 784 x 519 dock (1920 x 1080) the
        scatter kept about 80 px of height, too little for its vertical axis title to be written whole; the bars
        go under the scatter only where both keep their room (a 723 x 703 dock at 1366 x 768)."""
        super().resizeEvent(event)
        wide = self.width() >= SIDE_BY_SIDE_WIDTH or self.height() < STACKED_MIN_HEIGHT
        self._fit_legend_columns(wide)
        if wide != self._wide:
            self._wide = wide
            self.graphics.ci.removeItem(self.bar_plot)
            self.graphics.addItem(self.bar_plot, row=0 if wide else 1, col=1 if wide else 0)
            self.graphics.ci.layout.setRowStretchFactor(0, 1)
            self.graphics.ci.layout.setRowStretchFactor(1, 1)
        # stacked, the bars give the scatter its room first: at an even split it kept about 120 px of plot
        self.scatter_plot.getViewBox().setMinimumHeight(0 if wide else SCATTER_MIN_VIEW_PX)
        rows = len(self.bands.sensitivity) if self.bands is not None and self.bands.sensitivity else 0
        self.bar_plot.getViewBox().setMinimumHeight(0 if wide else BAR_ROW_PX * rows)

    def _fit_legend_columns(self, wide: bool) -> None:
        """As many legend columns as the scatter's width holds whole entries (at most LEGEND_COLUMNS side by side;
        stacked, the scatter spans the panel and the legend takes as few rows as fit): never wider than its column,
        so nothing to its right is pushed out of the view."""
        items = self.legend.items
        if not items:
            return
        entry = max(sample.boundingRect().width() + label.boundingRect().width() + 16 for sample, label in items)
        room = (self.width() / 2.0 if wide else float(self.width())) - 24.0
        most = LEGEND_COLUMNS if wide else len(items)
        columns = max(1, min(most, int(room // entry)))
        if columns != self.legend.columnCount:
            self.legend.setColumnCount(columns)

    # --- the published runs ----------------------------------------------------------------------
    def update_results(self, _results: Results) -> None:
        """The table does not depend on the scenario: compute it once per set, when first shown."""
        sets = available_sets()
        if self.set_combo.count() != len(sets):
            self.set_combo.blockSignals(True)
            self.set_combo.clear()
            for s in sets:
                self.set_combo.addItem(s, s)
            self.set_combo.setCurrentIndex(max(self.set_combo.findData(self.set_name), 0))
            self.set_combo.blockSignals(False)
        if self._requested != self.set_name:
            self.choose_set(self.set_name)

    def choose_set(self, name: str) -> None:
        self.set_name = name
        self._requested = name
        self.summary.setText(f"Computing the published runs with the {name} set")
        if not self._closed:
            self._executor.submit(self._work, name)

    def stop_workers(self) -> None:
        """The app is quitting: drop queued work, let the running one finish."""
        self._closed = True
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _work(self, name: str) -> None:
        try:
            rows = run_rows(name, SAMPLES_PER_RUN)
        except (ValueError, ArithmeticError) as exc:
            rows = str(exc)
        worker_relay.post(self._on_rows, name, rows)

    def _draw_bands(self, *_) -> None:
        """Each run's p05-p95 band as a vertical whisker, drawn only where it reaches past its marker: the parts
        above and below the marker, each at least `WHISKER_MIN_PX` long (a band narrower than the marker is
        read in the hover; a whisker under its marker would only hide there)."""
        vb = self.scatter_plot.getViewBox()
        (_, _), (y0, y1) = vb.viewRange()
        per_px = (y1 - y0) / max(vb.height(), 1.0)   # decades of predicted time per pixel (log axes)
        for (kind, family), line in self.band_lines.items():
            mine = [r for r in self.rows if r["kind"] == kind and r["family"] == family]
            half = (MARKER_PX[kind] / 2 + 1) * per_px
            xs, ys = [], []
            for r in (r for r in mine if min(r["p05"], r["predicted"], r["p95"]) > 0):
                mid = np.log10(r["predicted"])
                for a, b in ((np.log10(r["p95"]), mid + half), (mid - half, np.log10(r["p05"]))):
                    if a - b >= WHISKER_MIN_PX * per_px:
                        xs += [r["measured"]] * 2
                        ys += [10.0 ** a, 10.0 ** b]
            line.setData(np.asarray(xs, float), np.asarray(ys, float))

    def _on_rows(self, name: str, rows) -> None:
        if name != self.set_name:
            return
        if isinstance(rows, str):
            self.summary.setText(f"Could not compute the runs: {rows}")
            return
        self.rows = rows
        for (kind, family), pts in self.points.items():
            mine = [r for r in rows if r["kind"] == kind and r["family"] == family]
            m = np.array([r["measured"] for r in mine])
            pts.setData(m, np.array([r["predicted"] for r in mine]))
        values = [v for r in rows for v in (r["measured"], r["p05"], r["p95"])]
        lo, hi = min(values) / 1.5, max(values) * 1.5
        self.identity.setData([lo, hi], [lo, hi])
        self.scatter_plot.setXRange(np.log10(lo), np.log10(hi), padding=0.02)
        self.scatter_plot.setYRange(np.log10(lo), np.log10(hi), padding=0.02)
        self._draw_bands()
        errors = np.abs([r["rel_error"] for r in rows])
        worst = rows[int(np.argmax(errors))]
        inside = sum(r["in_band"] for r in rows)
        by_kind = ", ".join(f"{k} {np.median([abs(r['rel_error']) for r in rows if r['kind'] == k]) * 100:.0f}%"
                            for k in KINDS if any(r["kind"] == k for r in rows))
        pw.set_title(self.scatter_plot, pw.html_escape(findings.validation_title(
            len(rows), float(np.median(errors)), int(inside))), size="13pt")
        # the count, the median and the runs inside their band are in the scatter's title: not said twice
        self.summary.setText(f"By kind, median |error|: {by_kind}; worst {errors.max() * 100:.0f}% "
                             f"({worst['name'].split(',')[0].split(' (')[0]})")

    def is_ready(self) -> bool:
        return bool(self.rows) and self._requested == self.set_name

    def hover_text_at(self, x: float, y: float) -> str:
        """The run nearest the cursor (log10 view coordinates), within HOVER_DECADES."""
        if not self.rows:
            return ""
        lx = np.log10([r["measured"] for r in self.rows])
        ly = np.log10([r["predicted"] for r in self.rows])
        d = np.hypot(lx - x, ly - y)
        i = int(np.argmin(d))
        if d[i] > HOVER_DECADES:
            return ""
        r = self.rows[i]
        return pw.hover_html([
            (r["name"], True), (f"{quantity_text(r)}; {r['family']} ({r['hardware']})", False),
            (f"{self.source_names.get(r['source'], r['source'])}: {r['where']}", False),
            (f"measured {fmt_seconds(r['measured'])}, predicted {fmt_seconds(r['predicted'])} "
             f"({r['rel_error'] * 100:+.0f}%), p05–p95 {fmt_seconds(r['p05'])} – {fmt_seconds(r['p95'])}", False),
            (f"assumed: {r['assumed']}", False)])

    # --- what matters most ------------------------------------------------------------------------
    def set_bands(self, u: Uncertainty | None) -> None:
        self.bands = u
        if u is None or not u.sensitivity:
            self.total_bars.setOpts(x0=[], y=[], width=[])
            self.first_bars.setOpts(x0=[], y=[], width=[])
            self.bar_plot.getAxis("left").setTicks([[]])
            self.bar_note.setText("Computing the current scenario's bands (or hidden: View ▸ Uncertainty bands)")
            return
        ranked = sorted(u.sensitivity, key=lambda k: u.sensitivity[k][1])  # largest at the top
        y = np.arange(len(ranked), dtype=float)
        total = np.array([u.sensitivity[k][1] for k in ranked])
        first = np.array([u.sensitivity[k][0] for k in ranked])
        self.total_bars.setOpts(x0=np.zeros_like(y), y=y, width=total, height=0.6)
        self.first_bars.setOpts(x0=np.zeros_like(y), y=y, width=first, height=0.25)
        self.bar_plot.getAxis("left").setTicks([[(float(i), u.labels.get(k, k)) for i, k in enumerate(ranked)]])
        self.bar_plot.setYRange(-0.6, len(ranked) - 0.4, padding=0.0)
        if not self._wide:
            self.bar_plot.getViewBox().setMinimumHeight(BAR_ROW_PX * len(ranked))
        band = u.bands[u.headline]
        what = "step time" if u.headline == "time_per_step_s" else "time per output token"
        top = ranked[-1]
        pw.set_title(self.bar_plot, pw.html_escape(findings.sensitivity_title(what, u.labels.get(top, top),
                                                                               float(total[-1]))), size="13pt")
        # one line: which bar is which is in the hover, so that the stacked scatter keeps its plot height
        self.bar_note.setText(f"Grey total, orange alone. {_cap(what)} {fmt_seconds(band.point)}, p05–p95 "
                              f"{fmt_seconds(band.p05)}–{fmt_seconds(band.p95)}")   # one line: the chart keeps its axis
        self.bar_note.setToolTip(f"{u.samples:,} Sobol samples. {SOBOL_KEY}")
