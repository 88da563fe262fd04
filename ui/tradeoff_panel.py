"""Trade-off explorer: from the current scenario, one arrow per technique of an exchange direction.

The scenario is the origin; each applicable technique is an arrow to (x, y) = (percent decrease of the saved
resource's measure, percent increase of the spent resource's measure), computed by applying it
(model/views/techniques.py defines the measures once: compute = hardware FLOPs, bandwidth = link occupancy
Σ bytes / link bandwidth, memory = HBM bytes per device). Arrows take the spent resource's colour, as in the
seed; the bubble at each head is the technique's deployment relevance (the catalogue's weight and its stated
basis). The y axis is symmetric-log (sign(v)·log10(1 + |v|)) because spends range from 0% to over 1000%.
Techniques that do not apply here, or that the model core does not compute yet, are listed under the chart
with the reason. Where nothing applies, the chart says so and offers, in one click, the nearest library
workload (by pressure) where something does, or the reverse direction when the catalogue has none this way.
Labels are placed by the shared placer (ui/label_layout.py); one with no room is left to the hover.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model import Results
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.model.views.workloads import evaluate_library
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.axes import MinusSignAxis, minus_sign
from trinity_desktop.ui.tradeoff_geometry import ARROW_STRIP_PX, bubble_size, nearest_workload, symlog
from trinity_desktop.ui.tradeoff_hover import MEASURE_NAMES, hover_lines
from trinity_desktop.ui.wrap_layout import interaction_hint

HOVER_RADIUS_PX = 22.0
AXIS_MEASURES = {"compute": "FLOPs", "bandwidth": "link time", "memory": "HBM bytes"}
HEAD_PX = 13.0
ZERO_STRIP_PX = 5.0   # the band along each zero line that "this scenario" keeps off
ORIGIN_GAP_PX = 8.0   # 'this scenario' this far from the origin's dot
LABEL_CHARS = 22   # a bubble's name wraps at this many characters
Y_TICKS = (-1000, -100, -10, -1, 0, 1, 10, 100, 1000, 10000)
TICK_PAD = 0.25   # symlog units beyond the outermost ticks (room for a name above the top bubble)


def _finite(v: float) -> float:
    return float(v) if math.isfinite(v) else 0.0




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
        label.setProperty("editingControl", True)   # it titles the combo: off the slides with it (slide_controls)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("Trade-off arrows")
        self.graphics.setAccessibleDescription(
            "The current scenario is the origin. Each arrow is a technique: x is the percent of the saved "
            "resource it saves, y the percent more of the spent resource it uses, the bubble at its head its "
            "deployment relevance. Hover for the numbers and the citation; click a bubble to apply it.")
        self.plot: pg.PlotItem = self.graphics.addPlot(axisItems={"bottom": MinusSignAxis("bottom")})
        pw.style_plot(self.plot)
        pw.freeze_view(self.plot)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.getAxis("left").setWidth(96)
        self.plot.getAxis("left").setTicks([[(float(symlog(v)), f"{minus_sign(f'{v:+,d}')}%" if v else "0%") for v in Y_TICKS]])
        self.zero_x = pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen(theme.MUTED_COLOR, width=1))
        self.zero_y = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(theme.MUTED_COLOR, width=1))
        for item in (self.zero_x, self.zero_y):
            self.plot.addItem(item, ignoreBounds=True)
        self.empty_text = pw.label_item("", anchor=(0.5, 0.5))
        self.plot.addItem(self.empty_text, ignoreBounds=True)
        self._placer = ll.LabelLayout()
        self.arrow_lines = pg.PlotCurveItem(connect="pairs")
        self.arrow_lines.setZValue(8)
        self.plot.addItem(self.arrow_lines)
        self.heads: dict[str, pg.ArrowItem] = {}
        self.origin = pg.ScatterPlotItem(pxMode=True, size=11, symbol="o")
        self.origin.setZValue(13)
        self.plot.addItem(self.origin)
        self.origin_text = pw.label_item("this scenario", anchor=(0.0, -0.3), bold=True)
        self.plot.addItem(self.origin_text, ignoreBounds=True)
        self.scatter = pg.ScatterPlotItem(pxMode=True)
        self.scatter.setZValue(10)
        self.plot.addItem(self.scatter)
        self.focus_ring = pg.ScatterPlotItem(pxMode=True, brush=None, pen=pg.mkPen(theme.FOCUS_COLOR, width=4))
        self.focus_ring.setZValue(12)
        self.plot.addItem(self.focus_ring)
        self.labels: dict[str, pg.TextItem] = {}

        self.hover = pw.HoverReadout(self.plot, self._hover_at, on_move=self._hover_moved,
                                     on_leave=self._hover_left, html=True)
        pw.LeaveFilter(self.graphics, self.hover.leave)
        self.plot.getViewBox().sigResized.connect(self._resized)
        self.plot.getViewBox().sigTransformChanged.connect(self._update_heads)
        self.plot.scene().sigMouseClicked.connect(self._scene_clicked)

        # a wrapped link, not a button: a long workload name never widens the dock
        self.offer_button = QtWidgets.QLabel("")
        self.offer_button.setFont(pw.font())
        self.offer_button.setWordWrap(True)
        self.offer_button.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.offer_button.setAccessibleName("Show a workload where this direction applies")
        self.offer_button.setToolTip("Load the nearest library workload (by pressure) where a technique of this "
                                     "direction applies, or switch to the reverse direction (Edit ▸ Undo reverts)")
        self.offer_button.linkActivated.connect(lambda _link: self._take_offer())
        self.offer_button.setVisible(False)
        self._offer: tuple[str, object] = ("", None)
        self._offer_text = ""

        self.caption = QtWidgets.QLabel()
        self.caption.setFont(pw.font())
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Trade-off explorer legend")
        self.click_hint = interaction_hint("Click a bubble to apply the technique (Edit ▸ Undo reverts it).", pw.font())
        self.caption.setToolTip("Measures: compute = hardware FLOPs per step or token; bandwidth = Σ over links of "
                                "bytes / datasheet bandwidth (seconds the links are busy); memory = HBM bytes "
                                "per device.")

        self.na_title = QtWidgets.QLabel("Not applicable to this scenario (not drawn):")
        self.na_title.setFont(pw.font(bold=True))
        self.na_title.setProperty("editingControl", True)   # it titles the list: off the slides with it (slide_controls)
        self.na_list = QtWidgets.QLabel()   # grouped by reason, whole lines that wrap: never a scrolled, cut row
        self.na_list.setFont(pw.font(11))
        self.na_list.setWordWrap(True)
        self.na_list.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.na_list.setAccessibleName("Techniques that do not apply here, with the reason")
        self.na_list.setProperty("editingControl", True)   # an explorer's detail: off the slides (slide_controls)

        top = QtWidgets.QHBoxLayout()
        top.addWidget(label)
        top.addWidget(self.direction_combo, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.offer_button)
        layout.addWidget(self.na_title)
        layout.addWidget(self.na_list)
        layout.addWidget(self.caption)
        layout.addWidget(self.click_hint)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if pw.is_theme_change(event) and self._results is not None:
            self.graphics.setBackground(pw.plot_background())
            self._refresh()

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
        self._label_groups = ((), ())   # a resize while refreshing places nothing stale
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
        # out to the ticks beyond the outermost bubbles: a tick above the highest (+27% had none above +10%) and
        # room there for its name
        ticks = symlog(np.array(Y_TICKS, dtype=float))
        top, bottom = max([1.0, *y_vals.tolist()]), min([-0.5, *y_vals.tolist()])
        y_hi = float(ticks[ticks >= top + 0.1].min(initial=ticks.max())) + TICK_PAD
        y_lo = float(ticks[ticks <= bottom - 0.1].max(initial=ticks.min())) - TICK_PAD
        color = theme.RESOURCE_COLORS[spent]
        spots = []
        for t, x, y, yv in zip(enabled, xs, ys, y_vals, strict=True):
            size = bubble_size(t.relevance)
            self._bubbles[t.key] = (x, y, size, color, True)
            self._plot_xy[t.key] = (x, float(yv))
            fill = QtGui.QColor(color)
            fill.setAlpha(150)
            spots.append({"pos": (x, float(yv)), "size": size, "brush": pg.mkBrush(fill),
                          "pen": pg.mkPen(color, width=1.5), "data": t.key})
        entries = []
        for t in disabled:   # listed apart with the reason; no bubble, no number
            self._bubbles[t.key] = (0.0, 0.0, bubble_size(t.relevance), theme.MUTED_COLOR, False)
            e = self._effects.get(t.key)
            entries.append((t.name, e.reason if e is not None else "No scenario yet."))
        self.na_list.setText(findings.not_drawn_text(entries))
        self.na_list.setToolTip("\n\n".join(f"{name}: {reason}" for name, reason in entries))
        self.na_title.setVisible(bool(disabled))
        self.na_list.setVisible(bool(disabled))
        self.scatter.setData(spots)
        self.arrow_lines.setData(np.array([v for k in self._plot_xy for v in (0.0, self._plot_xy[k][0])]),
                                 np.array([v for k in self._plot_xy for v in (0.0, self._plot_xy[k][1])]),
                                 pen=pg.mkPen(color, width=2.5))
        self.origin.setData([0.0], [0.0], brush=pg.mkBrush(theme.plot_text_color()), pen=pg.mkPen(None))
        self.origin_text.setColor(theme.plot_text_color())   # placed beside the origin in _update_labels
        self._x_range = (x_lo, x_hi)
        self.plot.setXRange(x_lo, x_hi, padding=0)
        self.plot.setYRange(y_lo, y_hi, padding=0)
        self._update_offer(enabled, techniques)
        self.empty_text.setPos((x_lo + x_hi) / 2, y_lo + 0.75 * (y_hi - y_lo))   # clear of the origin
        self._label_groups = (enabled, disabled)
        pw.set_axis_label(self.plot, "left", f"{theme.RESOURCE_LABELS[spent]} spent (%)")   # measure: the caption
        pw.set_axis_label(self.plot, "bottom", f"{theme.RESOURCE_LABELS[saved]} saved (% {AXIS_MEASURES[saved]})")
        best = max(enabled, key=lambda t: self._effects[t.key].saved_pct, default=None)
        e = self._effects[best.key] if best is not None else None
        pw.set_title(self.plot, pw.html_escape(findings.tradeoff_title(
            spent, saved, best.name if best is not None else "", e.saved_pct if e else 0.0,
            e.spent_pct if e else 0.0, len(enabled))))
        self.caption.setText(
            f"Arrows from this scenario, in the colour of the resource spent ({theme.RESOURCE_LABELS[spent]}, "
            f"% more {MEASURE_NAMES[spent]}); "
            f"bubble size: deployment relevance (0–1); y axis symmetric-log.")
        self._resized()
        self._ring_focus()

    def _resized(self, *_) -> None:
        self._update_heads()
        self._update_labels(self._label_groups[0])

    def _update_heads(self) -> None:
        """An arrowhead per technique at its bubble's edge, pointing along its arrow (in pixels: the axes differ)."""
        vb = self.plot.getViewBox()
        for key in list(self.heads):
            if key not in self._plot_xy:
                self.plot.removeItem(self.heads.pop(key))
        color = theme.RESOURCE_COLORS[self._direction[0]]
        ox, oy = ll.scene_point(vb, 0.0, 0.0)
        for key, (x, y) in self._plot_xy.items():
            hx, hy = ll.scene_point(vb, x, y)
            dx, dy = hx - ox, hy - oy
            length = math.hypot(dx, dy)
            head = self.heads.get(key)
            if head is None:
                head = pg.ArrowItem(pxMode=True, headLen=HEAD_PX, headWidth=HEAD_PX * 0.8, tailLen=0, pen=pg.mkPen(None))
                head.setZValue(9)
                self.plot.addItem(head, ignoreBounds=True)
                self.heads[key] = head
            r = self._bubbles[key][2] / 2
            head.setVisible(length > r + HEAD_PX)
            if length <= r + HEAD_PX:
                continue
            tip = vb.mapSceneToView(QtCore.QPointF(hx - dx / length * r, hy - dy / length * r))
            # pyqtgraph's arrow points left at angle 0 and turns clockwise on screen
            head.setStyle(angle=math.degrees(math.atan2(-dy, -dx)), brush=pg.mkBrush(color))
            head.setPos(tip.x(), tip.y())

    def _update_offer(self, enabled, techniques) -> None:
        """Nothing applies: say so on the chart and offer the nearest library workload where something does,
        or the reverse direction where the catalogue has nothing this way."""
        spent, saved = self._direction
        self._offer, self._offer_text = ("", None), ""
        if enabled or self._results is None:
            self.empty_text.setVisible(False)
            self.offer_button.setVisible(False)
            return
        if techniques:
            row, keys = nearest_workload(evaluate_library(self._results.scenario.hardware, self._results.scenario),
                                         self._results.pressure.as_tuple(), spent, saved)
            if row is not None:
                names = tq.load_techniques()
                self._offer = ("workload", row.scenario)
                shown = ", ".join(names[k].name for k in keys[:2])
                more = f" and {len(keys) - 2} more" if len(keys) > 2 else ""
                self._offer_text = f"Open {row.name}, where {shown}{more} appl{'y' if len(keys) > 1 else 'ies'}"
        if self._offer[0] == "" and (saved, spent) in tq.DIRECTIONS:
            self._offer = ("direction", (saved, spent))
            self._offer_text = f"Show the reverse: {tq.direction_label(saved, spent)}"
        why = "applies to this scenario" if techniques else "in the catalogue goes this way"
        self.empty_text.setText("\n".join(textwrap.wrap(
            f"No technique that spends {spent} to save {saved} {why}.", 34)))
        self.empty_text.setColor(theme.plot_text_color())
        self.empty_text.setVisible(True)
        link = theme.THEMES[theme.current_theme()]["highlight"]
        self.offer_button.setText(f"▸ <a href='offer' style='color:{link}'>{pw.html_escape(self._offer_text)}</a>")
        self.offer_button.setVisible(self._offer[0] != "")

    def offer_text(self) -> str:
        """What the link under an empty chart offers ("" when something applies)."""
        return self._offer_text if self.offer_button.isVisibleTo(self) else ""

    def _take_offer(self) -> None:
        kind, value = self._offer
        if kind == "workload":
            self.scenarioRequested.emit(value)
        elif kind == "direction":
            self.set_direction(*value)

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
        origin_px = ll.scene_point(vb, 0.0, 0.0)   # and off every arrow: no arrow runs through a name
        marks += [b for k in keys for b in ll.strip(*origin_px, *ll.scene_point(vb, *self._plot_xy[k]), ARROW_STRIP_PX)]
        left, top, right_px, bottom = ll.view_bounds(vb)   # 'this scenario' keeps off the zero lines too
        zero = ll.strip(left, origin_px[1], right_px, origin_px[1], ZERO_STRIP_PX) \
            + ll.strip(origin_px[0], top, origin_px[0], bottom, ZERO_STRIP_PX)
        origin = self._place_origin_text(vb, origin_px, tuple(marks + zero))   # the names keep off it
        if origin is not None:
            marks.append(origin)
        right = ll.scene_point(vb, self._x_range[0] + 0.6 * (self._x_range[1] - self._x_range[0]), 0.0)[0]
        for key in keys:
            item = self.labels.get(key)
            if item is None:
                item = pw.label_item(size=11)
                item.setZValue(11)
                self.plot.addItem(item, ignoreBounds=True)
                self.labels[key] = item
            item.setText(textwrap.fill(names[key].name, LABEL_CHARS))   # wrapped, never cut
            item.fill = pg.mkBrush(pw.plot_background())   # opaque: a zero line passes under the name, not through
            w, h = ll.text_size(item)
            sx, sy = ll.scene_point(vb, *self._plot_xy[key])
            sides = ("right", "left", "above", "below", "above-right", "below-right", "above-left", "below-left")
            if sx > right:
                sides = ("left", "right", "above", "below", "above-left", "below-left", "above-right", "below-right")
            gap = self._bubbles[key][2] / 2 + 3
            diagonal = tuple(side for side in sides if "-" in side)   # then clear of the bubble's square box
            # the ringed one also straight above or below, further out and kept inside the plot (ES-7's window, in
            # the bottom-right corner among the eviction policies, had no free place beside it)
            far = tuple((min(max(sx - w / 2, left + 2), right_px - w - 2), sy + dy) for k in (1, 2, 3)
                        for dy in (-gap - h - k * h, gap + k * h)) if key == self._focus_key else ()
            labels.append(ll.Label(key, w, h, ll.around(sx, sy, w, h, gap, sides) + ll.around(sx, sy, w, h, gap * 1.45,
                                                                                          diagonal) + far))
        labels.sort(key=lambda label: label.key != self._focus_key)   # the ringed technique is named first
        boxes = self._placer.place(labels, ll.view_bounds(vb), tuple(marks))
        self.hidden_labels = {key for key in keys if boxes.get(key) is None}
        for key in keys:
            ll.put(self.labels[key], vb, boxes.get(key))

    def _place_origin_text(self, vb, origin_px, marks: tuple) -> tuple | None:
        """'this scenario' beside the origin in a quadrant no arrow or zero line crosses (below-right first);
        crowded on every side, below-right as before. Returns the box taken."""
        w, h = ll.text_size(self.origin_text)
        sides = ("below-right", "above-left", "below-left", "above-right", "below", "above", "left", "right")
        box = ll.place([ll.Label("origin", w, h, ll.around(*origin_px, w, h, ORIGIN_GAP_PX, sides, steps=1))],
                       ll.view_bounds(vb), marks).get("origin")
        if box is None:
            self.origin_text.setAnchor((0.0, -0.3))
            self.origin_text.setPos(0.0, 0.0)
            return None
        ll.put(self.origin_text, vb, box)
        return box

    # ------------------------------------------------------------------ focus, hover, click
    def set_focus(self, what: str, key: str) -> None:
        """Ring the bubble of technique `key` (what == "technique"), turning to its direction first; anything
        else clears it."""
        self._focus_key = key if what == "technique" else ""
        technique = tq.load_techniques().get(self._focus_key)
        if technique is not None and technique.direction != self._direction:
            self.set_direction(*technique.direction)
        self._ring_focus()
        self._update_labels(self._label_groups[0])   # the ringed technique's name is placed first

    def _ring_focus(self) -> None:
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
        if tq.load_techniques()[key].read_pattern:
            return False  # computed here (tq.evaluate_applied); a scenario carries one span for keys kept and read
        scenario = tq.apply(key, self._results.scenario)
        self.scenarioRequested.emit(scenario)
        self.techniqueApplied.emit(key)
        return True

    def _hover_lines(self, key: str) -> list[tuple[str, bool]]:
        return hover_lines(tq.load_techniques()[key], self._effects.get(key))

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
