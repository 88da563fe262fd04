"""Bands in the main window: the status-bar range, the View toggle, the efficiency set in the controls."""

from __future__ import annotations

import pytest
from PySide6 import QtCore

from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.model.inputs.assumptions import write_calibrated
from trinity_desktop.store import ScenarioStore


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("TRINITY_DESKTOP_HOME", str(tmp_path))
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.bands.shutdown()


def _range_label(win):
    from PySide6 import QtWidgets

    return win.statusBar().findChild(QtWidgets.QLabel, "BandStatus")


def test_status_bar_shows_the_range_and_the_view_toggle_hides_it(window, qtbot):
    label = _range_label(window)
    qtbot.waitUntil(lambda: "p05–p95" in label.text(), timeout=120_000)
    band = window.bands.current.bands[window.bands.current.headline]
    assert band.p05 <= window.store.results.time_total <= band.p95
    # the breakdown's time bar carries the same range as a whisker
    assert window.breakdown.time_band() == pytest.approx((band.p05, band.p95), rel=1e-9)
    window.bands_action.setChecked(False)
    assert label.text() == "" and window.bands.current is None
    assert window.breakdown.time_band() is None
    window.bands_action.setChecked(True)
    qtbot.waitUntil(lambda: "p05–p95" in label.text(), timeout=120_000)


def test_an_edit_clears_the_stale_range_until_the_new_one_arrives(window, qtbot):
    label = _range_label(window)
    qtbot.waitUntil(lambda: "p05–p95" in label.text(), timeout=120_000)
    before = window.bands.current
    combo = window.controls.widgets["zero"]
    combo.setCurrentIndex(combo.findData(3))
    qtbot.waitUntil(lambda: window.bands.current is not None and window.bands.current is not before,
                    timeout=120_000)
    head = window.bands.current.bands[window.bands.current.headline]
    assert head.point == pytest.approx(window.store.results.time_total, rel=1e-12)


def test_the_controls_switch_to_a_calibrated_set(window, tmp_path):
    combo = window.controls.efficiency_combo
    assert combo.currentData() == "default"
    combo.setCurrentIndex(combo.findData("calibrated"))  # none written yet: refused, said, unchanged
    assert "validate --fit" in window.controls.error_label.text()
    assert combo.currentData() == "default"
    write_calibrated({"compute_efficiency": (0.5, 0.6, 0.7), "hbm_efficiency": (0.6, 0.8, 0.92),
                      "network_efficiency": (0.3, 0.4, 0.5)}, "test")
    combo.setCurrentIndex(combo.findData("calibrated"))
    assert window.store.scenario.efficiency.compute == pytest.approx(0.6)
    assert window.store.scenario.efficiency.network == pytest.approx(0.4)
    window.undo_action.trigger()
    assert window.store.scenario.efficiency.compute == 0.5
    assert combo.currentData() == "default"


def test_quitting_stops_every_worker_first(window, qtbot):
    """A worker thread that outlives its window reaches into freed Qt objects: a segfault at exit, seen now and
    then. Before the app quits (aboutToQuit), the bands, a planner search and the validation rows stop."""
    import threading

    from PySide6 import QtWidgets

    for name in ("planner", "validation"):
        window.docks[name].show()
        window.docks[name].raise_()
    qtbot.wait(50)
    window.store.edit(gpus=128)  # new bands and a new planner search start on their workers
    qtbot.wait(200)
    receivers = QtWidgets.QApplication.instance().receivers("2aboutToQuit()")
    assert receivers >= 1
    window.stop_background_work()
    busy = [t.name for t in threading.enumerate() if t.name.startswith(("bands", "validation")) and t.is_alive()]
    assert busy == []
    assert window.panels["planner"].pool.activeThreadCount() == 0
    window.store.edit(gpus=64)  # an edit after that (the window still paints while quitting) starts nothing
    qtbot.wait(300)
    assert [t.name for t in threading.enumerate() if t.name.startswith("bands") and t.is_alive()] == []
