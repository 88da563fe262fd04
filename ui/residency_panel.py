"""KV-cache residency panel: where the cache lives as context (or concurrent sessions) grows, and what the
decode step costs; plus the memory hierarchy chart (ui/hierarchy_chart.py) of the device's tiers.

Numbers come from `model.residency.residency_curve` (placement, step time) and `model.tiers.tiers_for`. The
x axis is log10 of context tokens (or sessions), drawn in log10 coordinates with explicit ticks; the right
axis is log10 of the step time (or tokens/s). Items are created once and updated with setData.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.formulas.kv_policy import KV_POLICIES
from trinity_desktop.model.inputs.tiers import TIER_LABELS
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.step.kv_residency import (
    PLACEMENT_POLICIES,
    RESIDENCY_TIERS,
    KvResidency,
    default_context_axis,
    default_sessions_axis,
    residency_curve,
    serving_scenario,
)
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import label_layout as ll
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.curve_obstacles import line_boxes
from trinity_desktop.ui.hierarchy_chart import HierarchyChart
from trinity_desktop.ui.residency_labels import fit_columns, key_row, restyle_key
from trinity_desktop.ui.residency_style import (
    MARKER_COLOR,
    TIER_COLORS,
    legend_fill,
    log_ticks,
    marker_text,
    step_color,
    time_label,
)
from trinity_desktop.ui.units import fmt_bytes, fmt_rate, fmt_seconds
from trinity_desktop.ui.wrap_layout import control_row

AXES = ("context", "sessions")
AXIS_TITLES = {"context": "tokens per sequence (log)", "sessions": "concurrent sessions (log)"}
POLICY_LABELS = {"spill": "Spill to the next tier", "evict": "Evict (drop what HBM cannot hold)"}
RIGHT_MODES = ("step_time", "tokens_per_s")


class ResidencyPanel(QtWidgets.QWidget):
    """Stacked-area chart of KV bytes resident per tier with capacity lines and the step time (right axis);
    a second tab draws the memory hierarchy. Emits editRequested(dict) for the KV policy and context."""

    editRequested = QtCore.Signal(dict)
    focusRequested = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("ResidencyPanel")
        self.setAccessibleName("KV-cache residency panel")
        self._results: Results | None = None
        self._axis = "context"
        self._policy = "spill"
        self._right = "step_time"
        self._curve: KvResidency | None = None
        self._x = np.zeros(0)
        self._current_x = float("nan")
        self._focus_tier = ""

        # ---------------------------------------------------------------- controls
        self.axis_combo = QtWidgets.QComboBox()
        self.axis_combo.addItems(["Context length", "Concurrent sessions"])
        self.axis_combo.setToolTip("x axis: grow the context per sequence (4k to 1M tokens) or the number of "
                                   "concurrent sessions (1 to 1,024) at the scenario's context")
        self.axis_combo.setAccessibleName("Residency x axis")
        self.axis_combo.currentIndexChanged.connect(lambda i: self.set_axis(AXES[i]))
        self.policy_combo = QtWidgets.QComboBox()
        self.policy_combo.addItems([POLICY_LABELS[p] for p in PLACEMENT_POLICIES])
        self.policy_combo.setToolTip("When HBM is full: spill the KV cache to host DRAM, the CXL pool and SSD "
                                     "(slower steps), or evict the tokens that do not fit (lost context)")
        self.policy_combo.setAccessibleName("Placement policy: spill or evict")
        self.policy_combo.currentIndexChanged.connect(lambda i: self.set_policy(PLACEMENT_POLICIES[i]))
        self.kv_combo = QtWidgets.QComboBox()
        self.kv_combo.addItems(list(KV_POLICIES))
        self.kv_combo.setToolTip("KV-cache policy of the scenario: full, sliding window, StreamingLLM (sinks + "
                                 "window), H2O heavy hitters, RazorAttention; changes the scenario")
        self.kv_combo.setAccessibleName("KV-cache policy")
        self.kv_combo.activated.connect(lambda i: self.editRequested.emit({"kv_policy": KV_POLICIES[i]}))
        self.right_combo = QtWidgets.QComboBox()
        self.right_combo.addItems(["Decode step time", "Tokens per second"])
        self.right_combo.setToolTip("Right axis: effective decode step time, or generated tokens per second "
                                    "over all sessions")
        self.right_combo.setAccessibleName("Right axis quantity")
        self.right_combo.currentIndexChanged.connect(lambda i: self.set_right_axis(RIGHT_MODES[i]))
        pairs = (("x axis", self.axis_combo), ("When HBM is full", self.policy_combo),
                 ("KV policy", self.kv_combo), ("Right axis", self.right_combo))
        for _, w in pairs:
            w.setFont(pw.font())
        bar = control_row(pairs, pw.font())

        # ---------------------------------------------------------------- residency chart
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("KV-cache residency chart")
        self.graphics.setAccessibleDescription(
            "Stacked areas: KV-cache gigabytes resident in HBM, host DRAM, the CXL pool and SSD against the "
            "context length; dashed lines: where each tier is full; black line (right axis): decode step time.")
        self.plot: pg.PlotItem = self.graphics.addPlot(row=1, col=0)
        pw.style_plot(self.plot, "KV-cache residency", left="KV cache resident per GPU (GB)",
                      bottom=AXIS_TITLES["context"])
        pw.freeze_view(self.plot)
        self.plot.showAxis("right")
        right = self.plot.getAxis("right")
        right.setStyle(tickFont=pw.font(), tickTextOffset=6)
        right.enableAutoSIPrefix(False)
        right.setTextPen(pg.mkPen(step_color()))
        self.vb2 = pg.ViewBox(enableMouse=False)
        self.plot.scene().addItem(self.vb2)
        self.vb2.setZValue(self.plot.topLevelItem().zValue() + 1)   # the step-time curve over the tiers' fills
        right.linkToView(self.vb2)
        self.vb2.setXLink(self.plot)
        self.plot.getViewBox().sigResized.connect(self._sync_views)
        self._label_watch = pw.SizeWatcher(self, (self.plot.getViewBox(),), self._place_labels)  # never loops
        self.plot.getViewBox().sigResized.connect(self._label_watch.poke)

        self.tops: dict[str, pg.PlotDataItem] = {}
        self.fills: dict[str, pg.FillBetweenItem] = {}
        self.base = below = pg.PlotDataItem([0, 1], [0, 0], pen=pg.mkPen(None))
        self.plot.addItem(self.base)
        for name in RESIDENCY_TIERS:
            top = pg.PlotDataItem([0, 1], [0, 0], pen=pg.mkPen(pg.mkColor(TIER_COLORS[name]).darker(130), width=1))
            fill = pg.FillBetweenItem(below, top, brush=pg.mkBrush(TIER_COLORS[name]))
            fill.setZValue(-10)
            self.plot.addItem(top)
            self.plot.addItem(fill)
            self.tops[name], self.fills[name] = top, fill
            below = top
        # legend swatches (a FillBetweenItem cannot be drawn by LegendItem's sample)
        self.swatches = {name: pg.BarGraphItem(x=[], height=[], width=1, brush=pg.mkBrush(TIER_COLORS[name]),
                                               pen=pg.mkPen(theme.plot_text_color())) for name in RESIDENCY_TIERS}
        self.step_swatch = pg.PlotDataItem([], [], pen=pg.mkPen(step_color(), width=3))
        self.cap_lines: dict[str, pg.InfiniteLine] = {}
        for name in RESIDENCY_TIERS:
            line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(theme.plot_text_color(), width=1.5,   # each
                                                                        style=QtCore.Qt.PenStyle.DashLine))  # theme
            self.plot.addItem(line, ignoreBounds=True)
            self.cap_lines[name] = line
        self.cap_labels = {name: pw.label_item(anchor=(0, 1)) for name in RESIDENCY_TIERS}
        for item in self.cap_labels.values():   # on the legend's box: it reads over any tier's fill
            item.fill = pg.mkBrush(legend_fill())
            self.plot.addItem(item, ignoreBounds=True)
        self.step_curve = pg.PlotCurveItem(pen=pg.mkPen(step_color(), width=3))
        self.vb2.addItem(self.step_curve)
        self.marker = pg.InfiniteLine(angle=90, movable=False,
                                      pen=pg.mkPen(MARKER_COLOR, width=2, style=QtCore.Qt.PenStyle.DotLine),
                                      label="current", labelOpts={"position": 0.6, "color": marker_text(),
                                                                  "fill": pg.mkBrush(legend_fill())})   # reads on a fill
        self.marker.label.setFont(pw.font(bold=True))
        self.plot.addItem(self.marker, ignoreBounds=True)
        self.legend = key_row(self.graphics)   # a row above the plot: never a box over the data
        self.hover = pw.HoverReadout(self.plot, self._hover_text, on_leave=None)
        pw.LeaveFilter(self.graphics, self.hover.leave)

        # ---------------------------------------------------------------- hierarchy (pyramid)
        self.pyramid_graphics = HierarchyChart(TIER_COLORS, time_label)
        self.pyramid, self.pyramid_labels = self.pyramid_graphics.plot, self.pyramid_graphics.labels

        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setAccessibleName("Residency views")
        self.tabs.addTab(self.graphics, "Residency curve")
        self.tabs.addTab(self.pyramid_graphics, "Memory hierarchy")
        self.tabs.setTabToolTip(0, "Where the KV cache lives as it grows, and the decode step time")
        self.tabs.setTabToolTip(1, "The device's memory tiers: capacity vs bandwidth, with latency")

        self.caption = QtWidgets.QLabel("")
        self.caption.setFont(pw.font())
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Residency summary")
        self.caption.setToolTip("Weights and the 10% runtime reserve are pinned in HBM; the KV cache fills the "
                                "tiers fastest first. Step time = weights + attention in HBM + off-HBM bytes / "
                                "tier bandwidth + one latency per 16-token page (vLLM block size).")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.caption)

    # ------------------------------------------------------------------ update
    def _sync_views(self) -> None:
        self.vb2.setGeometry(self.plot.getViewBox().sceneBoundingRect())
        self.vb2.linkedViewChanged(self.plot.getViewBox(), self.vb2.XAxis)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if pw.is_theme_change(event) and self._results is not None:
            self.graphics.setBackground(pw.plot_background())
            restyle_key(self.legend)
            for label in (self.marker.label, *self.cap_labels.values()):
                label.fill = pg.mkBrush(legend_fill())
            self.marker.label.setColor(marker_text())
            self.plot.getAxis("right").setTextPen(pg.mkPen(step_color()))
            for item in (self.step_curve, self.step_swatch):
                item.setPen(pg.mkPen(step_color(), width=3))
            self._refresh()

    def update_results(self, results: Results) -> None:
        self._results = results
        sc = results.scenario
        idx = KV_POLICIES.index(sc.kv_policy)
        if self.kv_combo.currentIndex() != idx:
            self.kv_combo.blockSignals(True)
            self.kv_combo.setCurrentIndex(idx)
            self.kv_combo.blockSignals(False)
        self._refresh()
        self.pyramid_graphics.show_tiers(results.scenario.hardware)

    def _refresh(self) -> None:
        if self._results is None:
            return
        sc = serving_scenario(self._results.scenario)
        current_ctx = float(sc.prompt_len + sc.gen_len)
        if self._axis == "context":
            x = np.union1d(default_context_axis(), [min(current_ctx, 1 << 24)])
            curve = residency_curve(sc, context=x, sessions=sc.batch, policy=self._policy)
            self._current_x = current_ctx
        else:
            x = np.union1d(default_sessions_axis(), [float(sc.batch)])
            curve = residency_curve(sc, context=current_ctx, sessions=x, policy=self._policy)
            self._current_x = float(sc.batch)
        self._curve, self._x = curve, x
        lx = np.log10(x)
        cum = np.zeros_like(x)
        present = curve.tiers
        self.legend.clear()
        for name in RESIDENCY_TIERS:
            y = curve.resident[name]
            self.base.setData(lx, np.zeros_like(lx))
            cum = cum + y
            self.tops[name].setData(lx, cum / 1e9)
            visible = name in present
            self.tops[name].setVisible(visible)
            self.fills[name].setVisible(visible)
            if visible:
                self.legend.addItem(self.swatches[name], TIER_LABELS[name] if name != "hbm" else "HBM")
        self.legend.addItem(self.step_swatch, "step time" if self._right == "step_time" else "tokens/s")
        # capacity lines: cumulative KV capacity (HBM: what weights and the reserve leave, also when the cache is
        # capped far below it: a 1.3 GB window's cap was drawn as "HBM full: 1 GB")
        hbm_free = float(np.max(curve.hbm_free_bytes))
        y_top = max(float(curve.needed.max()), hbm_free, 1e6) * 1.1
        below, self._full = 0.0, {}   # each shown line's cumulative capacity, named in the caption too
        for name in RESIDENCY_TIERS:
            cap = (max(hbm_free, 0.0) if name == "hbm" else float(np.max(curve.capacity[name]))) if name in present else 0.0
            line = self.cap_lines[name]
            shown = name in present and cap > 0 and below + cap <= y_top
            below += cap
            line.setVisible(shown)
            line.setPos(below / 1e9)
            self._full.update({name: below} if shown else {})
            label = self.cap_labels[name]
            label.setVisible(shown)
            label.setText(f"{TIER_LABELS[name].removeprefix('Host ')} full: {below / 1e9:,.0f} GB")   # fits a gap
        self.plot.setXRange(lx[0], lx[-1], padding=0.01)
        self.plot.setYRange(0, y_top / 1e9, padding=0)
        self.plot.getAxis("bottom").setTicks([log_ticks(x[0], x[-1], base2=True)])
        pw.set_axis_label(self.plot, "bottom", AXIS_TITLES[self._axis])

        ry = self._right_values()
        ly = np.log10(np.maximum(ry, 1e-12))
        self.step_curve.setData(lx, ly)
        lo, hi = math.floor(ly.min()), math.ceil(ly.max())
        if hi - lo < 1:
            hi = lo + 1
        self.vb2.setYRange(lo, hi, padding=0.02)
        if self._right == "step_time":
            ticks = [(e, time_label(10.0 ** e)) for e in range(lo, hi + 1)]
            title = "decode step time (log scale)"
        else:
            ticks = [(e, fmt_rate(10.0 ** e, "tok/s")) for e in range(lo, hi + 1)]
            title = "tokens per second, all sessions (log scale)"
        self.plot.getAxis("right").setTicks([ticks])
        pw.set_axis_label(self.plot, "right", title, color=step_color())
        self.marker.setPos(math.log10(self._current_x))
        self._place_labels()

        hw = sc.hardware
        tp = sc.gpus
        what = f"{sc.model.name} on {tp}× {hw.name}" if tp > 1 else f"{sc.model.name} on {hw.name}"
        where = f"{sc.batch} sessions" if self._axis == "context" else f"{findings.count_text(current_ctx)} tokens per sequence"
        pw.set_title(self.plot, pw.html_escape(self._finding()), size="13pt")
        self._sync_views()
        self._update_caption(f"{pw.html_escape(what)}, {where}, {sc.kv_policy} KV, {sc.kv_dtype}.")
        self.set_focus("tier", self._focus_tier)
        self._refresh_band()

    def _place_labels(self, *_) -> None:
        """The "current" marker's label where it misses the legend, then each capacity line's label above (or
        below) its line where it misses both and every label placed before, by the shared placer; a label
        with no room is hidden (the hover gives the capacities)."""
        if self._curve is None:
            return
        fit_columns(self.legend, self.graphics.width())   # the key's rows follow the chart's width
        self._sync_views()   # the right axis's curve where it is drawn: the labels keep off it
        vb = self.plot.getViewBox()
        bounds = ll.view_bounds(vb)
        index = ll.SpatialIndex(area=bounds)
        r = self.legend.sceneBoundingRect()
        if self.legend.isVisible() and r.width() > 0:
            index.add((r.left(), r.top(), r.right(), r.bottom()))
        curves = [i for i in vb.addedItems + self.vb2.addedItems
                  if isinstance(i, (pg.PlotCurveItem, pg.PlotDataItem)) and i is not self.base]
        for b in line_boxes(curves, bounds):   # no label on a curve
            index.add(b)
        caps = {name: line_boxes([line], bounds) for name, line in self.cap_lines.items()}
        label = self.marker.label
        for position in (0.6, 0.85, 0.35, 0.12, 0.72, 0.48, 0.24):
            label.setPosition(position)
            r = label.mapRectToScene(label.boundingRect())
            box = (r.left(), r.top(), r.right(), r.bottom())
            if ll.inside(box, bounds) and not index.hits(box, ll.PAD) and not any(
                    ll.overlaps(box, b, ll.PAD) for boxes in caps.values() for b in boxes):
                break
        index.add(box)
        for b in line_boxes([self.marker], bounds):   # nor on the "current" line
            index.add(b)
        left, right = bounds[0] + 4, bounds[2] - 4
        for name in RESIDENCY_TIERS:
            item, line = self.cap_labels[name], self.cap_lines[name]
            if not line.isVisible():
                item.setVisible(False)
                continue
            w, h = ll.text_size(item)
            y = ll.scene_point(vb, 0.0, float(line.value()))[1]
            xs = np.linspace(left, right - w, 7)[[0, 6, 3, 1, 5, 2, 4]]   # the ends, the middle, then between
            spots = [(x, y - h) for x in xs] + [(x, y) for x in xs]
            others = [b for n, boxes in caps.items() if n != name for b in boxes]   # other tiers' lines

            def free(b: ll.Box, others=others) -> bool:
                return (ll.inside(b, bounds) and not index.hits(b, ll.PAD)
                        and not any(ll.overlaps(b, o, ll.PAD) for o in others))

            box = next((ll.box_of(x, yy, w, h) for x, yy in spots if free(ll.box_of(x, yy, w, h))), None)
            ll.put(item, vb, box)
            if box is not None:
                index.add(box)

    def _right_values(self) -> np.ndarray:
        c = self._curve
        return c.step_time_s if self._right == "step_time" else c.tokens_per_s

    def _finding(self) -> str:
        """The title: how far the cache stays in HBM along the axis, and where it is at the current point."""
        c, i = self._curve, self._index_of(self._current_x)
        needed = np.maximum(c.needed, 1.0)
        all_hbm = c.resident["hbm"] >= needed * (1 - 1e-9)
        limit = float(self._x[all_hbm].max()) if all_hbm.any() else 0.0
        word = "tokens" if self._axis == "context" else "sessions"
        return findings.residency_title(limit, word, float(min(c.resident["hbm"][i] / needed[i], 1.0)),
                                        float(c.step_time_s[i]), float(self._x[i]))

    def _update_caption(self, context: str) -> None:
        c = self._curve
        i = self._index_of(self._current_x)
        full = ", ".join(f"{TIER_LABELS[n].removeprefix('Host ')} {v / 1e9:,.0f} GB" for n, v in self._full.items())
        parts = [context, f"Pinned in HBM per GPU: weights {fmt_bytes(c.weights_bytes[i])} + runtime reserve "
                 f"{fmt_bytes(c.reserved_bytes[i])}; KV {fmt_bytes(c.kv_bytes_per_token_gpu)}/token/GPU, "
                 f"page = {c.page_tokens} tokens." + (f" Dashed: each tier full, counted from 0 ({full})." if full else "")]
        if not bool(np.all(c.weights_fit)):
            parts.append("Weights do not fit in HBM: no room for the KV cache there.")
        where = (f"At {findings.count_text(self._x[i])} tokens (the request's end)" if self._axis == "context"
                 else f"At {findings.count_text(self._x[i])} sessions")
        parts.append(f"{where}: step {fmt_seconds(c.step_time_s[i])}, {c.tokens_per_s[i]:,.1f} tokens/s.")
        if self._policy == "evict" and c.evicted_tokens[i] > 0:
            parts.append(f"Evicted {c.evicted_tokens[i]:,.0f} tokens (all sessions).")
        if c.unplaced_bytes[i] > 0:
            parts.append(f"Does not fit in any tier: {fmt_bytes(c.unplaced_bytes[i])} unplaced.")
        self.caption.setText(" ".join(parts))

    # ------------------------------------------------------------------ hover
    def _index_of(self, value: float) -> int:
        if self._x.size == 0:
            return 0
        return int(np.argmin(np.abs(np.log10(self._x) - math.log10(max(value, 1e-12)))))

    def _hover_text(self, x: float, y: float) -> str:
        if self._curve is None or self._x.size == 0:
            return ""
        return self.hover_text_at(10.0 ** x)

    def hover_text_at(self, value: float) -> str:
        """Read-out at x = `value` tokens (or sessions): bytes per tier, step time, tokens/s, evicted."""
        c = self._curve
        i = self._index_of(value)
        head = (f"{c.context[i]:,.0f} tokens per sequence × {c.sessions[i]:,.0f} sessions")
        lines = [head, f"KV needed per GPU: {fmt_bytes(c.needed[i])}"]
        for name in c.tiers:
            lines.append(f"  {TIER_LABELS[name]}: {fmt_bytes(c.resident[name][i])}")
        lines.append(f"Decode step: {fmt_seconds(c.step_time_s[i])} ({c.tokens_per_s[i]:,.1f} tokens/s)")
        if c.evicted_tokens[i] > 0:
            lines.append(f"Evicted: {c.evicted_tokens[i]:,.0f} tokens")
        if c.unplaced_bytes[i] > 0:
            lines.append(f"Unplaced (all tiers full): {fmt_bytes(c.unplaced_bytes[i])}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ public controls
    def set_axis(self, mode: str) -> None:
        """x axis: "context" (tokens per sequence) or "sessions" (concurrent sequences)."""
        if mode not in AXES:
            raise ValueError(f"axis must be one of {AXES}, got {mode!r}")
        self._axis = mode
        if self.axis_combo.currentIndex() != AXES.index(mode):
            self.axis_combo.setCurrentIndex(AXES.index(mode))
        self._refresh()

    def set_policy(self, policy: str) -> None:
        """Placement when HBM is full: "spill" or "evict"."""
        if policy not in PLACEMENT_POLICIES:
            raise ValueError(f"policy must be one of {PLACEMENT_POLICIES}, got {policy!r}")
        self._policy = policy
        if self.policy_combo.currentIndex() != PLACEMENT_POLICIES.index(policy):
            self.policy_combo.setCurrentIndex(PLACEMENT_POLICIES.index(policy))
        self._refresh()

    def set_right_axis(self, mode: str) -> None:
        """Right axis: "step_time" or "tokens_per_s"."""
        if mode not in RIGHT_MODES:
            raise ValueError(f"right axis must be one of {RIGHT_MODES}, got {mode!r}")
        self._right = mode
        if self.right_combo.currentIndex() != RIGHT_MODES.index(mode):
            self.right_combo.setCurrentIndex(RIGHT_MODES.index(mode))
        self._refresh()

    def set_focus(self, what: str, key: str) -> None:
        """Linked focus: ("tier", name) thickens that tier's outline; anything else clears it."""
        self._focus_tier = key if what == "tier" and key in RESIDENCY_TIERS else ""
        for name, top in self.tops.items():
            color = pg.mkColor(TIER_COLORS[name]).darker(130)
            top.setPen(pg.mkPen(MARKER_COLOR, width=4) if name == self._focus_tier else pg.mkPen(color, width=1))

    # ------------------------------------------------------------------ accessors for tests
    def area_series(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{tier: (x, bytes resident)} as drawn (x in tokens or sessions; stacked in the chart)."""
        if self._curve is None:
            return {}
        return {n: (self._x.copy(), self._curve.resident[n].copy()) for n in self._curve.tiers}

    def step_time_series(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, effective decode step time in seconds)."""
        if self._curve is None:
            return np.zeros(0), np.zeros(0)
        return self._x.copy(), self._curve.step_time_s.copy()

    def capacity_lines(self) -> dict[str, float]:
        """{tier: cumulative capacity in GB where its dashed line is drawn} for visible lines."""
        return {n: float(line.value()) for n, line in self.cap_lines.items() if line.isVisible()}

    def current_marker_x(self) -> float:
        """x of the current-scenario marker in tokens (or sessions)."""
        return float(10.0 ** self.marker.value())

    # ------------------------------------------------------------------ uncertainty band (ui/bands.py)
    def set_bands(self, u) -> None:
        """Shade the right-axis curve between its values at the efficiency ranges' low and high ends (the
        envelope: decode time falls with each efficiency); None hides the band."""
        self._bands = u
        self._refresh_band()

    def _refresh_band(self) -> None:
        from trinity_desktop.model.search.uncertainty import efficiency_extremes
        from trinity_desktop.ui.bands import FillBand

        if not hasattr(self, "step_band"):
            self.step_band = FillBand(self.vb2, "bandwidth")
        u = getattr(self, "_bands", None)
        if u is None or self._results is None or self._curve is None:
            self.step_band.clear()
            return
        sc = serving_scenario(self._results.scenario)
        ends = []
        for eff in efficiency_extremes(sc, u.set_name):
            s = sc.replace(efficiency=eff)
            if self._axis == "context":
                c = residency_curve(s, context=self._x, sessions=sc.batch, policy=self._policy)
            else:
                c = residency_curve(s, context=float(sc.prompt_len + sc.gen_len), sessions=self._x,
                                    policy=self._policy)
            ends.append(c.step_time_s if self._right == "step_time" else c.tokens_per_s)
        lo, hi = np.minimum(*ends), np.maximum(*ends)
        self.step_band.set(np.log10(self._x), np.log10(np.maximum(lo, 1e-12)), np.log10(np.maximum(hi, 1e-12)))
        self._place_labels()   # the band's edges are lines the labels keep off

    def step_band_values(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The band's (low, high) right-axis values as drawn, or None when hidden."""
        band = getattr(self, "step_band", None)
        if band is None or not band.fill.isVisible():
            return None
        return 10.0 ** band.low.yData, 10.0 ** band.high.yData
