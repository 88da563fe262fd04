"""The app leaves nothing for Python's exit to tear down: a window still alive when the interpreter finalizes is
deleted by PySide's exit hook, and pyqtgraph's Python overrides then run half torn down (a segfault at exit in
about one `--startup-time` run of ten, seen in CI). Every way out deletes the window first (app.tear_down)."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import sys, time
from PySide6 import QtWidgets
from trinity_desktop import app
code = app.startup_time(time.perf_counter())
alive = [w for w in QtWidgets.QApplication.topLevelWidgets() if w.metaObject().className() == "MainWindow"]
print("main windows alive:", len(alive))
sys.exit(code)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


def test_startup_time_deletes_its_window_before_returning(tmp_path):
    run = subprocess.run([sys.executable, "-c", SCRIPT], env=_env(), cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "main windows alive: 0" in run.stdout


def test_startup_time_exits_cleanly_again_and_again(tmp_path):
    codes = [subprocess.run([sys.executable, "-m", "trinity_desktop", "--startup-time"], env=_env(), cwd=tmp_path,
                            capture_output=True, text=True, timeout=120).returncode for _ in range(5)]
    assert codes == [0] * 5  # -11: a segfault at exit
