"""Edge-cloud routing: expected latency and cloud cost per query against the quality kept, as the share r of
queries answered on the device moves (model/views/routing.py). Points: all in the cloud, the published router
results (Hybrid LLM, RouteLLM), the largest r that keeps the quality target (highlighted: the answer to open
question 3 for the current scenario), and the split computing panel's optimum (`set_split_position`: its share
of the layers on the device, read as r).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.routing import CLOUD_BATCH, routing
from trinity_desktop.model.views.split import edge_devices, networks
from trinity_desktop.ui import named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.chart_layout import frame_panel, restack
from trinity_desktop.ui.point_labels import PointLabels
from trinity_desktop.ui.wrap_layout import control_row

SMALL_MODELS = ("llama-3.2-1b", "llama-3.2-3b")
LATENCY = theme.RESOURCE_COLORS["bandwidth"]
COST = theme.RESOURCE_COLORS["compute"]
HOT = theme.COMPONENT_COLORS["optimizer"]   # vermillion: the answer point


def routing_title(x) -> str:
    """The finding: the largest share on device that keeps the target, with its cost and latency change."""
    i = int(np.argmin(np.abs(x.r - x.best_r)))
    saved = 1 - x.cloud_gpu_s[i] / x.cloud_gpu_s[0]
    change = x.latency_s[i] / x.latency_s[0]
    verb = "raises" if change > 1 else "cuts"
    return (f"Route {x.best_r:.0%} of queries on device: {x.target:.0%} quality, {saved:.0%} less cloud GPU time; "
            f"{verb} latency {x.latency_s[0]:.1f} s → {x.latency_s[i]:.1f} s")


class RoutingPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("RoutingPanel")
        self.setAccessibleName("Edge-cloud routing: latency and cloud cost against quality kept")
        self.current = None
        self.split_position: float | None = None
        devs = edge_devices()
        self.device_combo = named_combo.labelled_combo("Device", "Edge device that answers the routed queries",
                                              [(d.name, k) for k, d in devs.items()])
        self.model_combo = named_combo.labelled_combo("Small model", "Model on the device (Q4_K weights)",
                                             [(model_presets()[k].name, k) for k in SMALL_MODELS], min_chars=8)
        self.model_combo.setCurrentIndex(1)
        self.network_combo = named_combo.labelled_combo("Network", "Uplink and round trip to the cloud",
                                               [(n.name, k) for k, n in networks().items()], min_chars=8)
        self.network_combo.setCurrentIndex(list(networks()).index("4g"))
        for combo in (self.device_combo, self.model_combo, self.network_combo):
            combo.currentIndexChanged.connect(lambda _i: self.refresh())
        controls = control_row((("Device", self.device_combo), ("Small model", self.model_combo),
                                ("Network", self.network_combo)), pw.font())

        bg = theme.THEMES[theme.current_theme()]["plot_bg"]
        self.title = QtWidgets.QLabel("")
        self.title.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.title.setObjectName("RoutingTitle")
        self.title.setWordWrap(True)
        self.title.setFont(pw.font(14, bold=True))
        self.title.setAccessibleName("Routing finding")
        self.lat_widget = pg.PlotWidget(background=bg)
        self.cost_widget = pg.PlotWidget(background=bg)
        self.lat_widget.setAccessibleName("Expected latency against quality kept chart")
        self.cost_widget.setAccessibleName("Cloud GPU-seconds per query against quality kept chart")
        self.lplot, self.cplot = self.lat_widget.getPlotItem(), self.cost_widget.getPlotItem()
        pw.style_plot(self.lplot, "Expected latency per query", left="seconds", bottom="quality kept (% of cloud model)")
        pw.style_plot(self.cplot, "Cloud GPU time per query", left="GPU-seconds", bottom="quality kept (% of cloud model)")
        for plot in (self.lplot, self.cplot):
            pw.freeze_view(plot)
            plot.showGrid(x=True, y=True, alpha=0.2)
        self.lat_line = pg.PlotDataItem([], [], pen=pg.mkPen(LATENCY, width=3))
        self.cost_line = pg.PlotDataItem([], [], pen=pg.mkPen(COST, width=3))
        self.lplot.addItem(self.lat_line)
        self.cplot.addItem(self.cost_line)
        fg = theme.plot_text_color()
        self.lat_points = pg.ScatterPlotItem(size=11, pen=pg.mkPen(fg), brush=pg.mkBrush(LATENCY))
        self.cost_points = pg.ScatterPlotItem(size=11, pen=pg.mkPen(fg), brush=pg.mkBrush(COST))
        self.lat_best = pg.ScatterPlotItem(size=18, symbol="star", pen=pg.mkPen(fg), brush=pg.mkBrush(HOT))
        self.cost_best = pg.ScatterPlotItem(size=18, symbol="star", pen=pg.mkPen(fg), brush=pg.mkBrush(HOT))
        for plot, items in ((self.lplot, (self.lat_points, self.lat_best)), (self.cplot, (self.cost_points,
                                                                                         self.cost_best))):
            for item in items:
                plot.addItem(item)
        self.lat_labels = PointLabels(self.lplot, 5)
        self.cost_labels = PointLabels(self.cplot, 5)
        self.lhover = pw.HoverReadout(self.lplot, self.hover_text)
        self.chover = pw.HoverReadout(self.cplot, self.hover_text)
        pw.LeaveFilter(self.lat_widget, self.lhover.leave)
        pw.LeaveFilter(self.cost_widget, self.chover.leave)
        self.caption = QtWidgets.QLabel("")
        self.caption.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.caption.setObjectName("RoutingCaption")
        self.caption.setWordWrap(True)
        self.caption.setFont(pw.font(11))

        self.plots = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.LeftToRight)
        self.plots.addWidget(self.lat_widget, 1)
        self.plots.addWidget(self.cost_widget, 1)
        frame_panel(self, controls, self.title, self.plots, self.caption)
        self.refresh()

    def resizeEvent(self, event):  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        restack(self, self.plots)

    def update_results(self, results: Results) -> None:
        """The cloud side follows the current scenario when it is an inference deployment."""
        self.current = results.scenario
        self.refresh()

    def set_split_position(self, position: float) -> None:
        """The split computing panel's optimum: its share of the layers on the device, drawn at r = share."""
        self.split_position = float(position)
        self.refresh()

    def _marks(self, x):
        """(r, short label) of the marked points: all cloud, the published results, the split optimum."""
        marks = [(0.0, "all in the cloud")]
        marks += [(p.share_small, p.label.split(":")[0]) for p in x.points]
        if self.split_position is not None and self.split_position <= x.r[-1]:
            marks.append((self.split_position, f"split optimum ({self.split_position:.0%} of layers on device)"))
        return marks

    def refresh(self) -> None:
        self.x = x = routing(self.device_combo.currentData(), self.model_combo.currentData(),
                             self.network_combo.currentData(), current=self.current)
        q = 100 * x.quality
        self.lat_line.setData(q, x.latency_s)
        self.cost_line.setData(q, x.cloud_gpu_s)
        marks = self._marks(x)
        mr = np.array([r for r, _ in marks])
        mq = 100 * np.interp(mr, x.r, x.quality)
        ml = np.interp(mr, x.r, x.latency_s)
        mc = np.interp(mr, x.r, x.cloud_gpu_s)
        self.lat_points.setData(mq, ml)
        self.cost_points.setData(mq, mc)
        bq, bl, bc = (100 * float(np.interp(x.best_r, x.r, x.quality)), float(np.interp(x.best_r, x.r, x.latency_s)),
                      float(np.interp(x.best_r, x.r, x.cloud_gpu_s)))
        self.lat_best.setData([bq], [bl])
        self.cost_best.setData([bq], [bc])
        same = [t for r, t in marks if abs(r - x.best_r) < 1e-9]   # a published point at the answer names it
        at = f" ({same[0]})" if same else ""
        best = f"r = {x.best_r:.0%}{at}: {bl:.1f} s"
        self.lat_labels.set([(bq, bl, best, True), *((float(a), float(b), t, False) for a, b, (_r, t)
                                                      in zip(mq, ml, marks, strict=True))],
                            lines=[tuple(zip(q, x.latency_s, strict=True))])
        self.cost_labels.set([(bq, bc, f"r = {x.best_r:.0%}{at}: {bc:.2f} GPU-s", True),
                              *((float(a), float(b), t, False) for a, b, (_r, t) in zip(mq, mc, marks, strict=True))],
                             lines=[tuple(zip(q, x.cloud_gpu_s, strict=True))])
        lo = float(q.min())
        for plot, ys in ((self.lplot, x.latency_s), (self.cplot, x.cloud_gpu_s)):
            plot.setXRange(lo - 0.6, 100.6, padding=0)
            plot.setYRange(0, float(ys.max()) * 1.2, padding=0)
        self.title.setText(routing_title(x))
        cloud = x.cloud_scenario
        self.caption.setText(
            f"Device: {x.device_scenario.model.name} Q4_K, {x.device_s:.1f} s per query; cloud: {cloud.model.name} "
            f"on {cloud.gpus}× {cloud.hardware.name} at batch {CLOUD_BATCH}, {x.cloud_s:.1f} s incl. "
            f"{x.network_s * 1e3:.0f} ms network (prompt {cloud.prompt_len}, output {cloud.gen_len} tokens). Quality "
            "joins the published router points (Hybrid LLM, RouteLLM; different model pairs) with straight lines; "
            "beyond the last one nothing is drawn.")

    def hover_text(self, qx: float, _y: float) -> str:
        x = self.x
        i = int(np.argmin(np.abs(100 * x.quality - qx) + 0.001 * x.r))
        return pw.hover_html([(f"r = {x.r[i]:.0%} of queries on device", True),
                              (f"quality kept {x.quality[i]:.1%}; latency {x.latency_s[i]:.2f} s", False),
                              (f"cloud {x.cloud_gpu_s[i]:.3f} GPU-s, device {x.device_energy_j[i]:.0f} J per query",
                               False)])
