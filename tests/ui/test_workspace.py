"""Keeping work through the window: save/open round trips, bad files refused, example decks, exports."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

import pytest
from PySide6 import QtCore, QtWidgets

from trinity_desktop import session_file
from trinity_desktop.deck import example_decks
from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.model import evaluate
from trinity_desktop.store import ScenarioStore
from trinity_desktop.ui.export import CSV_COLUMNS


@pytest.fixture
def settings(tmp_path):
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    QtCore.QCoreApplication.instance().setProperty("trinity_quiet", True)
    win = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.talk.presenter.stop()


def test_save_then_open_gives_the_same_scenario_and_deck(window, tmp_path):
    window.store.edit(zero=3, seq_len=4096)
    window.talk.add_slide()
    window.talk.set_deck(window.talk.deck.with_caption(0, "ZeRO-3 at 4k"), 0)
    path = tmp_path / "talk.trinity.json"
    assert window.workspace.save_path(path) == ""
    scenario, deck = window.store.scenario, window.talk.deck
    window.store.edit(zero=0)
    window.talk.set_deck(None)
    assert window.workspace.open_path(path) == ""
    assert window.store.scenario == scenario
    assert window.talk.deck == deck
    assert str(path.resolve()) in window.workspace.recent_files()
    assert window.windowTitle().startswith("talk.trinity.json")


@pytest.mark.parametrize("content, needle", [
    ('{"trinity_session": 1,, "x": 2}', "malformed"),
    ('{"trinity_session": 1, "scenario": {"hardware": {"key": "h', "truncated"),
    ('{"trinity_session": 99, "scenario": {}}', "newer"),
    ('{"trinity_session": 1, "scenario": {"kind": "train"}}', "scenario"),
])
def test_bad_files_are_refused_and_nothing_changes(window, tmp_path, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content)
    window.talk.add_slide()
    before = (window.store.scenario, window.talk.deck, window.store.undo_stack.count())
    message = window.workspace.open_path(path)
    assert needle in message
    assert (window.store.scenario, window.talk.deck, window.store.undo_stack.count()) == before
    assert needle in window.statusBar().currentMessage()


def test_oversized_file_is_refused(window, tmp_path):
    path = tmp_path / "huge.json"
    path.write_bytes(b" " * (session_file.MAX_BYTES + 10))
    before = window.store.scenario
    assert "oversized" in window.workspace.open_path(path)
    assert window.store.scenario is before


@pytest.mark.long(seconds=55)
def test_every_shipped_deck_opens_and_every_slide_renders(window):
    decks = example_decks()
    assert len(decks) >= 3
    for path in decks:
        assert window.workspace.open_path(path) == "", path
        deck = window.talk.deck
        assert deck is not None and len(deck.slides) >= 3
        # the status bar names the example talk by its title, never its install path
        assert window.statusBar().currentMessage() == f"Opened the example talk “{deck.title}”"
        for i, slide in enumerate(deck.slides):
            window.talk.show_slide(i)
            assert window.store.scenario == slide.scenario
            shown = {n for n, d in window.docks.items() if d.isVisible() and n not in window.EDITING_DOCKS}
            assert shown == {d.removeprefix("dock_") for d in slide.docks} - set(window.EDITING_DOCKS)
            window.refresh_all()  # panels off screen catch up only when shown; bring them all up to date
            expected = {k: v / 1e9 for k, v in evaluate(slide.scenario).memory.items()}
            assert window.breakdown.memory_values() == pytest.approx(expected)
        assert window.workspace.path is None  # an example deck is never overwritten by Save


def test_png_export_is_two_or_three_times_the_widget(window, tmp_path, png_info):
    panel = window.panels["roofline"]
    for scale in (2, 3):
        path = tmp_path / f"roofline@{scale}x.png"
        window.workspace.export_png("roofline", path, scale)
        width, height, colours = png_info(path)
        assert (width, height) == (panel.width() * scale, panel.height() * scale)
        assert colours > 16
    window.workspace.export_png("window", tmp_path / "window.png", 2)
    assert png_info(tmp_path / "window.png")[:2] == (window.width() * 2, window.height() * 2)


def test_csv_columns_match_the_plotted_data(window, tmp_path):
    path = tmp_path / "breakdown.csv"
    rows = window.workspace.export_csv("breakdown", path)
    lines = list(csv.reader(path.read_text().splitlines()))   # a title may hold a comma (quoted)
    assert lines[0] == ["plot", *CSV_COLUMNS]
    assert rows == len(lines) - 1 > 0
    heights = [float(r[CSV_COLUMNS.index("height") + 1]) for r in lines[1:]
               if r[2] == "bar" and r[CSV_COLUMNS.index("height") + 1]]
    memory_gb = sorted(round(v / 1e9, 6) for v in window.store.results.memory.values())
    assert all(any(abs(h - m) < 1e-6 for h in heights) for m in memory_gb)


def test_svg_export_is_valid_xml(window, tmp_path):
    path = tmp_path / "heatmap.svg"
    window.workspace.export_svg("heatmap", path)
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")


def test_copy_panel_puts_the_image_on_the_clipboard(window):
    image = window.workspace.copy_panel("breakdown")
    clip = QtWidgets.QApplication.clipboard().image()
    assert not clip.isNull() and clip.size() == image.size()


def test_deck_export_writes_a_png_per_slide_and_a_pdf(window, tmp_path):
    window.workspace.open_path(example_decks()[0])
    written = window.workspace.export_deck(tmp_path / "out")
    n = len(window.talk.deck.slides)
    assert len([p for p in written if p.suffix == ".png"]) == n
    assert (tmp_path / "out" / "deck.pdf").read_bytes().startswith(b"%PDF")


def test_autosave_from_the_window_is_recoverable(qtbot, tmp_path):
    from trinity_desktop.autosave import Autosaver

    win = MainWindow(ScenarioStore(default_scenario()), None, autosave_dir=tmp_path)
    qtbot.addWidget(win)
    win.store.edit(zero=2)
    assert win.workspace.autosaver.is_pending()
    assert win.workspace.autosaver.flush()
    saved = json.loads((tmp_path / "autosave.json").read_text())
    assert saved["scenario"]["zero"] == 2
    win.workspace.clean_exit()
    assert Autosaver.recoverable(tmp_path) is None  # a normal exit leaves nothing to recover
