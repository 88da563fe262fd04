"""Vector search in the memory hierarchy: index bytes against the number of vectors N, with the tiers the index's
engine can use as bands (model/formulas/retrieval.py on the scenario's hardware), and below it the query time
against N with the published latency points (resources/scale_published.toml) for comparison.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.formulas.retrieval import (
    DTYPE_BYTES,
    INDEX_LABELS,
    INDEXES,
    QUOTED_COLLECTIONS,
    engine_tiers,
    evaluate_retrieval,
    spill_points,
)
from trinity_desktop.model.inputs.scale_facts import retrieval_points
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.point_labels import PointLabels
from trinity_desktop.ui.scale_chart import ScaleChart, combo, faded, set_log_data
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds

N = np.logspace(4, 11, 141)
INDEX_COLORS = {"hnsw": theme.RESOURCE_COLORS["memory"], "ivfpq": theme.RESOURCE_COLORS["compute"],
                "diskann": theme.RESOURCE_COLORS["bandwidth"]}
TIER_WORDS = {"hbm": "device memory", "host": "host DRAM", "cxl": "CXL pool", "ssd": "SSD"}
SAME_LINE_RTOL = 0.12   # within 12% (0.05 decade, about 2 px on the bytes axis) a line lies under the chosen one
DIMS = (384, 768, 1536)


def _count(n: float) -> str:
    for factor, word in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= factor:
            return f"{n / factor:.3g}{word}"
    return f"{n:.0f}"


class RetrievalPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("RetrievalPanel")
        self.setAccessibleName("Vector search in the memory hierarchy")
        self.index, self.dim, self.dtype = "hnsw", 768, "fp32"
        self.hardware = None
        self.index_combo = combo("Index", "Index structure: HNSW graph, IVF-PQ codes, DiskANN (SSD graph + PQ in DRAM)",
                                 [(INDEX_LABELS[i], i) for i in INDEXES], self._set_index)
        self.dim_combo = combo("Dimensions", "Dimensions per vector", [(str(d), d) for d in DIMS], self._set_dim, 5)
        self.dim_combo.setCurrentIndex(DIMS.index(768))
        self.dtype_combo = combo("Vector format", "Bytes per element of the stored vectors",
                                 [(d, d) for d in DTYPE_BYTES], self._set_dtype, 5)
        self.view = "bytes"
        self.view_combo = combo("View", "Index bytes with the tiers as bands, or the query time with published points",
                                (("Bytes", "bytes"), ("Query time", "time")), self._set_view, 6)
        self.chart = ScaleChart(
            "RetrievalChart", "Vector search in the memory hierarchy",
            "Bytes view: index bytes (log) against the number of vectors (log) for HNSW, IVF-PQ and DiskANN; shaded "
            "bands are the memory tiers the selected index's engine can hold it in, per GPU. Time view: the selected "
            "index's query time from the tier holding it, with published latencies (hover for each).",
            left="bytes", bottom="vectors N (log)", log_x=True, log_y=True,
            controls=[("View", self.view_combo), ("Index", self.index_combo), ("Dim", self.dim_combo),
                      ("Format", self.dtype_combo)], legend_columns=3)
        self.chart.setToolTip(
            "HNSW and DiskANN are searched by the CPU (host DRAM, then SSD); IVF-PQ also runs on GPUs (HBM first); "
            "DiskANN keeps PQ codes in DRAM and its graph on SSD. Bytes: Malkov & Yashunin (2M links at level 0), "
            "Jégou et al. (PQ codes of d/16 bytes), Subramanya et al. (DiskANN). Query time = round trips x tier "
            "latency + bytes / tier bandwidth.")
        self.lines = {i: self.chart.line(INDEX_COLORS[i], 2.0, INDEX_LABELS[i]) for i in INDEXES}
        self.line_labels = PointLabels(self.chart.plot, len(INDEXES))   # each index named on its line
        self.bands: list[pg.LinearRegionItem] = []
        self.band_labels: list[pg.TextItem] = []
        self.time_line = self.chart.line(theme.RESOURCE_COLORS["memory"], 3.0)
        self.published = self.chart.points(theme.COMPONENT_COLORS["optimizer"], "t1", "published latency")
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chart)
        self._summary: dict = {}

    # ------------------------------------------------------------------ controls
    def _set_view(self, value) -> None:
        self.view = value
        self.redraw()

    def set_focus(self, what: str, key: str) -> None:
        """A slide's focus ("view", "bytes" or "time") opens that view (the combo follows); any other leaves it."""
        keys = ("bytes", "time")
        if what == "view" and key in keys:
            self.view_combo.setCurrentIndex(keys.index(key))   # its signal redraws
            if self.view != key:
                self._set_view(key)

    def _set_index(self, value) -> None:
        self.index = value
        self.redraw()

    def _set_dim(self, value) -> None:
        self.dim = int(value)
        self.redraw()

    def _set_dtype(self, value) -> None:
        self.dtype = value
        self.redraw()

    def update_results(self, results: Results) -> None:
        self.hardware = results.scenario.hardware
        self.redraw()

    # ------------------------------------------------------------------ drawing
    def redraw(self) -> None:
        hw = self.hardware
        if hw is None:
            return
        runs = {i: evaluate_retrieval(N, self.dim, i, hw, self.dtype) for i in INDEXES}
        r = runs[self.index]
        spill = spill_points(self.dim, self.index, hw, self.dtype)
        tiers = [t for t in engine_tiers(hw, self.index) if t.name in spill]
        label = INDEX_LABELS[self.index]
        what = f"{label} {self.dim}-d {self.dtype}"
        placed = r.tier != "none"
        qs = np.asarray(r.query_s)[placed]
        bytes_view = self.view == "bytes"
        for i, item in self.lines.items():
            chosen = i == self.index
            item.setVisible(bytes_view)
            item.setPen(pg.mkPen(INDEX_COLORS[i], width=3.5 if chosen else 1.5,
                                 style=QtCore.Qt.PenStyle.SolidLine if chosen else QtCore.Qt.PenStyle.DashLine))
            item.setZValue(5 if chosen else 10)   # the others' dashes drawn over the chosen line: one they coincide
            set_log_data(item, N, runs[i].index_bytes)   # with (DiskANN's bytes lie on HNSW's) still shows
        self.time_line.setVisible(not bytes_view)
        self.published.setVisible(not bytes_view)
        pts = [p for p in retrieval_points() if p.latency_s > 0]
        self.chart.show_in_legend([(self.lines[i], INDEX_LABELS[i]) for i in INDEXES] if bytes_view else
                                  [(self.time_line, f"{label}, this model"), (self.published, "published latency")])
        if bytes_view:
            lo_y, hi_y = 1e7, max(float(runs[i].index_bytes[-1]) for i in INDEXES)
            self._draw_bands(tiers, lo_y, hi_y)
            self._name_lines({i: runs[i].index_bytes for i in INDEXES}, lo_y)
            pw.set_axis_label(self.chart.plot, "left", "bytes")
            self.chart.fit_range([N[0], N[-1]], [lo_y, hi_y], pad=0.0)
            self.chart.set_hover_points(
                [(float(n), float(b), f"{INDEX_LABELS[i]}: {_count(n)} vectors\n{fmt_bytes(float(b))}")
                 for i in INDEXES for n, b in zip(N[::10], runs[i].index_bytes[::10], strict=True)])
            if tiers:
                where = ", ".join(f"{TIER_WORDS[t.name]} at {_count(spill[t.name])}" for t in tiers)
                self.chart.set_title(f"{what} outgrows {where} vectors")
            else:
                self.chart.set_title(f"{what}: no tier its engine can use on this device")
            self.chart.caption.setText(f"{hw.name}, per GPU: " + "; ".join(
                f"{t.label} {fmt_bytes(t.capacity_bytes)}" for t in tiers) + ".")
        else:
            self._draw_bands([], 1.0, 1.0)
            self.line_labels.set([])
            pw.set_axis_label(self.chart.plot, "left", "query time (s)")
            set_log_data(self.time_line, N[placed], qs)
            set_log_data(self.published, [p.vectors for p in pts], [p.latency_s for p in pts])
            hover = [(p.vectors, p.latency_s, f"{p.label}\n{fmt_seconds(p.latency_s)} at recall {p.recall:.2f}, "
                      f"{p.qps:,.0f} QPS\n{p.machine}\nsource: {p.source}") for p in pts]
            hover += [(float(n), float(q), f"{label}: {_count(n)} vectors in {TIER_WORDS.get(str(t), str(t))}\n"
                       f"{fmt_seconds(float(q))} per query") for n, q, t in
                      zip(N[placed][::10], qs[::10], r.tier[placed][::10], strict=True)]
            self.chart.set_hover_points(hover)
            self.chart.fit_range([N[0], N[-1]], list(qs) + [p.latency_s for p in pts], pad=0.1)
            # at the collection sizes the captions quote (a tier's last point read 166 µs beside a caption's 163)
            quoted = [(n, evaluate_retrieval(n, self.dim, self.index, hw, self.dtype)) for n in QUOTED_COLLECTIONS.values()]
            self.chart.set_title(f"{what} query: " + ", ".join(
                f"{fmt_seconds(float(x.query_s))} at {_count(n)} vectors ({TIER_WORDS[str(x.tier)]})"
                for n, x in quoted if str(x.tier) in TIER_WORDS))
            engines = sorted({p.engine for p in pts})
            self.chart.caption.setText(f"Line: this model on {hw.name}. Triangles: {', '.join(engines[:-1])} and "
                                       f"{engines[-1]}, measured on their own machines.")
        self._summary = {"tier_at_10m": str(evaluate_retrieval(1e7, self.dim, self.index, hw, self.dtype).tier),
                         "spill": spill}

    def _name_lines(self, index_bytes: dict, lo_y: float) -> None:
        """Each index's name on its own line, the chosen one bold and first, at its own share of the visible span
        (a line under the chosen one, within SAME_LINE_RTOL, is named with it: DiskANN's bytes are HNSW's + 5%)."""
        chosen = np.asarray(index_bytes[self.index], dtype=float)
        same = [i for i in INDEXES if i != self.index and np.allclose(index_bytes[i], chosen, rtol=SAME_LINE_RTOL)]
        order = [self.index] + [i for i in INDEXES if i != self.index and i not in same]
        points, lines, colors = [], [], []
        for share, i in zip((0.55, 0.8, 0.3), order, strict=False):
            b = np.asarray(index_bytes[i], dtype=float)
            lines.append(tuple(zip(np.log10(N), np.log10(np.maximum(b, 1.0)), strict=True)))
            seen = np.flatnonzero(b >= lo_y)
            if seen.size:   # a line under the chosen one is named with it ("HNSW and DiskANN"), not off it
                k = int(seen[0] + share * (len(N) - 1 - seen[0]))
                name = " and ".join(INDEX_LABELS[j] for j in [i] + (same if i == self.index else []))
                points.append((float(np.log10(N[k])), float(np.log10(b[k])), name, i == self.index))
                colors.append(INDEX_COLORS[i])
        self.line_labels.set(points, lines=lines, colors=colors, avoid=self.band_labels)   # off the tiers' names

    def _draw_bands(self, tiers, lo_y: float, hi_y: float) -> None:
        plot = self.chart.plot
        for item in self.bands + self.band_labels:
            plot.removeItem(item)
        self.bands, self.band_labels = [], []
        edges = [math.log10(lo_y)] + [math.log10(t.capacity_bytes) for t in tiers] + [math.log10(hi_y)]
        names = [f"{t.label}, {fmt_bytes(t.capacity_bytes)}" for t in tiers] + ["beyond every tier: does not fit"]
        for k, name in enumerate(names):
            lo, hi = edges[k], max(edges[k + 1], edges[k])
            if hi <= lo:
                continue
            alpha = 60 if k % 2 == 0 else 25
            region = pg.LinearRegionItem(values=(lo, hi), orientation="horizontal", movable=False,
                                         brush=pg.mkBrush(faded(theme.COMPONENT_COLORS["reserved"], alpha)),
                                         pen=pg.mkPen(faded(theme.COMPONENT_COLORS["reserved"], 160)))
            region.setZValue(-10)
            plot.addItem(region, ignoreBounds=True)
            self.bands.append(region)
            text = pw.label_item(name, anchor=(0, 0))
            text.setPos(math.log10(N[0]) + 0.05, hi - 0.05)
            plot.addItem(text, ignoreBounds=True)
            self.band_labels.append(text)

    # ------------------------------------------------------------------ for tests
    def summary(self) -> dict:
        return dict(self._summary)
