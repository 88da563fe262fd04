"""How the new two-chart panels arrange their charts in a dock: side by side when the dock is wide, stacked
when it is tall or narrow (one rule for every such panel)."""

from __future__ import annotations

from PySide6 import QtWidgets

SIDE_BY_SIDE_FROM_PX = 820


def stack_direction(width: int, height: int) -> QtWidgets.QBoxLayout.Direction:
    """Side by side on a wide dock (wider than 1.25 x its height, or at least SIDE_BY_SIDE_FROM_PX and not
    tall), stacked otherwise."""
    wide = width >= 1.25 * height or (width >= SIDE_BY_SIDE_FROM_PX and width >= height)
    return QtWidgets.QBoxLayout.Direction.LeftToRight if wide else QtWidgets.QBoxLayout.Direction.TopToBottom


def frame_panel(panel: QtWidgets.QWidget, controls, title: QtWidgets.QLabel, plots: QtWidgets.QBoxLayout,
                caption: QtWidgets.QLabel) -> None:
    """A seed panel's frame, top to bottom: its controls (a layout, or None), the finding as its title, the
    plots (side by side or stacked, `restack`) and the caption."""
    layout = QtWidgets.QVBoxLayout(panel)
    layout.setContentsMargins(4, 4, 4, 4)
    if controls is not None:
        layout.addLayout(controls)
    layout.addWidget(title)
    layout.addLayout(plots, 1)
    layout.addWidget(caption)


def restack(panel: QtWidgets.QWidget, plots: QtWidgets.QBoxLayout) -> bool:
    """Lay the plots side by side or stacked for the panel's size (`stack_direction`); True when it changed."""
    return set_stacked(plots, stack_direction(panel.width(), panel.height()) == QtWidgets.QBoxLayout.Direction.TopToBottom)


def set_stacked(layout: QtWidgets.QBoxLayout, stacked: bool) -> bool:
    """Lay `layout` top to bottom (stacked: a side read-out under its chart) or left to right; True when it
    changed (every panel that restacks sets its direction here)."""
    direction = QtWidgets.QBoxLayout.Direction.TopToBottom if stacked else QtWidgets.QBoxLayout.Direction.LeftToRight
    if layout.direction() == direction:
        return False
    layout.setDirection(direction)
    return True
