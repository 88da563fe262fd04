"""Shared test setup, free of Qt at import: `pytest tests/model` runs in a venv without PySide6 (.ci/run shows
it). The Qt fixtures live in tests/ui/conftest.py and tests/e2e/conftest.py."""

import importlib.util
import os

# Before anything imports Qt (when Qt is installed): every test renders offscreen, on one 1920 x 1080 screen (the
# projector size the default layout is planned for). The e2e tests that need a real X window set
# QT_QPA_PLATFORM=xcb for their own subprocess.
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen" and importlib.util.find_spec("PySide6"):
    from trinity_desktop.layout_plan import offscreen_platform

    os.environ["QT_QPA_PLATFORM"] = offscreen_platform(1920, 1080)


def pytest_collection_modifyitems(items):
    """The packaging tests (marker `bundle`) first, then the long ones (marker `long`), each in their order:
    `--dist load` hands out its first quarter of the tests one at a time to each worker in turn, so every worker
    starts on a long test and none ends the run alone on one."""
    items.sort(key=lambda item: (item.get_closest_marker("bundle") is None, item.get_closest_marker("long") is None))
