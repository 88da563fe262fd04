"""Attention IO: HBM bytes of standard against tiled (FlashAttention) attention, and one query block's tiles.

Top: the two totals as bars with their ratio, per layer on one GPU (Dao et al. 2022, Theorem 2: standard
Θ(Nd + N²), tiled Θ(N²d²/M) per head; model/formulas/flash_io.py). Bottom: the row of B_r × B_c tiles that the
last query block visits (Algorithm 1's grid, B_c = ⌈M/4d⌉, B_r = min(B_c, d), M the SRAM per SM): the HBM bytes
charged to each tile, standard and tiled, on one axis. In decode the bars are the prompt's prefill (the N × N
score matrix the tiling avoids); the decode step itself reads the KV cache once either way, and its bytes
per output token are the roofline's KV-read kernel (model/views/roofline.py), stated beside.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.base.dtypes import ACTIVATION_BYTES
from trinity_desktop.model.formulas import flash_io
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.roofline import roofline, sram_bytes_for_flash
from trinity_desktop.ui import findings, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.units import fmt_bytes

MAX_CELLS = 256
NAMES = {"standard": "Standard attention", "flash": "FlashAttention (tiled)"}
ROWS = ("standard", "flash")             # bar rows, bottom to top
TILED_COLOR = theme.RESOURCE_COLORS["bandwidth"]   # HBM traffic is the bandwidth resource: the marked bar
KV_READ_POINT = "decode KV-cache reads"


def bar_colors() -> dict[str, str]:
    """The tiled bar carries the finding; the standard bar stays quiet."""
    return {"standard": theme.MUTED_COLOR, "flash": TILED_COLOR}


def bytes_unit(value: float) -> tuple[float, str]:
    """(divisor, unit) for an axis of bytes: the largest of GB, MB, kB not above `value`."""
    for div, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if value >= div:
            return div, unit
    return 1.0, "B"


class TiledIOPanel(QtWidgets.QWidget):
    """HBM bytes per layer, standard vs tiled attention, as two bars with the ratio; one query block's tiles."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("TiledIOPanel")
        self.setAccessibleName("Attention IO: HBM bytes of standard and tiled attention")
        self._results: Results | None = None
        self._grid: dict | None = None
        self._totals = {"standard": 0.0, "flash": 0.0}
        self._scale = 1.0
        self._row_unit = (1e3, "kB")

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground(pw.plot_background())
        self.graphics.setAccessibleName("Attention IO charts")
        self.graphics.setAccessibleDescription(
            "Top: HBM bytes read and written by one layer's attention on one GPU, standard attention against "
            "FlashAttention's tiles, with their ratio. Bottom: the bytes charged to each tile that the last "
            "query block visits, one bar pair per key block. Hover a bar for its bytes.")
        self.bytes_plot: pg.PlotItem = self.graphics.addPlot(row=0, col=0)
        self.tiles_plot: pg.PlotItem = self.graphics.addPlot(row=1, col=0)
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)
        self.plots = {"bytes": self.bytes_plot, "tiles": self.tiles_plot}
        for plot in self.plots.values():
            pw.style_plot(plot)
            pw.freeze_view(plot)
        self.bytes_plot.getAxis("left").setTicks([[(i, NAMES[k]) for i, k in enumerate(ROWS)]])
        self.bytes_plot.getAxis("left").setWidth(170)
        self.bars = {k: pg.BarGraphItem(x0=[0.0], y=[float(i)], height=0.6, width=[0.0], brush=bar_colors()[k],
                                        pen=pg.mkPen(None)) for i, k in enumerate(ROWS)}
        self.bar_labels = {k: pw.label_item("", anchor=(0, 0.5), bold=k == "flash") for k in ROWS}
        for k in ROWS:
            self.bytes_plot.addItem(self.bars[k])
            self.bytes_plot.addItem(self.bar_labels[k], ignoreBounds=True)
        self.tile_bars = {k: pg.BarGraphItem(x=[0.0], height=[0.0], width=0.4, brush=bar_colors()[k],
                                             pen=pg.mkPen(None)) for k in ROWS}
        for item in self.tile_bars.values():
            self.tiles_plot.addItem(item)
        self.tiles_plot.showGrid(y=True, alpha=0.2)
        self.hovers = {"bytes": pw.HoverReadout(self.bytes_plot, self._bytes_hover),
                       "tiles": pw.HoverReadout(self.tiles_plot, self._tiles_hover)}
        pw.LeaveFilter(self.graphics, lambda: [h.leave() for h in self.hovers.values()])

        self.totals_label = QtWidgets.QLabel("No scenario evaluated yet.")
        self.totals_label.setObjectName("TiledIOTotals")
        self.totals_label.setFont(pw.font(12))
        self.totals_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.totals_label.setWordWrap(True)
        self.totals_label.setAccessibleName("Tiled IO totals")
        self.totals_label.setToolTip("HBM bytes read + written by one layer's attention on one GPU (heads after "
                                     "tensor parallelism, the micro-batch; forward + backward when training).")
        self.note_label = QtWidgets.QLabel("")
        self.note_label.setObjectName("TiledIONote")
        self.note_label.setFont(pw.font(11))
        self.note_label.setWordWrap(True)
        self.note_label.setAccessibleName("Tiled IO grid note")

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.totals_label)
        layout.addWidget(self.note_label)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if pw.is_theme_change(event) and self._results is not None:
            self.graphics.setBackground(pw.plot_background())
            for k in ROWS:
                self.bars[k].setOpts(brush=bar_colors()[k])
                self.tile_bars[k].setOpts(brush=bar_colors()[k])

    # ------------------------------------------------------------------ update
    def update_results(self, results: Results) -> None:
        self._results = results
        sc = results.scenario
        arch, hw = sc.model, sc.hardware
        train = sc.kind == "train"
        N = sc.seq_len if train else sc.prompt_len
        tp = sc.tp if train else sc.inference_tp
        batch = sc.micro_batch if train else sc.batch
        elem = ACTIVATION_BYTES[sc.precision] if train else 2.0
        d = arch.qk_dim
        heads = arch.heads / tp
        m_bytes = sram_bytes_for_flash(hw)
        g = flash_io.tile_grid(N, d, m_bytes, elem, backward=train, masked=True, max_cells=MAX_CELLS)
        self._grid = g
        self._scale = heads * batch
        self._totals = {
            "standard": float(flash_io.standard_attention_hbm_bytes(N, d, heads, batch, elem, train, masked=True)),
            "flash": float(flash_io.flash_attention_hbm_bytes(N, d, heads, batch, m_bytes, elem, train)),
        }
        std, fa = self._totals["standard"], self._totals["flash"]
        pass_word = "forward + backward" if train else "prefill of the prompt, forward"
        pw.set_title(self.bytes_plot, pw.html_escape(findings.tiled_io_title(std, fa, train)))
        self._draw_totals(std, fa)
        self._draw_tiles(g)
        ratio = findings.ratio_words(fa, std)
        text = (f"N = {N:,} tokens, d = {d}, {heads:g} heads × batch {batch} per GPU, {pass_word}: standard "
                f"<b>{fmt_bytes(std)}</b>, FlashAttention <b>{fmt_bytes(fa)}</b> of HBM reads + writes per layer "
                f"({ratio} bytes).")
        if sc.kind == "decode":
            text += (f" A decode step has one query row, so both read the KV cache once: "
                     f"<b>{fmt_bytes(self.decode_kv_read_bytes())}</b> per output token (all layers, one GPU).")
        self.totals_label.setText(text)
        gr, gc = g["group"]
        shape = f"{g['Tr']:,} × {g['Tc']:,} tiles (B_r = {g['Br']:.0f}, B_c = {g['Bc']:.0f}, M = " \
                f"{m_bytes / 1024:.0f} KiB SRAM per SM{'' if hw.sram_per_core_bytes > 0 else ', the paper’s 100 KB'})"
        agg = (f" Drawn as {g['flash'].shape[0]:,} × {g['flash'].shape[1]:,} cells: each cell sums {gr} × {gc} "
               f"tiles (grid capped at {MAX_CELLS} per side)." if (gr, gc) != (1, 1) else "")
        # at most two lines: the grid and its cells; what each tile carries is in the hover
        cells = f"; {gr} × {gc} tiles per cell" if (gr, gc) != (1, 1) else ""
        self.note_label.setText(f"Grid: {shape}, one head of one sequence per tile{cells}.")
        self.note_label.setToolTip(f"{agg.strip()} Standard attention's tiles carry the S, P (dP, dS) round trips of "
                                   "their B_r×B_c elements; FlashAttention's carry Q_i, O_i, ℓ_i, m_i per visit plus "
                                   "their share of K_j, V_j (Dao et al. 2022, Alg. 0/1/3/4).".strip())

    def _draw_totals(self, std: float, fa: float) -> None:
        div, unit = bytes_unit(max(std, fa))
        for k, v in (("standard", std), ("flash", fa)):
            self.bars[k].setOpts(x0=[0.0], width=[v / div], y=[float(ROWS.index(k))], height=0.6)
            label = f" {fmt_bytes(v)}" + (f" · {findings.ratio_words(fa, std)} bytes" if k == "flash" else "")
            self.bar_labels[k].setText(label)
            self.bar_labels[k].setPos(v / div, float(ROWS.index(k)))
        top = max(std, fa) / div
        self.bytes_plot.setXRange(0, top * 1.6, padding=0)   # room right of the longer bar for its label
        self.bytes_plot.setYRange(-0.6, len(ROWS) - 0.4, padding=0)
        pw.set_axis_label(self.bytes_plot, "bottom", f"HBM bytes per layer ({unit})")

    def _draw_tiles(self, g: dict) -> None:
        """The last query block's row: bytes per tile against the key block, standard and tiled side by side."""
        row = g["Tr"] - 1
        i = g["flash"].shape[0] - 1
        cols = g["flash"].shape[1]
        div, unit = bytes_unit(float(max(g["standard"][i].max(), g["flash"][i].max())))
        self._row_unit = (div, unit)
        xs = np.arange(cols, dtype=float)
        for k, shift in (("standard", -0.2), ("flash", 0.2)):
            self.tile_bars[k].setOpts(x=xs + shift, height=g[k][i] / div, width=0.4)
        self.tiles_plot.setXRange(-0.6, cols - 0.4, padding=0)
        self.tiles_plot.setYRange(0, float(g["standard"][i].max()) / div * 1.1, padding=0)
        pw.set_axis_label(self.tiles_plot, "bottom", f"key block j (tiles of B_c = {g['Bc']:.0f} keys)")
        pw.set_axis_label(self.tiles_plot, "left", f"{unit} per tile")
        std_tile, fa_tile = float(np.median(g["standard"][i])), float(np.median(g["flash"][i]))
        gr, gc = g["group"]
        each = "each" if (gr, gc) == (1, 1) else f"per cell of {gr} × {gc} tiles"
        pw.set_title(self.tiles_plot, pw.html_escape(
            f"Query block {row + 1:,} visits {g['Tc']:,} key tiles: {fmt_bytes(std_tile)} {each} standard, "
            f"{fmt_bytes(fa_tile)} tiled"), size="12pt")

    # ------------------------------------------------------------------ read-outs
    def _bytes_hover(self, x: float, y: float) -> str:
        k = ROWS[int(np.clip(round(y), 0, len(ROWS) - 1))]
        return f"{NAMES[k]}\n{fmt_bytes(self._totals[k])} per layer, one GPU" if self._grid is not None else ""

    def _tiles_hover(self, x: float, y: float) -> str:
        g = self._grid
        if g is None:
            return ""
        j = int(round(x))
        if not 0 <= j < g["flash"].shape[1]:
            return ""
        return self.hover_text_at("flash" if x >= j else "standard", j + 0.5, g["flash"].shape[0] - 0.5)

    def hover_text_at(self, key: str, x: float, y: float) -> str:
        """Read-out of drawn cell (x = key block, y = query block) of one grid."""
        g = self._grid
        if g is None:
            return ""
        data = g[key]
        rows, cols = data.shape
        j, i = int(np.floor(x)), int(np.floor(y))
        if not (0 <= i < rows and 0 <= j < cols):
            return ""
        gr, gc = g["group"]
        tiles = (f"query blocks {i * gr}–{min((i + 1) * gr, g['Tr']) - 1}, key blocks {j * gc}–"
                 f"{min((j + 1) * gc, g['Tc']) - 1}" if (gr, gc) != (1, 1)
                 else f"query block {i}, key block {j}")
        return (f"{NAMES[key]}\n{tiles}\n{fmt_bytes(float(data[i, j]))} per head per sequence\n"
                f"{fmt_bytes(float(data[i, j]) * self._scale)} for this GPU's heads × batch")

    # ------------------------------------------------------------------ for tests and export
    def decode_kv_read_bytes(self) -> float:
        """KV-cache bytes a decode step reads per output token (all layers, one GPU): the roofline's kernel."""
        if self._results is None or self._results.kind != "decode":
            return 0.0
        points = {p.name: p for p in roofline(self._results.scenario).points}
        return float(points[KV_READ_POINT].bytes) if KV_READ_POINT in points else 0.0

    def totals(self) -> dict[str, float]:
        """HBM bytes per layer on one GPU: {"standard": ..., "flash": ...}."""
        return dict(self._totals)

    def grid_shape(self) -> tuple[int, int]:
        """(N/B_r, N/B_c) tiles of the full grid (before any aggregation for drawing)."""
        if self._grid is None:
            return (0, 0)
        return int(self._grid["Tr"]), int(self._grid["Tc"])

    def drawn_shape(self) -> tuple[int, int]:
        if self._grid is None:
            return (0, 0)
        return tuple(self._grid["flash"].shape)

    def cell_values(self, key: str) -> np.ndarray:
        """Bytes per drawn cell (one head, one sequence)."""
        return np.asarray(self._grid[key]) if self._grid is not None else np.zeros((0, 0))

    def bar_values(self) -> dict[str, float]:
        """The two bars' lengths as drawn, in bytes."""
        div, _ = bytes_unit(max(self._totals.values()))
        return {k: float(self.bars[k].opts["width"][0]) * div for k in ROWS}
