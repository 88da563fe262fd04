"""The GUI with bad or damaged input (issue 16, items 12, 13, 15, 17, 20): it never crashes and never raises."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui

from trinity_desktop.layout_state import check_layout
from trinity_desktop.main_window import LAYOUT_VERSION

# A single-byte flip of the default layout that crashes QMainWindow.restoreState (a segfault, found by flipping
# bytes with masks 0xff, 0x80, 0x10, 0x01 and restoring each in a subprocess): the first dock-area index.
QT_CRASHERS = ((13, 0xFF),)


@pytest.fixture
def window(qtbot):
    from trinity_desktop.app import build_window

    QtCore.QCoreApplication.instance().setProperty("trinity_quiet", True)
    win = build_window(None)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.talk.presenter.stop()


def _docks(window) -> list[str]:
    return [d.objectName() for d in window.docks.values()]


def _state(window) -> bytes:
    return bytes(window.saveState(LAYOUT_VERSION))


# --- item 12: a damaged saved layout ---------------------------------------------------------------------

def test_layouts_qt_writes_pass_the_check(window, qtbot):
    assert check_layout(_state(window), LAYOUT_VERSION, _docks(window)) == ""
    window.arrange(["roofline", "breakdown", "heatmap"])
    assert check_layout(_state(window), LAYOUT_VERSION, _docks(window)) == ""
    window.tabifyDockWidget(window.docks["roofline"], window.docks["heatmap"])
    assert check_layout(_state(window), LAYOUT_VERSION, _docks(window)) == ""


@pytest.mark.parametrize("at, mask", QT_CRASHERS)
def test_flips_that_crash_qt_are_refused(window, at, mask):
    state = bytearray(window._default_state)
    assert len(state) > at
    state[at] ^= mask
    assert "damaged" in check_layout(bytes(state), LAYOUT_VERSION, _docks(window))


@pytest.mark.parametrize("mangle, words", [
    (lambda s: s[:-1], "ends early"),
    (lambda s: s + b"\0", "after its end"),
    (lambda s: s.replace("dock_roofline".encode("utf-16-be"), "dock_rooflinX".encode("utf-16-be")), "unknown dock"),
    (lambda s: s.replace("dock_outcomes".encode("utf-16-be"), "dock_roofline".encode("utf-16-be")), "twice"),
    (lambda s: s[:4] + (7).to_bytes(4, "big") + s[8:], "version 7"),
    (lambda s: b"", "empty"),
])
def test_damaged_layouts_are_refused_with_a_reason(window, mangle, words):
    assert words in check_layout(mangle(_state(window)), LAYOUT_VERSION, _docks(window))


def test_slide_with_a_damaged_layout_shows_the_default_layout_and_says_so(window, qtbot):
    from trinity_desktop.deck import Slide

    state = bytearray(window._default_state)
    state[13] ^= 0xFF
    slide = Slide("Broken", "", window.store.scenario, ("dock_breakdown",),
                  layout=base64.b64encode(bytes(state)).decode("ascii"))
    window.show_slide_layout(slide)  # used to crash the process in restoreState
    message = window.statusBar().currentMessage()
    assert "Broken" in message and "default layout" in message and "damaged" in message
    assert window.docks["roofline"].isVisibleTo(window) and window.docks["heatmap"].isVisibleTo(window)


def test_saved_layout_in_settings_is_checked(tmp_path, qtbot):
    from trinity_desktop.app import build_window

    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    first = build_window(settings)
    qtbot.addWidget(first)
    state = bytearray(first._default_state)
    state[13] ^= 0xFF
    settings.setValue("window/state", QtCore.QByteArray(bytes(state)))
    settings.setValue("window/layout_version", LAYOUT_VERSION)
    settings.setValue("window/geometry", "not a geometry")
    second = build_window(settings)
    qtbot.addWidget(second)
    assert not second._restored
    assert "saved window layout" in second.statusBar().currentMessage()


def test_random_single_byte_flips_never_crash(tmp_path):
    script = Path(__file__).with_name("layout_flips.py")
    out = subprocess.run([sys.executable, str(script), "16", "60"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]  # a segfault is -11
    restored, refused = (int(w) for w in out.stdout.split()[1::2])
    assert restored + refused == 60 and restored > 0 and refused > 0


# --- item 13: autosave keeps work ------------------------------------------------------------------------

def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_steady_editing_is_saved_while_it_goes_on(qtbot, tmp_path):
    from trinity_desktop.autosave import Autosaver
    from trinity_desktop.defaults import default_scenario

    saver = Autosaver(tmp_path, delay_ms=300)
    writes = []
    saver.saved.connect(writes.append)
    base = default_scenario()
    for i in range(10):  # an edit every 150 ms, each before the 300 ms delay would end
        saver.schedule(base.replace(seq_len=1024 * (i + 1)), None)
        qtbot.wait(150)
    written_while_editing = len(writes)
    saver.clean_exit()
    assert written_while_editing >= 1  # a restarting timer wrote nothing until the edits stopped


def test_a_pid_reused_by_another_process_does_not_block_recovery(tmp_path):
    from trinity_desktop import session_file
    from trinity_desktop.autosave import AUTOSAVE_NAME, LOCK_NAME, Autosaver, pid_alive
    from trinity_desktop.defaults import default_scenario

    session_file.save(tmp_path / AUTOSAVE_NAME, default_scenario())
    if not (pid_alive(1) and Path("/proc/1/cmdline").exists()):
        pytest.skip("needs a running PID 1 and /proc")
    (tmp_path / LOCK_NAME).write_text("1\n")           # PID 1 is init, not this app
    assert Autosaver.recoverable(tmp_path) == tmp_path / AUTOSAVE_NAME
    (tmp_path / LOCK_NAME).write_text(f"{os.getpid()} 1\n")  # our PID, but not our start time
    assert Autosaver.recoverable(tmp_path) == tmp_path / AUTOSAVE_NAME


OTHER_INSTANCE = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from pathlib import Path
from PySide6 import QtCore, QtGui
from trinity_desktop.autosave import Autosaver
from trinity_desktop.defaults import default_scenario

app = QtCore.QCoreApplication([])
saver = Autosaver(Path(sys.argv[1]), delay_ms=10)
saver.saved.connect(lambda path: print("saved", flush=True))
saver.schedule(default_scenario().replace(zero=3), None)
app.exec()  # runs until killed
"""


def test_a_second_instance_leaves_the_first_ones_autosave_alone(qtbot, tmp_path):
    from trinity_desktop import session_file
    from trinity_desktop.autosave import AUTOSAVE_NAME, Autosaver
    from trinity_desktop.defaults import default_scenario

    first = subprocess.Popen([sys.executable, "-c", OTHER_INSTANCE, str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "saved", first.stderr.read()
        second = Autosaver(tmp_path, delay_ms=10)          # instance B: starts, edits, quits normally
        second.schedule(default_scenario().replace(zero=1), None)
        assert second.flush()
        assert second.autosave_path != tmp_path / AUTOSAVE_NAME
        second.clean_exit()
        assert not second.autosave_path.exists()
    finally:
        first.kill()                                       # A is killed later
        first.wait(timeout=30)
        first.stdout.close()
        first.stderr.close()
    path = Autosaver.recoverable(tmp_path)
    assert path == tmp_path / AUTOSAVE_NAME
    assert session_file.load(path)[0] == default_scenario().replace(zero=3)


def test_recovered_work_is_untitled_and_not_a_recent_file(qtbot, tmp_path):
    from trinity_desktop import session_file
    from trinity_desktop.app import build_window
    from trinity_desktop.autosave import AUTOSAVE_NAME, LOCK_NAME, Autosaver
    from trinity_desktop.defaults import default_scenario

    data = tmp_path / "data"
    data.mkdir()
    session_file.save(data / AUTOSAVE_NAME, default_scenario().replace(zero=3))
    (data / LOCK_NAME).write_text(f"{_dead_pid()}\n")
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    window = build_window(settings, autosave_dir=data)
    qtbot.addWidget(window)
    path = Autosaver.recoverable(data)
    assert window.workspace.recover(path) == ""
    assert window.store.scenario.zero == 3
    assert "autosave" not in window.windowTitle() and "recovered" in window.windowTitle()
    assert window.workspace.recent_files() == []
    assert Autosaver.recoverable(data) is None  # now this instance's own autosave, under its live lock
    window.workspace.clean_exit()


# --- item 17: panels never raise on scenarios the app accepts ------------------------------------------

def test_a_panel_that_cannot_draw_says_so_in_place(window, monkeypatch):
    from trinity_desktop.model import ValidationError
    from trinity_desktop.ui.panel_problem import problem_text

    panel = window.panels["matrix"]

    def cannot_draw(results):  # as the KV views did at prompt + generated > 16,777,216 tokens
        raise ValidationError("context", 16_777_232, "a whole number of tokens from 1 to 16777216")

    monkeypatch.setattr(panel, "update_results", cannot_draw)
    assert window.store.edit(seq_len=2048)
    window.refresh_all()  # every panel, hidden or not: none raises into the event loop
    assert "cannot show this scenario" in problem_text(panel) and "16777216" in problem_text(panel)
    monkeypatch.undo()
    assert window.store.edit(seq_len=4096)
    window.refresh_all()
    assert problem_text(panel) == ""


def test_prompt_and_generated_spin_boxes_share_the_context_limit(window):
    controls = window.panels["controls"]
    sc = window.store.scenario
    assert controls.widgets["gen_len"].maximum() == (1 << 24) - sc.prompt_len
    assert controls.widgets["prompt_len"].maximum() == (1 << 24) - sc.gen_len


def test_cxl_target_falls_back_to_host_on_hardware_without_cxl(window):
    from trinity_desktop.ui.panel_problem import problem_text

    store = window.store
    assert store.edit(kind="decode", gpus=1, tp=1, pp=1, kv_offload_fraction=0.5, kv_offload_tier="cxl")
    assert store.edit(kind="train", gpus=8, tp=8, kv_offload_fraction=0.0)
    assert store.edit(hardware=window.hardware["a100-80gb-sxm"])
    assert store.scenario.kv_offload_tier == "host"
    window.refresh_all()
    assert problem_text(window.panels["roofline"]) == ""
    assert store.edit(kind="decode", gpus=1, tp=1)  # was refused: the CXL target had no pool on the A100


def test_clear_added_with_nothing_added(qtbot):
    from trinity_desktop.ui.outcomes_panel import OutcomesPanel

    panel = OutcomesPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.clear_added()  # raised UnboundLocalError inside pyqtgraph
    panel.clear_button.click()


# --- item 20: low severity -------------------------------------------------------------------------------

HTML_NAME = "<img src='/nonexistent/x.png' width='3000' height='2000'>Evil"


def _labels_rendering_html(window) -> list[str]:
    """Labels (and pyqtgraph text) that would render the HTML name as rich text instead of showing it."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    bad = []
    for label in window.findChildren(QtWidgets.QLabel):
        text = label.text()
        if "<img" not in text:
            continue
        fmt = label.textFormat()
        rich = fmt == QtCore.Qt.TextFormat.RichText or (fmt == QtCore.Qt.TextFormat.AutoText
                                                         and QtGui.Qt.mightBeRichText(text))
        if rich:
            bad.append(f"{label.objectName() or label.accessibleName() or type(label.parent()).__name__}: {text[:60]}")
    for view in window.findChildren(pg.GraphicsView):
        for item in view.scene().items():
            html = item.toHtml() if hasattr(item, "toHtml") else ""
            if "<img" in html:
                bad.append(f"{type(item).__name__}: {html[:60]}")
    return bad


def test_names_and_titles_show_as_plain_text(window, qtbot):
    import dataclasses

    from trinity_desktop.deck import Deck, Slide

    sc = window.store.scenario
    evil = sc.replace(model=dataclasses.replace(sc.model, name=HTML_NAME),
                      hardware=dataclasses.replace(sc.hardware, name=HTML_NAME))
    assert window.store.set_scenario(evil)
    window.refresh_all()
    deck = Deck(HTML_NAME, (Slide(HTML_NAME, HTML_NAME, evil, ("dock_breakdown", "dock_roofline")),))
    window.talk.set_deck(deck, 0)
    assert window.talk.present(0)
    qtbot.wait(50)
    bad = _labels_rendering_html(window)
    assert bad == [], "\n".join(bad)
    window.talk.presenter.stop()


def test_ctrl_c_in_the_terminal_quits_the_gui(qtbot):
    import signal

    from PySide6 import QtWidgets

    from trinity_desktop.app import quit_on_interrupt

    quits = []
    previous = signal.getsignal(signal.SIGINT)
    previous_term = signal.getsignal(signal.SIGTERM)
    timer = quit_on_interrupt(QtWidgets.QApplication.instance(), lambda: quits.append(True))
    try:
        signal.raise_signal(signal.SIGINT)  # what the terminal sends for Ctrl+C
        qtbot.waitUntil(lambda: quits == [True], timeout=5000)
    finally:
        timer.stop()
        timer.deleteLater()
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, previous_term)


# --- item 15 through the GUI entry: --screenshot and File > Open -------------------------------------------

def _huge_number_session(tmp_path) -> Path:
    import json

    from trinity_desktop import session_file
    from trinity_desktop.defaults import default_scenario

    doc = json.loads(session_file.dumps(default_scenario()))
    doc["scenario"]["gpus"] = "@"
    path = tmp_path / "huge-number.trinity.json"
    path.write_text(json.dumps(doc).replace('"@"', "7" * 5000))
    return path


def test_screenshot_into_a_folder_that_cannot_be_made_is_one_line(qtbot, tmp_path, capsys):
    from trinity_desktop.__main__ import main

    QtCore.QCoreApplication.instance().setProperty("trinity_quiet", True)
    (tmp_path / "a-file").write_text("x")
    assert main(["--screenshot", str(tmp_path / "a-file" / "sub" / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("trinity-desktop: error: could not write") and "folder" in err[0]


def test_a_5000_digit_number_is_refused_by_file_open_and_screenshot(window, tmp_path, capsys):
    from trinity_desktop.__main__ import main

    path = _huge_number_session(tmp_path)
    before = window.store.scenario
    assert "4300 digits" in window.workspace.open_path(path)
    assert window.store.scenario is before
    assert main([str(path), "--screenshot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "4300 digits" in err[0]
