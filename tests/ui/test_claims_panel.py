"""The Claims dock lists every claim with its verdict and loads a row's scenario when it is clicked."""

from trinity_desktop.model.claims.catalogue import all_claims
from trinity_desktop.ui.claims_panel import ClaimsPanel, claims_title


def test_rows_and_title(shown_panel):
    panel = shown_panel(ClaimsPanel, size=(683, 700))
    claims = all_claims()
    assert panel.table.rowCount() == len(claims)
    agrees = sum(c.verdict == "agrees" for c in claims)
    assert f"{agrees} agree" in panel.title.text() == claims_title(claims)
    for row, c in enumerate(claims):
        assert panel.table.item(row, 0).text().split()[-1] in c.verdict.replace("-", " ")
    assert panel.table.isColumnHidden(1)  # narrow: the seed moves into the claim cell
    assert panel.table.item(0, 2).text().startswith("Trinity: ")


def test_click_loads_the_scenario(shown_panel, qtbot):
    panel = shown_panel(ClaimsPanel, size=(1200, 800))
    assert not panel.table.isColumnHidden(1)
    row = next(i for i, c in enumerate(panel.claims) if c.scenario is not None)
    with qtbot.waitSignal(panel.scenarioRequested) as blocker:
        panel.table.selectRow(row)
        panel.load_row(row)
    assert blocker.args[0] == panel.claims[row].scenario
    assert panel.claims[row].id in panel.detail.text()


def test_row_without_scenario_emits_nothing(shown_panel, qtbot):
    panel = shown_panel(ClaimsPanel)
    row = next(i for i, c in enumerate(panel.claims) if c.scenario is None)
    with qtbot.assertNotEmitted(panel.scenarioRequested):
        panel.load_row(row)


def test_each_row_names_the_dock_it_is_shown_in(shown_panel):
    """Every claim names where in the app it is shown: the dock's title from the registry, in its own column
    when wide and inside the claim cell when narrow."""
    from trinity_desktop.docks import DOCKS

    factory = next(s for s in DOCKS if s.name == "claims").factory

    claims = all_claims()
    titles = {f"dock_{s.name}": s.title for s in DOCKS}
    assert {c.panel for c in claims} <= set(titles)
    wide = factory()
    shown_panel(lambda: wide, size=(1300, 700))
    for row, c in enumerate(claims):
        assert wide.table.item(row, 6).text() == titles[c.panel]
    assert not wide.table.isColumnHidden(6)
    narrow = shown_panel(factory, size=(683, 700))
    assert narrow.table.isColumnHidden(6) and f"Shown in: {titles[claims[0].panel]}" in narrow.table.item(0, 2).text()


def test_on_a_slide_the_table_shows_whole_rows_and_says_how_many(shown_panel, qtbot):
    """Presented, the 43-row table scrolled and cut its last row in half. On a slide it shows the rows that
    fit whole, no scroll bar, and says how many of the claims it shows; off the slide every row is back."""
    from PySide6 import QtCore

    panel = shown_panel(ClaimsPanel, size=(1340, 470))
    panel.set_on_slide(True)
    qtbot.wait(50)
    table = panel.table
    shown = [r for r in range(table.rowCount()) if not table.isRowHidden(r)]
    assert 3 <= len(shown) < table.rowCount() and shown == list(range(len(shown)))
    assert sum(table.rowHeight(r) for r in shown) <= table.viewport().height()
    assert table.verticalScrollBarPolicy() == QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert panel.detail.text() == f"The first {len(shown)} of {table.rowCount()} claims."
    panel.set_on_slide(False)
    qtbot.wait(50)
    assert not any(table.isRowHidden(r) for r in range(table.rowCount())) and panel.detail.text().startswith("Click")
    assert "≥" in table.item(0, 5).text() and ">=" not in table.item(0, 5).text()
