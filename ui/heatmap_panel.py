"""Heatmap panel: the workload library (rows) x compute, bandwidth, memory pressure (columns) on one hardware.

Values are `row.results.pressure` (model/formulas/pressure.py): the fraction of each resource's limit the workload
uses, 1.0 = at the limit (compute or the busiest link busy all step at its achievable rate, HBM full; memory
> 1: does not fit). The binding resource is the highest pressure; each row is coloured by its pressures ÷
its highest (`row_heat`), so the outlined binding cell is the hottest of its row even at 0.43. One long-lived
ImageItem is updated with setImage; cell labels are reused unless the number of rows changes.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.formulas.pressure import RESOURCES
from trinity_desktop.model.views.workloads import WorkloadRow
from trinity_desktop.ui import findings, named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.units import fmt_seconds
from trinity_desktop.ui.wrap_layout import interaction_hint

NA_VALUE = -1.0
FOCUS_COLOR = theme.FOCUS_COLOR      # Okabe-Ito vermillion: not a resource colour, visible on cividis
TIME_NAMES = {"train": "step time", "prefill": "prefill time", "decode": "time per output token"}
NAME_SPLITS = (*named_combo.NAME_DETAIL, ": ")   # a workload's short name is what comes before its detail


def row_heat(values: np.ndarray) -> np.ndarray:
    """Each row's pressures ÷ that row's highest, so its binding cell is the hottest colour (1.0) however low
    the pressure (0.43 binds a row as surely as 1.0); the cell texts keep the absolute pressures. Rows of
    NA_VALUE (the hardware cannot run the workload) stay NA_VALUE."""
    values = np.asarray(values, dtype=float)
    top = values.max(axis=1, keepdims=True)
    heat = np.where(top > 0, np.clip(values, 0.0, None) / np.where(top > 0, top, 1.0), 0.0)
    return np.where(values == NA_VALUE, NA_VALUE, np.minimum(heat, 1.0))


def short_workload_name(name: str) -> str:
    """'GPT-3 175B, Korthikanti et al. Table 3' -> 'GPT-3 175B' (the hover gives the full name)."""
    return named_combo.short_name(name, NAME_SPLITS)


def tick_name(name: str, lines: int, width_px: int, metrics: QtGui.QFontMetrics) -> str:
    """A workload name for the row axis, whole words only and never shortened with "…": the full name wrapped
    to `width_px` if it takes at most `lines` lines, else its short name so wrapped, else the short name's
    words on `lines` lines however wide (the axis widens to fit)."""
    chars = max(int(width_px / max(metrics.averageCharWidth(), 1)), 8)
    for text in (name, short_workload_name(name)):
        wrapped = textwrap.wrap(text, chars, break_long_words=False)
        if len(wrapped) <= lines:
            return "\n".join(wrapped)
    words = short_workload_name(name).split()
    out: list[list[str]] = [[]]
    per = math.ceil(sum(len(w) + 1 for w in words) / lines)   # balanced by characters, not by words
    for w in words:
        if out[-1] and len(" ".join(out[-1] + [w])) > per and len(out) < lines:
            out.append([])
        out[-1].append(w)
    return "\n".join(" ".join(line) for line in out)


class HeatmapPanel(QtWidgets.QWidget):
    """Workloads x resources heatmap of pressures; hover for the numbers, click a row to load it."""

    workloadActivated = QtCore.Signal(str)
    workloadHovered = QtCore.Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("HeatmapPanel")
        self.setAccessibleName("Workload pressure heatmap")
        self._rows: list[WorkloadRow] = []
        self._values = np.zeros((0, 3))
        self._hardware_name = ""
        self._hovered_key = ""
        self._focus_key = ""
        self.cmap = pg.colormap.get(theme.HEATMAP_COLORMAP)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("Workload pressure heatmap chart")
        self.graphics.setAccessibleDescription(
            "Rows are library workloads, columns are compute, bandwidth and memory pressure, colour is the "
            "pressure ÷ the row's highest (cividis), so each row's binding cell is the hottest. Hover a cell for the numbers; click a row to load it.")
        self.plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0)
        self.plots = {"heatmap": self.plot}
        pw.style_plot(self.plot)
        pw.freeze_view(self.plot)
        vb = self.plot.getViewBox()
        vb.sigResized.connect(self._set_row_ticks)
        vb.invertY(True)
        vb.setDefaultPadding(0.0)
        self.plot.getAxis("bottom").setTicks([[(i + 0.5, theme.RESOURCE_LABELS[r])
                                               for i, r in enumerate(RESOURCES)]])
        self.plot.getAxis("left").setStyle(tickLength=0)
        self.plot.getAxis("bottom").setStyle(tickLength=0)

        self.image_item = pg.ImageItem()
        self.plot.addItem(self.image_item)
        # no colour bar: each row is coloured against its own highest (row_heat); the cells print the numbers

        # Bottleneck outlines: dark under light, visible on every cividis colour.
        self.bottleneck_outer = pg.PlotCurveItem(pen=pg.mkPen(theme.ON_LIGHT, width=6), connect="pairs")
        self.bottleneck_inner = pg.PlotCurveItem(pen=pg.mkPen(theme.ON_DARK, width=2), connect="pairs")
        self.focus_item = pg.PlotCurveItem(pen=pg.mkPen(FOCUS_COLOR, width=5), connect="pairs")
        self.focus_item.setVisible(False)
        for z, item in enumerate((self.bottleneck_outer, self.bottleneck_inner, self.focus_item)):
            item.setZValue(10 + z)
            self.plot.addItem(item, ignoreBounds=True)
        self.grid_item = pg.PlotCurveItem(pen=pg.mkPen(pw.plot_background(), width=2), connect="pairs")
        self.grid_item.setZValue(2)
        self.plot.addItem(self.grid_item, ignoreBounds=True)
        self.cell_labels: list[pg.TextItem] = []

        self.hover = pw.HoverReadout(self.plot, self._hover_at_xy, on_move=self._hover_moved,
                                     on_leave=self._hover_left, html=True)
        pw.LeaveFilter(self.graphics, self.hover.leave)
        self.plot.scene().sigMouseClicked.connect(self._scene_clicked)

        self.caption = QtWidgets.QLabel(
            "Colour compares a row's own resources: its binding one (outlined) is the hottest, however low its "
            "pressure. Numbers are the pressures: 1.0 = the resource at its limit (compute or the busiest link "
            "busy all step, or HBM full; ✗ above 1: does not fit). n/a: this hardware cannot run the workload.")
        self.click_hint = interaction_hint("Click a row to load it.", pw.font())
        self.caption.setFont(pw.font())
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Heatmap legend")
        self.caption.setToolTip("Compute: FLOPs / (time x achievable FLOP/s). Bandwidth: bytes / (time x "
                                "achievable link bandwidth), the busiest link. Memory: bytes held per device / HBM capacity; "
                                "above 1 it does not fit (✗). Help > How pressures are computed.")

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.caption)
        layout.addWidget(self.click_hint)

    # ------------------------------------------------------------------ update
    def update_rows(self, rows: list[WorkloadRow], hardware_name: str) -> None:
        self._rows = list(rows)
        self._hardware_name = hardware_name
        n = len(self._rows)
        values = np.full((n, 3), NA_VALUE)
        for i, row in enumerate(self._rows):
            if row.results is not None:
                values[i] = [float(v) if math.isfinite(v) else 0.0 for v in row.results.pressure.as_tuple()]
        self._values = values

        rgba = self.cmap.map(np.clip(row_heat(values), 0.0, 1.0), mode="byte")      # (n, 3, 4)
        rgba[values[:, 0] == NA_VALUE] = QtGui.QColor(pw.plot_background()).getRgb()   # cannot run: no colour
        # ImageItem's default axis order is image[x, y]: transpose rows x cols to cols x rows.
        self.image_item.setImage(np.ascontiguousarray(rgba.transpose(1, 0, 2)), autoLevels=False,
                                 levels=(0, 255))
        self.image_item.setRect(QtCore.QRectF(0, 0, 3, max(n, 1)))

        if len(self.cell_labels) != 3 * n:
            for item in self.cell_labels:
                self.plot.removeItem(item)
            self.cell_labels = []
            for i in range(n):
                for j in range(3):
                    item = pw.label_item(anchor=(0.5, 0.5), size=12, bold=True)
                    item.setPos(j + 0.5, i + 0.5)
                    item.setZValue(5)
                    self.plot.addItem(item, ignoreBounds=True)
                    self.cell_labels.append(item)
        for i in range(n):
            for j in range(3):
                item = self.cell_labels[3 * i + j]
                v = values[i, j]
                if v == NA_VALUE:
                    item.setText("n/a")
                    item.setColor(theme.plot_text_color())
                else:
                    item.setText(f"{v:.2f} ✗" if (j == 2 and v > 1.0) else f"{v:.2f}")
                    item.setColor(pw.contrast_text_color(rgba[i, j]))

        rects = []
        for i, row in enumerate(self._rows):
            if row.results is not None and row.results.bottleneck in RESOURCES:
                j = RESOURCES.index(row.results.bottleneck)
                rects.append((j + 0.04, i + 0.06, 0.92, 0.88))
        xs, ys = pw.rect_outline_points(rects)
        self.bottleneck_outer.setData(xs, ys)
        self.bottleneck_inner.setData(xs, ys)

        gx = [0.0, 3.0] * (n + 1) + [v for j in range(4) for v in (float(j), float(j))]
        gy = [float(i) for i in range(n + 1) for _ in (0, 1)] + [v for _ in range(4) for v in (0.0, float(n))]
        self.grid_item.setData(np.asarray(gx), np.asarray(gy))
        self._set_row_ticks()
        bindings = [row.results.bottleneck for row in self._rows if row.results is not None]
        pw.set_title(self.plot, pw.html_escape(findings.binding_count_title(bindings, hardware_name)))
        self.plot.setXRange(0, 3, padding=0)
        self.plot.setYRange(0, max(n, 1), padding=0)
        self.set_focus(self._focus_key)

    def _set_row_ticks(self, *_) -> None:
        """Row names on two lines where a row is tall enough for them, else on one, in whole words
        (`tick_name`); the axis is as wide as the widest line, so no name is cut."""
        n = max(len(self._rows), 1)
        row_px = self.plot.getViewBox().height() / n
        metrics = QtGui.QFontMetrics(pw.font())
        if row_px * n < metrics.lineSpacing() and getattr(self, "_ticks", None):
            return   # not laid out yet (a dock behind its tab): one-line names would widen the axis for nothing
        lines = 2 if row_px >= 2 * metrics.lineSpacing() - 2 else 1   # two lines fill a row to its edges
        width_px = int(max(self.graphics.width() * 0.25, 80))
        ticks = [(i + 0.5, tick_name(r.name, lines, width_px, metrics)) for i, r in enumerate(self._rows)]
        if ticks != getattr(self, "_ticks", None):
            self._ticks = ticks
            axis = self.plot.getAxis("left")
            axis.setTicks([ticks])
            widest = max((metrics.horizontalAdvance(line) for _, t in ticks for line in t.split("\n")), default=40)
            axis.setWidth(widest + 12)

    # ------------------------------------------------------------------ focus, hover, click
    def set_focus(self, key: str) -> None:
        """Outline the row of workload `key` (linked focus); "" or an unknown key clears it."""
        self._focus_key = key or ""
        row = self.focused_row()
        if row < 0:
            self.focus_item.setVisible(False)
            self.focus_item.setData([], [])
            return
        xs, ys = pw.rect_outline_points([(0.0, row, 3.0, 1.0)])
        self.focus_item.setData(xs, ys)
        self.focus_item.setVisible(True)

    def focused_row(self) -> int:
        """Index of the highlighted row, or -1."""
        keys = self.row_keys()
        return keys.index(self._focus_key) if self._focus_key in keys else -1

    def _cell_at(self, x: float, y: float) -> tuple[int, int]:
        if not (0 <= x < 3 and 0 <= y < len(self._rows)):
            return -1, -1
        return int(math.floor(y)), int(math.floor(x))

    def _hover_at_xy(self, x: float, y: float) -> str:
        row, col = self._cell_at(x, y)
        if row < 0:
            return ""
        return self._hover_html(row, col)

    def _hover_moved(self, x: float, y: float) -> None:
        row, _ = self._cell_at(x, y)
        key = self._rows[row].key if row >= 0 else ""
        if key != self._hovered_key:
            self._hovered_key = key
            self.workloadHovered.emit(key)

    def _hover_left(self) -> None:
        if self._hovered_key:
            self._hovered_key = ""
            self.workloadHovered.emit("")

    def _scene_clicked(self, event) -> None:
        p = pw.clicked_view_point(self.plot, event)
        if p is None:
            return
        row, _ = self._cell_at(p.x(), p.y())
        if row >= 0:
            self.click_row(row)

    def click_row(self, row: int) -> None:
        """What a mouse click on row `row` does: emit workloadActivated(key)."""
        if 0 <= row < len(self._rows):
            self.workloadActivated.emit(self._rows[row].key)

    # ------------------------------------------------------------------ read-outs
    def _hover_lines(self, row: int, col: int) -> list[tuple[str, bool]]:
        """(text, emphasised) lines of the read-out for cell (row, col)."""
        r = self._rows[row]
        lines = [(r.name, True)]
        if r.description:
            lines.append((r.description, False))
        res = r.results
        if res is None:
            lines.append((f"n/a: cannot run on {self._hardware_name}", True))
            lines.append((r.error, False))
            return lines
        p = res.pressure
        time_name = TIME_NAMES.get(res.kind, "time")
        cap_gb, need_gb = res.capacity / 1e9, res.memory_total / 1e9
        fit = "fits" if res.fits else "✗ does not fit"
        detail = [
            (f"Compute pressure {p.compute:.2f}: {100 * p.compute:.0f}% of {time_name} is FLOP-bound "
             f"({fmt_seconds(p.compute * res.time_total)})"),
            (f"Bandwidth pressure {p.bandwidth:.2f}: {100 * p.bandwidth:.0f}% of {time_name} moves data "
             f"({fmt_seconds(p.bandwidth * res.time_total)})"),
            f"Memory pressure {p.memory:.2f}: needs {need_gb:.1f} GB of {cap_gb:.0f} GB HBM per device ({fit})",
        ]
        lines += [(text, j == col) for j, text in enumerate(detail)]
        lines.append((f"Binding resource: {theme.RESOURCE_LABELS.get(res.bottleneck, res.bottleneck)}", True))
        lines.append((f"{time_name[:1].upper() + time_name[1:]}: {fmt_seconds(res.time_total)}", False))
        return lines

    def hover_text_at(self, row: int, col: int) -> str:
        """Plain-text read-out for cell (row, col) (the same lines the hover box shows)."""
        if not (0 <= row < len(self._rows) and 0 <= col < 3):
            return ""
        return "\n".join(text for text, _ in self._hover_lines(row, col))

    def _hover_html(self, row: int, col: int) -> str:
        parts = []
        for text, strong in self._hover_lines(row, col):
            t = "<br>".join(pw.html_escape(line) for line in textwrap.wrap(text, 56))
            parts.append(f"<b>{t}</b>" if strong else t)
        return "<div style='font-size:11pt'>" + "<br>".join(parts) + "</div>"

    # ------------------------------------------------------------------ for tests and export
    def cell_values(self) -> np.ndarray:
        """Pressures as drawn, rows x (compute, bandwidth, memory); -1 for rows the hardware cannot run."""
        return self._values.copy()

    def row_keys(self) -> list[str]:
        return [r.key for r in self._rows]

    def cell_label(self, row: int, col: int) -> str:
        return self.cell_labels[3 * row + col].toPlainText()

    def hardware_name(self) -> str:
        return self._hardware_name

    def export_rows(self) -> list[dict]:
        """The pressures as drawn, for CSV export: one row per workload and resource (y = row, x = column)."""
        title = f"Workload pressure on {self._hardware_name}"
        return [{"plot": title, "series": f"{self._rows[i].name}: {resource} pressure", "kind": "cell",
                 "x": j, "y": i, "value": None if v == NA_VALUE else v}
                for i, row_values in enumerate(self._values) for j, (resource, v) in
                enumerate(zip(RESOURCES, row_values, strict=True))]
