"""The window's size and default dock layout, chosen for the screen the window opens on.

The window opens inside the screen's available geometry (never larger than `PREFERRED`, 1920 × 1200).
The centre shows as many tab groups as the room allows at a legible size (`MIN_PANEL`: a panel narrower
or lower than that stops telling its message at the projector fonts): four (2 × 2) on a 1920 × 1080
screen, two columns on a 1366 × 768 laptop, one on anything smaller. Panels keep their text size; a
smaller screen shows fewer panels at once and more tabs. Dock positions in `docks.DOCKS` name the 2 × 2
group; `LayoutPlan.group` folds them into the groups in use.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass

from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.base.files import write_atomically

PREFERRED = QtCore.QSize(1920, 1200)
VIRTUAL_SCREEN = (1920, 1080)          # the offscreen platform's screen unless told otherwise
MIN_PANEL = QtCore.QSize(500, 420)     # the smallest centre panel the default layout makes
CONTROLS_WIDTH = 330                   # the scenario controls column on a wide screen
CONTROLS_NARROW = 310                  # ... and on a laptop
CHROME_HEIGHT = 90                     # menu bar, status bar, dock title and tab bars
LEAD_ROW_SHARE = 0.56                  # in two rows, the top-left group (the triangle first) takes this share
                                       # of its column's height: an equilateral triangle is limited by height;
                                       # the group below keeps at least MIN_PANEL's height
FORM_DOCKS = ("controls", "deck", "references")   # long forms and lists scroll; every chart shrinks to its dock


@dataclass(frozen=True)
class LayoutPlan:
    size: QtCore.QSize          # the window's size
    columns: int                # centre tab groups side by side (1 or 2)
    rows: int                   # centre tab groups stacked (1 or 2)
    controls_width: int

    @property
    def folded(self) -> bool:
        """Fewer than the four centre tab groups: the groups hold more tabs than their bars show whole."""
        return self.columns * self.rows < 4

    def group(self, position: str) -> str:
        """The tab group a dock registered for `position` goes to in this plan ("left" stays "left")."""
        if position == "left":
            return position
        row, col = position.split("-")
        row = row if self.rows == 2 else "top"
        col = col if self.columns == 2 else "left"
        return f"{row}-{col}"


def lead_row_heights(column_height: int) -> tuple[int, int]:
    """(top, bottom) heights of the left column's two groups: the top `LEAD_ROW_SHARE` of the column, the
    bottom never under `MIN_PANEL`'s height (nor over the column)."""
    bottom = min(max(MIN_PANEL.height(), round(column_height * (1 - LEAD_ROW_SHARE))), column_height)
    return column_height - bottom, bottom


def plan_for(available: QtCore.QRect | QtCore.QSize) -> LayoutPlan:
    """The plan for a screen whose available geometry (without task bars) has this size."""
    room = available.size() if isinstance(available, QtCore.QRect) else available
    width, height = min(PREFERRED.width(), room.width()), min(PREFERRED.height(), room.height())
    controls = CONTROLS_WIDTH if width >= 1500 else CONTROLS_NARROW
    centre_w, centre_h = width - controls, height - CHROME_HEIGHT
    columns = 2 if centre_w >= 2 * MIN_PANEL.width() else 1
    rows = 2 if centre_h >= 2 * MIN_PANEL.height() else 1
    return LayoutPlan(QtCore.QSize(width, height), columns, rows, controls)


def available_geometry(widget: QtWidgets.QWidget | None = None) -> QtCore.QRect:
    """The available geometry of the widget's screen (or the primary screen)."""
    screen = widget.screen() if widget is not None else None
    screen = screen or QtGui.QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QtCore.QRect(QtCore.QPoint(0, 0), PREFERRED)


def keep_on_screen(window: QtWidgets.QWidget) -> None:
    """Shrink and move the shown window so that its frame (decorations included) lies inside the screen's
    available geometry, centred when it had to move."""
    area = available_geometry(window)
    frame = window.frameGeometry()
    if area.contains(frame):
        return
    extra = frame.size() - window.geometry().size()          # the window manager's decorations
    size = window.size().boundedTo(area.size() - extra)
    window.resize(size)
    frame_size = size + extra
    window.move(area.left() + max((area.width() - frame_size.width()) // 2, 0),
                area.top() + max((area.height() - frame_size.height()) // 2, 0))


def offscreen_platform(width: int, height: int) -> str:
    """A QT_QPA_PLATFORM value for an offscreen screen of width × height pixels at 96 dpi."""
    config = {"screens": [{"name": "audit", "x": 0, "y": 0, "width": width, "height": height,
                           "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}
    path = os.path.join(tempfile.gettempdir(), f"trinity-screen-{width}x{height}.json")
    write_atomically(path, json.dumps(config).encode())   # parallel runs never read a half-written file
    return f"offscreen:configfile={path}"


def parse_screen(text: str) -> tuple[int, int]:
    """'1366x768' -> (1366, 768); a ValueError names the option, the value and the allowed form."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--screen must be WIDTHxHEIGHT in pixels (e.g. 1366x768), not {text!r}") from None
    if not (320 <= width <= 16384 and 240 <= height <= 16384):
        raise ValueError(f"--screen {text}: width must be 320 to 16384 and height 240 to 16384 pixels")
    return width, height


def use_virtual_screen(size: tuple[int, int] | None = None) -> None:
    """With the offscreen platform, give it one screen of `size` (default `VIRTUAL_SCREEN`) so the window is
    planned as on a real screen of that size; does nothing on a real display (xcb, Wayland, ...)."""
    if os.environ.get("QT_QPA_PLATFORM", "") == "offscreen":
        os.environ["QT_QPA_PLATFORM"] = offscreen_platform(*(size or VIRTUAL_SCREEN))
