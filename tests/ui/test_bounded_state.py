"""State that would grow without bound during a long session is bounded (issue 26, "Memory")."""

from __future__ import annotations


def test_the_undo_stack_is_bounded(qtbot):
    """Each undo step keeps two scenarios and their results: the stack keeps the last UNDO_LIMIT edits (the
    soak test's RSS grew with every edit before)."""
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.store import UNDO_LIMIT, ScenarioStore

    store = ScenarioStore(default_scenario())
    for i in range(UNDO_LIMIT + 50):
        assert store.edit(seq_len=4096 if i % 2 else 8192)
    assert store.undo_stack.count() == UNDO_LIMIT
