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
    """Long tests first, shared out over the xdist workers so that none ends the run alone on one
    (tests/long_first.py)."""
    from long_first import ordered  # tests/ is on sys.path

    items[:] = ordered(list(items), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
