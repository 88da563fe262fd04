"""Trade-off explorer: the techniques of one exchange direction as bubbles, computed for the current scenario.

x = the saved resource's measure, percent decrease; y = the spent resource's measure, percent increase
(model/views/techniques.py defines the measures once: compute = hardware FLOPs, bandwidth = link occupancy
Σ bytes / link bandwidth, memory = HBM bytes per device). Bubble size = deployment relevance (the
catalogue's weight and its stated basis); colour = the resource spent. The y axis is symmetric-log
(sign(v)·log10(1 + |v|)) because spends range from 0% to over 1000%. Techniques that do not apply here, or
that the model core does not compute yet, are not drawn: they are listed under the chart with the reason.
Bubble labels are placed by the shared placer (ui/label_layout.py); one with no room is left to the hover.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model import Results
from trinity_desktop.model.formulas.pressure import RESOURCES
from trinity_desktop.model.inputs.presets import references
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_seconds

GREY = "#9A9A9A"
FOCUS_COLOR = "#D55E00"
SIZE_MIN_PX, SIZE_PER_WEIGHT_PX = 14.0, 34.0     # bubble diameter = 14 px + 34 px × relevance
HOVER_RADIUS_PX = 22.0
MEASURE_NAMES = {"compute": "hardware FLOPs", "bandwidth": "link occupancy (Σ bytes / link bandwidth)",
                 "memory": "HBM bytes per device"}
Y_TICKS = (-1000, -100, -10, -1, 0, 1, 10, 100, 1000, 10000)


def symlog(v):
    """sign(v) · log10(1 + |v|) (percent → axis units). Broadcasts."""
    v = np.asarray(v, dtype=float)
    return np.sign(v) * np.log10(1.0 + np.abs(v))


def bubble_size(relevance: float) -> float:
    return SIZE_MIN_PX + SIZE_PER_WEIGHT_PX * float(relevance)


def _finite(v: float) -> float:
    return float(v) if math.isfinite(v) else 0.0


def _signed_bytes(v: float) -> str:
    return ("+" if v > 0 else "−" if v < 0 else "±") + fmt_bytes(abs(v))


class TradeoffPanel(QtWidgets.QWidget):
    """Bubble chart of the techniques in one exchange direction; click a bubble to apply it."""

    scenarioRequested = QtCore.Signal(object)
    techniqueApplied = QtCore.Signal(str)
    focusRequested = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("TradeoffPanel")
        self.setAccessibleName("Trade-off explorer")
        self._results: Results | None = None
        self._direction = ("compute", "memory")
        self._effects: dict[str, tq.Effect] = {}
        self._bubbles: dict[str, tuple[float, float, float, str, bool]] = {}
        self._plot_xy: dict[str, tuple[float, float]] = {}
        self._focus_key = ""
        self._hovered = ""
        self._x_range = (0.0, 1.0)
        self._label_groups = ((), ())
        self.hidden_labels: set[str] = set()

        self.direction_combo = QtWidgets.QComboBox()
        self.direction_combo.setFont(pw.font())
        self.direction_combo.setAccessibleName("Exchange direction")
        self.direction_combo.setToolTip("Which trade to explore: the resource spent and the resource saved")
        for spent, saved in tq.DIRECTIONS:
            self.direction_combo.addItem(tq.direction_label(spent, saved).capitalize(), (spent, saved))
        self.direction_combo.setCurrentIndex(tq.DIRECTIONS.index(self._direction))
        self.direction_combo.currentIndexChanged.connect(
            lambda i: self.set_direction(*self.direction_combo.itemData(i)))
        label = QtWidgets.QLabel("Direction:")
        label.setFont(pw.font())
        label.setBuddy(self.direction_combo)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.setAccessibleName("Trade-off bubble chart")
        self.graphics.setAccessibleDescription(
            "Each bubble is a technique: x is the percent of the saved resource it saves, y the percent more of "
            "the spent resource it uses, size its deployment relevance. Grey hollow bubbles do not apply or are "
            "not modelled yet. Hover for the numbers and the citation; click to apply.")
        self.plot: pg.PlotItem = self.graphics.addPlot()
        pw.style_plot(self.plot)
        pw.freeze_view(self.plot)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.getAxis("left").setWidth(78)
        self.plot.getAxis("left").setTicks([[(float(symlog(v)), f"{v:+,d}%" if v else "0%") for v in Y_TICKS]])
        self.zero_x = pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen("#666666", width=1))
        self.zero_y = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#666666", width=1))
        for item in (self.zero_x, self.zero_y):
            self.plot.addItem(item, ignoreBounds=True)
        self.empty_text = pw.label_item("No technique in this direction applies to this scenario", color="#444444",
                                        anchor=(0.5, 0.5))
        self.plot.addItem(self.empty_text, ignoreBounds=True)
        self._placer = ll.LabelLayout()
        self.scatter = pg.ScatterPlotItem(pxMode=True)
        self.scatter.setZValue(10)
        self.plot.addItem(self.scatter)
        self.focus_ring = pg.ScatterPlotItem(pxMode=True, brush=None, pen=pg.mkPen(FOCUS_COLOR, width=4))
        self.focus_ring.setZValue(12)
        self.plot.addItem(self.focus_ring)
        self.labels: dict[str, pg.TextItem] = {}

        self.hover = pw.HoverReadout(self.plot, self._hover_at, on_move=self._hover_moved,
                                     on_leave=self._hover_left, html=True)
        pw.LeaveFilter(self.graphics, self.hover.leave)
        self.plot.getViewBox().sigResized.connect(lambda *_: self._update_labels(self._label_groups[0]))
        self.plot.scene().sigMouseClicked.connect(self._scene_clicked)

        self.caption = QtWidgets.QLabel()
        self.caption.setFont(pw.font())
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Trade-off explorer legend")
        self.caption.setToolTip("Measures: compute = hardware FLOPs per step or token; bandwidth = Σ over links of "
                                "bytes / datasheet bandwidth (seconds the links are busy); memory = HBM bytes "
                                "per device.")

        self.na_title = QtWidgets.QLabel("Not applicable to this scenario (not drawn):")
        self.na_title.setFont(pw.font(bold=True))
        self.na_list = QtWidgets.QListWidget()
        self.na_list.setFont(pw.font(11))
        self.na_list.setWordWrap(True)
        self.na_list.setAccessibleName("Techniques that do not apply here, with the reason")
        self.na_list.setToolTip("Techniques of this direction that do not apply to the current scenario, or that "
                                "the model core does not compute yet, and why. Hover an entry for its details.")
        self.na_list.setMaximumHeight(4 * QtGui.QFontMetrics(pw.font(11)).lineSpacing() + 10)
        self.na_list.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        top = QtWidgets.QHBoxLayout()
        top.addWidget(label)
        top.addWidget(self.direction_combo, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.na_title)
        layout.addWidget(self.na_list)
        layout.addWidget(self.caption)

    # ------------------------------------------------------------------ updates
    def update_results(self, results: Results) -> None:
        self._results = results
        self._refresh()

    def set_direction(self, spent: str, saved: str) -> None:
        """Show the techniques that spend `spent` to save `saved`."""
        if (spent, saved) not in tq.DIRECTIONS:
            raise ValueError(f"not a direction: spend {spent} to save {saved}")
        self._direction = (spent, saved)
        index = tq.DIRECTIONS.index(self._direction)
        if self.direction_combo.currentIndex() != index:
            self.direction_combo.blockSignals(True)
            self.direction_combo.setCurrentIndex(index)
            self.direction_combo.blockSignals(False)
        self._refresh()

    def direction(self) -> tuple[str, str]:
        return self._direction

    def _refresh(self) -> None:
        spent, saved = self._direction
        self._effects, self._bubbles, self._plot_xy = {}, {}, {}
        techniques = tq.techniques_in_direction(spent, saved)
        if self._results is not None:
            sc = self._results.scenario
            for t in techniques:
                self._effects[t.key] = tq.technique_effect(sc, t.key, before=self._results)
        enabled = [t for t in techniques if t.key in self._effects and self._effects[t.key].applicable]
        disabled = [t for t in techniques if t not in enabled]
        xs = [_finite(self._effects[t.key].saved_pct) for t in enabled]
        ys = [_finite(self._effects[t.key].spent_pct) for t in enabled]
        x_lo = min([0.0, *xs]) - 5.0
        x_hi = max([10.0, *xs]) + 5.0
        y_vals = symlog(ys) if ys else np.zeros(0)
        y_lo = min([-0.5, *y_vals.tolist()]) - 0.3
        y_hi = max([1.0, *y_vals.tolist()]) + 0.45
        spots = []
        for t, x, y, yv in zip(enabled, xs, ys, y_vals, strict=True):
            color = theme.RESOURCE_COLORS[t.spent]
            size = bubble_size(t.relevance)
            self._bubbles[t.key] = (x, y, size, color, True)
            self._plot_xy[t.key] = (x, float(yv))
            spots.append({"pos": (x, float(yv)), "size": size, "brush": pg.mkBrush(color + "CC"),
                          "pen": pg.mkPen("#222222", width=1.2), "data": t.key})
        self.na_list.clear()
        for t in disabled:   # listed apart with the reason; no bubble, no number
            self._bubbles[t.key] = (0.0, 0.0, bubble_size(t.relevance), GREY, False)
            e = self._effects.get(t.key)
            reason = e.reason if e is not None else "No scenario yet."
            item = QtWidgets.QListWidgetItem(f"{t.name} — {reason}")
            item.setData(QtCore.Qt.ItemDataRole.UserRole, t.key)
            item.setToolTip("\n".join(text for text, _ in self._hover_lines(t.key)))
            self.na_list.addItem(item)
        self.na_title.setVisible(bool(disabled))
        self.na_list.setVisible(bool(disabled))
        self.scatter.setData(spots)
        self._x_range = (x_lo, x_hi)
        self.plot.setXRange(x_lo, x_hi, padding=0)
        self.plot.setYRange(y_lo, y_hi, padding=0)
        self.empty_text.setPos((x_lo + x_hi) / 2, (y_lo + y_hi) / 2)
        self.empty_text.setVisible(not enabled)
        self._label_groups = (enabled, disabled)
        self._update_labels(enabled)
        pw.style_plot(self.plot, title=tq.direction_label(spent, saved).capitalize(),
                      left=f"{theme.RESOURCE_LABELS[spent]} spent (% more {MEASURE_NAMES[spent].split(' (')[0]})",
                      bottom=f"{theme.RESOURCE_LABELS[saved]} saved (% less {MEASURE_NAMES[saved].split(' (')[0]})")
        self.caption.setText(
            f"Bubble size: deployment relevance (0–1, stated basis in the hover). Colour: resource spent "
            f"({theme.RESOURCE_LABELS[spent]}). y axis is symmetric-log. Click a bubble to apply the technique "
            f"(Edit ▸ Undo reverts it).")
        self.set_focus("technique" if self._focus_key else "", self._focus_key)

    def _update_labels(self, enabled) -> None:
        """Each bubble's name beside it (inward first on the right), by the shared placer; a name with no room
        is hidden and the bubble's hover gives it."""
        keys = [t.key for t in enabled]
        for key in list(self.labels):
            if key not in keys:
                self.plot.removeItem(self.labels.pop(key))
        names = tq.load_techniques()
        vb = self.plot.getViewBox()
        marks, labels = [], []
        for key in keys:
            sx, sy = ll.scene_point(vb, *self._plot_xy[key])
            r = self._bubbles[key][2] / 2 + 1
            marks.append((sx - r, sy - r, sx + r, sy + r))
        right = ll.scene_point(vb, self._x_range[0] + 0.6 * (self._x_range[1] - self._x_range[0]), 0.0)[0]
        for key in keys:
            item = self.labels.get(key)
            if item is None:
                item = pw.label_item(size=11)
                item.setZValue(11)
                self.plot.addItem(item, ignoreBounds=True)
                self.labels[key] = item
            item.setText(textwrap.shorten(names[key].name, 30, placeholder="…"))
            w, h = ll.text_size(item)
            sx, sy = ll.scene_point(vb, *self._plot_xy[key])
            sides = ("right", "left", "above", "below", "above-right", "below-right", "above-left", "below-left")
            if sx > right:
                sides = ("left", "right", "above", "below", "above-left", "below-left", "above-right", "below-right")
            labels.append(ll.Label(key, w, h, ll.around(sx, sy, w, h, self._bubbles[key][2] / 2 + 3, sides)))
        boxes = self._placer.place(labels, ll.view_bounds(vb), tuple(marks))
        self.hidden_labels = {key for key in keys if boxes.get(key) is None}
        for key in keys:
            ll.put(self.labels[key], vb, boxes.get(key))

    # ------------------------------------------------------------------ focus, hover, click
    def set_focus(self, what: str, key: str) -> None:
        """Ring the bubble of technique `key` (what == "technique"); anything else clears it."""
        self._focus_key = key if what == "technique" else ""
        if self._focus_key in self._plot_xy:
            x, y = self._plot_xy[self._focus_key]
            self.focus_ring.setData([x], [y], size=self._bubbles[self._focus_key][2] + 12)
        else:
            self.focus_ring.setData([], [])

    def _nearest(self, x: float, y: float) -> str:
        vb = self.plot.getViewBox()
        px, py = vb.viewPixelSize()
        best, best_d = "", math.inf
        for key, (bx, by) in self._plot_xy.items():
            d = math.hypot((bx - x) / max(px, 1e-12), (by - y) / max(py, 1e-12))
            if d <= max(HOVER_RADIUS_PX, self._bubbles[key][2] / 2) and d < best_d:
                best, best_d = key, d
        return best

    def _hover_at(self, x: float, y: float) -> str:
        key = self._nearest(x, y)
        if not key:
            return ""
        return pw.hover_html(self._hover_lines(key), 62)

    def _hover_moved(self, x: float, y: float) -> None:
        key = self._nearest(x, y)
        if key != self._hovered:
            self._hovered = key
            self.focusRequested.emit("technique" if key else "", key)

    def _hover_left(self) -> None:
        if self._hovered:
            self._hovered = ""
            self.focusRequested.emit("", "")

    def _scene_clicked(self, event) -> None:
        p = pw.clicked_view_point(self.plot, event)
        if p is None:
            return
        key = self._nearest(p.x(), p.y())
        if key:
            self.click_technique(key)

    def click_technique(self, key: str) -> bool:
        """What a click on bubble `key` does: emit scenarioRequested(apply(technique, scenario)) and
        techniqueApplied(key). Returns False (and emits nothing) for a grey bubble."""
        if self._results is None or key not in self._bubbles or not self._bubbles[key][4]:
            return False
        scenario = tq.apply(key, self._results.scenario)
        self.scenarioRequested.emit(scenario)
        self.techniqueApplied.emit(key)
        return True

    def _hover_lines(self, key: str) -> list[tuple[str, bool]]:
        t = tq.load_techniques()[key]
        e = self._effects.get(key)
        ref = references()[t.citation]
        cite = f"{ref.authors} ({ref.year}). {ref.title}."
        lines = [(t.name, True), (tq.direction_label(t.spent, t.saved), False)]
        if e is None or not e.applicable:
            lines.append((e.reason if e is not None else "No scenario yet.", True))
        else:
            lines.append((f"{theme.RESOURCE_LABELS[t.saved]} saved: {e.saved_pct:.1f}% of "
                          f"{MEASURE_NAMES[t.saved]}", True))
            lines.append((f"{theme.RESOURCE_LABELS[t.spent]} spent: {e.spent_pct:+.1f}% "
                          f"{MEASURE_NAMES[t.spent]}", True))
            sign = "+" if e.d_flops >= 0 else "−"
            lines.append((f"Δ FLOPs {sign}{fmt_flops(abs(e.d_flops))}; Δ FLOP-bound time "
                          f"{'+' if e.d_compute_time >= 0 else '−'}{fmt_seconds(abs(e.d_compute_time))}; "
                          f"Δ {'step' if e.before.kind == 'train' else 'time'} "
                          f"{'+' if e.d_time >= 0 else '−'}{fmt_seconds(abs(e.d_time))}", False))
            links = ", ".join(f"{k} {_signed_bytes(v)}" for k, v in e.d_bytes.items())
            lines.append((f"Δ bytes per GPU: {links}", False))
            lines.append((f"Δ memory: HBM {_signed_bytes(e.d_memory['hbm'])} per device "
                          f"({e.before.memory_total / 1e9:.1f} → {e.after.memory_total / 1e9:.1f} GB); host "
                          f"{_signed_bytes(e.d_memory['host'])}", False))
            dp = ", ".join(f"{r} {v:+.2f}" for r, v in zip(RESOURCES, e.d_pressure, strict=True))
            lines.append((f"Δ pressure: {dp}", False))
        lines.append((f"Relevance {t.relevance:.1f}: {t.relevance_basis}", False))
        if t.note:
            lines.append((t.note, False))
        lines.append((f"Source: {cite}", False))
        return lines

    # ------------------------------------------------------------------ accessors for tests
    def bubbles(self) -> dict[str, tuple[float, float, float, str, bool]]:
        """key -> (x = saved %, y = spent %, size px, colour, enabled) for every technique of the direction;
        the ones that do not apply (enabled False, grey, (0, 0)) are listed under the chart, not drawn."""
        return dict(self._bubbles)

    def hover_text_for(self, key: str) -> str:
        return "\n".join(text for text, _ in self._hover_lines(key))

    def effect(self, key: str) -> tq.Effect | None:
        return self._effects.get(key)

    def focused(self) -> str:
        return self._focus_key
