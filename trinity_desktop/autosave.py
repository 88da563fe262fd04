"""Autosave: within `DELAY_MS` of the first unsaved change, the scenario and deck go to the user's data folder.

Files in `directory` (the app passes QStandardPaths.AppDataLocation):

- ``autosave.json``: the session (trinity_desktop.session_file format), written atomically (a temporary file
  renamed into place) by a worker thread, so the UI thread never waits for the disk;
- ``session.lock``: "PID START" of the instance that owns the autosave (START: the process's start time from
  /proc, so that a PID reused by another process is not mistaken for the owner), written with the first
  autosave and removed by `clean_exit()`.

An instance takes that main pair only when it is free. When another instance is alive, or an abandoned autosave
still waits to be offered, it writes its own pair, ``autosave-PID.json`` and ``session-PID.lock``: no instance
overwrites or deletes work that was not its own.

The timer starts at the first change after a write and is not restarted by later ones, so steady editing is
written at most `delay_ms` (plus one write) after each edit: a kill loses at most the last edit.

On the next start the app calls `Autosaver.abandoned(directory)`: every autosave whose lock names a process that
is gone (a crash or a kill) or that is not this app (a reused PID), newest first. Each is offered; only one the
user restored (and this instance autosaved again) or discarded is removed (`discard_one`). SIGTERM keeps the
work for the next start (`keep_for_recovery`).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from PySide6 import QtCore

from trinity_desktop import session_file
from trinity_desktop.deck import Deck
from trinity_desktop.model import Scenario
from trinity_desktop.model.base.files import write_atomically
from trinity_desktop.ui import worker_relay

AUTOSAVE_NAME = "autosave.json"
LOCK_NAME = "session.lock"
APP_WORDS = (b"trinity_desktop", b"trinity-desktop")  # in the command line of this app's processes
DELAY_MS = 250  # an edit reaches the disk within this delay plus one write (a few ms), well under 1 s


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
    """Autosave. `schedule` starts a single-shot timer if none runs; at its timeout a worker thread writes the
    latest state (the UI thread never waits for the disk); `flush` writes it now, in the caller's thread."""

    saved = QtCore.Signal(object)   # Path of the autosave just written
    failed = QtCore.Signal(str)     # why the autosave could not be written (disk full, permissions...)

    def __init__(self, directory: Path, delay_ms: int = DELAY_MS, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self.directory = Path(directory)
        self.autosave_path = self.directory / AUTOSAVE_NAME
        self.lock_path = self.directory / LOCK_NAME
        self._owns_files = False
        self._pending: tuple[Scenario, Deck | None] | None = None
        self._state_lock = threading.Lock()   # guards _pending
        self._io_lock = threading.Lock()      # one write at a time, in the order the states were taken
        self._wake = threading.Event()
        self._stopping = False
        self._worker: threading.Thread | None = None
        worker_relay.install()   # the writer thread reports through it (never emits on this object)
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(max(0, int(delay_ms)))
        self._timer.timeout.connect(self._write_in_background)

    @property
    def delay_ms(self) -> int:
        return self._timer.interval()

    def is_pending(self) -> bool:
        """True while a change waits to be written."""
        with self._state_lock:
            return self._pending is not None

    def schedule(self, scenario: Scenario, deck: Deck | None = None) -> None:
        """Remember the latest state; the timer starts at the first unsaved change and is not restarted by later
        ones, so that a steady stream of edits is still written every `delay_ms`."""
        with self._state_lock:
            self._pending = (scenario, deck)
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> bool:
        """Write the pending state now, in this thread. Returns True when a file was written."""
        self._timer.stop()
        path, problem = self._write_latest()
        self._report(path, problem)
        return path is not None

    def _write_in_background(self) -> None:
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._work, name="trinity-autosave", daemon=True)
            self._worker.start()
        self._wake.set()

    def _work(self) -> None:
        while not self._stopping:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            path, problem = self._write_latest()
            if path is not None or problem:
                worker_relay.post(self._report, path, problem)

    def _write_latest(self) -> tuple[Path | None, str]:
        """Take the pending state and write it atomically; on failure it stays pending (unless a newer one came).
        Returns (the path written or None, the problem or "")."""
        with self._io_lock:
            with self._state_lock:
                item, self._pending = self._pending, None
            if item is None:
                return None, ""
            scenario, deck = item
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._write_lock()
                session_file.save(self.autosave_path, scenario, deck)
            except (OSError, session_file.SessionFileError) as exc:
                with self._state_lock:
                    if self._pending is None:
                        self._pending = item
                return None, f"Autosave to {self.autosave_path} failed: {exc}"
            return self.autosave_path, ""

    @QtCore.Slot(object, str)
    def _report(self, path: Path | None, problem: str) -> None:
        if problem:
            self.failed.emit(problem)
        elif path is not None:
            self.saved.emit(path)

    def _write_lock(self) -> None:
        """Take the main pair only when it is free (no lock and no autosave: an abandoned one waits to be offered
        or discarded); otherwise this instance writes its own pair."""
        if self._owns_files:
            return
        primary_lock, primary_save = self.directory / LOCK_NAME, self.directory / AUTOSAVE_NAME
        if primary_lock.exists() or primary_save.exists():
            autosave_name, lock_name = instance_names(os.getpid())
            self.autosave_path, self.lock_path = self.directory / autosave_name, self.directory / lock_name
        write_atomically(self.lock_path, f"{os.getpid()} {process_start(os.getpid())}\n".encode())
        self._owns_files = True

    def _stop_worker(self) -> None:
        self._timer.stop()
        self._stopping = True
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout=10)
        self._worker = None
        self._stopping = False
        self._wake.clear()

    def keep_for_recovery(self) -> bool:
        """The app is being terminated (SIGTERM, logout): write the pending work now and leave this instance's
        files in place, so that the next start offers them. Returns True when there is work to offer."""
        self._stop_worker()
        self.flush()
        kept = self._owns_files and self.autosave_path.exists()
        self._owns_files = False  # a later clean_exit leaves the files alone
        return kept

    def clean_exit(self) -> None:
        """A normal quit: stop the timer, remove this instance's lock and autosave (nothing to recover)."""
        self._stop_worker()
        with self._state_lock:
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
        found = []
        for autosave, lock in pairs:
            try:
                if lock.is_file() and autosave.is_file() and not lock_owner_alive(lock):
                    found.append((autosave.stat().st_mtime, autosave, lock))
            except OSError:
                continue
        return [(a, lock) for _t, a, lock in sorted(found, key=lambda item: item[0], reverse=True)]

    @staticmethod
    def abandoned(directory: Path) -> list[Path]:
        """Every autosave left by an instance that crashed or was killed, newest first (each one to be offered)."""
        return [autosave for autosave, _lock in Autosaver._abandoned(directory)]

    @staticmethod
    def recoverable(directory: Path) -> Path | None:
        """The newest autosave left by a process that crashed or was killed, or None."""
        found = Autosaver.abandoned(directory)
        return found[0] if found else None

    @staticmethod
    def discard_one(autosave: Path) -> None:
        """Forget one offered autosave (restored and autosaved again, or discarded by the user) and its lock."""
        autosave = Path(autosave)
        for pair in Autosaver._abandoned(autosave.parent):
            if pair[0] == autosave:
                for path in pair:
                    try:
                        path.unlink()
                    except OSError:
                        pass

    @staticmethod
    def discard(directory: Path) -> None:
        """Forget every recoverable session (the user discarded them all)."""
        for autosave in Autosaver.abandoned(directory):
            Autosaver.discard_one(autosave)
