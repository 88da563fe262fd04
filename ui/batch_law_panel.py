"""Tokens per step: published global batch sizes (tokens) against their runs' training compute (6 N D), the
DeepSeek LLM batch-size law B_opt = 0.292 C^0.3271 as a line, and the current training scenario's batch at the
compute of a Chinchilla-optimal run of its model (model/formulas/batch_law.py).
"""

from __future__ import annotations

import numpy as np
from PySide6 import QtWidgets

from trinity_desktop.model.formulas.batch_law import optimal_batch_tokens, published_points, scenario_batch
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui import theme
from trinity_desktop.ui.batch_readout import batch_sentence
from trinity_desktop.ui.batch_readout import fmt_tokens as _tokens
from trinity_desktop.ui.point_labels import PointLabels
from trinity_desktop.ui.scale_chart import ScaleChart, set_log_data


class BatchLawPanel(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("BatchLawPanel")
        self.setAccessibleName("Tokens per step against training compute")
        self.chart = ScaleChart(
            "BatchLawChart", "Global batch against training compute",
            "Log-log: training compute (6 N D FLOPs) across, global batch in tokens up. Markers: published runs; line: "
            "the DeepSeek LLM law; the star: the current training scenario, the ring on the line: the law's batch at its compute.",
            left="tokens/step", bottom="training compute C = 6 N D (FLOPs)", log_x=True, log_y=True, sci_x=True)
        self.law = self.chart.line(theme.COMPONENT_COLORS["gradients"], 2.5, "law: 0.292 C<sup>0.3271</sup>", dash=True)
        self.runs = self.chart.points(theme.RESOURCE_COLORS["bandwidth"], "o", "published runs")
        self.mine = self.chart.points(theme.RESOURCE_COLORS["compute"], "star", "your run", 20)
        self.optimum = self.chart.points(theme.COMPONENT_COLORS["gradients"], "o", "", 13)   # the law at your compute
        self.labels = PointLabels(self.chart.plot, 2)   # the two values the title compares, on the chart
        self.current = None
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chart)

    def update_results(self, results: Results) -> None:
        sc = results.scenario
        pts = published_points()
        cs = [p.compute for p in pts]
        hover = [(p.compute, p.run.batch_tokens, f"{p.run.model} ({p.run.year})\n{_tokens(p.run.batch_tokens)} tokens "
                  f"per step, C = {p.compute:.2g} FLOPs\nlaw's optimum {_tokens(p.optimal_tokens)} ({p.ratio:.2f}×)\n"
                  f"{p.run.where}") for p in pts]
        set_log_data(self.runs, cs, [p.run.batch_tokens for p in pts])
        ys = [p.run.batch_tokens for p in pts]
        if sc.kind == "train":
            self.current = scenario_batch(sc.global_batch, sc.seq_len, results.params_active)
            cs.append(self.current.compute)
        c_law = np.logspace(np.log10(min(cs)) - 0.5, np.log10(max(cs)) + 0.5, 40)
        if sc.kind == "train":
            ys += [self.current.batch_tokens, self.current.optimal_tokens]
            set_log_data(self.mine, [self.current.compute], [self.current.batch_tokens])
            set_log_data(self.optimum, [self.current.compute], [self.current.optimal_tokens])
            x = float(np.log10(self.current.compute))
            self.labels.set([(x, float(np.log10(self.current.batch_tokens)),
                              f"your run {_tokens(self.current.batch_tokens)}", True),
                             (x, float(np.log10(self.current.optimal_tokens)),
                              f"optimum {_tokens(self.current.optimal_tokens)}", False)],
                            lines=[tuple(zip(np.log10(c_law), np.log10(optimal_batch_tokens(c_law)), strict=True))])
            hover.append((self.current.compute, self.current.batch_tokens,
                          f"your run: {sc.global_batch} × {sc.seq_len} = {_tokens(self.current.batch_tokens)} tokens\n"
                          f"C = 6 N × 20 N = {self.current.compute:.2g} FLOPs"))
            self.chart.set_title(batch_sentence(self.current))
        else:
            self.current = None
            self.mine.setData([], [])
            self.optimum.setData([], [])
            self.labels.set([])
            v3, l1 = pts[-1], pts[0]
            self.chart.set_title(f"Published batches grew {v3.run.batch_tokens / l1.run.batch_tokens:.1f}× from "
                                 f"{l1.run.model} to {v3.run.model}; the law predicts "
                                 f"{v3.optimal_tokens / l1.optimal_tokens:.1f}×")
        set_log_data(self.law, c_law, optimal_batch_tokens(c_law))
        self.chart.set_hover_points(hover)
        self.chart.fit_range(list(c_law), ys + list(optimal_batch_tokens(c_law[[0, -1]])), pad=0.06)
        self.chart.caption.setText("Dots: LLaMA, GPT-3, Llama 2, Llama 3, DeepSeek-V2/V3. Line: DeepSeek LLM's "
                                   "fit. Your run sits at a Chinchilla-optimal D = 20 N.")
        self.chart.caption.setToolTip(
            "N = active parameters. DeepSeek-V3: 15,360 × 4,096 = 62.9M tokens; DeepSeek-V2: 9,216 × 4K. The law is "
            "fitted on C = M D (M = non-embedding FLOPs per token); 6 N stands in for M here. A scenario has no run "
            "length, so its compute is that of a Chinchilla-optimal run, D = 20 N tokens.")
