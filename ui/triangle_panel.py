"""Triangle navigator: library workloads placed by their computed pressures; techniques drawn as moves.

Corners: Compute (top), Bandwidth (bottom left), Memory (bottom right). A workload with pressures (c, b, m)
sits at `barycentric(c, b, m)` (model/formulas/pressure.py: the same numbers as the heatmap, clipped to [0, 1] and
normalised to sum to 1). Edges carry the paper's three substitution paths (arXiv 2601.11577 abstract: more
computation → less bandwidth, more bandwidth → less memory, more memory → less computation) and their
reverses. Ticking techniques draws the path of the current scenario as arrows, each coloured by the
resource the technique spends, computed by `model.techniques.path`.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model import Results, ValidationError, barycentric
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.model.views.workloads import WorkloadRow, evaluate_library
from trinity_desktop.ui import findings, named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.technique_list import TechniqueList
from trinity_desktop.ui.triangle_labels import CENTROID, CORNERS, SQRT3_2, TriangleLabels
from trinity_desktop.ui.triangle_pools import PoolEdge
from trinity_desktop.ui.triangle_readout import gpu_seconds, marker_size, pressure_lines

FOCUS_COLOR = theme.FOCUS_COLOR      # Okabe-Ito vermillion: not a resource colour
CURRENT_COLOR = theme.plot_text_color()
NA_BRUSH = theme.MUTED_COLOR
HOVER_RADIUS_PX = 18.0


def triangle_point(compute, bandwidth, memory) -> np.ndarray:
    """(x, y) in the triangle for pressures (broadcasts): the barycentric weights times the corners."""
    w = barycentric(compute, bandwidth, memory)
    corners = np.array([CORNERS[r] for r in ("compute", "bandwidth", "memory")])  # (3, 2)
    return np.tensordot(np.moveaxis(w, 0, -1), corners, axes=1)


def _short(name: str, width: int = 26) -> str:
    """A marker's label: the workload's short name (before its detail), wrapped to `width` characters a line;
    whole words, never cut (the hover gives the full name)."""
    return "\n".join(textwrap.wrap(named_combo.short_name(name, (*named_combo.NAME_DETAIL, ": ")), width, break_long_words=False))


class TrianglePanel(QtWidgets.QWidget):
    """The compute / bandwidth / memory triangle for the current hardware, with technique paths."""

    workloadActivated = QtCore.Signal(str)
    focusRequested = QtCore.Signal(str, str)
    scenarioRequested = QtCore.Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("TrianglePanel")
        self.setAccessibleName("Trade-off triangle navigator")
        self._results: Results | None = None
        self._rows: list[WorkloadRow] = []
        self._library_key = None
        self._positions: dict[str, tuple[float, float]] = {}
        self._current = (0.5, SQRT3_2 / 3)
        self._checked: list[str] = []
        self._path: list = []
        self._segments: list[tuple[float, float, float, float, str, str]] = []
        self._skipped: list[str] = []
        self._focus = ("", "")
        self._hovered = ""

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("Trade-off triangle")
        self.graphics.setAccessibleDescription(
            "Equilateral triangle with corners Compute (top), Bandwidth (bottom left) and Memory (bottom "
            "right). Each library workload is a marker placed by its computed pressures; the star is the "
            "current scenario; arrows show ticked techniques. Hover a marker for the numbers, click to load it.")
        self.plot: pg.PlotItem = self.graphics.addPlot()
        pw.freeze_view(self.plot)
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        pw.set_title(self.plot, "Where workloads sit: computed pressure")
        self._build_triangle()
        self.text = TriangleLabels(self.plot)   # corner names, edge captions, marker labels

        self.markers = pg.ScatterPlotItem(pxMode=True)
        self.markers.setZValue(20)
        self.plot.addItem(self.markers)
        self.focus_ring = pg.ScatterPlotItem(pxMode=True, brush=None, pen=pg.mkPen(FOCUS_COLOR, width=4))
        self.focus_ring.setZValue(25)
        self.plot.addItem(self.focus_ring)
        self.current_marker = pg.ScatterPlotItem(pxMode=True, symbol="star", size=30,
                                                 brush=pg.mkBrush(CURRENT_COLOR), pen=pg.mkPen(pw.plot_background(), width=1.5))
        self.current_marker.setZValue(40)
        self.plot.addItem(self.current_marker)
        # The edge-cloud split optimum (from the Split computing panel) rides the compute-bandwidth edge.
        self.split_marker = pg.ScatterPlotItem(pxMode=True, symbol="d", size=18,
                                               brush=pg.mkBrush(theme.RESOURCE_COLORS["compute"]),
                                               pen=pg.mkPen(theme.plot_text_color(), width=1.5))
        self.split_marker.setZValue(39)
        self.split_marker.setVisible(False)
        self.plot.addItem(self.split_marker)
        self.pools = PoolEdge(self.plot)  # disaggregated serving (#23): the pools and the KV transfer edge
        self.arrow_lines: list[pg.PlotCurveItem] = []
        self.arrow_heads: list[pg.ArrowItem] = []
        self.preview_line = pg.PlotCurveItem(pen=pg.mkPen(FOCUS_COLOR, width=3, style=QtCore.Qt.PenStyle.DashLine))
        self.preview_head = pg.ArrowItem(headLen=16, tailLen=None, brush=FOCUS_COLOR, pen=pg.mkPen(FOCUS_COLOR))
        for item in (self.preview_line, self.preview_head):
            item.setZValue(35)
            item.setVisible(False)
            self.plot.addItem(item)

        self.hover = pw.HoverReadout(self.plot, self._hover_at, on_move=self._hover_moved,
                                     on_leave=self._hover_left, html=True)
        pw.LeaveFilter(self.graphics, self.hover.leave)
        self.plot.getViewBox().sigResized.connect(pw.NextPass(self, self._fit).poke)   # once per burst of resizes
        self.plot.scene().sigMouseClicked.connect(self._scene_clicked)

        # --- technique list (the path): a collapsible side list, never on the plot -------------------
        self.techniques = TechniqueList()
        self.technique_list = self.techniques.technique_list
        self._items = self.techniques.items
        self.apply_button, self.clear_button = self.techniques.apply_button, self.techniques.clear_button
        self.technique_list.itemChanged.connect(self._item_changed)
        self.technique_list.itemEntered.connect(
            lambda item: self.focusRequested.emit("technique", item.data(QtCore.Qt.ItemDataRole.UserRole)))
        self.apply_button.clicked.connect(self.apply_path)
        self.clear_button.clicked.connect(lambda: self.show_path([]))

        self.caption = QtWidgets.QLabel()
        self.caption.setFont(pw.font())
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Triangle legend")
        self.caption.setToolTip("Placement: pressures (compute and bandwidth time shares, memory = HBM "
                                "required / available) clipped to [0, 1] and normalised to sum to 1.")

        header = QtWidgets.QHBoxLayout()
        header.addStretch(1)
        header.addWidget(self.techniques.toggle)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.graphics, 3)
        top.addWidget(self.techniques, 2)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(header)
        layout.addLayout(top, 1)
        layout.addWidget(self.caption)
        self._update_caption()

    # ------------------------------------------------------------------ static drawing
    def _build_triangle(self) -> None:
        order = ("compute", "bandwidth", "memory", "compute")
        xs = [CORNERS[r][0] for r in order]
        ys = [CORNERS[r][1] for r in order]
        self.outline = pg.PlotCurveItem(xs, ys, pen=pg.mkPen(theme.plot_text_color(), width=2))
        self.plot.addItem(self.outline)
        cx, cy = CENTROID
        self.centroid = pg.ScatterPlotItem([cx], [cy], symbol="+", size=12, pen=pg.mkPen(theme.MUTED_COLOR, width=1.5))
        self.plot.addItem(self.centroid)

    # ------------------------------------------------------------------ updates
    def update_results(self, results: Results) -> None:
        self._results = results
        sc = results.scenario
        key = (sc.hardware, sc.efficiency)
        if key != self._library_key:  # the library depends only on the hardware and efficiency
            self._library_key = key
            self._set_rows(evaluate_library(sc.hardware, sc), sc.hardware.name)
        x, y = self._point(results)
        self._current = (x, y)
        self.current_marker.setData([x], [y])
        self._update_title()
        self.pools.update(results)  # disaggregated serving (#23)
        self._update_caption()
        self._place_labels()
        self._refresh_list()
        self._recompute_path()
        self.set_focus(*self._focus)

    def _update_title(self) -> None:
        """The finding: what binds this scenario, and what binds most of the library on this hardware."""
        r = self._results
        bindings = [row.results.bottleneck for row in self._rows if row.results is not None]
        current = (r.bottleneck, float(getattr(r.pressure, r.bottleneck, 0.0))) if r is not None else ("", 0.0)
        hardware = r.scenario.hardware.name if r is not None else ""
        pw.set_title(self.plot, pw.html_escape(findings.triangle_title(*current, bindings, hardware)))

    def _point(self, results: Results) -> tuple[float, float]:
        p = [v if math.isfinite(v) else 0.0 for v in results.pressure.as_tuple()]
        x, y = triangle_point(*p)
        return float(x), float(y)

    def _set_rows(self, rows: list[WorkloadRow], hardware_name: str) -> None:
        self._rows = list(rows)
        self._positions = {}
        spots = []
        for row in self._rows:
            if row.results is None:
                continue
            x, y = self._point(row.results)
            self._positions[row.key] = (x, y)
            color = theme.RESOURCE_COLORS.get(row.results.bottleneck, theme.FALLBACK_COLOR)
            spots.append({"pos": (x, y), "size": marker_size(gpu_seconds(row.results)), "data": row.key,
                          "brush": pg.mkBrush(color), "pen": pg.mkPen(theme.plot_text_color(), width=1.2), "symbol": "o"})
        self.markers.setData(spots)
        self.text.set_marker_texts({row.key: _short(row.name) for row in self._rows if row.key in self._positions})
        self._place_labels()
        self._update_title()

    def _fit(self, *_) -> None:
        """The view was resized: fit the triangle and its captions to it, then place the labels again."""
        self.text.fit_view()
        self._place_labels()

    def _place_labels(self, *_) -> None:
        """Marker, star and split labels by the shared placer; a label with no room waits behind the hover."""
        rows = self._row_map()
        radii = {k: marker_size(gpu_seconds(rows[k].results)) / 2 for k in self._positions}
        split = None
        if self.split_marker.isVisible():
            xs, ys = self.split_marker.getData()
            split = (float(xs[0]), float(ys[0]))
        edge, edge_radii = self.pools.obstacles()  # disaggregated serving (#23): labels keep off the pools' edge
        self.text.place({**self._positions, **edge}, {**radii, **edge_radii},
                        self._current if self._results is not None else None, split)

    def hidden_labels(self) -> set[str]:
        """Marker keys (and "current", "split") whose label had no room and shows only in the hover."""
        return set(self.text.hidden)

    def _row_map(self) -> dict[str, WorkloadRow]:
        return {r.key: r for r in self._rows if r.results is not None}

    def _refresh_list(self) -> None:
        sc = self._results.scenario if self._results else None
        self.technique_list.blockSignals(True)
        try:
            for key, item in self._items.items():
                t = tq.load_techniques()[key]
                ok, reason = tq.previewable(t, sc) if sc is not None else (False, "")
                checked = key in self._checked
                enabled = ok or checked
                flags = item.flags()
                flags = flags | QtCore.Qt.ItemFlag.ItemIsEnabled if enabled else flags & ~QtCore.Qt.ItemFlag.ItemIsEnabled
                item.setFlags(flags)
                direction = tq.direction_label(t.spent, t.saved)
                status = "" if ok else f"\n{reason}"
                item.setToolTip(f"{t.name}\n{direction}\n{t.note or t.reason}{status}")
                item.setForeground(pg.mkColor(theme.RESOURCE_COLORS[t.spent] if ok else pw.secondary_text(
                    theme.THEMES[theme.current_theme()]["base"])))
                item.setText(t.name if t.modelled else f"{t.name} (not modelled yet)")
        finally:
            self.technique_list.blockSignals(False)

    def _item_changed(self, item: QtWidgets.QListWidgetItem) -> None:
        key = item.data(QtCore.Qt.ItemDataRole.UserRole)
        checked = item.checkState() == QtCore.Qt.CheckState.Checked
        if checked and key not in self._checked:
            self._checked.append(key)
        elif not checked and key in self._checked:
            self._checked.remove(key)
        self._recompute_path()

    def show_path(self, keys) -> None:
        """Tick exactly `keys` (in this order) and draw the path."""
        self._checked = [k for k in keys if k in self._items]
        self.technique_list.blockSignals(True)
        try:
            for key, item in self._items.items():
                item.setCheckState(QtCore.Qt.CheckState.Checked if key in self._checked
                                   else QtCore.Qt.CheckState.Unchecked)
        finally:
            self.technique_list.blockSignals(False)
        self._recompute_path()

    def _recompute_path(self) -> None:
        self._segments = []
        self._skipped = []
        self._path = []
        if self._results is not None and self._checked:
            current = self._results.scenario
            self._path = [(current, self._results)]
            for key in self._checked:
                t = tq.load_techniques()[key]
                ok, _ = tq.previewable(t, current)
                if not ok:
                    self._skipped.append(key)
                    continue
                current = tq.apply(t, current)
                self._path.append((current, tq.evaluate_applied(current)))
                x0, y0 = self._point(self._path[-2][1])
                x1, y1 = self._point(self._path[-1][1])
                self._segments.append((x0, y0, x1, y1, theme.RESOURCE_COLORS[t.spent], key))
        self._draw_segments()
        # a read pattern (NSA, strided) is computed on the path but not carried by a scenario (tq.evaluate_applied)
        self.apply_button.setEnabled(len(self._path) > 1 and not any(
            tq.load_techniques()[k].read_pattern for k in self._checked if k not in self._skipped))
        self._update_caption()

    def _draw_segments(self) -> None:
        while len(self.arrow_lines) < len(self._segments):
            line = pg.PlotCurveItem()
            line.setZValue(30)
            head = pg.ArrowItem(headLen=16, tailLen=None)
            head.setZValue(31)
            self.plot.addItem(line)
            self.plot.addItem(head)
            self.arrow_lines.append(line)
            self.arrow_heads.append(head)
        focus_key = self._focus[1] if self._focus[0] == "technique" else ""
        for i, (line, head) in enumerate(zip(self.arrow_lines, self.arrow_heads, strict=True)):
            if i >= len(self._segments):
                line.setVisible(False)
                head.setVisible(False)
                continue
            x0, y0, x1, y1, color, key = self._segments[i]
            width = 6 if key == focus_key else 3.5
            line.setData([x0, x1], [y0, y1], pen=pg.mkPen(color, width=width))
            self._place_head(head, x0, y0, x1, y1, color)
            line.setVisible(True)
            head.setVisible(math.hypot(x1 - x0, y1 - y0) > 1e-4)

    @staticmethod
    def _place_head(head: pg.ArrowItem, x0, y0, x1, y1, color) -> None:
        # ArrowItem at angle 0 points to -x on screen; the view is aspect-locked with y up.
        angle = math.degrees(math.atan2(-(y1 - y0), x1 - x0)) - 180.0
        head.setStyle(angle=angle, brush=pg.mkBrush(color), pen=pg.mkPen(color))
        head.setPos(x1, y1)

    def apply_path(self) -> None:
        """Emit scenarioRequested with the end of the drawn path (when it moves at all)."""
        if len(self._path) > 1:
            self.scenarioRequested.emit(self._path[-1][0])

    def _update_caption(self) -> None:
        text = ("Marker colour: binding resource. Marker size: log₁₀ GPU-seconds per training step or per "
                "inference request (10 px at 0.01 GPU·s, +4 px per decade). ★ current scenario; + centroid "
                "(equal pressures)." + (" Arrows: the techniques in order, coloured by the resource spent."
                                        if self._segments else ""))
        if self._skipped:
            names = ", ".join(tq.load_techniques()[k].name for k in self._skipped)
            text += f" Not applied here: {names}."
        text += self.pools.caption()  # disaggregated serving (#23)
        self.caption.setText(text)

    # ------------------------------------------------------------------ focus, hover, click
    def set_focus(self, what: str, key: str) -> None:
        """Highlight a workload marker ("workload") or a technique's move ("technique"); ("", "") clears."""
        self._focus = (what or "", key or "")
        if what == "workload" and key in self._positions:
            x, y = self._positions[key]
            row = next(r for r in self._rows if r.key == key)
            self.focus_ring.setData([x], [y], size=marker_size(gpu_seconds(row.results)) + 12, symbol="o")
        else:
            self.focus_ring.setData([], [])
        self._draw_segments()
        self._show_preview(key if what == "technique" else "")

    def _show_preview(self, key: str) -> None:
        """A dashed arrow: where technique `key` alone would move the current scenario."""
        visible = False
        if key and self._results is not None and key not in [s[5] for s in self._segments]:
            sc = self._results.scenario
            if key in self._items and tq.previewable(key, sc)[0]:
                try:
                    after = tq.evaluate_applied(tq.apply(key, sc))
                except ValidationError:
                    after = None
                if after is not None:
                    x0, y0 = self._current
                    x1, y1 = self._point(after)
                    self.preview_line.setData([x0, x1], [y0, y1])
                    self._place_head(self.preview_head, x0, y0, x1, y1, FOCUS_COLOR)
                    visible = True
        self.preview_line.setVisible(visible)
        self.preview_head.setVisible(visible)

    def _nearest(self, x: float, y: float) -> str:
        """Key of the marker under (x, y) ("current" for the star), or ""."""
        px = self.plot.getViewBox().viewPixelSize()
        scale = max(px[0], 1e-9)
        best, best_d = "", HOVER_RADIUS_PX
        candidates = [("current", self._current)] if self._results is not None else []
        candidates += list(self._positions.items()) + list(self.pools.hover_points().items())  # pools (#23)
        for key, (mx, my) in candidates:
            d = math.hypot(mx - x, my - y) / scale
            if d < best_d:
                best, best_d = key, d
        return best

    def _hover_at(self, x: float, y: float) -> str:
        key = self._nearest(x, y)
        if not key:
            return ""
        return pw.hover_html(self._hover_lines(key), 60)

    def _hover_moved(self, x: float, y: float) -> None:
        key = self._nearest(x, y)
        key = "" if key == "current" or key.startswith("pool:") else key
        if key != self._hovered:
            self._hovered = key
            self.focusRequested.emit("workload" if key else "", key)

    def _hover_left(self) -> None:
        if self._hovered:
            self._hovered = ""
            self.focusRequested.emit("", "")

    def _scene_clicked(self, event) -> None:
        p = pw.clicked_view_point(self.plot, event)
        if p is None:
            return
        key = self._nearest(p.x(), p.y())
        if key and key != "current":
            self.click_workload(key)

    def click_workload(self, key: str) -> None:
        """What a click on workload `key` does: emit workloadActivated(key)."""
        if key in self._positions:
            self.workloadActivated.emit(key)

    def _hover_lines(self, key: str) -> list[tuple[str, bool]]:
        if key.startswith("pool:"):  # disaggregated serving (#23)
            return self.pools.hover_lines(key)
        if key == "current":
            res, name = self._results, "Current scenario"
            if self._segments:
                name += f" (path of {len(self._segments)} technique(s) drawn)"
        else:
            row = next((r for r in self._rows if r.key == key), None)
            if row is None or row.results is None:
                return []
            res, name = row.results, row.name
        return pressure_lines(res, name)

    # ------------------------------------------------------------------ accessors for tests
    def marker_positions(self) -> dict[str, tuple[float, float]]:
        return dict(self._positions)

    def set_split_position(self, position: float) -> None:
        """Show the edge-cloud split optimum on the compute-bandwidth edge: 0 = all in the cloud (the device
        spends bandwidth sending its input), 1 = all on the device (it spends compute, sends nothing)."""
        p = min(max(float(position), 0.0), 1.0)
        x, y = triangle_point(p, 1.0 - p, 0.0)
        self.split_marker.setData([x], [y])
        self.split_marker.setVisible(True)
        self.text.set_split_text(f"split: {100 * p:.0f}% on device")
        self._place_labels()

    def split_position(self) -> tuple[float, float] | None:
        if not self.split_marker.isVisible():
            return None
        xs, ys = self.split_marker.getData()
        return float(xs[0]), float(ys[0])

    def current_position(self) -> tuple[float, float]:
        return self._current

    def arrow_segments(self) -> list[tuple[float, float, float, float, str]]:
        return [s[:5] for s in self._segments]

    def hover_text_for(self, key: str) -> str:
        """Plain text of the read-out for workload `key` (or "current")."""
        return "\n".join(text for text, _ in self._hover_lines(key))

    def checked_techniques(self) -> list[str]:
        return list(self._checked)

    def focused(self) -> tuple[str, str]:
        return self._focus

    def preview_visible(self) -> bool:
        return self.preview_line.isVisible()
