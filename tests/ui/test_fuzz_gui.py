"""The GUI open path fuzzed (issue 26, "Fuzzing"): mutated session and deck files opened in the window either
load or are refused with one line, change nothing when refused (scenario, deck, recent files, title), and raise
nothing into the event loop (tests/ui/conftest.py fails the test on any escape)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from PySide6 import QtCore
from test_fuzz_inputs import MAX_MESSAGE, fuzz, mutated_sessions

GUI_CASES = 100
_names = itertools.count()


@pytest.fixture(scope="module")
def gui(tmp_path_factory):
    from trinity_desktop.app import build_window, ensure_application

    app = ensure_application()
    app.setProperty("trinity_quiet", True)
    folder = tmp_path_factory.mktemp("gui_fuzz")
    settings = QtCore.QSettings(str(folder / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    window = build_window(settings)
    window.resize(1366, 768)
    window.show()
    app.processEvents()
    yield window, folder
    window.talk.presenter.stop()
    window.stop_background_work()
    window.close()
    window.deleteLater()
    app.processEvents()


def _state(window) -> tuple:
    return (window.store.scenario, window.talk.deck, tuple(window.workspace.recent_files()),
            window.windowTitle(), window.workspace.path)


@fuzz(GUI_CASES)
@given(mutated_sessions())
def test_opening_a_mutated_file_loads_it_or_changes_nothing(gui, data):
    window, folder = gui
    path = folder / f"case{next(_names)}.trinity.json"
    path.write_bytes(data)
    before = _state(window)
    message = window.workspace.open_path(path)
    QtCore.QCoreApplication.processEvents()
    if message:
        assert "\n" not in message and len(message) <= MAX_MESSAGE, message[:800]
        assert _state(window) == before, "a refused file changed the window's state"
    else:
        assert window.workspace.recent_files()[0] == str(path.resolve())
    path.unlink()
