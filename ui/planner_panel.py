"""Planner: every layout of the current job searched off the GUI thread; the Pareto front and a 2-D map.

Training (model/search/planner.py): the Pareto front of step time against memory per GPU, one dot per layout,
coloured by its binding resource (theme.RESOURCE_COLORS); the ring marks the fastest, the diamond the scenario
in force. Hover a dot for its layout; click it to load that layout as one undoable edit. The map shows, for
each pair of values of two chosen axes (TP x PP, micro-batch x ZeRO, ...), the best step time over every other
axis (cividis, log scale), hatched where no layout fits, with contour lines of step time.

Inference (model/search/serving_planner.py): the Pareto front of tokens/s per GPU against time per output token over
TP, batch, weight and KV formats and KV offload within the scenario's GPU count; click loads the layout. The search
runs in a worker thread (a one-thread QThreadPool): a progress bar follows it, Cancel stops it between chunks, and
an edit that changes the job (model, hardware, GPUs, batch, lengths, formats) cancels the running search and starts
a new one; edits of the layout alone only move the diamond.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model import Results, Scenario
from trinity_desktop.model.search.capacity_planner import CapacityPlan
from trinity_desktop.model.search.planner import AXES
from trinity_desktop.ui import findings, label_layout, named_combo, planner_readout, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.batch_readout import BatchReadout
from trinity_desktop.ui.cost_readout import CostReadout
from trinity_desktop.ui.pareto_bars import ParetoBars
from trinity_desktop.ui.planner_map import MapMarks, best_cell, contour_segments
from trinity_desktop.ui.planner_panel_capacity import CapacityMode, capacity_edit
from trinity_desktop.ui.planner_search import (
    AXIS_CHOICES,
    AXIS_LABELS,
    JOB_FIELDS,
    Search,
    SearchSignals,
    edit_for,
    hatch_segments,
    label_spots,
    map_best,
    serving_search,
    short_layout,
    training_search,
    value_text,
)
from trinity_desktop.ui.units import fmt_seconds
from trinity_desktop.ui.wrap_layout import control_row

HATCH_COLOR, CURRENT_COLOR = theme.MUTED_COLOR, theme.FOCUS_COLOR
DOT_PX, HOVER_PX = 13.0, 16.0
MAP_SPAN = 8.0   # the map's colours span the best time to 8x it ("≥" on the bar): a 572-s outlier made all navy


class PlannerPanel(CapacityMode, QtWidgets.QWidget):
    editRequested = QtCore.Signal(dict)
    planReady = QtCore.Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("PlannerPanel")
        self.setAccessibleName("Layout planner")
        self.plan = None
        self._scenario: Scenario | None = None
        self._job_key = None
        self._generation = 0
        self._stop = threading.Event()
        self._points: list = []
        self._xy = np.zeros((0, 2))
        self._log_y = False
        self._current_xy = None
        self._loaded_tp = None
        self.pool = QtCore.QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.signals = SearchSignals(self)
        self.signals.progressed.connect(self._progressed)
        self.signals.finished.connect(self._finished)
        self.signals.failed.connect(self._failed)

        self.x_combo = named_combo.labelled_combo("Map x axis", "Layout axis across the map",
                                         [(AXIS_CHOICES[a], a) for a in AXES], 8)
        self.y_combo = named_combo.labelled_combo("Map y axis", "Layout axis up the map", [(AXIS_CHOICES[a], a) for a in AXES], 8)
        self.x_combo.setCurrentIndex(AXES.index("pp"))
        self.y_combo.setCurrentIndex(AXES.index("tp"))
        for combo in (self.x_combo, self.y_combo):
            combo.currentIndexChanged.connect(lambda _i: self.restart())
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName("Search progress")
        self.progress.setToolTip("Share of the layout space searched")
        self.progress.setMaximumWidth(90)   # the map's axes, progress and Cancel fit one line of a 1366 half
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Cancel search")
        self.cancel_button.setToolTip("Stop the running search (what was found so far is shown)")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        # a row that wraps in a narrow dock: its width never squeezes the Scenario form (it did at 1366)
        self.mode_combo = self._mode_combo()  # serving: best layouts, or capacity (#23, ui/planner_panel_capacity.py)
        top = control_row([("Map:", self.x_combo), ("×", self.y_combo), ("Question:", self.mode_combo), self.progress,
                           self.cancel_button], pw.font())
        self._show_question(False)
        for widget in (self.x_combo.parentWidget(), self.y_combo.parentWidget(), self.progress,
                       self.mode_combo.parentWidget()):
            widget.setProperty("editingControl", True)   # off the slides, captions too (trinity_desktop/slide_controls)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("Planner charts")
        self.graphics.setAccessibleDescription(
            "Left: the Pareto front of the searched layouts, step time against memory per GPU (inference: tokens "
            "per second per GPU of the budget, idle GPUs included, against time per output token), coloured by the binding resource; hover for the "
            "layout, click to load it. Right: the best step time for each pair of values of two layout axes, "
            "hatched where nothing fits, with contour lines of step time.")
        self.front_plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0,
                                                             axisItems={"left": pw.LogSIAxis(orientation="left")})
        pw.style_plot(self.front_plot, "Pareto front", "step time (s)", "memory per GPU (GB)")
        self.front_plot.showGrid(x=True, y=True, alpha=0.2)
        self.front_plot.setMouseEnabled(x=False, y=False)
        self.front_plot.hideButtons()
        self.front_plot.setMenuEnabled(False)
        self.front_line = pg.PlotCurveItem(pen=pg.mkPen(theme.MUTED_COLOR, width=1.5))
        self.scatter = pg.ScatterPlotItem(pxMode=True, size=DOT_PX)
        self.best_ring = pg.ScatterPlotItem(pxMode=True, size=DOT_PX + 10, brush=None,
                                            pen=pg.mkPen(theme.RESOURCE_COLORS["compute"], width=3))
        self.current = pg.ScatterPlotItem(pxMode=True, size=DOT_PX + 4, symbol="d", brush=pg.mkBrush(CURRENT_COLOR),
                                          pen=pg.mkPen(theme.plot_text_color()))
        for z, item in enumerate((self.front_line, self.scatter, self.best_ring, self.current)):
            item.setZValue(z)
            self.front_plot.addItem(item)
        self.bars = ParetoBars(self.front_plot, self.pool, self)  # p05-p95 time bars, computed on the worker
        self.bars.ready.connect(self._draw_bars)

        self.map_plot: pg.PlotItem = self.graphics.addPlot(row=0, col=1)
        pw.style_plot(self.map_plot, "Best step time")
        pw.freeze_view(self.map_plot)
        self.map_plot.getViewBox().setDefaultPadding(0.0)
        self.cmap = pg.colormap.get(theme.HEATMAP_COLORMAP)
        self.image = pg.ImageItem()
        self.map_plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=self.cmap, interactive=False, width=20)
        self.colorbar.axis.setStyle(tickFont=pw.font())
        self.colorbar.axis.setWidth(80)
        self.graphics.addItem(self.colorbar, row=0, col=2)
        self.marks = MapMarks(self.map_plot, self.colorbar)   # its label, the ring and the theme's text colours
        self.hatch = pg.PlotCurveItem(pen=pg.mkPen(HATCH_COLOR, width=1.5), connect="pairs")
        self.contours = pg.PlotCurveItem(pen=pg.mkPen(theme.ON_DARK, width=2), connect="pairs")
        self.contour_labels: list[pg.TextItem] = []
        self.map_plot.getViewBox().sigResized.connect(self._place_contour_labels)
        for z, item in enumerate((self.hatch, self.contours), start=2):
            item.setZValue(z)
            self.map_plot.addItem(item, ignoreBounds=True)

        self.hover = pw.HoverReadout(self.front_plot, self.hover_text_at, html=True)
        pw.LeaveFilter(self.graphics, self.hover.leave)
        self.map_hover = pw.HoverReadout(self.map_plot, self.map_text_at, html=True)
        self.front_plot.scene().sigMouseClicked.connect(self._clicked)

        self.status = QtWidgets.QLabel("Waiting for a scenario.")
        self.status.setFont(pw.font())
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Planner summary")
        self.status.setToolTip("What the search covered: layouts searched, how many fit, why the others do not")
        legend = " ".join(pw.key_entry("●", theme.RESOURCE_LABELS[r], theme.RESOURCE_COLORS[r])
                          for r in theme.RESOURCE_COLORS)
        self._legend_html = pw.key_line((
            f"{legend} (binding&nbsp;resource)", pw.key_entry("◯", "best"),
            pw.key_entry("◆", "scenario in force", CURRENT_COLOR), pw.key_entry("▨", "nothing fits", HATCH_COLOR),
            pw.key_entry("━", "equal best step time (labelled)")))
        self.legend = QtWidgets.QLabel(self._legend_html)
        self.legend.setFont(pw.font())
        self.legend.setWordWrap(True)
        self.legend.setAccessibleName("Planner legend")
        self.legend.setToolTip("Dot colour: the resource that binds the layout; ring: the best layout (training: the "
                               "fastest that fits; inference: the most tokens/s per GPU); bars (View > Uncertainty "
                               "bands): p05–p95 of the layout's time over the assumption ranges")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.graphics, 1)
        self.graphics.installEventFilter(self)   # side by side or stacked, by the charts' own area (eventFilter)
        layout.addWidget(self.legend)
        layout.addWidget(self.status)
        self.batch_readout = BatchReadout()  # global batch against the published optimum
        layout.addWidget(self.batch_readout)
        self.cost_readout = CostReadout()  # cost and energy per million tokens (#23)
        layout.addWidget(self.cost_readout)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """A theme change redraws the map: its colour map, contours, ring and every text in the new theme."""
        super().changeEvent(event)
        if pw.is_theme_change(event):
            self.marks.restyle()
            if getattr(self.plan, "map_time", None) is not None:   # a training plan: serving ones draw no map
                self._draw_map(self.plan)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt name)
        """The charts side by side when their area is wider than tall (stacked in a slide's 670 × 410 px, each had
        90 px of height), the map under the front in a narrow one (a half-width dock)."""
        if watched is self.graphics and event.type() == QtCore.QEvent.Type.Resize:
            self._arrange(self.graphics.width() >= 1.2 * max(self.graphics.height(), 1))
        return False

    def _arrange(self, wide: bool) -> None:
        if getattr(self, "_wide", None) == wide:
            return
        self._wide = wide
        layout = self.graphics.ci
        for item in (self.map_plot, self.colorbar):
            layout.removeItem(item)
        row, col = (0, 1) if wide else (1, 0)
        layout.addItem(self.map_plot, row=row, col=col)
        layout.addItem(self.colorbar, row=row, col=col + 1)

    # ------------------------------------------------------------------ search
    def update_results(self, results: Results) -> None:
        sc = results.scenario
        self._scenario = sc
        self.batch_readout.update_results(results)
        self.cost_readout.update_results(results)
        key = self._job(sc)
        self._show_current(results)
        if key != self._job_key:
            self._job_key = key
            self.start_search(sc)

    def _job(self, sc: Scenario) -> tuple:
        """What the search depends on. The GPU count is the training job's size; for serving it is the budget,
        kept when the scenario's GPUs (the TP degree) change because a dot of this panel was loaded."""
        budget = sc.gpus
        if sc.kind != "train" and self._job_key is not None and sc.gpus == self._loaded_tp:
            budget = self._job_key[1]
        return tuple(getattr(sc, f) for f in JOB_FIELDS), budget, self.map_axes(), self._mode_key(sc)

    def map_axes(self) -> tuple[str, str]:
        return self.x_combo.currentData(), self.y_combo.currentData()

    def restart(self) -> None:
        """Search again for the scenario shown (the map axes changed)."""
        sc = self._scenario
        if sc is not None:
            self._job_key = self._job(sc)
            self.start_search(sc)

    def start_search(self, sc: Scenario) -> None:
        """Cancel the running search (if any) and search the job of `sc` in the worker thread."""
        self._stop.set()
        self._stop = threading.Event()
        self._generation += 1
        axes = self.map_axes()
        budget = self._job_key[1] if self._job_key is not None else sc.gpus
        self._show_question(sc.kind != "train")
        if self.capacity_mode(sc):  # capacity (#23): the fewest GPUs for the request rate
            fn = self._start_capacity(sc, budget)
            if fn is None:
                return
        elif sc.kind == "train":
            if axes[0] == axes[1]:
                self.status.setText("Choose two different map axes.")
                return
            fn = training_search(sc, budget, axes)
        else:
            fn = serving_search(sc, budget)
        self.progress.setValue(0)
        self.cancel_button.setEnabled(True)
        self.status.setText("Searching every layout")
        self.pool.start(Search(fn, self._generation, self.signals, self._stop))

    def cancel(self) -> None:
        self._stop.set()

    def stop_workers(self) -> None:
        """The app is quitting: stop the search and wait for the worker (it checks the stop flag per chunk)."""
        self.cancel()
        self.wait_idle(10000)

    def wait_idle(self, msecs: int = 60000) -> bool:
        """Block until the worker is idle (tests and exports)."""
        return self.pool.waitForDone(msecs)

    def _progressed(self, generation: int, fraction: float) -> None:
        if generation == self._generation:
            self.progress.setValue(int(round(1000 * fraction)))

    def _failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self.cancel_button.setEnabled(False)
            self.status.setText(f"Search failed: {message}")

    def _finished(self, generation: int, plan) -> None:
        if generation != self._generation:
            return  # a stale search: a newer one is running or done
        self.plan = plan
        self.cancel_button.setEnabled(False)
        if not plan.cancelled:
            self.progress.setValue(1000)
        self._draw(plan)
        self.planReady.emit(plan)

    # ------------------------------------------------------------------ drawing
    def _draw(self, plan) -> None:
        if isinstance(plan, CapacityPlan):
            self._draw_capacity(plan)
            return
        self.legend.setText(self._legend_html)
        training = hasattr(plan, "not_fitting_reasons")
        self._points = list(plan.pareto)
        if training:
            xy = [(c.memory_per_gpu_bytes / 1e9, c.time_per_step_s) for c in self._points]
            pw.style_plot(self.front_plot, "Pareto front: step time vs memory", "step time (s)", "memory per GPU (GB)")
        else:
            xy = [(c.tpot_s * 1e3, c.tokens_per_s_per_gpu) for c in self._points]
            pw.style_plot(self.front_plot, "Pareto front: throughput vs latency", "tokens/s per GPU",
                          "time per output token (ms)")
        self._xy = np.asarray(xy, float).reshape(-1, 2)
        self._log_y = training  # step times span decades (full recompute, deep ZeRO-3 at the memory end)
        self.front_plot.getAxis("left").setLogMode(False, self._log_y)  # items get log10 values themselves
        brushes = [pg.mkBrush(theme.RESOURCE_COLORS.get(c.results.bottleneck, theme.FALLBACK_COLOR))
                   for c in self._points]
        view = self._view_xy()
        self.scatter.setData(x=view[:, 0], y=view[:, 1], brush=brushes, pen=pg.mkPen(theme.plot_text_color()))
        self.front_line.setData(view[:, 0], view[:, 1])
        best = plan.best
        if best is not None and best in self._points:
            i = self._points.index(best)
            self.best_ring.setData(x=[view[i, 0]], y=[view[i, 1]])
        else:
            self.best_ring.setData(x=[], y=[])
        self._place_current()
        self._fit_front()
        self.bars.request([c.scenario for c in self._points])
        self.map_plot.setVisible(training)
        self.x_combo.setEnabled(training)
        self.y_combo.setEnabled(training)
        self.colorbar.setVisible(training)
        if training:
            self._draw_map(plan)
        self.status.setText(self.summary_text())
        self._update_title(plan, training)
        if best is not None and self._scenario is not None:  # cost and power (#23): the best layout's, per GPU
            self.cost_readout.update_best(best.as_json()["tokens_per_s_per_gpu"], self._scenario)

    def _update_title(self, plan, training: bool) -> None:
        """The finding: the best layout and its step time (or tokens/s per GPU), of how many fit."""
        j = plan.as_json()
        best = plan.best
        value = (best.time_per_step_s if training else best.tokens_per_s_per_gpu) if best is not None else 0.0
        pw.set_title(self.front_plot, pw.html_escape(findings.planner_title(
            short_layout(best.layout) if best is not None else "", training, value, int(j["feasible"]),
            int(j["configurations_evaluated"]))), size="13pt")

    def _view_xy(self) -> np.ndarray:
        """The Pareto dots in view coordinates (log10 of the step time on a log axis)."""
        xy = self._xy.copy()
        if self._log_y and len(xy):
            xy[:, 1] = np.log10(xy[:, 1])
        return xy

    def _fit_front(self) -> None:
        pts = self._xy
        cur = self._current_xy
        if cur is not None:
            pts = np.vstack([pts, [cur]])
        pts = np.vstack([pts, self.bars.extent(self._xy)])
        if len(pts) == 0:
            return
        if self._log_y:
            pts = np.column_stack([pts[:, 0], np.log10(pts[:, 1])])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        pad = np.maximum((hi - lo) * 0.08, np.abs(hi) * 0.02 + 1e-9)
        self.front_plot.setRange(xRange=(lo[0] - pad[0], hi[0] + pad[0]), yRange=(lo[1] - pad[1], hi[1] + pad[1]),
                                 padding=0)

    def _show_current(self, results: Results) -> None:
        if results.kind == "train":
            x, y = results.memory_total / 1e9, results.time_total
        else:
            spec = results.speculative  # speculative decoding (#23): the scenario's own TPOT and throughput
            x, y = ((spec.time_per_output_token_s * 1e3, spec.tokens_per_s / results.scenario.gpus) if spec else
                    (results.infer["time_per_output_token_s"] * 1e3, results.infer["tokens_per_s"] / results.scenario.gpus))
        fits = results.fits and math.isfinite(x) and math.isfinite(y) and y > 0 and not self.capacity_mode(
            results.scenario)  # capacity mode's axes are rates and GPUs: no diamond
        self._current_xy = (x, y) if fits else None
        self._place_current()

    def _place_current(self) -> None:
        cur = self._current_xy
        if cur is None:
            self.current.setData(x=[], y=[])
            return
        self.current.setData(x=[cur[0]], y=[math.log10(cur[1]) if self._log_y else cur[1]])

    def _draw_map(self, plan) -> None:
        t = np.asarray(plan.map_time, float)
        nx, ny = t.shape
        finite = np.isfinite(t)
        logt = np.log10(np.where(finite, t, 1.0))
        lo, hi = (logt[finite].min(), logt[finite].max()) if finite.any() else (0.0, 1.0)
        clipped, hi = hi - lo > math.log10(MAP_SPAN), min(hi, lo + math.log10(MAP_SPAN))   # slower: top colour
        span = max(hi - lo, 1e-9)
        self.cmap = theme.readable_colormap(pw.plot_background())   # #21: no cell merges with the plot
        self.colorbar.setColorMap(self.cmap)
        self.contours.setPen(pg.mkPen(theme.line_on_map(pw.plot_background()), width=2))
        rgba = self.cmap.map(np.clip((logt - lo) / span, 0, 1), mode="byte")
        rgba[~finite] = QtGui.QColor(pw.plot_background()).getRgb()   # nothing fits: background, hatched
        self.image.setImage(np.ascontiguousarray(rgba), autoLevels=False, levels=(0, 255))
        self.image.setRect(QtCore.QRectF(0, 0, nx, ny))
        self.hatch.setData(*hatch_segments(zip(*np.nonzero(~finite), strict=True)))
        for axis, name, values in zip(("bottom", "left"), plan.map_axes, plan.map_values, strict=True):
            label_layout.set_thinned_ticks(self.map_plot.getAxis(axis),
                                           [(i + 0.5, value_text(name, v)) for i, v in enumerate(values)])
            pw.set_axis_label(self.map_plot, axis, AXIS_LABELS[name])   # in the theme's colour, wrapped whole
        self.map_plot.setRange(xRange=(0, nx), yRange=(0, ny), padding=0)
        where, best_s = map_best(plan)
        pw.set_title(self.map_plot, pw.html_escape(findings.map_title(where, best_s, int((~finite).sum()), t.size)))
        self.colorbar.setLevels((lo, hi))
        ticks = np.linspace(lo, hi, 4) if hi - lo > 1e-9 else [lo]
        self.colorbar.axis.setTicks([[(float(v), ("≥ " if clipped and k == len(ticks) - 1 else "")
                                       + fmt_seconds(10 ** v)) for k, v in enumerate(ticks)]])
        self._draw_contours(logt, finite, lo, hi, rgba)
        self.marks.show_best(best_cell(plan))   # the fastest cell ringed: the one marked element

    def _draw_contours(self, logt, finite, lo, hi, rgba) -> None:
        """Contours of log step time at three levels, only between cells where a layout fits; labelled where they fit."""
        xs, ys, self._contour_lines = contour_segments(logt, finite, lo, hi)
        self._contour_rgba = rgba
        self.contours.setData(xs, ys)
        self._place_contour_labels()

    def _place_contour_labels(self) -> None:
        """Each contour's label wholly inside the map, clear of the others and of every drawn segment (`label_spots`)."""
        lines, rgba = getattr(self, "_contour_lines", []), getattr(self, "_contour_rgba", None)
        px_w, px_h = self.map_plot.getViewBox().viewPixelSize()
        while len(self.contour_labels) < len(lines):
            label = pw.label_item(color=theme.ON_DARK, anchor=(0.5, 1.0), size=11, bold=True)
            self.map_plot.addItem(label, ignoreBounds=True)
            self.contour_labels.append(label)
        for label, (text, _) in zip(self.contour_labels, lines, strict=False):
            label.setText(text)
        sizes = [((b.width() + 4) * px_w, (b.height() + 2) * px_h)   # map units, a little margin round the text
                 for b in (label.textItem.boundingRect() for label in self.contour_labels[:len(lines)])]
        spots = (label_spots([mids for _, mids in lines], sizes, rgba.shape[:2], np.column_stack(self.contours.getData()))
                 if rgba is not None else [])   # placed again when the map is resized
        for k, label in enumerate(self.contour_labels):   # in black or white, as the map cell under it reads
            spot = spots[k] if k < len(spots) and px_w > 0 and px_h > 0 else None
            label.setVisible(spot is not None)
            if spot is not None:
                cell = (min(int(spot[0]), rgba.shape[0] - 1), min(int(spot[1] + sizes[k][1] / 2), rgba.shape[1] - 1))
                label.setColor(pw.contrast_text_color(rgba[cell]))
                label.setPos(*spot)

    # ------------------------------------------------------------------ reading and clicking
    def point_at(self, x: float, y: float) -> int:
        """Index of the Pareto dot under data point (x, y) within HOVER_PX pixels, or -1."""
        if not len(self._xy):
            return -1
        vb = self.front_plot.getViewBox()
        here = vb.mapViewToScene(QtCore.QPointF(x, y))
        d = [math.hypot(p.x() - here.x(), p.y() - here.y())
             for p in (vb.mapViewToScene(QtCore.QPointF(float(a), float(b))) for a, b in self._view_xy())]
        i = int(np.argmin(d))
        return i if d[i] <= HOVER_PX else -1

    def hover_text_at(self, x: float, y: float) -> str:
        """The Pareto dot's read-out under data point (x, y) (ui/planner_readout.py), or ""."""
        i = self.point_at(x, y)
        if i >= 0 and isinstance(self.plan, CapacityPlan):
            return self._capacity_hover(i)
        return planner_readout.point_text(self._points[i], self.bars.text(i)) if i >= 0 else ""

    def set_bands(self, u) -> None:
        """View > Uncertainty bands: the dots' p05-p95 time bars are shown while bands are (u), hidden for None."""
        self.bars.set_enabled(u is not None, u.set_name if u is not None else None)
        self._draw_bars()

    def _draw_bars(self) -> None:
        self._fit_front()
        self.bars.draw(self._xy, self._log_y)

    def map_text_at(self, x: float, y: float) -> str:
        """The map cell's read-out under map coordinates (x, y) (ui/planner_readout.py), or ""."""
        return planner_readout.map_cell_text(self.plan, x, y)

    def click_point(self, i: int) -> None:
        """Load Pareto point i as the scenario (one undoable edit)."""
        if 0 <= i < len(self._points) and isinstance(self.plan, CapacityPlan):
            self._loaded_tp = self._points[i].layout["tp"] * self._points[i].layout["pp"]
            self.editRequested.emit(capacity_edit(self._points[i]))
        elif 0 <= i < len(self._points):
            layout = dict(self._points[i].layout)
            self._loaded_tp = layout["tp"] * layout["pp"] if "replicas" in layout else None  # the replica's GPUs
            self.editRequested.emit(edit_for(layout))

    def _clicked(self, event) -> None:
        p = pw.clicked_view_point(self.front_plot, event)
        if p is not None:
            self.click_point(self.point_at(p.x(), p.y()))

