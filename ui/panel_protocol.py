"""The protocol between a panel and the main window, written down (DESIGN.md: panels never see the store).

A panel is a QWidget that offers some of the capabilities below. `MainWindow._wire` connects each capability a
panel has, by `isinstance` against these runtime-checkable protocols, so a panel opts in by defining the method
or signal and nothing else. Signals are class attributes of type `QtCore.Signal`; a protocol that names one
matches any panel class that declares it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.search.uncertainty import Uncertainty
from trinity_desktop.model.step.evaluation import Results

__all__ = [
    "BandsView", "CitationsView", "EditSource", "FocusSource", "FocusView", "HardwareChoicesView", "ResultsView",
    "ScenarioSource", "SplitSource", "SplitView", "StageSource", "StageView", "WorkerOwner", "WorkloadHoverSource",
    "WorkloadSource",
]


@runtime_checkable
class ResultsView(Protocol):
    """Draws the store's Results; called after every edit while the panel is visible (stale otherwise)."""

    def update_results(self, results: Results) -> None: ...


@runtime_checkable
class BandsView(Protocol):
    """Draws uncertainty bands (model.search.uncertainty) when the user turns them on."""

    def set_bands(self, u: Uncertainty | None) -> None: ...


@runtime_checkable
class HardwareChoicesView(Protocol):
    """Offers a choice of hardware presets (for example the roofline's compared devices)."""

    def set_hardware_choices(self, hardware: dict[str, Hardware]) -> None: ...


@runtime_checkable
class FocusView(Protocol):
    """Highlights the store's focus: what ("workload", "stage", ...) and a key; ("", "") clears it."""

    def set_focus(self, what: str, key: str) -> None: ...


@runtime_checkable
class FocusSource(Protocol):
    """Asks the store to focus something (kind, key)."""

    focusRequested: object


@runtime_checkable
class EditSource(Protocol):
    """Asks the store for an undoable scenario edit: a dict of field -> value."""

    editRequested: object


@runtime_checkable
class ScenarioSource(Protocol):
    """Asks the store to replace the scenario (a planner's layout, a claim's scenario)."""

    scenarioRequested: object


@runtime_checkable
class WorkloadSource(Protocol):
    """Asks the window to load a workload preset by key."""

    workloadActivated: object


@runtime_checkable
class WorkloadHoverSource(Protocol):
    """Reports the workload under the pointer ("" when none), which becomes the store's focus."""

    workloadHovered: object


@runtime_checkable
class CitationsView(Protocol):
    """Lists each dock's citations (the references panel)."""

    def set_panel_citations(self, citations: dict[str, list[str]]) -> None: ...


@runtime_checkable
class SplitSource(Protocol):
    """Emits the chosen split position of split computing, and knows its optimum."""

    splitChanged: object

    def optimum_position(self) -> float: ...


@runtime_checkable
class SplitView(Protocol):
    """Follows the split position chosen in another panel."""

    def set_split_position(self, position: float) -> None: ...


@runtime_checkable
class StageSource(Protocol):
    """Emits the stage the step-through flow focuses."""

    stageFocused: object


@runtime_checkable
class StageView(Protocol):
    """Highlights a stage chosen in the step-through flow."""

    def show_stage(self, name: str, numbers: dict) -> None: ...


@runtime_checkable
class WorkerOwner(Protocol):
    """Runs worker threads (a planner search, validation rows): stops them before the app quits."""

    def stop_workers(self) -> None: ...
