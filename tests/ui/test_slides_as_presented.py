"""Slides show exactly their own state, presentation mode leaves the editing layout as it was, deck export
draws slides as presented, and the window is torn down in a defined order."""

from __future__ import annotations

import pytest
from PySide6 import QtWidgets

from trinity_desktop import app as app_module
from trinity_desktop import presentation
from trinity_desktop.captions import slide_caption
from trinity_desktop.deck import example_decks
from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.store import ScenarioStore


@pytest.fixture
def window(qtbot):
    win = MainWindow(ScenarioStore(default_scenario()), None)
    qtbot.addWidget(win)
    win.resize(1600, 950)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.talk.presenter.stop()


def _deck(win, name="coupled_triangle"):
    path = next(p for p in example_decks() if name in p.name)
    assert win.workspace.open_path(path) == ""
    return win.talk.deck


def _visible_docks(win):
    return {n for n, d in win.docks.items() if d.isVisible()}


def _leave_edits_behind(win, qtbot):
    """What a speaker does while preparing: tick techniques, step the flow, focus a control."""
    triangle, flow = win.panels["triangle"], win.panels["flow"]
    win.docks["triangle"].raise_()
    keys = list(triangle._items)[:2]
    triangle.show_path(keys)
    assert triangle.checked_techniques() == keys
    flow.update_results(win.store.results)
    flow.set_detailed(True)
    flow.select(5)
    win.store.set_focus("workload", "moe-pretrain")
    win.controls.setFocus()
    QtWidgets.QApplication.processEvents()


def test_a_slide_restores_exactly_its_own_state(window, qtbot):
    deck = _deck(window)
    _leave_edits_behind(window, qtbot)
    window.talk.present(0)
    presentation.settle(0.4)
    slide = deck.slides[0]
    assert window.panels["triangle"].checked_techniques() == []
    flow = window.panels["flow"]
    assert not flow.detailed() and flow.current_index() == 0 and not flow.is_playing()
    assert window.store.focus == tuple(slide.focus)
    assert window.store.scenario == slide.scenario
    focused = QtWidgets.QApplication.focusWidget()
    assert focused is None or not focused.hasFocus() or focused is window
    assert _visible_docks(window) == {d.removeprefix("dock_") for d in slide.docks}
    # the next slide: its own focus, and nothing ticked since
    window.panels["triangle"].show_path(list(window.panels["triangle"]._items)[:1])
    window.talk.presenter.next()
    presentation.settle(0.4)
    assert window.panels["triangle"].checked_techniques() == []
    assert window.store.focus == tuple(deck.slides[1].focus)
    # going back shows slide 1 exactly as before
    window.talk.presenter.previous()
    presentation.settle(0.4)
    assert window.store.scenario == slide.scenario and window.store.focus == tuple(slide.focus)


def test_showing_a_slide_while_editing_clears_ticks_too(window, qtbot):
    _deck(window)
    _leave_edits_behind(window, qtbot)
    window.talk.show_slide(1)
    assert window.panels["triangle"].checked_techniques() == []
    assert window.store.focus == tuple(window.talk.deck.slides[1].focus)


def test_leaving_presentation_restores_the_editing_layout(window, qtbot):
    _deck(window)
    presentation.settle(0.3)
    before_docks = _visible_docks(window)
    before_geometry = {n: window.docks[n].geometry() for n in before_docks
                       if not window.docks[n].visibleRegion().isEmpty()}  # in front, not behind a tab
    font_before = QtWidgets.QApplication.instance().font().pointSize()
    window.talk.present(0)
    presentation.settle(0.3)
    for _ in range(3):
        window.talk.presenter.next()
        presentation.settle(0.2)
    assert not window.menuBar().isVisible()
    assert all(d.titleBarWidget() is not None for d in window.docks.values())  # no float/close buttons
    window.talk.presenter.stop()
    presentation.settle(0.3)
    assert _visible_docks(window) == before_docks
    for name, rect in before_geometry.items():
        now = window.docks[name].geometry()
        assert abs(now.x() - rect.x()) <= 2 and abs(now.width() - rect.width()) <= 2, name
        assert abs(now.y() - rect.y()) <= 2 and abs(now.height() - rect.height()) <= 2, name
    assert window.menuBar().isVisible() and window.statusBar().isVisible()
    assert all(d.titleBarWidget() is None for d in window.docks.values())
    assert QtWidgets.QApplication.instance().font().pointSize() == font_before


def test_no_tab_bar_is_shown_while_presenting(window, qtbot):
    deck = _deck(window, "inference_reality")
    window.talk.present(0)
    for i in range(len(deck.slides)):
        if i:
            window.talk.presenter.next()
        presentation.settle(0.3)
        bars = [b for b in window.findChildren(QtWidgets.QTabBar) if b.parent() is window and b.isVisible()
                and b.count() > 0 and b.geometry().intersects(window.rect())]  # a bar that would be drawn
        assert bars == [], f"slide {i + 1}: {[b.tabText(0) for b in bars]}"


def test_deck_export_renders_slides_as_presented(window, tmp_path, monkeypatch, png_info):
    deck = _deck(window, "training_memory_wall")
    seen = []
    original = presentation.render_slides

    def spy(win, scale=1, settle_s=0.6):
        for i, image in original(win, scale, settle_s=0.2):
            p = win.talk.presenter
            seen.append({"menu": win.menuBar().isVisible(), "status": win.statusBar().isVisible(),
                         "controls": win.docks["controls"].isVisible(), "deck": win.docks["deck"].isVisible(),
                         "title": p.title_label.text(), "caption": p.caption_label.text(),
                         "banner": p._banner.isVisible(), "docks": _visible_docks(win)})
            yield i, image

    monkeypatch.setattr(presentation, "render_slides", spy)
    before = window.store.scenario
    written = window.workspace.export_deck(tmp_path, scale=1)
    assert [p.name for p in written] == [f"slide_{i + 1:02d}.png" for i in range(len(deck.slides))] + ["deck.pdf"]
    assert (tmp_path / "deck.pdf").stat().st_size > 10_000
    for i, (slide, state) in enumerate(zip(deck.slides, seen, strict=True)):
        caption = slide_caption(deck, i)   # the template filled with the slide's numbers
        assert state["title"] == slide.title and state["caption"] == caption and state["banner"]
        assert "{" not in caption and caption != slide.caption
        assert not (state["menu"] or state["status"] or state["controls"] or state["deck"])
        assert state["docks"] == {d.removeprefix("dock_") for d in slide.docks} - {"controls", "deck"}
    width, height, colours = png_info(written[0])
    assert (width, height) == (window.width(), window.height()) and colours > 64
    assert window.store.scenario == before and not window.talk.presenter.active
    assert window.menuBar().isVisible()


def test_tear_down_deletes_the_window_before_exit(qtbot):
    from shiboken6 import Shiboken

    win = MainWindow(ScenarioStore(default_scenario()), None)
    win.show()
    _deck(win, "inference_reality")
    win.talk.present(0)
    presentation.settle(0.2)
    panels = list(win.panels.values())
    app_module.tear_down(win)
    assert not Shiboken.isValid(win)
    assert not any(Shiboken.isValid(p) for p in panels)


def _zoom_of(view) -> float:
    return view.width() / max(view.range.width(), 1e-9)   # pixels per scene unit (GraphicsView.setRange)


def test_a_slide_shows_messages_not_controls_and_one_text_scale(window):
    import pyqtgraph as pg

    from trinity_desktop.slide_controls import editing_controls

    deck = _deck(window, "inference_reality")
    before = {n: len(editing_controls(p)) for n, p in window.panels.built().items()
              if n not in window.EDITING_DOCKS}
    window.talk.present(0)
    for i in range(len(deck.slides)):
        window.talk.presenter.go(i, animate=False)
        presentation.settle(0.3)
        shown = [p for p in window.result_panels() if p.isVisible()]
        assert shown and all(editing_controls(p) == [] for p in shown), f"slide {i + 1}"
        zooms = {round(_zoom_of(v), 2) for p in shown for v in p.findChildren(pg.GraphicsView) if v.isVisible()}
        assert len(zooms) == 1 and 1.0 <= zooms.pop() <= presentation.PLOT_ZOOM, f"slide {i + 1}"
    window.talk.presenter.stop()
    after = {n: len(editing_controls(p)) for n, p in window.panels.built().items() if n in before}
    assert after == before   # editing gets its controls back


def test_a_slide_opens_the_flow_at_its_phase(window):
    deck = _deck(window, "layout_planner")
    assert deck.slides[0].flow_phase == "forward"
    window.talk.present(0)
    presentation.settle(0.3)
    flow = window.panels["flow"]
    assert flow.current_phase() is not None and flow.current_phase().name == "forward"
    window.talk.presenter.go(2, animate=False)   # no phase named: the whole step, its longest phase highlighted
    presentation.settle(0.2)
    longest = max(flow.current_phase_of(n).duration_s for n in flow.phase_names())
    assert not flow.zoom_check.isChecked() and flow.current_phase().duration_s == longest
    assert flow.current_phase().name != "data load"


def test_a_slide_keeps_its_flow_phase_in_the_session_file(tmp_path):
    from trinity_desktop import session_file
    from trinity_desktop.deck import Deck, Slide

    slide = Slide("t", "c", default_scenario(), docks=("dock_flow",), flow_phase="backward")
    path = tmp_path / "talk.trinity.json"
    session_file.save(path, default_scenario(), Deck("d", (slide,)))
    assert session_file.load(path)[1].slides[0].flow_phase == "backward"


def test_a_slide_that_crushes_a_panel_is_reported(window, qtbot):
    from trinity_desktop.audit_slides import crushed_panels
    from trinity_desktop.deck import Deck, Slide

    docks = ("dock_triangle", "dock_flow", "dock_roofline", "dock_heatmap")
    window.talk.set_deck(Deck("crowded", (Slide("four panels", "", default_scenario(), docks=docks),)))
    window.resize(760, 520)
    window.talk.present(0)
    presentation.settle(0.3)
    crushed = crushed_panels(window)
    assert crushed and all(" px < " in line for line in crushed)
    window.talk.presenter.stop()
    window.resize(1600, 950)


def test_a_long_title_wraps_and_the_banner_takes_its_own_slides_height(window):
    from trinity_desktop.deck import Deck, Slide

    long_title = "A title long enough to need a second line on this window, " * 2
    slides = (Slide(long_title.strip(), "One line.", default_scenario(), docks=("dock_triangle",)),
              Slide("Short", "A caption. " * 30, default_scenario(), docks=("dock_triangle",)),
              Slide("Short", "One line.", default_scenario(), docks=("dock_triangle",)))
    window.talk.set_deck(Deck("banner", slides))
    window.talk.present(0)
    presenter = window.talk.presenter
    heights = []
    for i in range(3):
        presenter.go(i, animate=False)
        presentation.settle(0.2)
        title, caption = presenter.title_label, presenter.caption_label
        assert title.wordWrap() and "…" not in title.text() and title.text() == slides[i].title
        for label in (title, caption):   # every line of the title and caption is inside the banner
            assert label.height() >= label.heightForWidth(label.width()) - 1, (i, label.accessibleName())
        heights.append(presenter._banner.height())
    assert heights[1] > heights[2] and heights[0] > heights[2], heights   # the third slide does not keep the second's height
    assert presenter.counter_label.font().pointSize() == presentation.COUNTER_PT


def test_a_window_larger_than_its_screen_is_sized_back_to_it(window):
    from trinity_desktop.audit_slides import outside_screen

    room = window.screen().availableGeometry()
    window.resize(room.width() + 400, room.height() + 300)
    QtWidgets.QApplication.processEvents()
    if room.contains(window.frameGeometry()):
        pytest.skip("this platform keeps every window inside its screen")
    assert outside_screen(window) and "outside its screen" in outside_screen(window)[0]
    _deck(window)
    window.talk.present(0)
    presentation.settle(0.3)
    assert room.contains(window.frameGeometry()) and outside_screen(window) == []


def test_a_slide_hides_a_sliders_value_with_it(window):
    _deck(window, "inference_reality")
    window.talk.present(0)
    presentation.settle(0.3)
    sweep = window.panels["roofline"].sweep_layer
    assert window.docks["roofline"].isVisible()
    assert not sweep.slider.isVisible() and not sweep.slider_label.isVisible()   # no lone "batch 1"
    window.talk.presenter.stop()
    presentation.settle(0.1)
    assert sweep.slider.isVisible() and sweep.slider_label.isVisible()


def test_the_explorers_not_applicable_list_is_off_the_slides(window):
    _deck(window, "coupled_triangle")
    window.talk.present(len(window.talk.deck.slides) - 1)   # the explorer's slide
    presentation.settle(0.3)
    explorer = window.panels["tradeoff"]
    assert not explorer.na_list.isVisible() and not explorer.na_title.isVisible()
    # nor what a click does: an audience cannot click a projector (the heatmap's "Click a row to load it.")
    assert not explorer.click_hint.isVisible() and not window.panels["triangle"].isHidden()
    window.talk.presenter.go(0, animate=False)   # the triangle and the workload heatmap
    presentation.settle(0.3)
    assert window.panels["heatmap"].isVisible() and not window.panels["heatmap"].click_hint.isVisible()
    window.talk.presenter.stop()
    presentation.settle(0.1)
    assert window.panels["heatmap"].click_hint.text() == "Click a row to load it."


def test_a_deck_slide_with_more_than_four_panels_is_refused_in_one_line(window):
    import json

    from trinity_desktop import session_file
    from trinity_desktop.deck import MAX_SLIDE_PANELS, Deck, Slide

    docks = ("dock_controls", "dock_triangle", "dock_flow", "dock_roofline", "dock_heatmap", "dock_breakdown")
    text = session_file.dumps(default_scenario(), Deck("crowded", (Slide("five", "", default_scenario(), docks=docks),)))
    with pytest.raises(session_file.SessionFileError) as caught:
        session_file.loads(text)
    message = str(caught.value)
    assert "\n" not in message and f"at most {MAX_SLIDE_PANELS}" in message and "5 panels" in message
    doc = json.loads(text)
    doc["deck"]["slides"][0]["docks"] = list(docks[:5])   # the Scenario form and four panels: fine
    assert session_file.loads(json.dumps(doc))[1].slides[0].docks == docks[:5]
    assert len(window.talk.current_slide().docks) <= MAX_SLIDE_PANELS   # a slide taken from the screen keeps four


def test_a_panels_own_tab_bar_is_off_the_slides(window):
    """The KV-cache slides showed the residency panel's "Residency curve | Memory hierarchy" tabs: a control.
    The slide keeps the tab it opened on; the tabs come back when the presentation ends."""
    _deck(window, "inference_reality")
    window.talk.present(2)   # the first residency slide
    presentation.settle(0.3)
    panel = window.panels["residency"]
    assert panel.isVisible() and not panel.tabs.tabBar().isVisible()
    assert panel.tabs.currentIndex() == 0 and panel.tabs.currentWidget().isVisible()
    window.talk.presenter.stop()
    presentation.settle(0.1)
    window.docks["residency"].show()
    window.docks["residency"].raise_()
    presentation.settle(0.1)
    assert panel.tabs.tabBar().isVisible()
