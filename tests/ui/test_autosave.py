"""Autosave: debounced writes, the lock file, clean exit, and recovery after the app is killed (SIGKILL)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402

from trinity_desktop import session_file  # noqa: E402
from trinity_desktop.autosave import AUTOSAVE_NAME, LOCK_NAME, Autosaver, pid_alive  # noqa: E402
from trinity_desktop.deck import Deck, Slide  # noqa: E402
from trinity_desktop.defaults import default_scenario  # noqa: E402


@pytest.fixture
def saver(qtbot, tmp_path):
    autosaver = Autosaver(tmp_path / "data", delay_ms=200)
    yield autosaver
    autosaver.clean_exit()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_schedule_writes_after_the_delay_only(saver, qtbot):
    sc = default_scenario().replace(tp=4)
    writes = []
    saver.saved.connect(writes.append)
    started = time.monotonic()
    saver.schedule(sc, None)
    assert not saver.autosave_path.exists() and saver.is_pending()  # not before the delay
    qtbot.waitUntil(lambda: bool(writes), timeout=3000)
    assert time.monotonic() - started >= 0.19  # the 200 ms delay
    assert writes == [saver.autosave_path]
    assert session_file.load(saver.autosave_path) == (sc, None)
    assert saver.lock_path.read_text().split()[0] == str(os.getpid())
    assert not saver.is_pending()


def test_a_burst_of_edits_is_written_once_with_the_last_state(qtbot, tmp_path):
    saver = Autosaver(tmp_path, delay_ms=1000)
    base = default_scenario()
    deck = Deck("talk", (Slide("one", "first", base),))
    writes = []
    saver.saved.connect(writes.append)
    for tp in (1, 2, 4, 8):
        saver.schedule(base.replace(tp=tp), deck)
        qtbot.wait(30)  # each edit comes before the 1 s delay ends: one write, a second after the first edit
    assert writes == []
    qtbot.waitUntil(lambda: len(writes) == 1, timeout=5000)
    qtbot.wait(200)
    assert len(writes) == 1
    assert session_file.load(saver.autosave_path) == (base.replace(tp=8), deck)


def test_clean_exit_removes_lock_and_autosave(saver, qtbot):
    saver.schedule(default_scenario(), None)
    assert saver.flush()
    assert saver.autosave_path.exists() and saver.lock_path.exists()
    assert Autosaver.recoverable(saver.directory) is None  # our own lock: we are alive
    saver.clean_exit()
    assert not saver.autosave_path.exists() and not saver.lock_path.exists()
    assert Autosaver.recoverable(saver.directory) is None


def test_recoverable_only_when_the_lock_owner_is_dead(tmp_path):
    session_file.save(tmp_path / AUTOSAVE_NAME, default_scenario())
    assert Autosaver.recoverable(tmp_path) is None  # autosave without a lock: a clean exit that kept it
    (tmp_path / LOCK_NAME).write_text(f"{os.getpid()}\n")
    assert Autosaver.recoverable(tmp_path) is None  # a running instance
    dead = _dead_pid()
    assert not pid_alive(dead)
    (tmp_path / LOCK_NAME).write_text(f"{dead}\n")
    assert Autosaver.recoverable(tmp_path) == tmp_path / AUTOSAVE_NAME
    (tmp_path / LOCK_NAME).write_text("garbage")
    assert Autosaver.recoverable(tmp_path) == tmp_path / AUTOSAVE_NAME
    Autosaver.discard(tmp_path)
    assert Autosaver.recoverable(tmp_path) is None and not (tmp_path / AUTOSAVE_NAME).exists()


def test_write_failure_is_reported_not_raised(qtbot, tmp_path):
    blocker_file = tmp_path / "not-a-folder"
    blocker_file.write_text("x")
    saver = Autosaver(blocker_file / "sub", delay_ms=10)
    messages = []
    saver.failed.connect(messages.append)
    saver.schedule(default_scenario(), None)
    qtbot.waitUntil(lambda: bool(messages), timeout=3000)
    assert "Autosave" in messages[0] and saver.is_pending()


CHILD = textwrap.dedent("""
    import os, sys
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from pathlib import Path
    from PySide6 import QtCore
    from trinity_desktop.autosave import Autosaver
    from trinity_desktop.deck import Deck, Slide
    from trinity_desktop.defaults import default_scenario

    app = QtCore.QCoreApplication([])
    saver = Autosaver(Path(sys.argv[1]), delay_ms=100)
    edited = default_scenario().replace(tp=4, zero=3, recompute="full", seq_len=4096)
    saver.saved.connect(lambda path: (print("saved", flush=True)))
    saver.schedule(edited, Deck("killed talk", (Slide("only", "caption", edited, ("dock_breakdown",)),)))
    app.exec()  # runs until killed
""")


def test_autosave_survives_sigkill(tmp_path):
    folder = tmp_path / "appdata"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(folder)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "saved" not in line:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
        assert "saved" in line, proc.stderr.read() if proc.poll() is not None else "no autosave in 60 s"
        assert Autosaver.recoverable(folder) is None  # the app is still running: nothing to recover
    finally:
        proc.kill()  # SIGKILL on POSIX: no clean_exit, the lock stays
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    path = Autosaver.recoverable(folder)
    assert path == folder / AUTOSAVE_NAME
    scenario, deck = session_file.load(path)
    assert scenario == default_scenario().replace(tp=4, zero=3, recompute="full", seq_len=4096)
    assert deck.title == "killed talk" and deck.slides[0].scenario == scenario
