"""The GUI with bad or damaged input (issue 16, items 12, 13, 15, 17, 20): it never crashes and never raises."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6 import QtCore

from trinity_desktop.layout_state import check_layout
from trinity_desktop.main_window import LAYOUT_VERSION

# A single-byte flip of the default layout that crashes QMainWindow.restoreState (a segfault, found by flipping
# bytes with masks 0xff, 0x80, 0x10, 0x01 and restoring each in a subprocess): the first dock-area index.
QT_CRASHERS = ((13, 0xFF),)


@pytest.fixture
def window(qtbot):
    from trinity_desktop.app import build_window

    QtCore.QCoreApplication.instance().setProperty("trinity_quiet", True)
    win = build_window(None)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.talk.presenter.stop()


def _docks(window) -> list[str]:
    return [d.objectName() for d in window.docks.values()]


def _state(window) -> bytes:
    return bytes(window.saveState(LAYOUT_VERSION))


# --- item 12: a damaged saved layout ---------------------------------------------------------------------

def test_layouts_qt_writes_pass_the_check(window, qtbot):
    assert check_layout(_state(window), LAYOUT_VERSION, _docks(window)) == ""
    window.arrange(["roofline", "breakdown", "heatmap"])
    assert check_layout(_state(window), LAYOUT_VERSION, _docks(window)) == ""
    window.tabifyDockWidget(window.docks["roofline"], window.docks["heatmap"])
    assert check_layout(_state(window), LAYOUT_VERSION, _docks(window)) == ""


@pytest.mark.parametrize("at, mask", QT_CRASHERS)
def test_flips_that_crash_qt_are_refused(window, at, mask):
    state = bytearray(window._default_state)
    assert len(state) > at
    state[at] ^= mask
    assert "damaged" in check_layout(bytes(state), LAYOUT_VERSION, _docks(window))


@pytest.mark.parametrize("mangle, words", [
    (lambda s: s[:-1], "ends early"),
    (lambda s: s + b"\0", "after its end"),
    (lambda s: s.replace("dock_roofline".encode("utf-16-be"), "dock_rooflinX".encode("utf-16-be")), "unknown dock"),
    (lambda s: s.replace("dock_outcomes".encode("utf-16-be"), "dock_roofline".encode("utf-16-be")), "twice"),
    (lambda s: s[:4] + (7).to_bytes(4, "big") + s[8:], "version 7"),
    (lambda s: b"", "empty"),
])
def test_damaged_layouts_are_refused_with_a_reason(window, mangle, words):
    assert words in check_layout(mangle(_state(window)), LAYOUT_VERSION, _docks(window))


def test_slide_with_a_damaged_layout_shows_the_default_layout_and_says_so(window, qtbot):
    from trinity_desktop.deck import Slide

    state = bytearray(window._default_state)
    state[13] ^= 0xFF
    slide = Slide("Broken", "", window.store.scenario, ("dock_breakdown",),
                  layout=base64.b64encode(bytes(state)).decode("ascii"))
    window.show_slide_layout(slide)  # used to crash the process in restoreState
    message = window.statusBar().currentMessage()
    assert "Broken" in message and "default layout" in message and "damaged" in message
    assert window.docks["roofline"].isVisibleTo(window) and window.docks["heatmap"].isVisibleTo(window)


def test_saved_layout_in_settings_is_checked(tmp_path, qtbot):
    from trinity_desktop.app import build_window

    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    first = build_window(settings)
    qtbot.addWidget(first)
    state = bytearray(first._default_state)
    state[13] ^= 0xFF
    settings.setValue("window/state", QtCore.QByteArray(bytes(state)))
    settings.setValue("window/layout_version", LAYOUT_VERSION)
    settings.setValue("window/geometry", "not a geometry")
    second = build_window(settings)
    qtbot.addWidget(second)
    assert not second._restored
    assert "saved window layout" in second.statusBar().currentMessage()


def test_random_single_byte_flips_never_crash(tmp_path):
    script = Path(__file__).with_name("layout_flips.py")
    out = subprocess.run([sys.executable, str(script), "16", "60"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]  # a segfault is -11
    restored, refused = (int(w) for w in out.stdout.split()[1::2])
    assert restored + refused == 60 and restored > 0 and refused > 0
