"""What the flow draws, made once: a scenario's stages and their phases, cached and laid out ahead in a worker thread for the
slides of a deck being presented, and the bars' brushes, one per role, highlight and theme.

A 16,384-GPU interleaved step (the planner deck's fastest layout: PP 32 x 4 virtual stages) has 62,483 stages,
seconds of work for `model.views.stages.stages`; `prefetch` lays it out while the speaker is still on the slides
before, so the slide that shows it paints at once. `timeline` returns the cached (stages, phases), waits for a
layout in progress, or computes them itself; the last CACHE_SIZE scenarios are kept, up to MAX_CACHED_BARS bars.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Iterable
from concurrent.futures import Future

from PySide6 import QtCore, QtGui

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.phases import Phase, phases
from trinity_desktop.model.views.stages import Stage, stages
from trinity_desktop.ui import theme
from trinity_desktop.ui.flow_readout import ROLE_COLORS

CACHE_SIZE = 8
MAX_CACHED_BARS = 200_000   # about 55 MB of bars: the planner deck's 16,384-GPU steps and a few small ones
FADED_ALPHA = 55        # bars outside the highlighted phase, on a light plot
FADED_ALPHA_DARK = 130  # on a dark one: at 55 a faded blue was #18313e on #1e1e1e, gone on a projector

_lock = threading.Lock()
_cache: list[tuple[Scenario, Future]] = []   # scenarios are not hashable: a short list, compared by ==
_work: queue.Queue = queue.Queue()
_worker: threading.Thread | None = None


def _claim(scenario: Scenario) -> tuple[Future, bool]:
    """The future of `scenario`'s stages, and True when nobody computes them yet (the caller must)."""
    with _lock:
        for known, future in _cache:
            if known == scenario:
                return future, False
        future = Future()
        _cache.append((scenario, future))
        _bound()
        return future, True


def _bound() -> None:
    """Keep the last CACHE_SIZE scenarios, newest first, while their laid-out bars stay under MAX_CACHED_BARS
    (one in progress counts none; the newest is always kept). The caller holds the lock."""
    kept, bars = [], 0
    for known, future in reversed(_cache[-CACHE_SIZE:]):
        done = future.done() and future.exception() is None
        n = len(future.result()[0]) if done else 0
        if kept and bars + n > MAX_CACHED_BARS:
            continue
        kept.append((known, future))
        bars += n
    _cache[:] = kept[::-1]


def _lay_out(future: Future, scenario: Scenario, results: Results | None) -> None:
    try:
        items = stages(scenario, results)
        future.set_result((items, phases(items, scenario.kind)))
        with _lock:
            _bound()   # its size is known now
    except Exception as exc:   # noqa: BLE001 (whoever waits gets it: the panel explains a bad scenario)
        with _lock:   # ... and it is not kept: the next call tries again
            _cache[:] = [(known, f) for known, f in _cache if f is not future]
        future.set_exception(exc)


def timeline(scenario: Scenario, results: Results | None = None) -> tuple[tuple[Stage, ...], tuple[Phase, ...]]:
    """(`stages(scenario, results)`, their `phases`), laid out once per scenario."""
    future, mine = _claim(scenario)
    if mine:
        _lay_out(future, scenario, results)
    return future.result()


def _serve() -> None:
    while True:
        future, scenario = _work.get()
        _lay_out(future, scenario, None)


def prefetch(scenarios: Iterable[Scenario]) -> None:
    """Lay out the training steps among `scenarios` in the worker thread, in order (a daemon: quitting never
    waits for it). Inference requests are a few hundred bars and are left to `timeline`."""
    global _worker
    for scenario in scenarios:
        if scenario.kind != "train":
            continue
        future, mine = _claim(scenario)
        if mine:
            _work.put((future, scenario))
    with _lock:
        if _worker is None:
            _worker = threading.Thread(target=_serve, name="flow-timeline", daemon=True)
            _worker.start()


@functools.lru_cache(maxsize=256)
def bar_brush(role: str, faded: bool = False, theme_name: str = "") -> QtGui.QBrush:
    """The bar brush of a role (faded outside the highlight); one per (role, faded, theme), shared by every bar."""
    color = QtGui.QColor(theme.MUTED_COLOR if role == "idle" else ROLE_COLORS.get(role, theme.FALLBACK_COLOR))
    if faded:
        plot_bg = theme.THEMES.get(theme_name, theme.THEMES["light"])["plot_bg"]
        color.setAlpha(FADED_ALPHA if theme.luminance(QtGui.QColor(plot_bg)) > 0.5 else FADED_ALPHA_DARK)
    if role == "idle":
        return QtGui.QBrush(color, QtCore.Qt.BrushStyle.BDiagPattern)
    return QtGui.QBrush(color)
