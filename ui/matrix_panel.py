"""Matrix views of what is kept or moved: the compressed KV cache (heads x tokens: kept, quantised or evicted)
and dense gradient sync (GPU x GPU bytes sent per step for ring, tree, hierarchical or in-network all-reduce).

Numbers come from `model.kv_matrix.kv_matrix` and `model.grad_sync_matrix.sync_matrix`. One ImageItem per
view, updated with setImage; the sync heatmap uses cividis, cut to the colours that read at 3:1 against the
plot (`theme.readable_colormap`, so a cell beside a zero never merges with it), with a colour bar in GB.

The KV view compares the policies on one colour scale: a band of up to BAND_ROWS heads per policy (full,
sliding window, StreamingLLM, H2O, RazorAttention with its retrieval heads first), the scenario's own policy
marked ▶, so even a full cache opens beside what the others would keep. A few attention-sink tokens cover
well under a pixel of a long context; they are drawn as a line at least SINK_PX pixels wide at the left
edge of the rows that keep them, so they stay visible.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.grad_sync_matrix import LINK_CLASSES, SYNC_ALGORITHMS, sync_matrix
from trinity_desktop.model.views.kv_matrix import binned_fraction, kv_matrix
from trinity_desktop.ui import findings, named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds

VIEWS = ("Compressed KV cache", "Dense gradient sync")
# Okabe-Ito: kept = bluish green (memory), kept-quantised = sky blue, evicted = light grey.
KV_STATE_COLORS = {state: QtGui.QColor(color).getRgb()[:3] for state, color in (
    ("evicted", theme.MUTED_COLOR), ("kept", theme.RESOURCE_COLORS["memory"]), ("quantised", theme.ACCENT_COLORS["sky"]))}
ALGORITHM_LABELS = {"ring": "Ring all-reduce", "tree": "Binary tree (reduce + broadcast)",
                    "hierarchical": "Hierarchical (intra-node, then inter-node)",
                    "in-network": "In-network (aggregation in the switch)"}
MAX_COLUMNS = 1024
COMPARED_POLICIES = ("full", "window", "streaming", "h2o", "razor")
POLICY_NAMES = {"full": "full cache", "window": "sliding window", "streaming": "StreamingLLM",
                "h2o": "H2O (synthetic scores)", "razor": "RazorAttention"}
BAND_ROWS = 4      # heads shown per policy band
SINK_PX = 4        # attention sinks: drawn at least this many pixels wide


class MatrixPanel(QtWidgets.QWidget):
    """Two tabs: the KV keep grid for the scenario's policy, and the gradient-sync heatmap."""

    focusRequested = QtCore.Signal(str, str)
    editRequested = QtCore.Signal(dict)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("MatrixPanel")
        self.setAccessibleName("Matrix views panel")
        self._results: Results | None = None
        self._kv: dict | None = None
        self._kv_frac = np.zeros((1, 1))
        self._kv_edges = np.zeros(2)
        self._sync: dict | None = None
        self._algorithm = "ring"
        self._sync_error = ""
        self.cmap = theme.readable_colormap(pw.plot_background())

        # ---------------------------------------------------------------- KV grid
        self.kv_graphics = pg.GraphicsLayoutWidget()
        self.kv_graphics.setBackground(pw.plot_background())
        self.kv_graphics.setAccessibleName("KV cache keep grid")
        self.kv_graphics.setAccessibleDescription("Rows: KV heads; columns: token positions; green kept, blue "
                                                  "kept in a quantised format, grey evicted.")
        self.kv_plot: pg.PlotItem = self.kv_graphics.addPlot()
        pw.style_plot(self.kv_plot, "Compressed KV cache", left="KV head", bottom="token position (oldest → newest)")
        pw.freeze_view(self.kv_plot)
        self.kv_plot.getViewBox().invertY(True)
        self.kv_image = pg.ImageItem()
        self.kv_plot.addItem(self.kv_image)
        self.band_lines = pg.PlotCurveItem(pen=pg.mkPen(pw.plot_background(), width=3), connect="pairs")
        self.sink_lines = pg.PlotCurveItem(pen=pg.mkPen(KV_STATE_COLORS["kept"], width=SINK_PX), connect="pairs")
        for z, item in enumerate((self.band_lines, self.sink_lines)):
            item.setZValue(5 + z)
            self.kv_plot.addItem(item, ignoreBounds=True)
        self._bands: list[tuple[str, int, dict, np.ndarray]] = []  # (policy, first row, kv, head indices)
        self.kv_plot.getViewBox().sigResized.connect(lambda *_: self._kv and self._draw_sinks(self._kv["context"]))
        self.kv_hover = pw.HoverReadout(self.kv_plot, self._kv_hover)
        pw.LeaveFilter(self.kv_graphics, self.kv_hover.leave)
        self.kv_legend = QtWidgets.QLabel(self._legend_html())
        self.kv_legend.setFont(pw.font())
        self.kv_legend.setWordWrap(True)   # never widens the dock (it squeezed the Scenario form at 1366)
        self.kv_legend.setAccessibleName("KV grid legend")
        self.kv_legend.setToolTip("Colour of a cell: the fraction of its tokens kept (a cell covers several "
                                  "tokens when the context is long)")
        self.kv_summary = QtWidgets.QLabel("")
        self.kv_summary.setFont(pw.font())
        self.kv_summary.setWordWrap(True)
        self.kv_summary.setAccessibleName("KV grid summary")
        self.synthetic_label = QtWidgets.QLabel("")
        self.synthetic_label.setFont(pw.font(bold=True))
        self.synthetic_label.setWordWrap(True)
        self.synthetic_label.setStyleSheet(f"color: {theme.FOCUS_COLOR}")
        self.synthetic_label.setAccessibleName("Synthetic scores notice")
        self.synthetic_label.setToolTip("H2O picks heavy hitters by accumulated attention; no model runs here, "
                                        "so the scores are synthesised from a stated, seeded model")
        kv_page = QtWidgets.QWidget()
        kv_layout = QtWidgets.QVBoxLayout(kv_page)
        kv_layout.setContentsMargins(0, 0, 0, 0)
        kv_layout.addWidget(self.kv_graphics, 1)
        kv_layout.addWidget(self.kv_legend)
        kv_layout.addWidget(self.synthetic_label)
        kv_layout.addWidget(self.kv_summary)

        # ---------------------------------------------------------------- gradient sync
        # short names in the box ("Hierarchical"), the full ones in its list and hover: it never widens the dock
        self.algo_combo = named_combo.labelled_combo(
            "Gradient sync algorithm", "All-reduce algorithm used to synchronise the dense gradients of the "
            "data-parallel group", [(ALGORITHM_LABELS[a], a) for a in SYNC_ALGORITHMS])
        self.algo_combo.currentIndexChanged.connect(lambda i: self.set_algorithm(SYNC_ALGORITHMS[i]))
        algo_label = QtWidgets.QLabel("Algorithm")
        algo_label.setFont(pw.font())
        algo_label.setBuddy(self.algo_combo)
        self.sync_graphics = pg.GraphicsLayoutWidget()
        self.sync_graphics.setBackground(pw.plot_background())
        self.sync_graphics.setAccessibleName("Gradient sync heatmap")
        self.sync_graphics.setAccessibleDescription("Rows: sending GPU; columns: receiving GPU of the "
                                                    "data-parallel group (last: the switch); colour: GB sent per step.")
        self.sync_plot: pg.PlotItem = self.sync_graphics.addPlot(row=0, col=0)
        pw.style_plot(self.sync_plot, "Dense gradient sync", left="sending DP rank",
                      bottom="receiving DP rank")
        pw.freeze_view(self.sync_plot)
        self.sync_plot.getViewBox().invertY(True)
        self.sync_plot.getViewBox().setAspectLocked(True)
        self.sync_image = pg.ImageItem()
        self.sync_plot.addItem(self.sync_image)
        self.node_lines = pg.PlotCurveItem(pen=pg.mkPen(theme.FOCUS_COLOR, width=1.5), connect="pairs")
        self.sync_plot.addItem(self.node_lines, ignoreBounds=True)
        self.colorbar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=self.cmap, interactive=False, width=22)
        self.colorbar.axis.setStyle(tickFont=pw.font())
        self.colorbar.axis.setLabel("GB sent per step", **{"font-size": pw.LABEL_SIZE})
        self.sync_graphics.addItem(self.colorbar, row=0, col=1)
        self.sync_hover = pw.HoverReadout(self.sync_plot, self._sync_hover)
        pw.LeaveFilter(self.sync_graphics, self.sync_hover.leave)
        self.sync_summary = QtWidgets.QLabel("")
        self.sync_summary.setFont(pw.font())
        self.sync_summary.setWordWrap(True)
        self.sync_summary.setAccessibleName("Gradient sync totals per link class")
        self.sync_summary.setToolTip("Bytes per link class summed over all senders, and the time each class "
                                     "takes (alpha-beta model at the scenario's network efficiency)")
        sync_page = QtWidgets.QWidget()
        sync_layout = QtWidgets.QVBoxLayout(sync_page)
        sync_layout.setContentsMargins(0, 0, 0, 0)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(algo_label)
        row.addWidget(self.algo_combo)
        row.addStretch(1)
        sync_layout.addLayout(row)
        sync_layout.addWidget(self.sync_graphics, 1)
        sync_layout.addWidget(self.sync_summary)

        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setAccessibleName("Matrix view selector")
        self.tabs.addTab(kv_page, VIEWS[0])
        self.tabs.addTab(sync_page, VIEWS[1])
        self.tabs.setTabToolTip(0, "Heads x tokens: what the scenario's KV policy keeps")
        self.tabs.setTabToolTip(1, "GPU x GPU: bytes sent per step to synchronise gradients")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tabs)

    @staticmethod
    def _legend_html() -> str:
        def sw(rgb):
            return f"<span style='background-color: rgb{rgb}; color: rgb{rgb}'>&nbsp;&nbsp;&nbsp;&nbsp;</span>"
        c = KV_STATE_COLORS
        return (f"{sw(c['kept'])} kept &nbsp; {sw(c['quantised'])} kept, quantised KV (fp8/int8/int4) &nbsp; "
                f"{sw(c['evicted'])} evicted")

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().changeEvent(event)
        if pw.is_theme_change(event) and self._results is not None:
            for graphics in (self.kv_graphics, self.sync_graphics):
                graphics.setBackground(pw.plot_background())
            self._refresh_sync()

    # ------------------------------------------------------------------ update
    def update_results(self, results: Results) -> None:
        self._results = results
        self._refresh_kv()
        self._refresh_sync()

    def _band(self, sc, policy: str, own: dict) -> tuple[dict, np.ndarray] | None:
        """The keep grid of `policy` for the scenario and the heads its band shows (retrieval heads first)."""
        try:
            kv = own if policy == own["policy"] else kv_matrix(sc.replace(kv_policy=policy))
        except ValidationError:
            return None
        ret = [int(i) for i in kv["retrieval_heads"]]
        order = ret + [h for h in range(kv["heads_shown"]) if h not in set(ret)]
        return kv, np.asarray(order[:BAND_ROWS], dtype=int)

    def _refresh_kv(self) -> None:
        sc = self._results.scenario
        kv = kv_matrix(sc)
        bands, fracs, row = [], [], 0
        for policy in COMPARED_POLICIES:
            band = self._band(sc, policy, kv)
            if band is None:
                continue
            kvp, heads = band
            frac, edges = binned_fraction(kvp["grid"][heads], MAX_COLUMNS)
            bands.append((policy, row, kvp, heads))
            fracs.append(frac)
            row += len(heads)
        frac = np.vstack(fracs)
        # set together, once all are computed: a resize between a failed refresh and the next one drew the new
        # bands over the old fractions (IndexError in _draw_sinks)
        self._kv, self._bands, self._kv_frac, self._kv_edges = kv, bands, frac, edges
        kept = np.array(KV_STATE_COLORS["quantised" if kv["quantised"] else "kept"], float)
        ev = np.array(KV_STATE_COLORS["evicted"], float)
        rgb = ev[None, None, :] + frac[:, :, None] * (kept - ev)[None, None, :]
        rgba = np.concatenate([rgb, np.full(frac.shape + (1,), 255.0)], axis=2).astype(np.uint8)
        self.kv_image.setImage(np.ascontiguousarray(rgba.transpose(1, 0, 2)), autoLevels=False, levels=(0, 255))
        c, h = kv["context"], row
        self.kv_image.setRect(QtCore.QRectF(0, 0, c, h))
        self.kv_plot.setXRange(0, c, padding=0)
        self.kv_plot.setYRange(0, h, padding=0)
        ticks = [(first + len(heads) / 2, ("▶ " if p == kv["policy"] else "") + POLICY_NAMES[p])
                 for p, first, _, heads in self._bands]
        self.kv_plot.getAxis("left").setTicks([ticks])
        self.kv_plot.getAxis("left").setLabel("policy (first heads)", **{"font-size": pw.LABEL_SIZE})
        self.kv_plot.getAxis("bottom").setTicks(None)
        ys = [float(first) for _, first, _, _ in self._bands[1:]]
        self.band_lines.setData(np.tile([0.0, float(c)], len(ys)), np.repeat(np.asarray(ys, float), 2))
        self._draw_sinks(c)
        self.sink_lines.setPen(pg.mkPen(KV_STATE_COLORS["quantised" if kv["quantised"] else "kept"],
                                        width=SINK_PX))
        name = {"full": "full cache", "window": f"sliding window W = {kv['window']:,}",
                "streaming": f"StreamingLLM: {kv['sinks']} sinks + window {kv['window']:,}",
                "h2o": f"H2O: {sc.kv_heavy_ratio:.0%} budget (heavy hitters + recent)",
                "razor": f"RazorAttention, retrieval heads keep all {c:,}"}[kv["policy"]]
        pw.set_title(self.kv_plot, pw.html_escape(findings.kv_policy_title(
            POLICY_NAMES[kv["policy"]], kv["kept_fraction"], c)), size="13pt")
        shown = "" if kv["heads_shown"] == kv["heads_total"] else \
            f" Showing {kv['heads_shown']} of {kv['heads_total']} heads."
        self.kv_summary.setText(
            f"▶ This scenario, {name}: kept {kv['kept_fraction']:.1%} of tokens (model: "
            f"{kv['kept_fraction_model']:.1%}); KV cache per sequence {fmt_bytes(kv['bytes_kept'])} of "
            f"{fmt_bytes(kv['bytes_full'])} in {kv['kv_dtype']} ({fmt_bytes(kv['bytes_full_16bit'])} "
            f"uncompressed at 16 bits), whole model.{shown} Each band shows up to {BAND_ROWS} heads.")
        synthetic = any(b[2]["synthetic"] for b in self._bands)
        self.synthetic_label.setText("H2O: synthetic attention scores (seeded generator): heavy hitters chosen "
                                     "from a stated model, not from a real run." if kv["synthetic"] else "")
        self.synthetic_label.setVisible(bool(kv["synthetic"]))
        self.kv_legend.setToolTip("Colour of a cell: the fraction of its tokens kept (a cell covers several "
                                  "tokens when the context is long); attention sinks are drawn at least "
                                  f"{SINK_PX} px wide." + (" H2O's band uses synthetic scores." if synthetic
                                                          else ""))

    def _draw_sinks(self, context: int) -> None:
        """A line at least SINK_PX wide at the left edge of every row that keeps sink tokens too few to fill a
        pixel (the first tokens kept, the rest of the first cell not)."""
        xs, ys = [], []
        vb_width = max(self.kv_plot.getViewBox().width(), 100.0)
        x = (SINK_PX / 2 + 1) * context / vb_width   # just inside the left edge
        for _, first, kvp, heads in self._bands:
            sinks = int(kvp.get("sinks", 0) or 0)
            for i, head in enumerate(heads):
                row = kvp["grid"][head]
                if 0 < sinks < len(row) and row[:sinks].all() and self._kv_frac[first + i, 0] < 1.0:
                    xs += [x, x]
                    ys += [first + i + 0.1, first + i + 0.9]
        self.sink_lines.setData(np.asarray(xs, float), np.asarray(ys, float))

    def _refresh_sync(self) -> None:
        try:
            s = sync_matrix(self._results.scenario, self._algorithm)
        except ValidationError as exc:
            self._sync, self._sync_error = None, str(exc)
            self.sync_image.clear()
            self.sync_summary.setText(f"Cannot draw: {exc}")
            return
        self._sync, self._sync_error = s, ""
        n = s["n"]
        M = s["matrix"] if s["has_switch"] else s["matrix"][:n, :n]
        size = M.shape[0]
        gb = M / 1e9
        top = float(gb.max()) if gb.max() > 0 else 1.0
        self.cmap = theme.readable_colormap(pw.plot_background())   # #21: no cell merges with the plot
        self.colorbar.setColorMap(self.cmap)
        rgba = self.cmap.map(np.clip(gb / top, 0, 1), mode="byte")
        rgba[M == 0] = QtGui.QColor(pw.plot_background()).getRgb()   # nothing sent: the background, not white
        self.sync_image.setImage(np.ascontiguousarray(rgba.transpose(1, 0, 2)), autoLevels=False, levels=(0, 255))
        self.sync_image.setRect(QtCore.QRectF(0, 0, size, size))
        self.colorbar.setLevels((0.0, top))
        self.sync_plot.setXRange(0, size, padding=0.02)
        self.sync_plot.setYRange(0, size, padding=0.02)
        step = max(1, int(math.ceil(size / 16)))
        ticks = [(i + 0.5, str(i)) for i in range(0, n, step)]
        if s["has_switch"]:
            ticks.append((n + 0.5, "switch"))
        for axis in ("left", "bottom"):
            self.sync_plot.getAxis(axis).setTicks([ticks])
        # node boundaries
        node = s["node"]
        cuts = [i for i in range(1, n) if node[i] != node[i - 1]]
        if s["k"] == 1 or len(cuts) > 15:  # one rank per node, or too many nodes to draw legibly
            cuts = []
        xs, ys = [], []
        for cpos in cuts:
            xs += [cpos, cpos, 0, n]
            ys += [0, n, cpos, cpos]
        self.node_lines.setData(np.asarray(xs, float), np.asarray(ys, float))
        sc = self._results.scenario
        pw.set_title(self.sync_plot, pw.html_escape(findings.sync_title(
            ALGORITHM_LABELS[self._algorithm], n, float(s["time_s"]), s["bytes_by_class"])), size="13pt")
        parts = []
        for cls in LINK_CLASSES:
            if s["bytes_by_class"][cls] > 0:
                parts.append(f"{cls}: {fmt_bytes(s['bytes_by_class'][cls])} in all, {fmt_seconds(s['time_by_class'][cls])}")
        per_rank = float(s["sent_per_rank"].max()) if n > 0 else 0.0
        text = ("; ".join(parts) or "one rank: nothing to send") + \
            f". Each rank sends up to {fmt_bytes(per_rank)}; sync time {fmt_seconds(s['time_s'])}."
        k, m = int(s["k"]), int(s["m"])
        text += (f" {k} DP rank{'s' if k != 1 else ''} per node × {m} node{'s' if m != 1 else ''}"
                 f" ({sc.gpus_per_node} GPUs per node)")
        text += "; orange lines: node boundaries." if cuts else "."
        if self._algorithm == "in-network":
            text += " Switch row/column: (n-1)/(n+1)·S-equivalent per rank (NCCL bus factor)."
        if sc.kind != "train":
            text += " Inference scenario: shown as if its GPUs trained the model data-parallel."
        self.sync_summary.setText(text)

    # ------------------------------------------------------------------ hover
    def _kv_hover(self, x: float, y: float) -> str:
        if self._kv is None or not (0 <= x < self._kv["context"] and 0 <= y < self._kv_frac.shape[0]):
            return ""
        row = int(y)
        policy, first, kv, heads = next(b for b in self._bands if b[1] <= row < b[1] + len(b[3]))
        head = int(heads[row - first])
        col = int(np.searchsorted(self._kv_edges, x, side="right") - 1)
        col = min(max(col, 0), self._kv_frac.shape[1] - 1)
        a, b = int(self._kv_edges[col]), int(self._kv_edges[col + 1])
        f = self._kv_frac[row, col]
        what = "tokens" if b - a > 1 else "token"
        rng = f"{a:,}–{b - 1:,}" if b - a > 1 else f"{a:,}"
        role = " (retrieval head)" if head in set(int(i) for i in kv["retrieval_heads"]) else ""
        state = "quantised" if kv["quantised"] else "kept"
        return (f"{POLICY_NAMES[policy]}: head {head}{role}, {what} {rng}\n{f:.0%} {state}, {1 - f:.0%} evicted\n"
                f"head keeps {int(kv['kept_tokens'][head]):,} of {kv['context']:,} tokens")

    def _sync_hover(self, x: float, y: float) -> str:
        s = self._sync
        if s is None:
            return ""
        n = s["n"]
        size = n + 1 if s["has_switch"] else n
        if not (0 <= x < size and 0 <= y < size):
            return ""
        j, i = int(x), int(y)
        name = lambda k: "switch" if k == n else f"rank {k} (node {int(s['node'][k])})"  # noqa: E731
        v = s["matrix"][i, j]
        cls = {0: "no traffic", 1: "scale-up link", 2: "scale-out link"}[int(s["link_class"][i, j])]
        return f"{name(i)} → {name(j)}\n{fmt_bytes(v)} per step ({v / 1e9:.3g} GB), {cls}"

    # ------------------------------------------------------------------ controls and accessors
    def set_view(self, name: str) -> None:
        """Show "Compressed KV cache" (or "kv") or "Dense gradient sync" (or "sync")."""
        key = {"kv": VIEWS[0], "sync": VIEWS[1]}.get(name, name)
        if key not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}, got {name!r}")
        self.tabs.setCurrentIndex(VIEWS.index(key))

    def current_view(self) -> str:
        return VIEWS[self.tabs.currentIndex()]

    def set_algorithm(self, name: str) -> None:
        """Gradient sync algorithm: ring, tree, hierarchical or in-network."""
        if name not in SYNC_ALGORITHMS:
            raise ValueError(f"algorithm must be one of {SYNC_ALGORITHMS}, got {name!r}")
        self._algorithm = name
        if self.algo_combo.currentIndex() != SYNC_ALGORITHMS.index(name):
            self.algo_combo.setCurrentIndex(SYNC_ALGORITHMS.index(name))
        if self._results is not None:
            self._refresh_sync()

    def set_focus(self, what: str, key: str) -> None:
        """Linked focus: ("view", "kv"|"sync") switches the tab; other keys are ignored."""
        if what == "view" and key in ("kv", "sync", *VIEWS):
            self.set_view(key)

    def kv_grid(self) -> np.ndarray:
        """The keep grid (heads x tokens, uint8: 0 evicted, 1 kept, 2 kept-quantised) at full resolution."""
        return self._kv["grid"].copy() if self._kv else np.zeros((0, 0), np.uint8)

    def kv_info(self) -> dict:
        return dict(self._kv) if self._kv else {}

    def sync_matrix(self) -> np.ndarray:
        """Bytes sent per step, [sender, receiver], as drawn (with the switch row/column for in-network)."""
        if self._sync is None:
            return np.zeros((0, 0))
        n = self._sync["n"]
        return self._sync["matrix"].copy() if self._sync["has_switch"] else self._sync["matrix"][:n, :n].copy()

    def sync_info(self) -> dict:
        return dict(self._sync) if self._sync else {}

    def summary_texts(self) -> tuple[str, str]:
        return self.kv_summary.text(), self.sync_summary.text()

    def export_rows(self) -> list[dict]:
        """The values behind both matrix views for CSV export: the KV keep grid (value 0 evicted, 1 kept,
        2 kept quantised; x = token position, y = KV head) and the bytes each GPU sends each other per step
        (x = receiver, y = sender)."""
        rows = []
        grid = self.kv_grid()
        for head, token in zip(*np.nonzero(np.ones_like(grid, dtype=bool)), strict=True):
            rows.append({"plot": "Compressed KV cache", "series": "KV state (0 evicted, 1 kept, 2 quantised)",
                         "kind": "cell", "x": int(token), "y": int(head), "value": int(grid[head, token])})
        sync = self.sync_matrix()
        for sender, receiver in zip(*np.nonzero(np.ones_like(sync, dtype=bool)), strict=True):
            rows.append({"plot": "Dense gradient sync", "series": "bytes sent per step", "kind": "cell",
                         "x": int(receiver), "y": int(sender), "value": float(sync[sender, receiver])})
        return rows
