"""Autosave: a few seconds after the first unsaved change, the scenario and deck go to the user's data folder.

Files in `directory` (the app passes QStandardPaths.AppDataLocation):

- ``autosave.json``: the session (trinity_desktop.session_file format), written atomically;
- ``session.lock``: "PID START" of the instance that owns the autosave (START: the process's start time from
  /proc, so that a PID reused by another process is not mistaken for the owner), written with the first
  autosave and removed by `clean_exit()`.

A second instance started while the first is alive leaves those two files alone and uses its own pair,
``autosave-PID.json`` and ``session-PID.lock``: quitting it never deletes the first instance's work.

The timer starts at the first change after a save and is not restarted by later ones, so steady editing is
written at most `delay_ms` after its first unsaved edit.

On the next start, before creating its own `Autosaver`, the app calls `Autosaver.recoverable(directory)`: it
returns the newest autosave whose lock names a process that is gone (a crash or a kill) or that is not this app
(a reused PID). A lock whose owner is alive (another running instance) is not recoverable.
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
APP_WORDS = (b"trinity_desktop", b"trinity-desktop")  # in the command line of this app's processes


def instance_names(pid: int) -> tuple[str, str]:
    """(autosave, lock) file names of a second instance."""
    return f"autosave-{pid}.json", f"session-{pid}.lock"


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
    pid, _start = _read_lock(lock)
    return pid


def _read_lock(lock: Path) -> tuple[int | None, str]:
    try:
        text = lock.read_text(encoding="utf-8").split()
        return (int(text[0]) if text else None), (text[1] if len(text) > 1 else "")
    except (OSError, ValueError, UnicodeDecodeError):
        return None, ""


def process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), or "" where unknown."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError, ValueError):
        return ""


def _runs_this_app(pid: int) -> bool:
    """Whether the process's command line names this app; True where the command line cannot be read."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().lower()
    except OSError:
        return pid == os.getpid() or not Path("/proc/self/cmdline").exists()
    return pid == os.getpid() or any(word in cmdline for word in APP_WORDS)


def lock_owner_alive(lock: Path) -> bool:
    """Whether the lock's process is running and is the instance that wrote it: the same PID and start time,
    or, for a lock without a start time, a process running this app. A reused PID (for example 1) is not."""
    pid, start = _read_lock(lock)
    if pid is None or not pid_alive(pid):
        return False
    now = process_start(pid)
    if start and now:
        return start == now
    return _runs_this_app(pid)


class Autosaver(QtCore.QObject):
    """Autosave. `schedule` starts a single-shot timer if none runs; its timeout writes the latest state."""

    saved = QtCore.Signal(object)   # Path of the autosave just written
    failed = QtCore.Signal(str)     # why the autosave could not be written (disk full, permissions...)

    def __init__(self, directory: Path, delay_ms: int = 3000, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.directory = Path(directory)
        self.autosave_path = self.directory / AUTOSAVE_NAME
        self.lock_path = self.directory / LOCK_NAME
        self._owns_files = False
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
        """Remember the latest state; the timer starts at the first unsaved change and is not restarted by later
        ones, so that a steady stream of edits is still written every `delay_ms`."""
        self._pending = (scenario, deck)
        if not self._timer.isActive():
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
        if self._owns_files:
            return
        primary = self.directory / LOCK_NAME
        if primary.exists() and lock_owner_alive(primary) and read_lock_pid(primary) != os.getpid():
            autosave_name, lock_name = instance_names(os.getpid())  # another instance owns the main pair
            self.autosave_path, self.lock_path = self.directory / autosave_name, self.directory / lock_name
        tmp = self.lock_path.with_name(self.lock_path.name + ".tmp")
        tmp.write_text(f"{os.getpid()} {process_start(os.getpid())}\n", encoding="utf-8")
        os.replace(tmp, self.lock_path)
        self._owns_files = True

    def clean_exit(self) -> None:
        """A normal quit: stop the timer, remove this instance's lock and autosave (nothing to recover)."""
        self._timer.stop()
        self._pending = None
        if not self._owns_files:
            return  # nothing written by this instance: any files here belong to another one, or await recovery
        for path in (self.autosave_path, self.lock_path):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                self.failed.emit(f"Could not remove {path}: {exc}")
        self._owns_files = False

    @staticmethod
    def default_directory() -> Path:
        """QStandardPaths.AppDataLocation (needs the application and organisation names set first)."""
        location = QtCore.QStandardPaths.writableLocation(QtCore.QStandardPaths.StandardLocation.AppDataLocation)
        return Path(location) if location else Path.home() / ".trinity-desktop"

    @staticmethod
    def _abandoned(directory: Path) -> list[tuple[Path, Path]]:
        """(autosave, lock) pairs whose lock's owner is gone, newest autosave first."""
        directory = Path(directory)
        pairs = [(directory / AUTOSAVE_NAME, directory / LOCK_NAME)]
        try:
            locks = sorted(directory.glob("session-*.lock"))
        except OSError:
            locks = []
        for lock in locks:
            pid = lock.stem.removeprefix("session-")
            if pid.isdigit():
                pairs.append((directory / instance_names(int(pid))[0], lock))
        found = [(a, lock) for a, lock in pairs if lock.is_file() and a.is_file() and not lock_owner_alive(lock)]
        return sorted(found, key=lambda pair: pair[0].stat().st_mtime, reverse=True)

    @staticmethod
    def recoverable(directory: Path) -> Path | None:
        """The newest autosave left by a process that crashed or was killed, or None.

        Call before this run's first autosave (which takes over an abandoned main lock).
        """
        found = Autosaver._abandoned(directory)
        return found[0][0] if found else None

    @staticmethod
    def discard(directory: Path) -> None:
        """Forget every recoverable session (the user chose not to restore, or restored and saved it again)."""
        for pair in Autosaver._abandoned(directory):
            for path in pair:
                try:
                    path.unlink()
                except OSError:
                    pass
