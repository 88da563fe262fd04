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


QUIET_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)  # the offscreen platform, per window


def _qt_message(mode, context, message: str) -> None:
    """Qt's own messages on stderr, less the offscreen platform's notice that it cannot size windows natively."""
    if not message.startswith(QUIET_QT_MESSAGES):
        print(message, file=sys.stderr)


def say(message: str, error: bool = True) -> None:
    """One line on the terminal: stderr with the program's error prefix (or stdout), control characters and
    newlines of file names shown as escapes."""
    from trinity_desktop.model.inputs.text_guard import escaped
    from trinity_desktop.refusals import print_refusal

    if error:
        print_refusal(message)
    else:
        print(escaped(message))


def no_display() -> str:
    """Why no window can be opened here (a Linux session without a display and no platform chosen), or ""."""
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") \
            and not os.environ.get("WAYLAND_DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        return ("no display found: set DISPLAY (or WAYLAND_DISPLAY), or QT_QPA_PLATFORM=offscreen for --screenshot, "
                "--present-to and --startup-time")
    return ""


def ensure_application(argv: list[str] | None = None) -> QtWidgets.QApplication:
    app = QtWidgets.QApplication.instance()
    if app is None:
        QtCore.qInstallMessageHandler(_qt_message)
        QtCore.QCoreApplication.setOrganizationName(ORGANIZATION)
        QtCore.QCoreApplication.setApplicationName(APPLICATION)
        app = QtWidgets.QApplication(argv or [sys.argv[0]])
        from trinity_desktop.about import app_icon

        app.setWindowIcon(app_icon())
        app.setDesktopFileName("trinity-desktop")  # matches the installed trinity-desktop.desktop entry
    from trinity_desktop.ui.theme import configure_pyqtgraph

    configure_pyqtgraph()
    return app


def build_window(settings: QtCore.QSettings | None = None, autosave_dir: Path | None = None):
    from trinity_desktop.main_window import MainWindow
    from trinity_desktop.store import ScenarioStore

    store = ScenarioStore(default_scenario())
    return MainWindow(store, settings, autosave_dir)


def build_guarded_window(settings: QtCore.QSettings | None = None, autosave_dir: Path | None = None):
    """The window of a running app: anything a panel raises into the event loop is shown in place."""
    from trinity_desktop.ui.panel_problem import guard_event_loop

    window = build_window(settings, autosave_dir)
    guard_event_loop(window)
    return window


def screenshot(path: str | Path, scale: float = 1.0, file: str | None = None) -> int:
    """Render the main window (all docks, default layout; `file` opened first) to a PNG; returns an exit code."""
    app = ensure_application()
    app.setProperty("trinity_quiet", True)
    window = build_guarded_window(settings=None)
    window.show()
    error = window.workspace.open_path(file) if file else ""
    if error:
        say(error)
        return 2
    for _ in range(10):  # let the layout settle (the default layout is finished by timers after show)
        app.processEvents()
        QtCore.QThread.msleep(30)
    pixmap = window.grab()
    if scale != 1.0:
        pixmap = pixmap.scaled(pixmap.size() * scale, QtCore.Qt.AspectRatioMode.KeepAspectRatio,
                               QtCore.Qt.TransformationMode.SmoothTransformation)
    path = Path(path)
    problem = _writable_folder(path.parent) or _png_problem(pixmap, path)
    tear_down(window)
    if problem:
        say(f"could not write {path}: {problem}")
        return 2
    say(f"wrote {path} ({pixmap.width()}x{pixmap.height()})", error=False)
    return 0


def _png_problem(image, path: Path) -> str:
    """Write `image` as a PNG atomically (png_output); the reason it could not be, or ""."""
    from trinity_desktop.png_output import save_png

    try:
        save_png(image, path)
    except OSError as exc:
        return str(exc)
    return ""


def _writable_folder(folder: Path) -> str:
    """Create `folder` if needed; the reason it cannot be, or ""."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create the folder {folder} ({exc.strerror or exc})"
    return ""


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
    window = build_guarded_window(settings=None)
    probe = _FirstPaint(app, start)
    window.installEventFilter(probe)
    window.show()
    QtCore.QTimer.singleShot(30_000, app.quit)
    app.exec()
    tear_down(window)
    if probe.elapsed is None:
        say("the window was never painted")
        return 1
    print(f"first paint after {probe.elapsed:.3f} s (from program entry, interpreter start excluded)")
    return 0


def _ask_recovery(window, path: Path, can_restore: bool) -> str:
    """Ask what to do with one abandoned autosave: "restore", "discard" or "keep" (offered again next start)."""
    box = QtWidgets.QMessageBox(window)
    box.setIcon(QtWidgets.QMessageBox.Icon.Question)
    box.setWindowTitle("Restore unsaved work?")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime)) if path.exists() else "?"
    text = f"Trinity Desktop did not close normally: work autosaved at {when} was not saved to a file."
    restore = box.addButton("Restore", QtWidgets.QMessageBox.ButtonRole.AcceptRole) if can_restore else None
    if not can_restore:
        text += " Another instance's work was restored already; keep this one for the next start, or discard it."
    box.setText(text)
    discard = box.addButton("Discard", QtWidgets.QMessageBox.ButtonRole.DestructiveRole)
    keep = box.addButton("Keep for later", QtWidgets.QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(restore or keep)
    box.setEscapeButton(keep)
    box.exec()
    clicked = box.clickedButton()
    return "restore" if clicked is restore and restore is not None else "discard" if clicked is discard else "keep"


def offer_recovery(window, directory, ask=_ask_recovery) -> list[str]:
    """After a crash or kill, offer every abandoned instance's autosaved work, newest first. One can be restored
    into this window; each can be discarded; any other (a refusal, Escape) stays on disk for the next start.
    Returns the answers, in order."""
    from trinity_desktop.autosave import Autosaver

    answers, restored = [], False
    for path in Autosaver.abandoned(directory):
        answer = ask(window, path, not restored)
        if answer == "restore" and not restored:
            restored = window.workspace.recover(path) == ""
        elif answer == "discard":
            Autosaver.discard_one(path)
        answers.append(answer)
    return answers


def present_slides(file: str, folder: str | Path) -> int:
    """Open a deck, present it, and save one PNG per slide to `folder` (for checking a talk before giving it)."""
    from trinity_desktop.audit_slides import crushed_panels, outside_screen
    from trinity_desktop.presentation import render_slides
    from trinity_desktop.refusals import print_refusal

    app = ensure_application()
    app.setProperty("trinity_quiet", True)
    window = build_guarded_window(settings=None)
    try:
        window.resize(1920, 1080)
        window.show()
        error = window.workspace.open_path(file)
        if error:
            say(error)
            return 2
        if window.talk.deck is None or not window.talk.deck.slides:
            say(f"{file} holds no slides")
            return 2
        folder = Path(folder)
        problem = _writable_folder(folder)
        if problem:
            say(f"--present-to: {problem}")
            return 2
        count, crushed = 0, []
        for i, image in render_slides(window):
            problem = _png_problem(image, folder / f"slide_{i + 1:02d}.png")
            if problem:
                say(f"could not write {folder / f'slide_{i + 1:02d}.png'}: {problem}")
                return 1
            crushed += [f"slide {i + 1}: {line}" for line in crushed_panels(window) + outside_screen(window)]
            count += 1
        say(f"wrote {count} slides to {folder}", error=False)
        for line in crushed:   # a panel below its declared minimum size cannot tell its message
            print_refusal(line, prefix="trinity-desktop: warning: ")
        return 1 if crushed else 0
    finally:
        tear_down(window)


def tear_down(window) -> None:
    """Close and delete the window in a defined order before the interpreter exits: stop presenting and every
    timer and animation, close (autosave's clean exit), then delete the window and all its children (plots,
    scenes, timers) while the QApplication still exists, and drain the posted events. Left to Python's exit,
    the wrappers are collected in arbitrary order, some after the QApplication, which crashed about one run
    in four after --present-to (and one in ten after --startup-time: PySide's exit hook deleting the window
    during interpreter finalization, pyqtgraph's Python overrides running half torn down)."""
    app = QtWidgets.QApplication.instance()
    talk = getattr(window, "talk", None)
    if talk is not None:
        talk.presenter.stop()
    if hasattr(window, "stop_background_work"):
        window.stop_background_work()
    for timer in window.findChildren(QtCore.QTimer):
        timer.stop()
    for animation in window.findChildren(QtCore.QAbstractAnimation):
        animation.stop()
    app.processEvents()  # zero-delay layout timers run while the window still exists
    window.close()
    window.deleteLater()
    app.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    app.processEvents()
    import gc

    gc.collect()


class _FileOpenHandler(QtCore.QObject):
    """Opens files that the OS hands over as QFileOpenEvent (macOS double-click on a .trinity.json)."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QtCore.QEvent.Type.FileOpen:
            self.window.workspace.open_path(event.file())
            return True
        return False


def quit_on_interrupt(app: QtCore.QCoreApplication, quit_app=None, on_terminate=None) -> QtCore.QTimer:
    """Ctrl+C in the terminal quits the app as the Quit action would (closing the window, a clean exit). SIGTERM
    (a logout, `kill`) first calls `on_terminate` (the app keeps the unsaved work for the next start), then quits
    the same way, exit status 0.

    Python runs a signal handler only between bytecodes, and Qt's event loop is C++: a short timer wakes the
    interpreter so that SIGINT is seen within 200 ms. Returns the timer (kept alive by its parent, `app`)."""
    import signal

    quit_app = quit_app or (lambda: (QtWidgets.QApplication.closeAllWindows(), app.quit()))
    signal.signal(signal.SIGINT, lambda *_: QtCore.QTimer.singleShot(0, quit_app))

    def terminate() -> None:
        if on_terminate is not None:
            on_terminate()
        quit_app()

    signal.signal(signal.SIGTERM, lambda *_: QtCore.QTimer.singleShot(0, terminate))
    timer = QtCore.QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(200)
    return timer


def run(file: str | None = None) -> int:
    """Open the main window with the saved layout (and `file`, if given) and run the event loop (the caller
    has checked `no_display`)."""
    from trinity_desktop.autosave import Autosaver

    app = ensure_application()
    directory = Autosaver.default_directory()
    window = build_guarded_window(settings=QtCore.QSettings(), autosave_dir=directory)
    window.show()
    QtGui.QGuiApplication.processEvents()
    offer_recovery(window, directory)
    if file:
        window.workspace.open_path(file)
    else:
        window.welcome.offer()   # the first-run page, until it is closed once
    app.installEventFilter(_FileOpenHandler(window))
    app.aboutToQuit.connect(window.workspace.clean_exit)
    quit_on_interrupt(app, on_terminate=window.workspace.keep_for_recovery)
    code = app.exec()
    tear_down(window)
    return code
