"""Uncertainty bands on screen: computed lazily off the UI thread, and the drawing helpers panels use.

`BandService` owns the current scenario's `Uncertainty` (model/search/uncertainty.py: 4,096 Sobol samples with
Sobol indices in one evaluate_grid call). An edit repaints every panel from the point estimate first; the
service then computes the bands on one worker thread, DEBOUNCE_MS after the last edit of a burst, and emits
`bandsChanged` when they are ready, so the edit->repaint budget is untouched (stale bands are hidden at once).
Edits that arrive while a computation runs are coalesced: only the latest scenario is computed next. The last few results are kept, so undo/redo and switching back are instant.
`set_enabled(False)` (View > Uncertainty bands) hides every band: it emits None and computes nothing.

Drawing helpers: `Whisker` (a p05-p95 error bar), `FillBand` (a shaded region between two curves) and
`range_text` (the status bar's range). Colours come from ui/theme.py.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.search.uncertainty import DEFAULT_SAMPLES, Uncertainty, propagate
from trinity_desktop.ui import theme, worker_relay
from trinity_desktop.ui.panel_protocol import BandsView
from trinity_desktop.ui.units import fmt_seconds

CACHE_SIZE = 16
DEBOUNCE_MS = 150  # a burst of edits (dragging a spin box, replaying slides) computes its last scenario only
BAND_ALPHA = 60  # of 255: a band reads as a range, never hides what is under it


class BandService(QtCore.QObject):
    bandsChanged = QtCore.Signal(object)  # Uncertainty of the latest scenario, or None (hidden / no result)

    def __init__(self, samples: int = DEFAULT_SAMPLES, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.samples = samples
        self.enabled = True
        self._latest: Scenario | None = None
        self._cache: list[tuple[Scenario, Uncertainty | None]] = []
        self._busy = False
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bands")
        worker_relay.install()   # the worker hands its result over through it (never emits on this service)
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start_latest)

    @property
    def current(self) -> Uncertainty | None:
        """The bands of the latest scenario if computed (and bands are shown), else None."""
        if not self.enabled or self._latest is None:
            return None
        return self._cached(self._latest)

    def _cached(self, sc: Scenario) -> Uncertainty | None:
        for cached_sc, u in self._cache:
            if cached_sc == sc:
                return u
        return None

    def request(self, scenario: Scenario) -> None:
        """Bands for `scenario` are wanted: emit them now if known, else compute them off the UI thread."""
        self._latest = scenario
        if not self.enabled:
            return
        if any(sc == scenario for sc, _ in self._cache):
            self.bandsChanged.emit(self._cached(scenario))
            return
        self.bandsChanged.emit(None)  # the shown bands belong to the previous scenario: hide them meanwhile
        self._timer.start()

    def _start_latest(self) -> None:
        if not self._busy and self.enabled and self._latest is not None:
            self._start(self._latest)

    def _start(self, scenario: Scenario) -> None:
        if self._closed:  # the app is quitting
            return
        self._busy = True
        self._executor.submit(self._work, scenario)

    def _work(self, scenario: Scenario) -> None:
        try:
            u = propagate(scenario, samples=self.samples)
        except (ValueError, ArithmeticError):  # ValidationError is a ValueError; the bands stay hidden
            u = None
        worker_relay.post(self._on_computed, scenario, u)   # dropped if the service is gone by then

    def _on_computed(self, scenario: Scenario, u: Uncertainty | None) -> None:
        self._busy = False
        self._cache = [(scenario, u)] + [(s, v) for s, v in self._cache if s != scenario][:CACHE_SIZE - 1]
        if self._latest is not None and self._latest != scenario and self.enabled:
            if not self._timer.isActive() and not any(sc == self._latest for sc, _ in self._cache):
                self._start(self._latest)  # edits arrived meanwhile: compute the newest only
            return
        if self.enabled and scenario == self._latest:
            self.bandsChanged.emit(u)

    def set_enabled(self, on: bool) -> None:
        self.enabled = bool(on)
        if not self.enabled:
            self.bandsChanged.emit(None)
        elif self._latest is not None:
            self.request(self._latest)

    def shutdown(self, wait: bool = True) -> None:
        self._closed = True
        self._timer.stop()
        self._executor.shutdown(wait=wait, cancel_futures=True)


def band_color(name: str = "compute", alpha: int = BAND_ALPHA) -> QtGui.QColor:
    """A resource's colour (theme.RESOURCE_COLORS key) or a '#rrggbb' theme colour, made translucent."""
    color = QtGui.QColor(theme.RESOURCE_COLORS.get(name) or (name if name.startswith("#") else theme.FALLBACK_COLOR))
    color.setAlpha(alpha)
    return color


class Whisker:
    """A p05-p95 error bar drawn on a plot: vertical (`horizontal=False`) at x, or horizontal at y."""

    def __init__(self, plot: pg.PlotItem, horizontal: bool = False, color: str | None = None, beam: float = 0.2):
        self.horizontal = horizontal
        self.item = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=beam,
                                    pen=pg.mkPen(color or theme.plot_foreground(), width=2))
        self.item.setZValue(50)
        plot.addItem(self.item, ignoreBounds=True)

    def set(self, at: float, centre: float, low: float, high: float) -> None:
        low, high = min(low, centre), max(high, centre)
        if self.horizontal:
            self.item.setData(x=np.array([centre]), y=np.array([at]), left=np.array([centre - low]),
                              right=np.array([high - centre]), top=None, bottom=None)
        else:
            self.item.setData(x=np.array([at]), y=np.array([centre]), bottom=np.array([centre - low]),
                              top=np.array([high - centre]), left=None, right=None)
        self.item.setVisible(True)

    def clear(self) -> None:
        self.item.setVisible(False)


class FillBand:
    """A shaded region between a low and a high curve (x shared), e.g. the roofline's attainable range."""

    def __init__(self, plot: pg.PlotItem, color: str = "compute"):
        self.low = pg.PlotCurveItem([], [])  # curves with a path: FillBetweenItem needs them
        self.high = pg.PlotCurveItem([], [])
        self.fill = pg.FillBetweenItem(self.low, self.high)
        self.fill.setZValue(-5)
        self.set_color(color)
        for item in (self.low, self.high, self.fill):
            plot.addItem(item, ignoreBounds=True)

    def set_color(self, color: str) -> None:
        """Edges at twice the fill's opacity; `color` as `band_color` takes it."""
        edge = pg.mkPen(band_color(color, 2 * BAND_ALPHA), width=1)
        self.low.setPen(edge)
        self.high.setPen(edge)
        self.fill.setBrush(pg.mkBrush(band_color(color)))

    def set(self, x, low, high) -> None:
        self.low.setData(np.asarray(x, float), np.asarray(low, float))
        self.high.setData(np.asarray(x, float), np.asarray(high, float))
        for item in (self.low, self.high, self.fill):
            item.setVisible(True)

    def clear(self) -> None:
        for item in (self.low, self.high, self.fill):
            item.setVisible(False)


def range_text(u: Uncertainty | None) -> str:
    """The status bar's range: '15.2 s – 21.6 s (p05–p95; compute_efficiency matters most)'."""
    if u is None:
        return ""
    band = u.bands[u.headline]
    what = "step time" if u.headline == "time_per_step_s" else "time per output token"
    top = max(u.sensitivity, key=lambda k: u.sensitivity[k][1]) if u.sensitivity else ""
    most = f"; {u.labels.get(top, top).lower()} matters most" if top else ""
    return f"{what} {fmt_seconds(band.p05)} – {fmt_seconds(band.p95)} (p05–p95{most})"


def install(window) -> BandService:
    """Give a MainWindow its bands: the service fed by the store, a status-bar range, a View-menu toggle
    ("Uncertainty bands", on by default) and `set_bands(u)` on every panel that has it."""
    from PySide6 import QtWidgets

    service = BandService(parent=window)
    label = QtWidgets.QLabel("")
    label.setObjectName("BandStatus")
    label.setAccessibleName("Uncertainty range")
    label.setToolTip("p05–p95 of the headline time over the stated assumptions' ranges, "
                     "and the assumption whose range moves it most (total Sobol index)")
    window.statusBar().addPermanentWidget(label)
    action = QtGui.QAction("&Uncertainty bands", window)
    action.setCheckable(True)
    action.setChecked(True)
    action.setToolTip("Show p05–p95 bands computed from the assumption ranges; off for a clean slide")
    action.toggled.connect(service.set_enabled)
    window.view_menu.addAction(action)

    def changed(results) -> None:
        label.setText("")  # the old range is stale until the new one arrives
        service.request(results.scenario)

    service.bandsChanged.connect(lambda u: label.setText(range_text(u)))
    def deliver(u) -> None:  # to the panels built so far; a panel built later gets `current` (main window)
        for panel in window.panels.built().values():
            if isinstance(panel, BandsView):
                panel.set_bands(u)

    service.bandsChanged.connect(deliver)
    window.store.changed.connect(changed)
    executor = service._executor  # a plain Python object: safe to reach once the window's C++ side is gone
    window.destroyed.connect(lambda *_: executor.shutdown(wait=False, cancel_futures=True))
    window.bands_action = action
    service.request(window.store.scenario)
    return service


def matches(u: Uncertainty | None, results) -> bool:
    """Whether bands `u` are those of the scenario of `results` (its headline point estimate is theirs)."""
    if u is None or results is None:
        return False
    value = results.time_total if results.kind == "train" else results.infer["time_per_output_token_s"]
    return math.isclose(u.bands[u.headline].point, value, rel_tol=1e-9)


def headline_band(u: Uncertainty | None, kind: str):
    """The band of the time a panel shows for a workload kind: step time, TTFT (prefill) or time per token."""
    if u is None:
        return None
    key = {"train": "time_per_step_s", "prefill": "ttft_s", "decode": "time_per_output_token_s"}[kind]
    return u.bands.get(key)


def attainable_range(intensity, peak: float, bandwidth: float, low, high) -> tuple[np.ndarray, np.ndarray]:
    """The roofline's attainable FLOP/s, min(peak x compute_efficiency, bandwidth x hbm_efficiency x I), at the
    low and at the high ends of the efficiency ranges (`low`, `high`: Efficiency, from
    model.uncertainty.efficiency_extremes): the band a roofline panel shades between the two curves."""
    i = np.asarray(intensity, dtype=float)
    lo = np.minimum(peak * low.compute, bandwidth * low.hbm * i)
    hi = np.minimum(peak * high.compute, bandwidth * high.hbm * i)
    return lo, hi
