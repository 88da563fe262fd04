"""Split computing panel: where to cut a network between an edge device and the cloud (Neurosurgeon).

Stacked bars per split point (device, transfer, cloud time) with the optimum marked, device energy per split
point below, selectors for the model profile, device, network and objective, and log sliders for the uplink
bandwidth and the device speed. All numbers come from `trinity_desktop.model.views.split`.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.formulas.layer_profiles import profile, profile_keys
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.inputs.scenario import Efficiency
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.split import (
    DEFAULT_CLOUD,
    OBJECTIVES,
    edge_devices,
    networks,
    optimal_split,
    split_table,
)
from trinity_desktop.ui import findings, named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.units import choose_time_unit, fmt_bytes, fmt_seconds
from trinity_desktop.ui.wrap_layout import control_row

PART_COLORS = {
    "device": theme.RESOURCE_COLORS["compute"],     # device compute
    "transfer": theme.RESOURCE_COLORS["bandwidth"],  # uplink
    "cloud": theme.ACCENT_COLORS["pink"],            # Okabe-Ito reddish purple: cloud GPU
}
PART_LABELS = {"device": "Device compute", "transfer": "Transfer (RTT + upload)", "cloud": "Cloud compute"}
ENERGY_COLOR = theme.RESOURCE_COLORS["memory"]   # bluish green, apart from the three time parts
OPTIMUM_COLOR = theme.FOCUS_COLOR                 # the one marked split
TITLE_PT = "12pt"   # the time and energy charts' titles
UPLINK_RANGE_MBPS = (0.1, 1000.0)   # slider ends, log scale
SPEED_RANGE = (0.01, 10.0)          # device speed multiplier, log scale
SLIDER_STEPS_PER_DECADE = 100
MIN_CHART_PX, MIN_ENERGY_PX = 160, 200   # never smaller (the text under them wraps); the energy chart also holds a
# two-line title and the split names, so it takes the larger share: at 190 / 170 its plot had 80 px, the latency one 150
SIDE_BY_SIDE_ASPECT = 1.3   # a panel this much wider than tall puts the two charts side by side
END_LABEL_OVERHANG_PX = 30  # "0 cloud" and "11 device" may reach this far past the axis ends
TICK_LABEL_PX = 80          # horizontal room one split-point name needs on the x axis


def _round_ticks(peak: float) -> list[tuple[float, str]]:
    """0 and at least three round 1-2-5 steps up to the peak, inside the 1.25 x peak range (none on its edge)."""
    if peak <= 0:
        return [(0.0, "0")]
    decade = 10.0 ** math.floor(math.log10(peak / 3))   # peak // decade >= 3, so one step always qualifies
    step = max(m * d for d in (decade / 10, decade) for m in (1, 2, 5) if peak // (m * d) >= 3)
    return [(i * step, f"{i * step:g}") for i in range(int(peak // step) + 1)]


def _profile_label(key: str) -> str:
    models = model_presets()
    return models[key].name if key in models else profile(key).name


def _log_to_slider(value: float, lo: float) -> int:
    return int(round(math.log10(value / lo) * SLIDER_STEPS_PER_DECADE))


def _slider_to_log(pos: int, lo: float) -> float:
    return lo * 10 ** (pos / SLIDER_STEPS_PER_DECADE)


class SplitPanel(QtWidgets.QWidget):
    """Neurosurgeon-style split computing: latency parts and device energy for every split point."""

    splitChanged = QtCore.Signal(float)  # optimum position in [0, 1]: 0 = all cloud, 1 = all device
    focusRequested = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("SplitPanel")
        self.setAccessibleName("Split computing: device, transfer and cloud time per split point")
        self._cloud: Hardware = hardware_presets()[DEFAULT_CLOUD]
        self._table: dict | None = None
        self._profile = None
        self._optimum = 0
        self._marked: tuple[int, ...] = ()   # the splits the two charts mark (their ticks are named)
        self._last_position: float | None = None
        self._time_scale, self._time_unit = 1e3, "ms"
        self._updating = False

        # ---------------------------------------------------------------- controls
        self.model_combo = self._combo("Model profile", "Network to split: a CNN's published layer table or a "
                                       "transformer preset processing a 512-token prompt",
                                       [(_profile_label(k), k) for k in profile_keys()])
        self.device_combo = self._combo("Device", "Edge device that runs the first layers",
                                        [(d.name, k) for k, d in edge_devices().items()])
        self.network_combo = self._combo("Network", "Uplink to the cloud; sets the bandwidth slider and the "
                                         "round-trip time", [(n.name, k) for k, n in networks().items()])
        self.objective_combo = self._combo("Objective", "Choose the split minimising end-to-end latency or "
                                           "the device's energy (as Neurosurgeon does)",
                                           [(o.capitalize(), o) for o in OBJECTIVES])
        self.uplink_slider = self._slider("Uplink bandwidth", "Uplink bandwidth, log scale from 0.1 to 1000 "
                                          "Mbit/s (overrides the network's nominal uplink; RTT stays)",
                                          _log_to_slider(UPLINK_RANGE_MBPS[1], UPLINK_RANGE_MBPS[0]))
        self.speed_slider = self._slider("Device speed", "Device speed as a multiple of its datasheet roofline "
                                         "(peak FLOP/s and memory bandwidth), log scale 0.01× to 10×",
                                         _log_to_slider(SPEED_RANGE[1], SPEED_RANGE[0]))
        self.uplink_label = self._value_label("Uplink bandwidth value")
        self.speed_label = self._value_label("Device speed value")

        grid = control_row((("Model", self.model_combo), ("Device", self.device_combo),
                            ("Network", self.network_combo), ("Objective", self.objective_combo),
                            ("Uplink", self._with_value(self.uplink_slider, self.uplink_label)),
                            ("Device speed", self._with_value(self.speed_slider, self.speed_label))), pw.font())

        # ---------------------------------------------------------------- plots
        self.time_widget = pg.PlotWidget(background=pw.plot_background())
        self.energy_widget = pg.PlotWidget(background=pw.plot_background())
        self.time_widget.setMinimumHeight(MIN_CHART_PX)
        self.energy_widget.setMinimumHeight(MIN_ENERGY_PX)
        self.time_widget.setAccessibleName("Latency per split point chart")
        self.time_widget.setAccessibleDescription(
            "Stacked bars: device compute, transfer (round trip plus upload) and cloud compute time for each "
            "split point; the optimum is marked with a triangle. Hover a bar for its numbers.")
        self.energy_widget.setAccessibleName("Device energy per split point chart")
        self.energy_widget.setAccessibleDescription("Device energy (compute plus radio) for each split point, in mJ.")
        self.time_plot: pg.PlotItem = self.time_widget.getPlotItem()
        self.energy_plot: pg.PlotItem = self.energy_widget.getPlotItem()
        for plot in (self.time_plot, self.energy_plot):
            pw.freeze_view(plot)
            plot.showGrid(x=False, y=True, alpha=0.25)
        pw.style_plot(self.time_plot, left="ms")
        pw.style_plot(self.energy_plot, left="mJ",
                      bottom="split point: layers run on the device (0 = all cloud)")
        self.energy_plot.setXLink(self.time_plot)
        for plot in (self.time_plot, self.energy_plot):   # the end names may reach into the axis' margins
            plot.getAxis("bottom").setStyle(hideOverlappingLabels=END_LABEL_OVERHANG_PX)

        self.bar_items = {}
        for name in ("device", "transfer", "cloud"):
            item = pg.BarGraphItem(x=[0.0], height=[0.0], y0=[0.0], width=0.7, brush=PART_COLORS[name],
                                   pen=pg.mkPen(None), name=PART_LABELS[name])
            self.time_plot.addItem(item)
            self.bar_items[name] = item
        self.energy_bars = pg.BarGraphItem(x=[0.0], height=[0.0], width=0.7, brush=ENERGY_COLOR, pen=pg.mkPen(None))
        self.energy_plot.addItem(self.energy_bars)
        self.optimum_marker = pg.ScatterPlotItem(symbol="t", size=18, brush=pg.mkBrush(OPTIMUM_COLOR),
                                                 pen=pg.mkPen(None))
        self.time_plot.addItem(self.optimum_marker)
        self.energy_marker = pg.ScatterPlotItem(symbol="t", size=14, brush=pg.mkBrush(OPTIMUM_COLOR),
                                                pen=pg.mkPen(None))
        self.energy_plot.addItem(self.energy_marker)
        # the key (with the optimum's name) sits under the charts, outside the data
        self.legend_label = QtWidgets.QLabel("")
        self.legend_label.setObjectName("SplitLegend")
        self.legend_label.setFont(pw.font())
        self.legend_label.setWordWrap(True)
        self.legend_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.legend_label.setAccessibleName("Split computing legend")
        self._set_legend("")

        self.time_hover = pw.HoverReadout(self.time_plot, lambda x, y: self.hover_text_at(x, y))
        self.energy_hover = pw.HoverReadout(self.energy_plot, lambda x, y: self.hover_text_at(x, y, energy=True))
        pw.LeaveFilter(self.time_widget, self.time_hover.leave)
        pw.LeaveFilter(self.energy_widget, self.energy_hover.leave)

        self.summary_label = QtWidgets.QLabel("")
        self.summary_label.setObjectName("SplitSummary")
        self.summary_label.setFont(pw.font(12))
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.summary_label.setAccessibleName("Split optimum summary")
        self.summary_label.setToolTip("Where to split and why: the optimum's latency parts against the extremes.")
        self.caption_label = QtWidgets.QLabel("")
        self.caption_label.setObjectName("SplitEnergyCaption")
        self.caption_label.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names are shown as typed, never as HTML
        self.caption_label.setFont(pw.font(11))
        self.caption_label.setWordWrap(True)
        self.caption_label.setAccessibleName("Energy and latency model")

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(grid)
        self.charts = QtWidgets.QBoxLayout(QtWidgets.QBoxLayout.Direction.TopToBottom)
        self.charts.addWidget(self.time_widget, 1)
        self.charts.addWidget(self.energy_widget, 1)
        layout.addLayout(self.charts, 1)
        layout.addWidget(self.legend_label)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.caption_label)

        for combo in (self.model_combo, self.device_combo, self.objective_combo):
            combo.currentIndexChanged.connect(self._recompute)
        self.network_combo.currentIndexChanged.connect(self._network_changed)
        self.uplink_slider.valueChanged.connect(self._recompute)
        self.speed_slider.valueChanged.connect(self._recompute)

        self._updating = True
        self.model_combo.setCurrentIndex(max(self.model_combo.findData("alexnet"), 0))
        self.device_combo.setCurrentIndex(max(self.device_combo.findData("phone-a17-pro"), 0))
        self.network_combo.setCurrentIndex(max(self.network_combo.findData("wifi"), 0))
        self.speed_slider.setValue(_log_to_slider(1.0, SPEED_RANGE[0]))
        self._updating = False
        self._network_changed()

    # ------------------------------------------------------------------ widgets
    def _combo(self, name: str, tip: str, items) -> QtWidgets.QComboBox:
        return named_combo.labelled_combo(name, tip, items, 12)

    def _set_legend(self, where: str, least_energy: str = "") -> None:
        """One key entry per part; each marker and its words are joined by non-breaking spaces. The energy
        chart's ▼ marks its least-energy split when that is not the optimum."""
        parts = [pw.key_entry("■", PART_LABELS[k], PART_COLORS[k]) for k in ("device", "transfer", "cloud")]
        parts += [pw.key_entry("■", "device energy", ENERGY_COLOR),
                  pw.key_entry("▼", f"optimum: {where}" if where else "optimum", OPTIMUM_COLOR)]
        parts += [pw.key_entry("▼", f"least energy: {least_energy}", OPTIMUM_COLOR)] if least_energy else []
        self.legend_label.setText(pw.key_line(parts))

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if pw.is_theme_change(event) and self._table is not None:
            for widget in (self.time_widget, self.energy_widget):
                widget.setBackground(pw.plot_background())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._arrange_charts()

    def side_by_side(self) -> bool:
        return self.charts.direction() == QtWidgets.QBoxLayout.Direction.LeftToRight

    def _arrange_charts(self) -> None:
        """Wide and short (a 1920 dock): charts side by side, each with its own split-point axis; otherwise
        stacked, the upper chart's names left to the shared axis below, so both keep a readable height."""
        wide = self.width() >= SIDE_BY_SIDE_ASPECT * self.height()
        direction = QtWidgets.QBoxLayout.Direction
        self.charts.setDirection(direction.LeftToRight if wide else direction.TopToBottom)
        self.time_plot.getAxis("bottom").setStyle(showValues=wide)
        pw.set_axis_label(self.time_plot, "bottom", "split point (0 = all cloud)" if wide else "")
        pw.set_axis_label(self.energy_plot, "bottom", "split point (0 = all cloud)" if wide else
                          "split point: layers run on the device (0 = all cloud)")
        if self._profile is not None:
            self._set_ticks(self._profile)

    def _slider(self, name: str, tip: str, maximum: int) -> QtWidgets.QSlider:
        slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        slider.setRange(0, maximum)
        slider.setSingleStep(5)
        slider.setPageStep(SLIDER_STEPS_PER_DECADE // 2)
        slider.setAccessibleName(name)
        slider.setToolTip(tip)
        slider.setMinimumWidth(140)
        return slider

    def _value_label(self, name: str) -> QtWidgets.QLabel:
        label = QtWidgets.QLabel("")
        label.setFont(pw.font(bold=True))
        label.setAccessibleName(name)
        label.setToolTip(name)
        label.setMinimumWidth(90)
        return label

    @staticmethod
    def _with_value(slider: QtWidgets.QSlider, label: QtWidgets.QLabel) -> QtWidgets.QWidget:
        box = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(slider, 1)
        row.addWidget(label)
        return box


    # ------------------------------------------------------------------ state
    def uplink_mbps(self) -> float:
        return _slider_to_log(self.uplink_slider.value(), UPLINK_RANGE_MBPS[0])

    def device_speed(self) -> float:
        return _slider_to_log(self.speed_slider.value(), SPEED_RANGE[0])

    def _network_changed(self, *_):
        net = networks()[self.network_combo.currentData()]
        mbps = min(max(net.uplink_bytes_per_s * 8 / 1e6, UPLINK_RANGE_MBPS[0]), UPLINK_RANGE_MBPS[1])
        self._updating = True
        self.uplink_slider.setValue(_log_to_slider(mbps, UPLINK_RANGE_MBPS[0]))
        self._updating = False
        self._recompute()

    def _recompute(self, *_):
        if self._updating:
            return
        prof = profile(self.model_combo.currentData())
        dev = edge_devices()[self.device_combo.currentData()]
        net = networks()[self.network_combo.currentData()]
        objective = self.objective_combo.currentData()
        mbps, speed = self.uplink_mbps(), self.device_speed()
        t = split_table(prof, dev, net, self._cloud, uplink_bytes_per_s=mbps * 1e6 / 8, device_speed=speed)
        self._profile, self._table = prof, t
        self._optimum = int(optimal_split(t, objective))
        self.uplink_label.setText(f"{mbps:.3g} Mbit/s")
        self.speed_label.setText(f"{speed:.3g}×")
        self._draw(prof, dev, net, objective)
        position = self._optimum / prof.layers
        if position != self._last_position:
            self._last_position = position
            self.splitChanged.emit(position)

    def _draw(self, prof, dev, net, objective):
        t = self._table
        n = prof.layers
        x = np.arange(n + 1, dtype=float)
        self._time_scale, self._time_unit = choose_time_unit(float(t["total_s"].max()))
        s = self._time_scale
        bottom = np.zeros(n + 1)
        for name in ("device", "transfer", "cloud"):
            h = t[f"{name}_s"] * s
            self.bar_items[name].setOpts(x=x, height=h, y0=bottom.copy(), width=0.7)
            bottom = bottom + h
        y_max = float(bottom.max()) * 1.25 if bottom.max() > 0 else 1.0
        self.time_plot.setYRange(0, y_max, padding=0)
        self.time_plot.setXRange(-1.0, n + 1.6, padding=0)   # room for the end names "0 cloud", "n device"
        pw.set_axis_label(self.time_plot, "left", self._time_unit)   # the title says it is latency
        k = self._optimum
        top = bottom[k]
        self.optimum_marker.setData([float(k)], [top + 0.05 * y_max])
        where = "all cloud" if k == 0 else "all device" if k == n else f"after {prof.layer_names[k - 1]}"
        energy_mj = t["energy_j"] * 1e3
        self.energy_bars.setOpts(x=x, height=energy_mj, width=0.7)
        e_max = float(energy_mj.max()) * 1.25 if energy_mj.max() > 0 else 1.0
        self.energy_plot.setYRange(0, e_max, padding=0)
        self.energy_plot.getAxis("left").setTicks([_round_ticks(float(energy_mj.max())), []])
        e = int(np.argmin(t["energy_j"]))
        least = "all cloud" if e == 0 else "all device" if e == n else f"split after {prof.layer_names[e - 1]}"
        pw.set_title(self.energy_plot, pw.html_escape(findings.split_title(
            least, "energy", float(t["energy_j"][e]), float(t["energy_j"][-1]), float(t["energy_j"][0]))),
            size=TITLE_PT)
        # each chart marks its own finding: the energy chart the least-energy split its title names
        self.energy_marker.setData([float(e)], [energy_mj[e] + 0.08 * e_max])
        self._set_legend(where, "" if e == k else least.removeprefix("split "))
        self._marked = (k, e)
        self._set_ticks(prof)
        total, dev_all, cloud_all = t["total_s"][k], t["total_s"][-1], t["total_s"][0]
        col = t["total_s"] if objective == "latency" else t["energy_j"]
        best = where if k in (0, n) else f"split {where}"
        pw.set_title(self.time_plot, pw.html_escape(findings.split_title(best, objective, float(col[k]),
                                                                          float(col[-1]), float(col[0]))),
                     size=TITLE_PT)   # both charts' titles one size: 12 pt keeps each on two lines at 1366
        self.summary_label.setText(
            f"<b>Optimum ({objective}): {pw.html_escape(where)}</b> (split point {k} of {n}) — latency "
            f"{fmt_seconds(total)} = device {fmt_seconds(t['device_s'][k])} + transfer "
            f"{fmt_seconds(t['transfer_s'][k])} ({fmt_bytes(t['sent_bytes'][k])} sent) + cloud "
            f"{fmt_seconds(t['cloud_s'][k])}; device energy {t['energy_j'][k] * 1e3:.3g} mJ. "
            f"All device: {fmt_seconds(dev_all)}, {t['energy_j'][-1] * 1e3:.3g} mJ · all cloud: "
            f"{fmt_seconds(cloud_all)}, {t['energy_j'][0] * 1e3:.3g} mJ.")
        hw = dev.hardware
        eff = Efficiency()  # split_table's efficiencies (the panel passes none)
        e_flop = dev.power_w / (hw.peak("bf16") * eff.compute * self.device_speed())
        self.caption_label.setText("How these numbers are computed: hover here.")
        self.caption_label.setToolTip(
            f"Model: device time = Σ roofline of its layers (16-bit peak × {eff.compute:.0%}, memory B/s × "
            f"{eff.hbm:.0%}, × speed); "
            f"transfer = RTT {fmt_seconds(net.rtt_s)} + bytes ÷ uplink (fp16 activations; result download "
            f"ignored); cloud = {self._cloud.name}. Energy (device only, as Neurosurgeon): "
            f"{dev.power_w:g} W × device time ({e_flop * 1e12:.3g} pJ/FLOP at the achieved peak) + "
            f"{net.radio_power_w:g} W radio × upload time; radio tail, idle and download energy not counted. "
            f"Powers are stated assumptions.")

    def _set_ticks(self, prof) -> None:
        chart_px = self.width() // 2 - 60 if self.side_by_side() else self.width() - 60
        ticks = self._ticks(prof, max(3, min(7, chart_px // TICK_LABEL_PX)), keep=self._marked)
        self.time_plot.getAxis("bottom").setTicks([ticks, []])
        self.energy_plot.getAxis("bottom").setTicks([ticks, []])

    @staticmethod
    def _ticks(prof, labels: int = 7, keep=()) -> list[tuple[float, str]]:
        """About `labels` split points named along the axis, always the ends and the marked ones (`keep`:
        a marked split is named, its crowding neighbours are not)."""
        n = prof.layers
        step = max(1, math.ceil(n / labels))
        marked = sorted({int(i) for i in keep if step / 2 <= i <= n - step / 2})   # not crowding an end
        inner = [k for k in range(step, n, step) if n - k >= step and all(abs(k - m) >= step for m in marked)]
        ticks = [(0.0, "0 cloud")] + [(float(k), prof.layer_names[k - 1]) for k in sorted(inner + marked)]
        return ticks + [(float(n), f"{n} device")]

    # ------------------------------------------------------------------ main-window interface
    def update_results(self, results: Results) -> None:
        """The current scenario's accelerator is the cloud side when it is a datacenter GPU or TPU; when the
        scenario runs on an edge device, the panel splits that model (if it has a layer profile) on that
        device, so a slide about a model on a laptop shows that model on that laptop."""
        sc = results.scenario
        hw = sc.hardware
        if hw.kind in ("datacenter-gpu", "tpu") and hw is not self._cloud:
            self._cloud = hw
            self._recompute()
        elif self.device_combo.findData(hw.key) >= 0:
            self.device_combo.setCurrentIndex(self.device_combo.findData(hw.key))
            if self.model_combo.findData(sc.model.key) >= 0:
                self.model_combo.setCurrentIndex(self.model_combo.findData(sc.model.key))

    def set_focus(self, what: str, key: str) -> None:
        if what in ("model", "profile"):
            i = self.model_combo.findData(key)
            if i >= 0:
                self.model_combo.setCurrentIndex(i)

    # ------------------------------------------------------------------ read-outs
    def hover_text_at(self, x: float, y: float, energy: bool = False) -> str:
        t, prof = self._table, self._profile
        if t is None:
            return ""
        k = int(round(x))
        if not 0 <= k <= prof.layers or abs(x - k) > 0.35 or y < 0:
            return ""
        top = t["energy_j"][k] * 1e3 if energy else t["total_s"][k] * self._time_scale
        if y > top * 1.02 + 1e-12:
            return ""
        star = "  ← optimum" if k == self._optimum else ""
        return (f"Split {k}: {t['names'][k]}{star}\n"
                f"device {fmt_seconds(t['device_s'][k])} · transfer {fmt_seconds(t['transfer_s'][k])} · "
                f"cloud {fmt_seconds(t['cloud_s'][k])}\n"
                f"latency {fmt_seconds(t['total_s'][k])}; sent {fmt_bytes(t['sent_bytes'][k])}\n"
                f"device energy {t['energy_j'][k] * 1e3:.3g} mJ (compute {t['compute_energy_j'][k] * 1e3:.3g}"
                f" + radio {t['radio_energy_j'][k] * 1e3:.3g} mJ)")

    # ------------------------------------------------------------------ accessors (tests, integration)
    def bars(self) -> dict[str, np.ndarray]:
        """Seconds per split point as drawn: device_s, transfer_s, cloud_s (and energy_j)."""
        t = self._table
        return {"device_s": np.array(t["device_s"]), "transfer_s": np.array(t["transfer_s"]),
                "cloud_s": np.array(t["cloud_s"]), "energy_j": np.array(t["energy_j"])}

    def drawn_heights(self) -> dict[str, np.ndarray]:
        """Bar heights in the plot's unit (for checking that what is drawn equals the model)."""
        return {name: np.asarray(item.opts["height"], dtype=float) for name, item in self.bar_items.items()}

    def time_unit(self) -> str:
        return self._time_unit

    def optimal_index(self) -> int:
        return self._optimum

    def optimum_position(self) -> float:
        return self._optimum / self._profile.layers

    def summary_text(self) -> str:
        return self.summary_label.text()

    def caption_text(self) -> str:
        """The stated model behind the bars (the caption's hover)."""
        return self.caption_label.toolTip()

    def set_uplink(self, mbps: float) -> None:
        lo, hi = UPLINK_RANGE_MBPS
        self.uplink_slider.setValue(_log_to_slider(min(max(mbps, lo), hi), lo))

    def set_device_speed(self, factor: float) -> None:
        lo, hi = SPEED_RANGE
        self.speed_slider.setValue(_log_to_slider(min(max(factor, lo), hi), lo))

    def _select(self, combo: QtWidgets.QComboBox, key: str, what: str) -> None:
        i = combo.findData(key)
        if i < 0:
            raise KeyError(f"unknown {what} {key!r}")
        combo.setCurrentIndex(i)

    def set_device(self, key: str) -> None:
        self._select(self.device_combo, key, "device")

    def set_network(self, key: str) -> None:
        self._select(self.network_combo, key, "network")

    def set_model(self, key: str) -> None:
        self._select(self.model_combo, key, "model profile")

    def set_objective(self, objective: str) -> None:
        self._select(self.objective_combo, objective, "objective")
