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
