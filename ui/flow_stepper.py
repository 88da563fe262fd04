"""How the step-through flow steps: the keys (Left/Right, Space, Home/End) and Play's pace (ui/flow_panel.py)."""

from __future__ import annotations

from PySide6 import QtCore

PLAY_INTERVAL_MS = 1500      # per phase: five training phases in 7.5 s
PLAY_BUDGET_MS = 12_000      # the whole step, bar by bar, in at most this (faster steps for many bars)
MIN_PLAY_INTERVAL_MS = 20


def play_interval_ms(steps: int, detail: bool) -> int:
    """Milliseconds between Play's steps: PLAY_INTERVAL_MS per phase; bar by bar, fast enough that the whole
    step takes at most PLAY_BUDGET_MS."""
    if not detail:
        return min(PLAY_INTERVAL_MS, PLAY_BUDGET_MS // max(steps, 1))
    return max(MIN_PLAY_INTERVAL_MS, min(PLAY_INTERVAL_MS, PLAY_BUDGET_MS // max(steps, 1)))


def step_key(panel, key) -> bool:
    """Step `panel` (a FlowPanel) for a stepping key; False for any other key."""
    Key = QtCore.Qt.Key
    if key == Key.Key_Left:
        panel.step(-1)
    elif key == Key.Key_Right:
        panel.step(1)
    elif key == Key.Key_Space:
        panel.toggle_play()
    elif key == Key.Key_Home:
        panel.select(0)
    elif key == Key.Key_End:
        panel.select(panel.stage_count() - 1)
    else:
        return False
    return True
