"""What presenting and exporting ask of a panel, beyond the window's wiring (panel_protocol.py), written down.

`trinity_desktop/presentation.py` (a slide's reset, the grab's wait) and `trinity_desktop/workspace.py` (exports)
use each capability a panel has, by `isinstance` against these runtime-checkable protocols: a panel opts in by
defining the method (or attribute) and nothing else, and a panel without it is left as it is.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PySide6 import QtCore, QtWidgets

__all__ = ["AddedVariantsView", "IdleWaiter", "PathView", "RowsExporter", "StepPlayer"]


@runtime_checkable
class PathView(Protocol):
    """Ticks a path of techniques (the triangle); a slide starts from the empty path."""

    def show_path(self, keys) -> None: ...


@runtime_checkable
class AddedVariantsView(Protocol):
    """Holds variants the user added (the outcomes); a slide starts without them."""

    def clear_added(self) -> None: ...


@runtime_checkable
class StepPlayer(Protocol):
    """Steps through a step's stages with a play timer and a zoom (the flow); a slide starts stopped, phase by phase,
    unzoomed, at the first phase."""

    timer: QtCore.QTimer
    zoom_check: QtWidgets.QCheckBox

    def set_detailed(self, on: bool) -> None: ...

    def select(self, index: int) -> None: ...


@runtime_checkable
class IdleWaiter(Protocol):
    """Computes in a worker thread (the planner): blocks until it is idle, True if it is, before a grab or export."""

    def wait_idle(self, msecs: int = 60000) -> bool: ...


@runtime_checkable
class RowsExporter(Protocol):
    """Draws images of values (heat maps, matrices) and offers them as CSV rows (dicts) to the CSV export."""

    def export_rows(self) -> list[dict]: ...
