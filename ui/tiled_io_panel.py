"""Tiled attention IO: HBM bytes per (B_r × B_c) tile of the N × N score matrix, standard vs FlashAttention.

The grid is Algorithm 1's (Dao et al. 2022): B_c = ⌈M/4d⌉, B_r = min(B_c, d), M the hardware's per-SM SRAM.
Both heatmaps share one cividis colour scale (bytes per drawn cell), so the contrast between them is the
point. Grids larger than MAX_CELLS per side are drawn with neighbouring tiles summed (said on screen).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.base.dtypes import ACTIVATION_BYTES
from trinity_desktop.model.formulas import flash_io
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.roofline import sram_bytes_for_flash
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_bytes

MAX_CELLS = 256


class TiledIOPanel(QtWidgets.QWidget):
    """Two heatmaps side by side (standard attention, FlashAttention) with totals in GB and their ratio."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("TiledIOPanel")
        self.setAccessibleName("Tiled attention IO: HBM bytes per tile, standard vs FlashAttention")
        self._results: Results | None = None
        self._grid: dict | None = None
        self._totals = {"standard": 0.0, "flash": 0.0}
        self._scale = 1.0
        self.cmap = pg.colormap.get(theme.HEATMAP_COLORMAP)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.setAccessibleName("Tiled attention IO heatmaps")
        self.graphics.setAccessibleDescription(
            "Left: standard attention, right: FlashAttention. Each cell is one B_r x B_c tile of the N x N "
            "score matrix (rows: query blocks, columns: key blocks), coloured by the HBM bytes charged to it "
            "on one shared cividis scale. Hover a cell for its bytes.")
        self.plots: dict[str, pg.PlotItem] = {}
        self.images: dict[str, pg.ImageItem] = {}
        for col, key in enumerate(("standard", "flash")):
            plot = self.graphics.addPlot(row=0, col=col)
            pw.style_plot(plot, "", left="query block (rows of B_r)", bottom="key block (columns of B_c)")
            pw.freeze_view(plot)
            plot.getViewBox().invertY(True)
            plot.getViewBox().setAspectLocked(False)
            image = pg.ImageItem()
            image.setColorMap(self.cmap)
            plot.addItem(image)
            self.plots[key] = plot
            self.images[key] = image
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=self.cmap, interactive=False, width=20,
                                        label="HBM bytes per cell (kB)")
        self.colorbar.axis.setStyle(tickFont=pw.font())
        self.colorbar.setImageItem([self.images["standard"], self.images["flash"]])
        self.graphics.addItem(self.colorbar, row=0, col=2)
        self.hovers = {key: pw.HoverReadout(plot, lambda x, y, k=key: self.hover_text_at(k, x, y))
                       for key, plot in self.plots.items()}
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
        hi = float(max(g["standard"].max(), g["flash"].max()))
        for key in ("standard", "flash"):
            data = g[key] / 1e3   # kB per cell (one head, one sequence)
            rows, cols = data.shape
            # pyqtgraph's ImageItem indexes image[x, y]: columns (key blocks) on x, rows (query blocks) on y.
            self.images[key].setImage(data.T, autoLevels=False, levels=(0.0, hi / 1e3))
            self.images[key].setRect(QtCore.QRectF(0, 0, cols, rows))
            self.plots[key].setXRange(0, cols, padding=0)
            self.plots[key].setYRange(0, rows, padding=0)
        self.colorbar.setLevels((0.0, hi / 1e3))
        std, fa = self._totals["standard"], self._totals["flash"]
        ratio = std / fa if fa > 0 else 0.0
        pass_word = "forward + backward" if train else "forward"
        pw.set_title(self.plots["standard"], f"Standard attention: {std / 1e9:.2f} GB")
        pw.set_title(self.plots["flash"], f"FlashAttention: {fa / 1e9:.2f} GB")
        direction = "fewer" if ratio >= 1 else "more"
        factor = ratio if ratio >= 1 else (1 / ratio if ratio > 0 else 0)
        self.totals_label.setText(
            f"N = {N:,} tokens, d = {d}, {heads:g} heads × batch {batch} per GPU, {pass_word}: standard "
            f"<b>{std / 1e9:.2f} GB</b>, FlashAttention <b>{fa / 1e9:.2f} GB</b> of HBM reads + writes per "
            f"layer — FlashAttention moves <b>{factor:.1f}× {direction}</b> bytes.")
        gr, gc = g["group"]
        shape = f"{g['Tr']:,} × {g['Tc']:,} tiles (B_r = {g['Br']:.0f}, B_c = {g['Bc']:.0f}, M = " \
                f"{m_bytes / 1024:.0f} KiB SRAM per SM{'' if hw.sram_per_core_bytes > 0 else ', the paper’s 100 KB'})"
        agg = (f" Drawn as {rows:,} × {cols:,} cells: each cell sums {gr} × {gc} tiles (grid capped at "
               f"{MAX_CELLS} per side)." if (gr, gc) != (1, 1) else "")
        self.note_label.setText(f"Grid: {shape}, one head of one sequence per cell.{agg} Standard attention's "
                                "cells carry the S, P (dP, dS) round trips of their B_r×B_c elements; "
                                "FlashAttention's carry Q_i, O_i, ℓ_i, m_i per visit plus their share of K_j, "
                                "V_j (Dao et al. 2022, Alg. 0/1/3/4).")

    # ------------------------------------------------------------------ read-outs
    def hover_text_at(self, key: str, x: float, y: float) -> str:
        g = self._grid
        if g is None:
            return ""
        data = g[key]
        rows, cols = data.shape
        j, i = int(np.floor(x)), int(np.floor(y))
        if not (0 <= i < rows and 0 <= j < cols):
            return ""
        gr, gc = g["group"]
        name = "Standard attention" if key == "standard" else "FlashAttention"
        tiles = (f"query blocks {i * gr}–{min((i + 1) * gr, g['Tr']) - 1}, key blocks {j * gc}–"
                 f"{min((j + 1) * gc, g['Tc']) - 1}" if (gr, gc) != (1, 1)
                 else f"query block {i}, key block {j}")
        return (f"{name}\n{tiles}\n{fmt_bytes(float(data[i, j]))} per head per sequence\n"
                f"{fmt_bytes(float(data[i, j]) * self._scale)} for this GPU's heads × batch")

    # ------------------------------------------------------------------ for tests and export
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
