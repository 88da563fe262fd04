"""Step-through flow panel: a Gantt chart of one training step or one inference request, stage by stage.

Lanes (y) are pipeline stages, the DP network and the host link (training) or the GPU group (inference); time
(x) is in s / ms / µs. A stepper (previous, next, play; Left/Right arrow keys, Space) walks the step phase by
phase (model/views/phases.py: data load, forward, backward, gradient sync, optimizer; or prefill, KV offload,
decode, KV onload): the phase's bars keep their colour, the rest fade. "1F1B detail" steps bar by bar instead
(every micro-batch's forward and backward). Play walks the whole step in at most PLAY_BUDGET_MS (ui/flow_stepper.py).
`stageFocused(name, numbers)` lets the roofline and memory panels follow. The stages come from
`trinity_desktop.model.views.stages.stages(scenario, results)`; items are long-lived and updated with setOpts/setData.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.phases import Phase
from trinity_desktop.model.views.stages import Stage, bubble_fraction, lane_order, notes
from trinity_desktop.ui import label_layout, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.chart_layout import set_stacked
from trinity_desktop.ui.flow_readout import (
    PER_GPU_LANES,
    ROLE_COLORS,
    ROLE_LABELS,
    phase_html,
    role_of,
    stage_hover_text,
    stage_html,
    time_ticks,
)
from trinity_desktop.ui.flow_stepper import PLAY_INTERVAL_MS, play_interval_ms, step_key
from trinity_desktop.ui.flow_timeline import bar_brush, timeline
from trinity_desktop.ui.units import choose_time_unit, fmt_seconds
from trinity_desktop.ui.wrap_layout import WrapLayout

PHASE_MARGIN = 0.05          # a zoomed phase fills the width but this share either side
BAR_HEIGHT = 0.72
STACK_BELOW_PX = 720      # the read-out goes under the chart in a narrower panel
DETAIL_MAX_PX = 340


class FlowPanel(QtWidgets.QWidget):
    """Gantt chart of the stages with a stepper and a side read-out of the highlighted stage's numbers."""

    stageFocused = QtCore.Signal(str, dict)
    focusRequested = QtCore.Signal(str, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("FlowPanel")
        self.setAccessibleName("Step-through flow: stages of one training step or inference request")
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self._results: Results | None = None
        self._stages: tuple[Stage, ...] = ()
        self._lanes: list[str] = []
        self._index = -1
        self._scale, self._unit = 1.0, "s"
        self._by_lane: dict[int, tuple[np.ndarray, np.ndarray, list[int]]] = {}
        self._total = 0.0
        self._phases: tuple[Phase, ...] = ()
        self._roles: list[str] = []
        self._previous_phase = ""

        # --- stepper -------------------------------------------------------------------------------
        self.prev_button = self._button("◀ Previous", "Previous phase or stage (Left arrow)", "Previous step")
        self.play_button = self._button("▶ Play", "Play: walk through the whole step (Space)",
                                        "Play or pause stepping")
        self.next_button = self._button("Next ▶", "Next phase or stage (Right arrow)", "Next step")
        self.prev_button.clicked.connect(lambda: self.step(-1))
        self.next_button.clicked.connect(lambda: self.step(1))
        self.play_button.clicked.connect(self.toggle_play)
        self.zoom_check = QtWidgets.QCheckBox("Zoom to stage")
        self.zoom_check.setFont(pw.font())
        self.zoom_check.setToolTip("Zoom the time axis around the highlighted stage (off: the whole step)")
        self.zoom_check.setAccessibleName("Zoom to the highlighted stage")
        self.zoom_check.setChecked(True)
        self.zoom_check.toggled.connect(lambda _: self._apply_range())
        self.detail_check = QtWidgets.QCheckBox("1F1B detail")
        self.detail_check.setFont(pw.font())
        self.detail_check.setToolTip("Step bar by bar: every micro-batch's forward and backward in the 1F1B "
                                     "schedule (off: the step's phases)")
        self.detail_check.setAccessibleName("Step through every bar (micro-batch detail)")
        self.detail_check.toggled.connect(self._detail_toggled)
        self.position_label = QtWidgets.QLabel("no stages")
        self.position_label.setFont(pw.font(12))
        self.position_label.setWordWrap(True)   # a long stage name wraps on its own line, never cut
        self.position_label.setAccessibleName("Stage position")
        self.position_label.setToolTip("Which stage is highlighted, in order of start time")
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(PLAY_INTERVAL_MS)
        self.timer.timeout.connect(self._tick)

        # --- Gantt ---------------------------------------------------------------------------------
        self.gantt_widget = pg.PlotWidget(background=pw.plot_background())
        self.gantt_widget.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.gantt_widget.setAccessibleName("Stage timeline chart")
        self.gantt_widget.setAccessibleDescription(
            "Gantt chart: lanes are pipeline stages, the data-parallel network and the host link (training) or "
            "the GPU group (inference); bars are stages over time. Hover a bar for its numbers.")
        self.plot: pg.PlotItem = self.gantt_widget.getPlotItem()
        self.plots = {"gantt": self.plot}
        pw.style_plot(self.plot, "", bottom="time (s)")
        pw.freeze_view(self.plot)
        self.plot.getViewBox().invertY(True)
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        self.plot.getAxis("left").setStyle(tickLength=0)
        self.bars_item = pg.BarGraphItem(x0=[0.0], width=[0.0], y=[0.0], height=BAR_HEIGHT, brush=pw.plot_background(),
                                         pen=pg.mkPen(None))
        self.plot.addItem(self.bars_item)
        # the highlight outline and cursor in the plot's text colour: they read on every theme's background
        # (black was drawn black on black in the high-contrast theme) and restyle_plots recolours them
        self.outline = pg.PlotCurveItem(pen=pg.mkPen(theme.plot_text_color(), width=3), connect="pairs")
        self.outline.setZValue(50)
        self.plot.addItem(self.outline, ignoreBounds=True)
        self.cursor_line = pg.InfiniteLine(angle=90, pen=pg.mkPen(theme.plot_text_color(), width=1,
                                                                   style=QtCore.Qt.PenStyle.DashLine))
        self.cursor_line.setZValue(40)
        self.plot.addItem(self.cursor_line, ignoreBounds=True)
        self.hover = pw.HoverReadout(self.plot, self.hover_text_at)
        pw.LeaveFilter(self.gantt_widget, self.hover.leave)

        # --- side read-out and legend --------------------------------------------------------------
        self.detail_label = QtWidgets.QLabel("No scenario evaluated yet.")
        self.detail_label.setObjectName("FlowStageDetail")
        self.detail_label.setFont(pw.font(12))
        self.detail_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.detail_label.setWordWrap(True)
        self.detail_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignTop | QtCore.Qt.AlignmentFlag.AlignLeft)
        self.detail_label.setMinimumWidth(270)
        self.detail_label.setMaximumWidth(DETAIL_MAX_PX)
        self.detail_label.setAccessibleName("Highlighted stage numbers")
        self.detail_label.setToolTip("The highlighted stage: time window, FLOPs and bytes per GPU, live memory per "
                                     "tier and the binding resource")
        self.detail_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.headline = QtWidgets.QLabel("")
        self.headline.setObjectName("FlowHeadline")
        self.headline.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names are shown as typed, never as HTML
        self.headline.setFont(pw.font(13, bold=True))
        self.headline.setWordWrap(True)
        self.headline.setAccessibleName("Timeline summary")
        self.headline.setToolTip("Total time of the step (or request), layout and the 1F1B pipeline bubble: its "
                                 "share of the pipeline phase ((p-1)/(m+p-1) with equal stages; the slowest stage paces "
                                 "the rest) and of the whole step")
        self.legend_label = QtWidgets.QLabel("")
        self.legend_label.setFont(pw.font())
        self.legend_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.legend_label.setWordWrap(True)
        self.legend_label.setAccessibleName("Timeline legend")
        self.legend_label.setToolTip("Bar colours by role; idle time (the pipeline bubble) is hatched grey")

        # The stepper wraps onto a second line in a narrow dock: its texts change with the results (the
        # detail switch), and a fixed row would make the dock wider than the layout planned when the panel is
        # first built (lazily, perhaps while presenting). The position ("Bar 2 of 33: decode steps ...") has
        # a line of its own under it, where it wraps at any width.
        buttons = WrapLayout(spacing=8)
        for w in (self.prev_button, self.play_button, self.next_button, self.zoom_check, self.detail_check):
            buttons.addWidget(w)
        self.middle = middle = QtWidgets.QHBoxLayout()   # the read-out beside the chart, or under it (narrow)
        middle.addWidget(self.gantt_widget, 1)
        middle.addWidget(self.detail_label)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(buttons)
        layout.addWidget(self.position_label)
        layout.addWidget(self.headline)
        layout.addLayout(middle, 1)
        layout.addWidget(self.legend_label)
        for w in (self.prev_button, self.play_button, self.next_button, self.zoom_check, self.detail_check):
            w.installEventFilter(self)

    def _button(self, text: str, tip: str, name: str) -> QtWidgets.QPushButton:
        b = QtWidgets.QPushButton(text)
        b.setFont(pw.font(12))
        b.setToolTip(tip)
        b.setAccessibleName(name)
        return b

    # ------------------------------------------------------------------ update
    def update_results(self, results: Results) -> None:
        previous = self.current_stage()
        self._results = results
        self._stages, self._phases = timeline(results.scenario, results)   # laid out once (ahead, on a slide)
        self._lanes = lane_order(self._stages)
        lane_index = {n: i for i, n in enumerate(self._lanes)}
        self._total = max((st.end_s for st in self._stages), default=0.0)
        self._scale, self._unit = choose_time_unit(self._total)
        kind = results.kind
        n = len(self._stages)
        x0 = np.array([st.start_s for st in self._stages], dtype=float) * self._scale
        widths = np.array([st.duration_s for st in self._stages], dtype=float) * self._scale
        ys = np.array([lane_index[st.lane] for st in self._stages], dtype=float)
        roles = [role_of(st, kind) for st in self._stages]
        self._roles = roles
        # few bars (inference): white separators; many (training), or a bar under 1% of the step: none, or thin
        # bars would turn white (a decode group's 47-ms EP all-to-all vanished under its separator at 1366)
        wide = 0 < n <= 200 and float(widths.min()) >= 0.01 * self._total * self._scale
        pen = pg.mkPen(pw.plot_background(), width=1.5) if wide else pg.mkPen(None)
        # one shared pen, never a per-bar list: pyqtgraph raises UnboundLocalError on an empty one
        self.bars_item.setOpts(x0=x0, width=widths, y=ys, height=BAR_HEIGHT, brushes=self._brushes(set()), pen=pen)
        order = np.lexsort((x0, ys))   # by lane, then by start: one sort, not one scan per lane
        lane_of = ys[order]
        self._by_lane = {}
        for li in range(len(self._lanes)):
            idx = order[np.searchsorted(lane_of, li, "left"):np.searchsorted(lane_of, li, "right")]
            self._by_lane[li] = (x0[idx], x0[idx] + widths[idx], [int(i) for i in idx])
        left = self.plot.getAxis("left")
        label_layout.set_thinned_ticks(left, list(enumerate(self._lanes)))
        metrics = QtGui.QFontMetrics(pw.font())
        left.setWidth(max((metrics.horizontalAdvance(n) for n in self._lanes), default=40) + 16)
        self.plot.setLabel("bottom", "time", **{"font-size": pw.LABEL_SIZE})   # each tick carries its unit
        self.plot.setYRange(-0.6, len(self._lanes) - 0.4, padding=0)
        sc = results.scenario
        if kind == "train":
            bub = bubble_fraction(self._stages)
            of_step = results.time.get("pipeline_bubble", 0.0) / self._total if self._total > 0 else 0.0
            title = (f"One training step: {fmt_seconds(self._total)} · {sc.gpus}× {sc.hardware.name} · "
                     f"PP {sc.pp}" + (f" × {sc.virtual_stages} virtual stages (interleaved)" if sc.virtual_stages > 1
                                      else "") + f", {int(results.train.get('micro_batches', 0))} micro-batches · bubble "
                     f"{100 * bub:.1f}% of the pipeline phase ({100 * of_step:.1f}% of the step)")
        else:
            title = (f"One inference request: {fmt_seconds(self._total)} · prefill "
                     f"{fmt_seconds(results.infer.get('prefill_s', 0.0))} + {sc.gen_len:,} decode steps")
            if any(st.kind == "memory-transfer" for st in self._stages):
                title += " · KV cache spills beyond HBM"
            if results.disaggregated is not None:  # disaggregated serving (#23): the pools' request
                d = results.disaggregated
                title = (f"Disaggregated request: {fmt_seconds(self._total)} · prefill "
                         f"{fmt_seconds(float(d.served.ttft_s))} on pool 1, KV "
                         f"{float(d.served.kv_transfer_bytes) / 1e9:,.2f} GB in {fmt_seconds(float(d.served.kv_transfer_s))}"
                         f" over {d.layout.link}, {sc.gen_len:,} decode steps on pool 2")
        self.headline.setText(title)
        present = list(dict.fromkeys(roles))
        squares = [pw.key_entry("■", ROLE_LABELS[r], ROLE_COLORS[r]) for r in present if r != "idle"]
        if "idle" in present:
            squares.append(pw.key_entry("▨", "idle (pipeline bubble / waiting)", theme.MUTED_COLOR))
        self.legend_label.setText(pw.key_line(squares) + f"<br><span style='color:{pw.secondary_text()}'>"
                                  + pw.html_escape(" ".join(notes(sc)[:2])) + "</span>")
        self.detail_check.setText("1F1B detail" if kind == "train" else "every decode group")
        # keep the same stage (or phase) highlighted when it still exists
        index = 0
        if self.detailed():
            names = [st.name for st in self._stages]
            if previous is not None and previous.name in names:
                index = names.index(previous.name)
        else:
            names = [ph.name for ph in self._phases]
            if self._previous_phase in names:
                index = names.index(self._previous_phase)
        self._select(index, emit=False)

    # ------------------------------------------------------------------ stepping
    def detailed(self) -> bool:
        """True when stepping bar by bar (micro-batch detail), False when stepping phase by phase."""
        return self.detail_check.isChecked()

    def set_detailed(self, on: bool) -> None:
        self.detail_check.setChecked(on)

    def _detail_toggled(self, on: bool) -> None:
        self.timer.setInterval(play_interval_ms(self.step_count(), on))
        if not self._stages:
            return
        if on:  # from a phase to its first bar
            ph = self.current_phase_of(self._previous_phase)
            self._select(ph.members[0] if ph is not None else 0, emit=True)
        else:   # from a bar to (the first) phase it belongs to
            hit = [i for i, ph in enumerate(self._phases) if self._index in ph.members]
            self._select(hit[0] if hit else 0, emit=True)

    def current_phase_of(self, name: str) -> Phase | None:
        return next((ph for ph in self._phases if ph.name == name), None)

    def step_count(self) -> int:
        """How many steps Next walks: phases, or bars with micro-batch detail."""
        return len(self._stages) if self.detailed() else len(self._phases)

    def stage_count(self) -> int:
        return len(self._stages)

    def phase_names(self) -> list[str]:
        return [ph.name for ph in self._phases]

    def current_index(self) -> int:
        return self._index

    def current_phase(self) -> Phase | None:
        """The highlighted phase (None with micro-batch detail on)."""
        if self.detailed() or not 0 <= self._index < len(self._phases):
            return None
        return self._phases[self._index]

    def current_stage(self) -> Stage | None:
        """The highlighted bar; in phase mode the phase's longest bar on one GPU's lanes."""
        if not self.detailed():
            ph = self.current_phase()
            return self._stages[self._representative(ph)] if ph is not None else None
        return self._stages[self._index] if 0 <= self._index < len(self._stages) else None

    def _representative(self, ph: Phase) -> int:
        own = [i for i in ph.members if self._stages[i].lane in PER_GPU_LANES] or list(ph.members)
        return max(own, key=lambda i: self._stages[i].duration_s)

    def step(self, delta: int) -> None:
        """Move the highlight by `delta` phases (or bars, in order of start time), clamped to the ends."""
        if self.step_count():
            self._select(int(np.clip(self._index + delta, 0, self.step_count() - 1)), emit=True)

    def select(self, index: int) -> None:
        """Highlight phase (or bar) `index` (as the user would) and emit `stageFocused`."""
        if self.step_count():
            self._select(int(np.clip(index, 0, self.step_count() - 1)), emit=True)

    def set_focus(self, what: str, key: str) -> None:
        """Linked focus from elsewhere: ("stage", name) highlights that stage without re-emitting."""
        if what != "stage" or not self.detailed():
            return
        for i, st in enumerate(self._stages):
            if st.name == key:
                self._select(i, emit=False)
                return

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
        else:
            if self._index >= self.step_count() - 1:
                self._select(0, emit=True)
            self.timer.setInterval(play_interval_ms(self.step_count(), self.detailed()))
            self.timer.start()
        self._sync_play_button()

    def is_playing(self) -> bool:
        return self.timer.isActive()

    def play_duration_ms(self) -> int:
        """How long Play takes from the first step to the last."""
        return play_interval_ms(self.step_count(), self.detailed()) * max(self.step_count() - 1, 0)

    def _tick(self) -> None:
        if self._index >= self.step_count() - 1:
            self.timer.stop()
            self._sync_play_button()
            return
        self.step(1)

    def _sync_play_button(self) -> None:
        self.play_button.setText("⏸ Pause" if self.timer.isActive() else "▶ Play")

    def _select(self, index: int, emit: bool) -> None:
        if not self._stages or not self.step_count():
            self._index = -1
            self.outline.setData([], [])
            self.position_label.setText("no stages")
            return
        self._index = index
        if self.detailed():
            members = (index,)
            st = self._stages[index]
            self.position_label.setText(f"Bar {index + 1} of {len(self._stages)}: {st.name}")
            self.detail_label.setText(self.detail_html(st))
            x = st.start_s * self._scale
        else:
            ph = self._phases[index]
            self._previous_phase = ph.name
            members = ph.members
            st = self._stages[self._representative(ph)]
            self.position_label.setText(f"Phase {index + 1} of {len(self._phases)}: {ph.name}")
            self.detail_label.setText(self.phase_html(ph))
            x = ph.start_s * self._scale
        self.outline.setData(*pw.rect_outline_points(self._member_rects(members)))
        self.cursor_line.setPos(x)
        self.bars_item.setOpts(brushes=self._brushes(set() if self.detailed() else set(members)))
        self._apply_range()
        if emit:
            numbers = st.as_dict()
            self.stageFocused.emit(st.name, numbers)
            self.focusRequested.emit("stage", st.name)

    def _brushes(self, highlighted: set[int]) -> list[QtGui.QBrush]:
        """Every bar's brush: faded outside `highlighted` (none faded when it is empty)."""
        name = theme.current_theme()
        return [bar_brush(r, bool(highlighted) and i not in highlighted, name) for i, r in enumerate(self._roles)]

    def _member_rects(self, members) -> list[tuple[float, float, float, float]]:
        """One outline per lane around the highlighted bars (from the lane's first to its last member)."""
        spans: dict[int, list[float]] = {}
        for i in members:
            st = self._stages[i]
            li = self._lanes.index(st.lane)
            a, b = spans.get(li, [st.start_s, st.end_s])
            spans[li] = [min(a, st.start_s), max(b, st.end_s)]
        return [(a * self._scale, li - BAR_HEIGHT / 2 - 0.06, (b - a) * self._scale, BAR_HEIGHT + 0.12)
                for li, (a, b) in sorted(spans.items())]

    def _highlight_span(self) -> tuple[float, float] | None:
        if self.detailed():
            st = self.current_stage()
            return None if st is None else (st.start_s, st.end_s)
        ph = self.current_phase()
        return None if ph is None else (ph.start_s, ph.end_s)

    def _apply_range(self) -> None:
        total = self._total * self._scale
        span = self._highlight_span()
        if total <= 0:
            self.plot.setXRange(0, 1, padding=0)
            return
        if self.zoom_check.isChecked() and span is not None:
            a, b = span[0] * self._scale, span[1] * self._scale
            if self.detailed():   # one bar: with its neighbours around it
                half = max(6.0 * (b - a), total / 30.0)
                lo, hi = max(0.0, a - half), min(total, b + half)
            else:                 # one phase: scaled to the width (a 3-px data load fills the chart)
                margin = PHASE_MARGIN * (b - a) if b > a else total * 1e-3
                lo, hi = max(0.0, a - margin), min(total, b + margin)
            self.plot.setXRange(lo, hi, padding=0.02)
        else:
            lo, hi = 0.0, total
            self.plot.setXRange(0, total, padding=0.01)
        self.plot.getAxis("bottom").setTicks([time_ticks(lo, hi, self._scale)])

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        """In a tall panel under STACK_BELOW_PX wide the read-out moves under the chart (beside it, a 517-px dock
        left the chart 230 px), with room for its usual lines so that stepping does not make the chart jump; a
        wide, low panel (a slide's) keeps it beside, where a chart of 32 lanes keeps its height."""
        size = event.size()
        stacked = size.width() < STACK_BELOW_PX and size.height() > size.width()
        if set_stacked(self.middle, stacked):
            self.detail_label.setMaximumWidth(16_777_215 if stacked else DETAIL_MAX_PX)
            self.detail_label.setMinimumHeight(6 * self.detail_label.fontMetrics().lineSpacing() if stacked else 0)
        super().resizeEvent(event)

    # ------------------------------------------------------------------ keyboard
    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:  # noqa: N802 (Qt name)
        if not step_key(self, event.key()):
            super().keyPressEvent(event)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QtCore.QEvent.Type.KeyPress and event.key() in (QtCore.Qt.Key.Key_Left,
                                                                             QtCore.Qt.Key.Key_Right):
            return step_key(self, event.key())
        return False

    # ------------------------------------------------------------------ read-outs
    def phase_html(self, ph: Phase) -> str:
        return phase_html(ph, self._stages, self._results.train if self._results is not None else None)

    def detail_html(self, st: Stage) -> str:
        """The side read-out of one stage (rich text)."""
        return stage_html(st, self._results.capacity if self._results is not None else None)

    def stage_at(self, x: float, y: float) -> int:
        """Index of the stage drawn at data coordinates (x in the axis unit, y lane), or -1."""
        li = int(round(y))
        if li not in self._by_lane or abs(y - li) > BAR_HEIGHT / 2:
            return -1
        starts, ends, idx = self._by_lane[li]
        hits = [idx[k] for k in range(len(idx)) if starts[k] <= x <= ends[k]]
        if not hits:
            return -1
        # the shortest bar under the cursor (prefetched transfers overlap longer ones)
        return min(hits, key=lambda i: self._stages[i].duration_s)

    def hover_text_at(self, x: float, y: float) -> str:
        i = self.stage_at(x, y)
        return stage_hover_text(self._stages[i]) if i >= 0 else ""

    # ------------------------------------------------------------------ for tests
    def bars(self) -> list[tuple[str, float, float, str]]:
        """(lane, start_s, end_s, kind) of every bar drawn, in stepping order."""
        return [(st.lane, st.start_s, st.end_s, st.kind) for st in self._stages]

    def lanes(self) -> list[str]:
        return list(self._lanes)

    def highlight_rect(self) -> tuple[float, float, float, float]:
        """(x0, x1, y0, y1) of the box around every highlight outline in seconds and lane units, or zeros."""
        xs, ys = self.outline.getData()
        if xs is None or len(xs) == 0:
            return (0.0, 0.0, 0.0, 0.0)
        return (float(np.min(xs)) / self._scale, float(np.max(xs)) / self._scale, float(np.min(ys)),
                float(np.max(ys)))

    def detail_text(self) -> str:
        return self.detail_label.text()
