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


@pytest.fixture
def png_info():
    """Function (path) -> (width, height, distinct colours) of a PNG, read with QImage (no display needed)."""
    from png_images import png_info as read  # tests/ is on sys.path: its conftest.py has no package

    return read
