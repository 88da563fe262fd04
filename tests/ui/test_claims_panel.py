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
