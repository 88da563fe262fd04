"""Shared UI-test fixtures."""

from __future__ import annotations

import sys
import threading
import traceback

import pytest


@pytest.fixture(autouse=True)
def fail_on_escaped_exception():
    """Any exception that reaches sys.excepthook (Qt hands it those raised in slots, event handlers and paint
    overrides) or escapes a worker thread fails the test, even outside pytest-qt's own capture."""
    escaped: list[str] = []
    previous, previous_thread = sys.excepthook, threading.excepthook
    sys.excepthook = lambda kind, exc, tb: escaped.append("".join(traceback.format_exception(kind, exc, tb)))
    threading.excepthook = lambda args: escaped.append(
        "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)))
    yield escaped
    sys.excepthook, threading.excepthook = previous, previous_thread
    if escaped:
        pytest.fail(f"{len(escaped)} exception(s) escaped into the event loop:\n" + "\n".join(escaped[:3]))


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
