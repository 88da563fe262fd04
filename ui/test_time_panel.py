"""Test-time compute at equal accuracy: GPU-seconds per query against reasoning tokens per sample for "small model +
more samples" and "larger model + fewer" reaching the same AIME 2024 accuracy (DeepSeek-R1 Table 5 rows), costed
with the app's decode model on the scenario's hardware (model/views/test_time.py); the crossover is marked.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.test_time import compare
from trinity_desktop.ui import theme
from trinity_desktop.ui.scale_chart import ScaleChart, combo, set_log_data
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds

TARGETS = (("70% (AIME 2024)", 0.70), ("80% (AIME 2024)", 0.80))


def _short(model: str) -> str:
    return model.replace("DeepSeek-R1-Distill-", "R1-")


class TestTimePanel(QtWidgets.QWidget):
    __test__ = False   # not a pytest class

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("TestTimePanel")
        self.setAccessibleName("Test-time compute at equal accuracy")
        self.target = 0.70
        self.hardware = None
        self.comparison = None
        self.target_combo = combo("Target accuracy", "Accuracy both options must reach (DeepSeek-R1 Table 5)",
                                  TARGETS, self._set_target, 12)
        self.chart = ScaleChart(
            "TestTimeChart", "Cost per query against reasoning tokens",
            "Log-log: reasoning tokens per sample across, GPU-seconds per query up, for the small model with more "
            "samples and the larger model with fewer; the vertical line is where they cost the same.",
            left="GPU-s per query", bottom="reasoning tokens per sample (log)", log_x=True, log_y=True,
            controls=[("Target", self.target_combo)], legend_columns=2)
        self.small = self.chart.line(theme.RESOURCE_COLORS["memory"], 3.0, "small + more samples", symbol="o")
        self.large = self.chart.line(theme.RESOURCE_COLORS["compute"], 3.0, "larger + fewer", symbol="s")
        self.cross = pg.InfiniteLine(angle=90, movable=False,
                                     pen=pg.mkPen(theme.plot_foreground(), width=1.5, style=QtCore.Qt.PenStyle.DashLine))
        self.chart.plot.addItem(self.cross, ignoreBounds=True)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.chart)

    def _set_target(self, value) -> None:
        self.target = float(value)
        self.redraw()

    def update_results(self, results: Results) -> None:
        self.hardware = results.scenario.hardware
        self.redraw()

    def redraw(self) -> None:
        if self.hardware is None:
            return
        c = compare(self.hardware, self.target)
        self.comparison = c
        a, b = c.small, c.large
        names = {id(a): f"{_short(a.row.model)} × {a.row.samples} ({a.row.accuracy:.1%})",
                 id(b): f"{_short(b.row.model)} × {b.row.samples} ({b.row.accuracy:.1%})"}
        for item, opt in ((self.small, a), (self.large, b)):
            ok = opt.gpus > 0
            set_log_data(item, opt.tokens[ok], opt.gpu_seconds[ok])
        self.chart.show_in_legend([(self.small, names[id(a)]), (self.large, names[id(b)])])
        self.cross.setVisible(c.crossover_tokens > 0)
        if c.crossover_tokens > 0:
            self.cross.setValue(math.log10(c.crossover_tokens))
        hover = []
        for opt in (a, b):
            for t, g, s, n, kv in zip(opt.tokens, opt.gpu_seconds, opt.latency_s, opt.gpus, opt.kv_end_bytes, strict=True):
                if n > 0:
                    hover.append((t, g, f"{names[id(opt)]}\n{t:,.0f} tokens per sample on {n:.0f} GPU(s)\n"
                                  f"{g:,.0f} GPU-s per query, latency {fmt_seconds(s)}\nKV at the end {fmt_bytes(kv)}"))
        self.chart.set_hover_points(hover)
        ok_a, ok_b = a.gpus > 0, b.gpus > 0
        self.chart.fit_range(list(a.tokens), list(a.gpu_seconds[ok_a]) + list(b.gpu_seconds[ok_b]), pad=0.08)
        if c.crossover_tokens > 0:
            winner = "small model with more samples" if c.small_wins_below else "larger model"
            self.chart.set_title(f"At {self.target:.0%} on AIME 2024 the {winner} costs less up to "
                                 f"{c.crossover_tokens:,.0f} tokens per sample on {self.hardware.name}")
        else:
            cheaper = "small model with more samples" if c.small_wins_below else "larger model"
            self.chart.set_title(f"At {self.target:.0%} on AIME 2024 the {cheaper} costs less at every length "
                                 f"on {self.hardware.name}")
        self.chart.caption.setText(
            f"Accuracy: DeepSeek-R1 Table 5. Cost: this app's decode model on the fewest GPUs that hold weights + KV; "
            f"the small option's KV reaches {fmt_bytes(a.kv_end_bytes[-1])} at {a.tokens[-1]:,.0f} tokens.")
        self.chart.caption.setToolTip(
            "pass@1 = one sample, cons@64 = majority vote of 64 samples. The samples decode as one batch after a "
            "256-token prompt. Snell et al. 2024: test-time compute can beat a 14× larger model, FLOPs-matched.")
