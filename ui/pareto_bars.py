"""The planner's Pareto error bars: the p05–p95 range of each layout's time over the assumption ranges.

After a search, the front's scenarios go to model.uncertainty.time_bands (FRONT_SAMPLES Sobol samples, one
evaluate_grid call per group of layouts that differ only in grid axes) on the planner's worker thread, never
on the GUI thread. Training fronts get a vertical bar on the step time (log axis); serving fronts a
horizontal bar on the time per output token. The bars are drawn under the dots in the theme's plot
foreground and only while View > Uncertainty bands is on (`set_enabled`); a newer search makes the bars
of the previous front stale (a generation number, as the planner's own searches).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore

from trinity_desktop.model.search.uncertainty import FRONT_SAMPLES, Band, time_bands
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_seconds

BEAM_SHARE = 0.012  # a bar's end caps: this share of the plot's span across the bar


class _Signals(QtCore.QObject):
    computed = QtCore.Signal(int, object)  # (generation, list[Band] | str error)


class _Compute(QtCore.QRunnable):
    def __init__(self, generation: int, scenarios: list, set_name: str, samples: int, signals: _Signals, current):
        super().__init__()
        self.args = generation, scenarios, set_name, samples
        self.signals, self.current = signals, current

    def run(self):
        generation, scenarios, set_name, samples = self.args
        if generation != self.current():
            return  # a newer front was drawn meanwhile
        try:
            out = time_bands(scenarios, samples=samples, set_name=set_name)
        except (ValueError, ArithmeticError) as exc:  # ValidationError is a ValueError: no bars, said in the hover
            out = str(exc)
        try:
            self.signals.computed.emit(generation, out)
        except RuntimeError:  # the panel was deleted meanwhile
            pass


class ParetoBars(QtCore.QObject):
    """Error bars on a planner's front plot; `ready` is emitted when a front's bars arrive."""

    ready = QtCore.Signal()

    def __init__(self, plot: pg.PlotItem, pool: QtCore.QThreadPool, parent: QtCore.QObject | None = None,
                 samples: int = FRONT_SAMPLES):
        super().__init__(parent)
        self.pool, self.samples = pool, samples
        self.enabled = False  # until the bands toggle says on (set_bands with bands)
        self.set_name = "default"
        self.bands: list[Band] | None = None
        self._generation = 0
        self._scenarios: list = []
        self.training = True
        self._signals = _Signals(self)
        self._signals.computed.connect(self._computed)
        self.item = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0))
        self.item.setZValue(0.5)  # over the front's line, under its dots
        self.item.setVisible(False)
        plot.addItem(self.item, ignoreBounds=True)
        self.plot = plot

    def request(self, scenarios: list) -> None:
        """Compute the bars of a newly drawn front (its candidates' scenarios) on the worker thread."""
        self._generation += 1
        self._scenarios = list(scenarios)
        self.training = bool(self._scenarios) and self._scenarios[0].kind == "train"
        self.bands = None
        self.item.setVisible(False)
        if self._scenarios:
            self.pool.start(_Compute(self._generation, self._scenarios, self.set_name, self.samples, self._signals,
                                     lambda: self._generation))

    def set_enabled(self, on: bool, set_name: str | None = None) -> None:
        """Bands on or off; a different assumption set recomputes the front's bars."""
        self.enabled = bool(on)
        if set_name is not None and set_name != self.set_name:
            self.set_name = set_name
            if self._scenarios:
                self.request(self._scenarios)

    def _computed(self, generation: int, out) -> None:
        if generation != self._generation:
            return
        self.bands = out if isinstance(out, list) else None
        self.ready.emit()

    def computed(self, xy: np.ndarray) -> bool:
        """Whether the bars of the dots at `xy` are known (shown or not)."""
        return self.bands is not None and len(self.bands) == len(xy) > 0

    def shown(self) -> bool:
        return self.enabled and self.item.isVisible()

    def draw(self, xy: np.ndarray, log_y: bool) -> None:
        """Bars for the dots at `xy` (data units: training (GB, step s); serving (TPOT ms, tokens/s per GPU)),
        when bands are on."""
        if not self.enabled or not self.computed(xy):
            self.item.setVisible(False)
            return
        lo, hi = self.ranges()
        (x0, x1), (y0, y1) = self.plot.getViewBox().viewRange()
        pen = pg.mkPen(theme.plot_foreground(), width=1.5)
        if self.training:
            lo, hi = (np.log10(lo), np.log10(hi)) if log_y else (lo, hi)
            self.item.setData(x=xy[:, 0], y=(lo + hi) / 2, height=hi - lo, width=None, pen=pen,
                              beam=BEAM_SHARE * abs(x1 - x0))
        else:
            lo, hi = lo * 1e3, hi * 1e3
            self.item.setData(x=(lo + hi) / 2, y=xy[:, 1], width=hi - lo, height=None, pen=pen,
                              beam=BEAM_SHARE * abs(y1 - y0))
        self.item.setVisible(True)

    def ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """(p05, p95) of each dot's time in seconds."""
        return (np.array([b.p05 for b in self.bands], float), np.array([b.p95 for b in self.bands], float))

    def extent(self, xy: np.ndarray) -> np.ndarray:
        """Points (data units, as the dots at `xy`) the front's view includes so that no bar is cut; kept while
        the bars are hidden, so that toggling them (or an edit hiding them meanwhile) never moves the view."""
        if not self.computed(xy):
            return np.zeros((0, 2))
        lo, hi = self.ranges()
        if self.training:
            return np.vstack([np.column_stack([xy[:, 0], lo]), np.column_stack([xy[:, 0], hi])])
        return np.vstack([np.column_stack([lo * 1e3, xy[:, 1]]), np.column_stack([hi * 1e3, xy[:, 1]])])

    def text(self, i: int) -> str:
        """The hover's line for dot i while the bars are shown, or ''."""
        if not self.shown() or not 0 <= i < len(self.bands):
            return ""
        b = self.bands[i]
        what = "step time" if self.training else "time per output token"
        return (f"{what} p05–p95 {fmt_seconds(b.p05)} – {fmt_seconds(b.p95)} over the assumption ranges "
                f"({self.samples} samples, {self.set_name} set)")

