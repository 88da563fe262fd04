"""Building and running the Qt application, and rendering the window to a PNG (--screenshot)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.defaults import default_scenario

ORGANIZATION = "Trinity Desktop"
APPLICATION = "Trinity Desktop"


def ensure_application(argv: list[str] | None = None) -> QtWidgets.QApplication:
    app = QtWidgets.QApplication.instance()
    if app is None:
        QtCore.QCoreApplication.setOrganizationName(ORGANIZATION)
        QtCore.QCoreApplication.setApplicationName(APPLICATION)
        app = QtWidgets.QApplication(argv or [sys.argv[0]])
    from trinity_desktop.ui.theme import configure_pyqtgraph

    configure_pyqtgraph()
    return app


def build_window(settings: QtCore.QSettings | None = None):
    from trinity_desktop.main_window import MainWindow
    from trinity_desktop.store import ScenarioStore

    store = ScenarioStore(default_scenario())
    return MainWindow(store, settings)


def screenshot(path: str | Path, scale: float = 1.0) -> int:
    """Render the main window (all docks, default layout) to a PNG; returns a process exit code."""
    app = ensure_application()
    window = build_window(settings=None)
    window.show()
    for _ in range(10):  # let the layout settle (the default layout is finished by timers after show)
        app.processEvents()
        QtCore.QThread.msleep(30)
    pixmap = window.grab()
    if scale != 1.0:
        pixmap = pixmap.scaled(pixmap.size() * scale, QtCore.Qt.AspectRatioMode.KeepAspectRatio,
                               QtCore.Qt.TransformationMode.SmoothTransformation)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ok = pixmap.save(str(path), "PNG")
    window.close()
    if not ok:
        print(f"trinity-desktop: error: could not write {path}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({pixmap.width()}x{pixmap.height()})")
    return 0


class _FirstPaint(QtCore.QObject):
    """Quits the event loop at the window's first paint event."""

    def __init__(self, app: QtWidgets.QApplication, start: float):
        super().__init__()
        self.app, self.start = app, start
        self.elapsed: float | None = None

    def eventFilter(self, obj, event):
        if event.type() == QtCore.QEvent.Type.Paint and self.elapsed is None:
            self.elapsed = time.perf_counter() - self.start
            QtCore.QTimer.singleShot(0, self.app.quit)
        return False


def startup_time(start: float) -> int:
    """Measure the time from entering the program to the main window's first paint; print it."""
    app = ensure_application()
    window = build_window(settings=None)
    probe = _FirstPaint(app, start)
    window.installEventFilter(probe)
    window.show()
    QtCore.QTimer.singleShot(30_000, app.quit)
    app.exec()
    if probe.elapsed is None:
        print("trinity-desktop: error: the window was never painted", file=sys.stderr)
        return 1
    print(f"first paint after {probe.elapsed:.3f} s (from program entry, interpreter start excluded)")
    return 0


def run() -> int:
    """Open the main window with the saved layout and run the event loop."""
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY") \
            and not os.environ.get("QT_QPA_PLATFORM"):
        print("trinity-desktop: error: no display found (set DISPLAY, or use --screenshot with "
              "QT_QPA_PLATFORM=offscreen)", file=sys.stderr)
        return 2
    app = ensure_application()
    window = build_window(settings=QtCore.QSettings())
    window.show()
    QtGui.QGuiApplication.processEvents()
    return app.exec()
