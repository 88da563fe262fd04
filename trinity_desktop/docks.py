"""The dock registry: every panel the main window can show, its stable objectName, title and place.

The default layout is a 2 x 2 grid of tab groups right of the scenario controls; `position` names the
group ("top-left", "top-right", "bottom-left", "bottom-right") and the first dock of each group is the
visible tab. Panels are wired to the store generically by the main window (see MainWindow._wire).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6 import QtWidgets


@dataclass(frozen=True)
class DockSpec:
    name: str            # objectName is f"dock_{name}"
    title: str
    factory: Callable[[], QtWidgets.QWidget]
    position: str        # "left" or one of the four centre groups
    shortcut: str = ""   # View-menu shortcut that shows and raises the dock


def _breakdown():
    from trinity_desktop.ui.breakdown_panel import BreakdownPanel

    return BreakdownPanel()


def _heatmap():
    from trinity_desktop.ui.heatmap_panel import HeatmapPanel

    return HeatmapPanel()


def _controls():
    from trinity_desktop.ui.controls import ScenarioControls

    return ScenarioControls()


def _deck():
    from trinity_desktop.ui.deck_panel import DeckPanel

    return DeckPanel()


DOCKS: tuple[DockSpec, ...] = (
    DockSpec("controls", "Scenario", _controls, "left", "Ctrl+1"),
    DockSpec("deck", "Slides", _deck, "left", "Ctrl+0"),
    DockSpec("breakdown", "Memory and time", _breakdown, "top-right", "Ctrl+2"),
    DockSpec("heatmap", "Workload pressure", _heatmap, "bottom-left", "Ctrl+3"),
)

CENTRE_GROUPS = ("top-left", "top-right", "bottom-left", "bottom-right")
