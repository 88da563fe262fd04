"""The memory wall over time: the hardware presets' peak FLOP/s, HBM bandwidth, HBM capacity and scale-up /
scale-out bandwidth per device by release year, each relative to its own fitted 2020 value (log scale), with the
least-squares growth per two years as lines and Gholami et al.'s published rates dashed; a second view puts the
dated models' memory needs (weights + 32k-token KV) against the devices' HBM capacity
(model/views/memory_wall.py). The caption is open question 4's computed answer.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from trinity_desktop.model.inputs.presets import hardware_presets
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.memory_wall import LABELS, memory_wall, open_question_4
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.axes import OneTwoFiveAxis
from trinity_desktop.ui.point_labels import END_COLUMN, PointLabels
from trinity_desktop.ui.scale_chart import ScaleChart, combo, set_log_data
from trinity_desktop.ui.units import fmt_bytes

COLORS = {"peak_flops": theme.RESOURCE_COLORS["compute"], "hbm_bw": theme.RESOURCE_COLORS["bandwidth"],
          "hbm_bytes": theme.RESOURCE_COLORS["memory"], "scaleup_bw": theme.COMPONENT_COLORS["gradients"],
          "scaleout_bw": theme.COMPONENT_COLORS["weights"]}
SYMBOLS = {"peak_flops": "o", "hbm_bw": "s", "hbm_bytes": "d", "scaleup_bw": "t1", "scaleout_bw": "t"}
SHORT = {"peak_flops": "FLOP/s", "hbm_bw": "HBM B/s", "hbm_bytes": "HBM bytes", "scaleup_bw": "scale-up",
         "scaleout_bw": "scale-out"}
BASE_YEAR = 2020.0
LABEL_YEARS = 2.6   # years of axis right of the last device: the fitted lines' names sit there
RING_PX = 22   # the scenario's device: a ring around its markers (11-15 px)
VIEWS = (("Growth since 2020", "growth"), ("Model memory vs HBM", "capacity"), ("Ridge point", "ridge"))


class MemoryWallPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("MemoryWallPanel")
        self.setAccessibleName("The memory wall over time")
        self.view = "growth"
        self.wall = None
        self.view_combo = combo("View", "Growth of each quantity since 2020, or model memory against HBM capacity",
                                VIEWS, self._set_view, 14)
        self.view_combo.setMinimumContentsLength(10)
        self.chart = ScaleChart(
            "MemoryWallChart", "Memory wall over time",
            "Log scale against release year. Growth view: each quantity of the datacenter presets relative to its "
            "fitted 2020 value, points per device, solid fitted lines, dashed published rates (Gholami et al.). "
            "Capacity view: models' weights + KV cache against devices' HBM capacity.",
            left="× its 2020 value", bottom="release year", log_x=False, log_y=True,
            controls=[("View", self.view_combo)], legend_columns=3, y_axis=OneTwoFiveAxis("left"))
        self.points = {q: self.chart.points(COLORS[q], SYMBOLS[q], SHORT[q]) for q in COLORS}
        self.fits = {q: self.chart.line(COLORS[q], 2.0) for q in COLORS}
        self.published = {q: self.chart.line(COLORS[q], 1.5, dash=True) for q in ("peak_flops", "hbm_bw", "scaleup_bw")}
        self.models = self.chart.points(theme.COMPONENT_COLORS["optimizer"], "star", "model weights + 32k KV", 15)
        self.model_fit = self.chart.line(theme.COMPONENT_COLORS["optimizer"], 2.0)
        self.ridge_points = self.chart.points(theme.RESOURCE_COLORS["compute"], "o", "ridge point per device")
        self.ridge_fit = self.chart.line(theme.RESOURCE_COLORS["compute"], 2.0)
        self.ridge_published = self.chart.line(theme.RESOURCE_COLORS["compute"], 1.5, dash=True)
        # the scenario's device, ringed in the focus colour: the one marked element (its points in every view)
        self.ring = pg.PlotDataItem([], [], pen=None, symbol="o", symbolSize=RING_PX, symbolBrush=None,
                                    symbolPen=pg.mkPen(theme.FOCUS_COLOR, width=2.5))
        self.ring.setZValue(20)
        self.fit_labels = PointLabels(self.chart.plot, len(COLORS), sides=END_COLUMN)   # each fitted line named with its rate
        self.chart.plot.addItem(self.ring, ignoreBounds=True)
        self.device_key = ""
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chart)

    def _set_view(self, value) -> None:
        self.view = value
        self.redraw()

    def set_focus(self, what: str, key: str) -> None:
        """A slide's focus ("view", key) opens that view (the combo follows); any other focus leaves it."""
        keys = [v for _label, v in VIEWS]
        if what == "view" and key in keys:
            self.view_combo.setCurrentIndex(keys.index(key))   # its signal redraws
            if self.view != key:
                self._set_view(key)

    def update_results(self, results: Results) -> None:
        if self.wall is None:
            self.wall = memory_wall()
        self.device_key = results.scenario.hardware.key
        self.redraw()

    def redraw(self) -> None:
        wall = self.wall
        if wall is None:
            return
        g = wall.growth
        fit_devices = [d for d in wall.devices if d.in_fit]
        years = np.linspace(min(d.year for d in wall.devices) - 0.3, max(d.year for d in wall.devices) + 0.3, 20)
        growth_view, ridge_view = self.view == "growth", self.view == "ridge"
        shown = list(COLORS) if growth_view else [] if ridge_view else ["hbm_bytes"]
        hover, ys = [], []
        for q in COLORS:
            on = q in shown
            for item in (self.points[q], self.fits[q], self.published.get(q)):
                if item is not None:
                    item.setVisible(on)
            if not on:
                continue
            base = float(g[q].at(BASE_YEAR)) if growth_view else 1.0
            pts = [d for d in fit_devices if d.values[q] > 0]
            set_log_data(self.points[q], [d.year for d in pts], [d.values[q] / base for d in pts])
            set_log_data(self.fits[q], years, g[q].at(years) / base)
            ys += [d.values[q] / base for d in pts]
            if q in self.published:
                rate = g[q].published_per_2y
                set_log_data(self.published[q], years, rate ** ((years - BASE_YEAR) / 2.0))
            hover += [(d.year, d.values[q] / base, f"{d.name} ({d.year:.1f})\n{LABELS[q]}: "
                       f"{d.values[q]:.3g} {'B' if q == 'hbm_bytes' else 'FLOP/s' if q == 'peak_flops' else 'B/s'}\n"
                       f"ridge {d.ridge:.0f} FLOP/B") for d in pts]
        self.models.setVisible(self.view == "capacity")
        self.model_fit.setVisible(self.view == "capacity")
        for item in (self.ridge_points, self.ridge_fit, self.ridge_published):
            item.setVisible(ridge_view)
        if ridge_view:
            ys += self._draw_ridge(fit_devices, years, hover)
        elif growth_view:
            pw.set_axis_label(self.chart.plot, "left", "× its 2020 value")
            self.chart.show_in_legend([(self.points[q], SHORT[q]) for q in COLORS])
            self.chart.set_title(f"Since 2020 peak FLOP/s grew {g['peak_flops'].per_2y:.2f}× per two years, HBM "
                                 f"bandwidth {g['hbm_bw'].per_2y:.2f}×, capacity {g['hbm_bytes'].per_2y:.2f}×")
            self.chart.caption.setText(
                f"Solid: least squares over {len(fit_devices)} datacenter presets. Dashed: Gholami et al. 2024 (3.0× "
                f"FLOP/s, 1.6× DRAM, 1.4× interconnect). Ridge point {g['ridge'].per_2y:.2f}× per two years.")
            self.chart.caption.setToolTip(
                f"Scale-up {g['scaleup_bw'].per_2y:.2f}×, scale-out {g['scaleout_bw'].per_2y:.2f}× per two years. "
                f"Release years: each preset's announcement date (cited in References). Left out (no cited year): "
                f"{', '.join(hardware_presets()[k].name for k in wall.left_out)}.")
        else:
            pw.set_axis_label(self.chart.plot, "left", "bytes")
            self.chart.show_in_legend([(self.points["hbm_bytes"], "HBM capacity"), (self.models, "model weights + 32k KV")])
            set_log_data(self.models, [m.year for m in wall.models], [m.total for m in wall.models])
            set_log_data(self.model_fit, years, g["model_memory"].at(years))
            ys += [m.total for m in wall.models]
            hover += [(m.year, m.total, f"{m.name} ({m.year:.0f})\nweights {fmt_bytes(m.weights_bytes)} + "
                       f"{wall.context // 1024}k KV {fmt_bytes(m.kv_bytes)}") for m in wall.models]
            cap = max(d.values["hbm_bytes"] for d in fit_devices)
            biggest = max(wall.models, key=lambda m: m.total)
            self.chart.set_title(f"Model memory grows {g['model_memory'].per_2y:.2f}× per two years, HBM capacity "
                                 f"{g['hbm_bytes'].per_2y:.2f}×: {biggest.name} needs {biggest.total / cap:.1f}× "
                                 f"the largest device")
            self.chart.caption.setText(f"Models' weights (bf16) + {wall.context // 1024}k-token KV cache, dated by "
                                       "their papers, against one device's HBM.")
            self.chart.caption.setToolTip("Open question 4, computed: " + open_question_4(wall))
        self.chart.set_hover_points(hover)
        self._ring_device(fit_devices, shown, g)
        self._name_fits(shown if growth_view else [], years, g)   # off the rings
        xs = list(years) + ([m.year for m in wall.models] if self.view == "capacity" else [])
        if growth_view:
            xs.append(float(years[-1]) + LABEL_YEARS)   # room right of the lines for their names
        self.chart.fit_range(xs, ys, pad=0.1)

    def _name_fits(self, shown: list[str], years, g) -> None:
        """Each fitted line's name and its growth per two years past its end, right of the data ("FLOP/s 2.05×"),
        FLOP/s in bold: the quantity the others fall behind; names that crowd stack down a column beside the ends,
        and one with no free place is left to the legend."""
        base = {q: float(g[q].at(BASE_YEAR)) for q in shown}
        end = float(years[-1])
        shown = sorted(shown, key=lambda q: -g[q].at(end) / base[q])   # top to bottom: crowded names stack down
        points = [(end, float(np.log10(g[q].at(end) / base[q])), f"{SHORT[q]} {g[q].per_2y:.2f}×",
                   q == "peak_flops") for q in shown]
        lines = [tuple(zip(years, np.log10(g[q].at(years) / base[q]), strict=True)) for q in shown]
        lines += [tuple(zip(years, (years - BASE_YEAR) / 2.0 * np.log10(g[q].published_per_2y), strict=True))
                  for q in shown if q in self.published]   # and off the dashed published rates
        rx, ry = self.ring.getData()
        rings = [(float(x), float(y), RING_PX) for x, y in zip(rx if rx is not None else [], ry if ry is not None else [],
                                                              strict=True)]
        self.fit_labels.set(points, lines=lines, colors=[COLORS[q] for q in shown], marks=rings)

    def _ring_device(self, devices, shown: list[str], g) -> None:
        """Ring the scenario's device at each of its points in the view (none when it has no release year)."""
        me = next((d for d in devices if d.key == self.device_key), None)
        if me is None:
            self.ring.setData([], [])
            return
        if self.view == "ridge":
            ys = [me.ridge]
        else:
            ys = [me.values[q] / (float(g[q].at(BASE_YEAR)) if self.view == "growth" else 1.0)
                  for q in shown if me.values[q] > 0]
        set_log_data(self.ring, [me.year] * len(ys), ys)
        self.chart.legend.addItem(self.ring, me.name)   # the ring names its device
        self.chart.fit_legend()

    def _draw_ridge(self, devices, years, hover: list) -> list[float]:
        """Peak FLOP/s / HBM bandwidth per device (the roofline's ridge, FLOP per byte) with its fitted drift and
        the drift Gholami et al.'s rates imply (3.0× / 1.6× per two years), anchored at the fit's 2020 value."""
        g = self.wall.growth["ridge"]
        set_log_data(self.ridge_points, [d.year for d in devices], [d.ridge for d in devices])
        set_log_data(self.ridge_fit, years, g.at(years))
        published = g.published_per_2y ** ((years - BASE_YEAR) / 2.0) * float(g.at(BASE_YEAR))
        set_log_data(self.ridge_published, years, published)
        hover += [(d.year, d.ridge, f"{d.name} ({d.year:.1f})\nridge {d.ridge:.0f} FLOP/B") for d in devices]
        pw.set_axis_label(self.chart.plot, "left", "FLOP per byte")
        self.chart.show_in_legend([(self.ridge_points, "ridge point per device"), (self.ridge_fit, "fitted drift"),
                                   (self.ridge_published, "Gholami et al.")])
        newest = max(devices, key=lambda d: d.year)
        verb = f"climbs {g.per_2y:.2f}×" if g.per_2y > 1 else f"falls {1 / g.per_2y:.2f}×"
        self.chart.set_title(f"The ridge point {verb} per two years: {newest.name} needs {newest.ridge:.0f} FLOP "
                             "per byte of HBM traffic to be compute-bound")
        self.chart.caption.setText(
            f"Ridge = peak FLOP/s / HBM bandwidth of {len(devices)} datacenter presets by release year; solid: least "
            f"squares, dashed: Gholami et al.'s 3.0× / 1.6× = {g.published_per_2y:.2f}× per two years. A kernel "
            "below its ridge waits on memory.")
        return [d.ridge for d in devices] + list(published)

    def growth(self) -> dict[str, float]:
        return {q: g.per_2y for q, g in self.wall.growth.items()} if self.wall else {}
