"""The status bar keeps what binds and any warning first, shows only whole parts, and never widens the window."""

from __future__ import annotations

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.status_bar import SEPARATOR, StatusSummary, fitted, summary_parts


def test_fitted_keeps_whole_parts_from_the_first():
    parts = ["aaaa", "bb", "cccccc"]
    width = len  # one pixel per character

    assert fitted(parts, 100, width) == SEPARATOR.join(parts)
    assert fitted(parts, len("aaaa" + SEPARATOR + "bb"), width) == "aaaa" + SEPARATOR + "bb"
    assert fitted(parts, 2, width) == "aaaa"   # the first part always (the label wraps it)


def test_a_narrow_status_bar_drops_whole_parts_and_keeps_the_binding_resource(qtbot):
    label = StatusSummary()
    qtbot.addWidget(label)
    results = evaluate(default_scenario().replace(model=default_scenario().model, gpus=8, tp=8, pp=1))
    label.show_results(results)
    label.resize(420, 24)
    label.show()
    parts = summary_parts(results)
    shown = label.text().split(SEPARATOR)
    # each shown part is whole, or a warning's head ("⚠ Does not fit") where the whole one has no room
    assert all(s == p or (p.startswith("⚠") and p.startswith(s + ": ")) for s, p in zip(shown, parts, strict=False))
    assert len(shown) >= 2 and shown[1].startswith("⚠") and label.text().startswith(f"{results.bottleneck.capitalize()} binds (pressure ")
    assert label.toolTip() == label.full_text() == SEPARATOR.join(parts)
    assert label.sizeHint().width() <= 420 or label.sizePolicy().horizontalPolicy().name == "Ignored"
