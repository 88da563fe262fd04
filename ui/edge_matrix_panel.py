"""Edge matrix: which small models meet sub-3B / sub-100 ms on which device (model/views/edge_matrix.py).

Rows are device x model (grouped by device; a line under each group's 3B-class models marks the 3B limit),
columns are weight formats as stored; colour is time per output token (cividis, log scale, the colour bar marks
100 ms), the text says the milliseconds, ✓ where the cell meets all three constraints, and "no fit" in grey
where weights + KV + reserve exceed the device's memory. A click loads that cell as the scenario.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.views.edge_matrix import GENERATED, PROMPT, edge_matrix, largest_meeting
from trinity_desktop.model.views.split import edge_devices
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme

DIVIDER = theme.plot_text_color()
DEVICE_SHORT = {"phone-a17-pro": "Phone", "jetson-orin-nano-super": "Jetson", "laptop-x86-ddr5": "Laptop CPU",
                "m4-max": "M4 Max"}
FORMAT_NAMES = {"bf16": "BF16", "q8_0": "Q8_0", "q6_k": "Q6_K", "q4_k": "Q4_K", "q3_k": "Q3_K", "q2_k": "Q2_K"}


def device_short(key: str) -> str:
    return DEVICE_SHORT.get(key) or edge_devices()[key].name.split(" (")[0]


def model_short(key: str) -> str:
    return model_presets()[key].name.removesuffix(" v0.1")


def model_class(key: str) -> str:
    """The size class a narrow dock names a model by: "3B" for Llama-3.2-3B (3.21B parameters)."""
    return f"{model_presets()[key].params_total() / 1e9:.0f}B"


NARROW_PX = 700        # below: rows named by device and size class ("Phone 3B")
NO_COLORBAR_PX = 600   # below: the colour bar gives its width to the cells (the cells print their times)


def matrix_title(m) -> str:
    """The finding: how many cells meet all three constraints, and what the weakest device runs without the
    3B limit."""
    n, total = int(m.meets.sum()), m.meets.size
    weakest = m.devices[int(np.argmin([edge_devices()[d].hardware.hbm_bw for d in m.devices]))]
    best = largest_meeting(m, weakest)
    tail = (f"; the {device_short(weakest).lower()} runs {model_short(best[0])} "
            f"({FORMAT_NAMES.get(best[1], best[1])}) in time") if best else ""
    return f"{n} of {total} cells meet ≤3B and ≤{m.target_s * 1e3:.0f} ms{tail}"


class EdgeMatrixPanel(QtWidgets.QWidget):
    scenarioRequested = QtCore.Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("EdgeMatrixPanel")
        self.setAccessibleName("Edge matrix: devices, small models and weight formats against 100 ms and 3B")
        self.m = m = edge_matrix()
        self.cmap = theme.readable_colormap(pw.plot_background())
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(theme.THEMES[theme.current_theme()]["plot_bg"])
        self.graphics.setAccessibleName("Edge matrix chart")
        self.graphics.setAccessibleDescription(
            "Rows: device and model; columns: weight format; colour: decode time per token (log); ✓ meets sub-3B "
            "and sub-100 ms and fits; grey: does not fit. Hover for numbers, click to load the cell.")
        self.plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0)
        pw.style_plot(self.plot, "", bottom="format (cells: ms per token)")
        self.title = QtWidgets.QLabel(matrix_title(m))
        self.title.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.title.setObjectName("EdgeMatrixTitle")
        self.title.setWordWrap(True)
        self.title.setFont(pw.font(14, bold=True))
        self.title.setAlignment(QtCore.Qt.AlignmentFlag.AlignHCenter)
        self.title.setAccessibleName("Edge matrix finding")
        pw.freeze_view(self.plot)
        vb = self.plot.getViewBox()
        vb.invertY(True)
        vb.setDefaultPadding(0.0)
        nd, nm, nf = m.time_s.shape
        self.rows = [(i, j) for i in range(nd) for j in range(nm)]
        self.plot.getAxis("bottom").setTicks([[(k + 0.5, FORMAT_NAMES.get(f, f)) for k, f in enumerate(m.formats)]])
        self._narrow: bool | None = None
        self._set_row_ticks(False)
        for side in ("left", "bottom"):
            self.plot.getAxis(side).setStyle(tickLength=0)

        self.log_lo, self.log_hi = np.log10(1e-3), np.log10(1.0)   # 1 ms .. 1 s
        t = m.time_s.reshape(nd * nm, nf)
        fits = m.fits.reshape(nd * nm, nf)
        meets = m.meets.reshape(nd * nm, nf)
        level = (np.log10(t) - self.log_lo) / (self.log_hi - self.log_lo)
        self._level, self._fits, self._meets, self._t = level, fits, meets, t
        self.image = pg.ImageItem()
        self.plot.addItem(self.image)
        self.labels = []
        for r in range(nd * nm):
            for k in range(nf):
                text = "✗" if not fits[r, k] else f"{t[r, k] * 1e3:.0f}" + (" ✓" if meets[r, k] else "")
                item = pw.label_item(text, anchor=(0.5, 0.5), bold=bool(meets[r, k]))
                item.setPos(k + 0.5, r + 0.5)
                self.plot.addItem(item, ignoreBounds=True)
                self.labels.append(item)
        self.paint_cells()
        # device groups, and the 3B limit inside each group (after its last model within the limit)
        small = int(np.sum(m.params <= m.param_limit * 1.1))
        xs, ys = [], []
        for i in range(1, nd):
            xs += [0, nf]
            ys += [i * nm, i * nm]
        self.groups = pg.PlotCurveItem(xs, ys, pen=pg.mkPen(DIVIDER, width=3), connect="pairs")
        self.plot.addItem(self.groups, ignoreBounds=True)
        lx, ly = [], []
        for i in range(nd):
            lx += [0, nf]
            ly += [i * nm + small, i * nm + small]
        self.limit = pg.PlotCurveItem(lx, ly, pen=pg.mkPen(DIVIDER, width=2, style=QtCore.Qt.PenStyle.DashLine),
                                      connect="pairs")
        self.plot.addItem(self.limit, ignoreBounds=True)
        self.plot.setXRange(0, nf, padding=0)
        self.plot.setYRange(0, nd * nm, padding=0)

        self.colorbar = pg.ColorBarItem(values=(self.log_lo, self.log_hi), colorMap=self.cmap, interactive=False,
                                        width=22)
        self.colorbar.axis.setStyle(tickFont=pw.font())
        self.colorbar.axis.setTicks([[(-3.0, "1 ms"), (-2.0, "10 ms"), (-1.0, "100 ms"), (0.0, "1 s")]])
        self.colorbar.axis.setWidth(pw.QtGui.QFontMetrics(pw.font()).horizontalAdvance("100 ms") + 16)
        self.graphics.addItem(self.colorbar, row=0, col=1)
        self._colorbar_shown = True

        self.hover = pw.HoverReadout(self.plot, self.hover_text)
        pw.LeaveFilter(self.graphics, self.hover.leave)
        self.graphics.scene().sigMouseClicked.connect(self._clicked)
        self.caption = QtWidgets.QLabel(
            f"Batch-1 decode after a {PROMPT}-token prompt, time per output token from the core roofline with each "
            "format's stored bits (scales included). ✓: fits, within 100 ms and at most the 3B class "
            "(dashed line; Llama-3.2-3B's 3.21B counts). ✗: does not fit the device's memory.")
        self.caption.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.caption.setObjectName("EdgeMatrixCaption")
        self.caption.setWordWrap(True)
        self.caption.setFont(pw.font(11))
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.caption)

    def _set_row_ticks(self, narrow: bool) -> None:
        m = self.m
        name = model_class if narrow else model_short
        sep = " " if narrow else ": "
        self.plot.getAxis("left").setTicks([[(r + 0.5, f"{device_short(m.devices[i])}{sep}{name(m.models[j])}")
                                             for r, (i, j) in enumerate(self.rows)]])

    def resizeEvent(self, event):  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        narrow = self.width() < NARROW_PX
        if narrow != self._narrow:
            self._narrow = narrow
            self._set_row_ticks(narrow)
        show_bar = self.width() >= NO_COLORBAR_PX
        if show_bar != self._colorbar_shown:
            self._colorbar_shown = show_bar
            if show_bar:
                self.graphics.addItem(self.colorbar, row=0, col=1)
            else:
                self.graphics.removeItem(self.colorbar)

    def paint_cells(self) -> None:
        """Cell colours: cividis by log time; a cell that does not fit takes the plot's background (no time to
        colour), with ✗. Text takes the contrast colour of its cell."""
        nd, nm, nf = self.m.time_s.shape
        self.cmap = theme.readable_colormap(pw.plot_background())   # #21: no cell merges with the plot
        if hasattr(self, "colorbar"):
            self.colorbar.setColorMap(self.cmap)
        rgba = self.cmap.map(np.clip(self._level, 0, 1), mode="byte")
        rgba[~self._fits] = pg.mkColor(theme.THEMES[theme.current_theme()]["plot_bg"]).getRgb()
        self.image.setImage(np.ascontiguousarray(rgba.transpose(1, 0, 2)), levels=(0, 255))
        self.image.setRect(QtCore.QRectF(0, 0, nf, nd * nm))
        for item, color in zip(self.labels, rgba.reshape(-1, 4), strict=True):
            item.setColor(pw.contrast_text_color(color))

    def changeEvent(self, event):  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.Type.PaletteChange:
            self.paint_cells()

    def cell_at(self, x: float, y: float) -> tuple[int, int, int] | None:
        nd, nm, nf = self.m.time_s.shape
        r, k = int(np.floor(y)), int(np.floor(x))
        if 0 <= r < nd * nm and 0 <= k < nf:
            return r // nm, r % nm, k
        return None

    def hover_text(self, x: float, y: float) -> str:
        cell = self.cell_at(x, y)
        if cell is None:
            return ""
        i, j, k = cell
        m = self.m
        return pw.hover_html([
            (f"{model_presets()[m.models[j]].name} ({m.params[j] / 1e9:.2f}B) on {device_short(m.devices[i])}, "
             f"{FORMAT_NAMES.get(m.formats[k], m.formats[k])}", True),
            (f"{m.time_s[i, j, k] * 1e3:.1f} ms per token ({1 / m.time_s[i, j, k]:.0f} tokens/s)", False),
            (f"memory {m.memory_bytes[i, j, k] / 1e9:.2f} GB of {m.capacity[i] / 1e9:.0f} GB: "
             + ("fits" if m.fits[i, j, k] else "does not fit"), False),
            ("meets sub-3B and sub-100 ms" if m.meets[i, j, k] else "misses a constraint", False)])

    def scenario_of(self, i: int, j: int, k: int) -> Scenario:
        m = self.m
        return Scenario(hardware=edge_devices()[m.devices[i]].hardware, model=model_presets()[m.models[j]],
                        kind="decode", gpus=1, gpus_per_node=1, batch=1, prompt_len=PROMPT, gen_len=GENERATED,
                        weight_dtype=m.formats[k], kv_dtype="fp16")

    def _clicked(self, event) -> None:
        point = pw.clicked_view_point(self.plot, event)
        if point is not None and (cell := self.cell_at(point.x(), point.y())) is not None:
            self.scenarioRequested.emit(self.scenario_of(*cell))
