"""The event loop never stalls and nothing escapes it (issue 26, "Event loop"): every dock floated at 200x50
and at 4000x3000 and resized rapidly 500 times while a watchdog timer must keep firing; an exception a panel
raises in the running app is shown in place."""

from __future__ import annotations

import random
import sys
import time

import pytest
from PySide6 import QtCore, QtWidgets

from trinity_desktop.ui.panel_problem import guard_event_loop, problem_text

RAPID_RESIZES = 500
WATCHDOG_MS = 20


@pytest.fixture(scope="module")
def window():
    from trinity_desktop.app import build_window

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    app.setProperty("trinity_quiet", True)
    win = build_window(None)
    win.resize(1366, 768)
    win.show()
    for _ in range(5):
        app.processEvents()
    yield win
    win.talk.presenter.stop()
    win.stop_background_work()
    win.close()
    win.deleteLater()
    app.processEvents()


class Watchdog:
    """Counts the ticks of a 20 ms timer: a layout or paint loop that never returns to the event loop's
    timer processing (a livelock) stops the count."""

    def __init__(self):
        self.ticks = 0
        self.timer = QtCore.QTimer()
        self.timer.setInterval(WATCHDOG_MS)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self):
        self.ticks += 1


SETTLE_S = 4.0   # a first paint at 4000x3000 offscreen takes about 0.5 s on a loaded machine


def _settled(watchdog: Watchdog, what: str) -> None:
    """Run the event loop until it is idle (ten passes of under 5 ms in a row) and the watchdog has fired
    three times since; fail if that takes longer than SETTLE_S (a loop that keeps re-posting its own work)."""
    start, deadline, quiet = watchdog.ticks, time.monotonic() + SETTLE_S, 0
    while quiet < 10 or watchdog.ticks - start < 3:
        assert time.monotonic() < deadline, (f"{what}: the event loop did not settle in {SETTLE_S:g} s "
                                             f"(watchdog fired {watchdog.ticks - start} times)")
        began = time.monotonic()
        QtWidgets.QApplication.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 20)
        quiet = quiet + 1 if time.monotonic() - began < 0.005 else 0
        time.sleep(0.003)


@pytest.mark.long(seconds=40)
def test_every_dock_floated_tiny_and_huge_and_resized_rapidly(window, qtbot):
    rng = random.Random(26)
    watchdog = Watchdog()
    try:
        for name, dock in window.docks.items():
            window.panels[name]  # built, as when first shown
            dock.show()
            dock.setFloating(True)
            for size in ((200, 50), (4000, 3000)):
                dock.resize(*size)
                _settled(watchdog, f"{name} at {size[0]}x{size[1]}")
            for i in range(RAPID_RESIZES):
                dock.resize(rng.randint(120, 2400), rng.randint(40, 1600))
                if i % 100 == 0:
                    QtWidgets.QApplication.processEvents()
            _settled(watchdog, f"{name} after {RAPID_RESIZES} resizes")
            dock.setFloating(False)
    finally:
        watchdog.timer.stop()


def test_an_exception_in_a_panel_slot_is_shown_in_place(window, qtbot, fail_on_escaped_exception):
    panel = window.panels["breakdown"]
    window.docks["breakdown"].show()
    previous = sys.excepthook
    guard_event_loop(window)   # as app.run installs it
    try:
        def broken_slot(self):
            raise RuntimeError("a slot went wrong")
        panel.broken_slot = broken_slot.__get__(panel)   # a bound method: its frame's self is the panel

        QtCore.QTimer.singleShot(0, panel.broken_slot)
        qtbot.waitUntil(lambda: "a slot went wrong" in problem_text(panel), timeout=3000)
    finally:
        sys.excepthook = previous
    assert "RuntimeError" in problem_text(panel) and "\n" not in problem_text(panel)
    assert fail_on_escaped_exception == []
