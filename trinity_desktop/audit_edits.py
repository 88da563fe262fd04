"""Stability under edits: the layout a person arranged stays as it was while they edit the scenario.

From the window's current layout, `edit_sequence` applies a model that does not fit, a switch to decode and
every hardware preset, then undoes them all. After each edit no visible chart dock may have lost more than
`MAX_LOSS` of its width or height (a long message wraps inside its panel instead of widening its dock and
crushing its neighbour), and after the undo the layout is exactly where it started: every dock's geometry (the
Scenario form's too) and every splitter's sizes (`layout_geometry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

MAX_LOSS = 0.30


@dataclass
class EditReport:
    steps: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # "after <step>: <dock> <width|height> a -> b px"


def chart_dock_sizes(window) -> dict[str, tuple[int, int]]:
    """The size of every chart dock a person sees now (shown and in front of its tab group)."""
    return {name: (dock.width(), dock.height()) for name, dock in window.docks.items()
            if name not in window.EDITING_DOCKS and dock.isVisible() and not dock.visibleRegion().isEmpty()}


def layout_geometry(window) -> dict[str, tuple[int, ...]]:
    """Where everything a person arranged sits now: each shown dock's (x, y, width, height) and each shown
    splitter's sizes."""
    from PySide6 import QtWidgets

    out = {f"dock {name}": dock.geometry().getRect() for name, dock in window.docks.items() if dock.isVisible()}
    for i, splitter in enumerate(window.findChildren(QtWidgets.QSplitter)):
        if splitter.isVisible():
            out[f"splitter {i} ({splitter.objectName() or type(splitter.parentWidget()).__name__})"] = \
                tuple(splitter.sizes())
    return out


def not_fitting_model(window):
    """The first model preset, largest first, that does not fit the current scenario's devices."""
    from trinity_desktop.model import ValidationError, evaluate

    scenario = window.store.scenario
    for model in sorted(window.models.values(), key=lambda m: -m.params_published):
        try:
            if not evaluate(scenario.replace(model=model)).fits:
                return model
        except ValidationError:
            continue
    return None


def _edits(window) -> list[tuple[str, Callable[[], object]]]:
    store = window.store
    steps = []
    model = not_fitting_model(window)
    if model is not None:
        steps.append((f"model {model.name} (does not fit)", lambda: store.edit("Audit: model", model=model)))
    steps.append(("switch to decode", lambda: store.edit("Audit: decode", kind="decode")))
    for hardware in window.hardware.values():
        steps.append((f"hardware {hardware.name}", lambda hw=hardware: store.edit("Audit: hardware", hardware=hw)))
    return steps


def _lost(before: dict, after: dict, limit: float, when: str) -> list[str]:
    problems = []
    for name, (w0, h0) in before.items():
        if name not in after:
            problems.append(f"{when}: {name} is no longer shown")
            continue
        for axis, old, new in (("width", w0, after[name][0]), ("height", h0, after[name][1])):
            change = (old - new) / old
            if old > 0 and change > limit:
                problems.append(f"{when}: {name} {axis} {old} -> {new} px")
    return problems


def edit_sequence(window, settle: Callable[[], None]) -> EditReport:
    """Apply the edits one by one, then undo them all; report every dock that lost or kept a changed size."""
    report = EditReport()
    start_sizes, start_layout = chart_dock_sizes(window), layout_geometry(window)
    start_index = window.store.undo_stack.index()
    for step, apply in _edits(window):
        apply()
        settle()
        report.steps.append(step)
        report.problems += _lost(start_sizes, chart_dock_sizes(window), MAX_LOSS, f"after {step}")
    window.store.undo_stack.setIndex(start_index)
    settle()
    report.steps.append("undo")
    after = layout_geometry(window)
    report.problems += [f"after undo: {name} {where} -> {after.get(name, 'not shown')}"
                        for name, where in start_layout.items() if after.get(name) != where]
    return report
