"""First run: the welcome page says what the AI Trinity is, opens each example deck in one click, starts the
tour of four panels, says where to start, sizes its text to the screen, and is remembered once closed. The Slides
dock's empty state points at the examples and opens one in a click."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets

from trinity_desktop.deck import example_decks
from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.store import ScenarioStore
from trinity_desktop.tour import STOPS
from trinity_desktop.welcome import FIRST_STEPS, SEEN_KEY, SENTENCES, deck_cards


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(win, before_close_func=lambda w: w.stop_background_work())   # no worker outlives the test
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    return win


def test_the_page_shows_on_a_first_run_only(window, qtbot):
    assert not window.welcome.is_shown()   # a window that is not the app's first run shows none
    window.welcome.offer()
    qtbot.waitUntil(window.welcome.is_shown)
    assert len(SENTENCES) == 3 and all(word in " ".join(SENTENCES) for word in ("compute", "bandwidth", "memory"))
    page = window.welcome.page
    assert window.rect().contains(page.geometry()) and page.geometry().left() >= window.docks["controls"].width()
    window.welcome.close()
    assert window.settings.value(SEEN_KEY, False, type=bool)
    window.welcome.offer()
    assert not window.welcome.is_shown()


def test_each_example_deck_is_one_click_away(window, qtbot):
    window.welcome.show()
    cards = window.welcome.page.card_buttons
    assert len(cards) == len(deck_cards()) == len(example_decks())  # every shipped deck
    cards[2].click()
    title, count, _ = deck_cards()[2]
    assert window.talk.deck is not None and window.talk.deck.title == title and len(window.talk.deck) == count
    assert not window.welcome.is_shown()


def test_the_tour_highlights_four_panels_in_turn(window, qtbot):
    window.welcome.show()
    tour = window.welcome.tour
    seen = []
    tour.stopChanged.connect(seen.append)
    window.welcome.page.tour_button.click()
    for _ in STOPS[1:]:
        tour.next()
    tour.next()
    assert [s.dock for s in STOPS] == ["controls", "triangle", "roofline", "planner"]
    assert seen == [0, 1, 2, 3, -1] and not tour.active()
    assert len(STOPS) * 15 == 60   # seconds: one minute


def test_the_empty_slides_dock_points_at_the_example_decks(window):
    window.docks["deck"].show()
    window.docks["deck"].raise_()
    assert "File ▸ Open example deck" in window.talk.panel.deck_title.text()


def test_the_page_says_where_to_start_in_three_steps(window, qtbot):
    window.welcome.show()
    page = window.welcome.page
    assert [key for key, _action, _rest in FIRST_STEPS] == ["tour", "explore", "deck"]
    text = page.text()
    assert all(action in text for _key, action, _rest in FIRST_STEPS) and "Where to start" in text
    assert "design space" in SENTENCES[0] and "between chips" in SENTENCES[0]   # the paper's three, coupled
    page.step_buttons["explore"].click()
    assert not window.welcome.is_shown()
    qtbot.waitUntil(lambda: window.panels["controls"].model_combo.hasFocus() or not window.isActiveWindow())


def test_the_text_grows_for_a_projector_and_stays_whole_on_a_laptop(window, qtbot):
    from trinity_desktop.audit_text import cut_widget_texts

    window.welcome.show()
    page = window.welcome.page
    qtbot.waitUntil(lambda: page.points > 0)
    # the page's area over the centre docks, measured at 1920x1080 and at 1366x768
    assert page.fit(QtCore.QSize(1526, 967)) >= 18 > page.fit(QtCore.QSize(992, 655)) >= 12
    page.resize(992, 655)
    page.layout().activate()
    labels = [w for w in page.findChildren(QtWidgets.QLabel) if w.isVisibleTo(page)]
    assert all(w.height() >= w.heightForWidth(w.width()) for w in labels if w.wordWrap())
    buttons = page.findChildren(QtWidgets.QPushButton)
    assert all(b.width() >= b.sizeHint().width() - 4 for b in buttons)   # no card title cut
    assert cut_widget_texts(page) == [] and "…" not in page.text()


def test_the_empty_slides_dock_opens_an_example_in_one_click(window, qtbot):
    window.docks["deck"].show()
    panel = window.talk.panel
    assert panel.examples_button.isVisibleTo(panel)
    actions = panel.examples_menu.actions()
    assert [a.text() for a in actions] == [title for title, _n, _p in deck_cards()]
    actions[0].trigger()
    assert window.talk.deck is not None and window.talk.deck.title == deck_cards()[0][0]
    assert not panel.examples_button.isVisibleTo(panel)   # a deck is open: the list shows it
