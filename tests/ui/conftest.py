"""Shared UI-test fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture
def shown_panel(qtbot):
    """Function (panel class, results or None, size) -> the panel built, shown at that size and fed the results."""

    def make(cls, results=None, size=(1000, 650)):
        panel = cls()
        qtbot.addWidget(panel)
        panel.resize(*size)
        panel.show()
        if results is not None:
            panel.update_results(results)
        return panel

    return make
