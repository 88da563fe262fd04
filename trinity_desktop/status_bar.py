"""The status bar's scenario summary: what binds and any warning first, never cut.

The summary is a list of parts in the order a person needs them: the binding resource with its pressure,
each warning (does not fit, beyond the model's context, KV cache beyond HBM, host memory short), the three
pressures, the step time, the memory per device, and the model on its hardware. The label shows as many whole parts as its
width holds, from the first (a warning too long for the room by its head); the full summary is its tooltip. It never asks for more width than it has, so
a long summary cannot widen the window.
"""

from __future__ import annotations

import re

from PySide6 import QtCore, QtWidgets

from trinity_desktop.model import Results
from trinity_desktop.ui.step_time_labels import (
    static_batch_note,  # load (#23): static batch vs p95 under load
)
from trinity_desktop.ui.units import fmt_seconds

SEPARATOR = " · "
_WHAT = {"train": "training step", "prefill": "prefill", "decode": "decode step"}


_SEVERITY = ("Does not fit", "Beyond the model's limit", "Host memory short")   # then the other notes


def _severity(note: str) -> int:
    return next((i for i, start in enumerate(_SEVERITY) if note.startswith(start)), len(_SEVERITY))


def short_note(note: str) -> str:
    """A warning without its closing explanation in parentheses (the panels say why): "... takes", not
    "... takes (its learned position embeddings end there)"."""
    return re.sub(r"\s*\([^()]*\)$", "", note.rstrip(".")).rstrip(".")


def summary_parts(r: Results) -> list[str]:
    """The summary's parts, most important first."""
    sc = r.scenario
    pressures = dict(zip(("compute", "bandwidth", "memory"), r.pressure.as_tuple(), strict=True))
    # short wordings, so that at 1366 px what binds and every warning stay on the bar together
    parts = [f"{r.bottleneck.capitalize()} binds (pressure {pressures[r.bottleneck]:.2f} of 1.00)"]
    parts += [f"⚠ {short_note(note)}" for note in sorted(r.notes, key=_severity)]
    parts.append("pressures " + ", ".join(f"{name} {value:.2f}" for name, value in pressures.items()))
    parts.append(step_part(r))
    parts.append(f"{r.memory_total / 1e9:.1f} of {r.capacity / 1e9:.0f} GB per device"
                 + ("" if r.fits else ", does not fit"))
    parts.append(f"{sc.model.name} on {sc.gpus} × {sc.hardware.name}")
    return parts


def step_part(r: Results) -> str:
    """The step time; with a request rate (#23) it says it is one static batch's, not the p95 under load that
    System outcomes shows beside it."""
    return f"{_WHAT[r.kind]} {fmt_seconds(r.time_total)}{static_batch_note(r)}"


def fitted(parts: list[str], width: int, advance) -> str:
    """As many whole parts as fit `width` pixels (`advance(text)` measures); at least the first, wrapped. A
    warning too long for the room left is shown by its head ("⚠ Does not fit"; the whole in the tooltip), so
    that every warning stays in view beside what binds."""
    shown = ""
    for part in parts:
        heads = [part] + ([part.split(": ", 1)[0]] if part.startswith("⚠") and ": " in part else [])
        candidate = next((c for c in (h if not shown else shown + SEPARATOR + h for h in heads)
                          if not shown or advance(c) <= width), None)
        if candidate is None:
            break
        shown = candidate
    return shown


class StatusSummary(QtWidgets.QLabel):
    """The summary label: whole parts from the first, the full text in the tooltip."""

    def __init__(self):
        super().__init__()
        self._parts: list[str] = []
        self.setAccessibleName("Scenario summary")
        self.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names are shown as typed, never as HTML
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(1)

    def show_results(self, results: Results) -> None:
        self._parts = summary_parts(results)
        self.setToolTip(SEPARATOR.join(self._parts))
        self._refit()

    def full_text(self) -> str:
        return SEPARATOR.join(self._parts)

    def _refit(self) -> None:
        room = self.contentsRect().width() - 2
        text = fitted(self._parts, room, self.fontMetrics().horizontalAdvance)
        self.setWordWrap(self.fontMetrics().horizontalAdvance(text) > room)   # only the first part, if ever
        self.setText(text)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._refit()
