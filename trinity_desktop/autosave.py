"""Autosave: a few seconds after the last change, the scenario and deck go to the user's data folder.

Files in `directory` (the app passes QStandardPaths.AppDataLocation):

- ``autosave.json``: the session (trinity_desktop.session_file format), written atomically;
- ``session.lock``: the PID of the running app, written with the first autosave and removed by `clean_exit()`.

On the next start, before creating its own `Autosaver`, the app calls `Autosaver.recoverable(directory)`: it
returns the autosave path when a lock is left whose process is gone (a crash or a kill) and an autosave exists.
A lock whose process is alive (another running instance) is not recoverable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6 import QtCore

from trinity_desktop import session_file
from trinity_desktop.deck import Deck
from trinity_desktop.model import Scenario

AUTOSAVE_NAME = "autosave.json"
LOCK_NAME = "session.lock"


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID is running (a zombie counts as gone). Never signals the process."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return False
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():  # Linux: a killed child not yet reaped by its parent is a zombie, i.e. dead
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
            return state not in ("Z", "X")
        except (OSError, IndexError):
            return True
    return True


def read_lock_pid(lock: Path) -> int | None:
    try:
        text = lock.read_text(encoding="utf-8").split()
        return int(text[0]) if text else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None


class Autosaver(QtCore.QObject):
    """Debounced autosave. `schedule` restarts a single-shot timer; its timeout writes the latest state."""

    saved = QtCore.Signal(object)   # Path of the autosave just written
    failed = QtCore.Signal(str)     # why the autosave could not be written (disk full, permissions...)

    def __init__(self, directory: Path, delay_ms: int = 3000, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.directory = Path(directory)
        self.autosave_path = self.directory / AUTOSAVE_NAME
        self.lock_path = self.directory / LOCK_NAME
        self._pending: tuple[Scenario, Deck | None] | None = None
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(max(0, int(delay_ms)))
        self._timer.timeout.connect(self.flush)

    @property
    def delay_ms(self) -> int:
        return self._timer.interval()

    def is_pending(self) -> bool:
        """True while a change waits for the timer."""
        return self._pending is not None

    def schedule(self, scenario: Scenario, deck: Deck | None = None) -> None:
        """Remember the latest state and (re)start the timer: only the last of a burst of edits is written."""
        self._pending = (scenario, deck)
        self._timer.start()

    def flush(self) -> bool:
        """Write the pending state now (the timer calls this). Returns True when a file was written."""
        self._timer.stop()
        if self._pending is None:
            return False
        scenario, deck = self._pending
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._write_lock()
            session_file.save(self.autosave_path, scenario, deck)
        except (OSError, session_file.SessionFileError) as exc:
            self.failed.emit(f"Autosave to {self.autosave_path} failed: {exc}")
            return False
        self._pending = None
        self.saved.emit(self.autosave_path)
        return True

    def _write_lock(self) -> None:
        if read_lock_pid(self.lock_path) == os.getpid():
            return
        tmp = self.lock_path.with_name(LOCK_NAME + ".tmp")
        tmp.write_text(f"{os.getpid()}\n", encoding="utf-8")
        os.replace(tmp, self.lock_path)

    def clean_exit(self) -> None:
        """A normal quit: stop the timer, remove the lock and the autosave (nothing to recover)."""
        self._timer.stop()
        self._pending = None
        owner = read_lock_pid(self.lock_path)
        if owner not in (None, os.getpid()) and pid_alive(owner):
            return  # another running instance wrote last: its files, not ours
        for path in (self.autosave_path, self.lock_path):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                self.failed.emit(f"Could not remove {path}: {exc}")

    @staticmethod
    def default_directory() -> Path:
        """QStandardPaths.AppDataLocation (needs the application and organisation names set first)."""
        location = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.AppDataLocation)
        return Path(location) if location else Path.home() / ".trinity-desktop"

    @staticmethod
    def recoverable(directory: Path) -> Path | None:
        """The autosave left by a process that crashed or was killed, or None.

        Call before this run's first autosave (which replaces the lock with this process's PID).
        """
        directory = Path(directory)
        autosave, lock = directory / AUTOSAVE_NAME, directory / LOCK_NAME
        if not (lock.is_file() and autosave.is_file()):
            return None
        pid = read_lock_pid(lock)
        if pid is not None and pid_alive(pid):
            return None
        return autosave

    @staticmethod
    def discard(directory: Path) -> None:
        """Forget a recoverable session (the user chose not to restore it)."""
        directory = Path(directory)
        for name in (AUTOSAVE_NAME, LOCK_NAME):
            path = directory / name
            if name == LOCK_NAME and (pid := read_lock_pid(path)) is not None and pid_alive(pid) \
                    and pid != os.getpid():
                continue
            try:
                path.unlink()
            except OSError:
                pass
