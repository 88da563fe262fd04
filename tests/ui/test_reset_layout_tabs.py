"""View ▸ Reset layout at 1366 x 768 (issue #21): after the reset every tab title of every dock tab bar reads
whole (the reset had let Qt shrink tabs back to "R…" and "Lay…"), and the status bar is not cut."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import os, sys
    from trinity_desktop.layout_plan import offscreen_platform
    os.environ["QT_QPA_PLATFORM"] = offscreen_platform(1366, 768)
    from PySide6 import QtWidgets
    from trinity_desktop.app import build_window, ensure_application
    from trinity_desktop.audit_text import cut_tabs
    from trinity_desktop.layout_audit import settle, window_problems
    app = ensure_application()
    app.setProperty("trinity_quiet", True)
    win = build_window(settings=None)
    win.show()
    settle(app, 12)
    win.docks["planner"].raise_()
    settle(app)
    win.reset_layout()
    settle(app, 12)
    bars = [b for b in win.findChildren(QtWidgets.QTabBar) if b.isVisible() and b.count() > 1]
    problems = ([] if bars else ["no dock tab bar shown"]) + cut_tabs(bars) + window_problems(win)["status bar"]
    problems += window_problems(win)["tabs"]
    print("\\n".join(problems))
    win.close()
    sys.exit(1 if problems else 0)
""")


def test_reset_layout_leaves_every_tab_title_whole():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
