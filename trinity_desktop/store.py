"""The scenario store: the one current Scenario and its Results, an undo stack, and linked focus.

Panels never talk to each other: they subscribe to `changed` (new Results) and `focusChanged`.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui

from trinity_desktop.model import Results, Scenario, ValidationError, evaluate


class _SetScenario(QtGui.QUndoCommand):
    def __init__(self, store: ScenarioStore, before: tuple[Scenario, Results], after: tuple[Scenario, Results],
                 text: str):
        super().__init__(text)
        self._store, self._before, self._after = store, before, after

    def redo(self):
        self._store._apply(*self._after)

    def undo(self):
        self._store._apply(*self._before)


def _keep_tier_on_hardware(scenario: Scenario, changes: dict) -> dict:
    """A CXL KV-offload target does not follow the user to hardware without a CXL pool: it falls back to host
    memory (else training carried a tier the roofline cannot place, and going back to decode was refused)."""
    if scenario.kv_offload_tier == "cxl" and "hardware" in changes and "kv_offload_tier" not in changes:
        from trinity_desktop.model.inputs.tiers import tier_map

        if "cxl" not in tier_map(changes["hardware"]):
            return {**changes, "kv_offload_tier": "host"}
    return changes


UNDO_LIMIT = 200  # undo steps kept: an unbounded stack grew the process by the results of every edit


class ScenarioStore(QtCore.QObject):
    changed = QtCore.Signal(object)       # Results of the current scenario
    rejected = QtCore.Signal(str)         # why an edit was refused; the scenario is unchanged
    focusChanged = QtCore.Signal(str, str)  # (what, key): e.g. ("workload", "dense-pretrain"); ("", "") clears

    def __init__(self, scenario: Scenario, parent: QtCore.QObject | None = None):
        super().__init__(parent)
        self._scenario = scenario
        self._results = evaluate(scenario)
        self._focus = ("", "")
        self.undo_stack = QtGui.QUndoStack(self)
        self.undo_stack.setUndoLimit(UNDO_LIMIT)  # each step keeps two scenarios and their results

    @property
    def scenario(self) -> Scenario:
        return self._scenario

    @property
    def results(self) -> Results:
        return self._results

    @property
    def focus(self) -> tuple[str, str]:
        return self._focus

    def edit(self, text: str = "Edit scenario", **changes) -> bool:
        """Apply field changes as one undoable step; refuse (and say why) if they are invalid."""
        try:
            scenario = self._scenario.replace(**_keep_tier_on_hardware(self._scenario, changes))
        except ValidationError as exc:
            self.rejected.emit(str(exc))
            return False
        return self.set_scenario(scenario, text)

    def set_scenario(self, scenario: Scenario, text: str = "Change scenario") -> bool:
        if scenario == self._scenario:
            return True
        try:
            results = evaluate(scenario)
        except ValidationError as exc:
            self.rejected.emit(str(exc))
            return False
        self.undo_stack.push(_SetScenario(self, (self._scenario, self._results), (scenario, results), text))
        return True

    def set_focus(self, what: str, key: str) -> None:
        if (what, key) != self._focus:
            self._focus = (what, key)
            self.focusChanged.emit(what, key)

    def _apply(self, scenario: Scenario, results: Results) -> None:
        self._scenario, self._results = scenario, results
        self.changed.emit(results)
