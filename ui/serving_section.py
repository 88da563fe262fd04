"""The Scenario form's collapsible "Serving" section (#23): MoE expert parallelism, speculative decoding,
disaggregated pools and load targets, about twenty fields that would otherwise make the Inference group long.

Collapsed by default; it opens by itself when the scenario shown sets any of its fields (a value other than the
Scenario default, so a loaded deck or session never hides what it uses), and the header says how many are set.
It never closes by itself: only its header button closes it.
"""

from __future__ import annotations

import dataclasses

from PySide6 import QtWidgets

from trinity_desktop.model.inputs.scenario import Scenario

PARTS = (  # (sub-heading, fields) in the order the section shows them
    ("MoE expert parallelism", ("inference_ep", "attention_dp", "redundant_experts")),
    ("Speculative decoding", ("draft_model", "mtp_depth", "draft_tokens", "acceptance")),
    ("Prefill and decode pools", ("prefill_gpus", "decode_gpus", "prefill_tp", "prefill_pp", "decode_tp",
                                  "decode_pp", "kv_transfer_link", "kv_transfer_layerwise")),
    ("Load and latency targets", ("request_rate", "ttft_slo_s", "tpot_slo_s", "prefill_chunk_tokens")),
)
SERVING_FIELDS = tuple(f for _, fields in PARTS for f in fields)
TITLE = "Serving"  # short: the header is never cut in a narrow form; the tooltip says what is inside
# the fields whose value is only a setting of another (γ and α without a drafter, the chunk without a rate)
DEPENDENT = {"draft_tokens": ("draft_model", "mtp_depth"), "acceptance": ("draft_model", "mtp_depth"),
             "prefill_chunk_tokens": ("request_rate",), "kv_transfer_link": ("prefill_gpus",),
             "kv_transfer_layerwise": ("prefill_gpus",), "prefill_tp": ("prefill_gpus",),
             "prefill_pp": ("prefill_gpus",), "decode_tp": ("decode_gpus",), "decode_pp": ("decode_gpus",)}


# The fields' declared defaults: a Scenario built with them could be refused on the scenario's hardware (a laptop
# has no device-to-device link for the default 8 GPUs), so none is built.
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Scenario)}


def serving_fields_set(sc: Scenario) -> tuple[str, ...]:
    """The serving fields `sc` sets: those that differ from the Scenario default and switch something on (a field
    that only tunes another counts when that one is on)."""
    changed = [f for f in SERVING_FIELDS if getattr(sc, f) != _DEFAULTS[f]]
    return tuple(f for f in changed if f not in DEPENDENT or any(getattr(sc, g) != _DEFAULTS[g]
                                                                 for g in DEPENDENT[f]))


class ServingSection(QtWidgets.QWidget):
    """A header button that opens and closes a form of the serving fields."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.toggle = QtWidgets.QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setAccessibleName("Serving section")
        self.toggle.setAutoRaise(False)
        self.toggle.setToolTip("Show or hide the serving options: MoE expert parallelism and DP-attention, "
                               "speculative decoding, disaggregated prefill and decode pools, request rate and "
                               "latency targets")
        self.toggle.toggled.connect(self.set_open)
        self.body = QtWidgets.QWidget()
        self.form = QtWidgets.QFormLayout(self.body)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setRowWrapPolicy(QtWidgets.QFormLayout.RowWrapPolicy.WrapLongRows)  # as the other groups
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.body)
        self._set = 0
        self._rows: list[tuple] = []
        self.set_open(False)

    def addRow(self, *row) -> None:  # noqa: N802 (the QFormLayout call the Scenario form makes)
        """Keep a row the Scenario form adds; `place` lays them out in PARTS order."""
        self._rows.append(row)

    def place(self, widgets: dict) -> None:
        """Lay the kept rows out under their sub-headings, in PARTS order (`widgets`: field -> its widget)."""
        field_of = {id(w): f for f, w in widgets.items()}
        by_field = {field_of[id(row[-1])]: row for row in self._rows}
        for heading, fields in PARTS:
            title = QtWidgets.QLabel(heading)
            title.setStyleSheet("font-weight: bold;")
            self.form.addRow(title)
            for f in fields:
                self.form.addRow(*by_field[f])
        self._rows = []

    def is_open(self) -> bool:
        return self.toggle.isChecked()

    def set_open(self, opened: bool) -> None:
        if self.toggle.isChecked() != opened:
            self.toggle.setChecked(opened)  # calls back here once
            return
        self.body.setVisible(opened)
        self._label()

    def show_scenario(self, sc: Scenario) -> None:
        """Count the fields `sc` sets; open when it sets any (never close)."""
        self._set = len(serving_fields_set(sc))
        if self._set and not self.is_open():
            self.set_open(True)
        self._label()

    def _label(self) -> None:
        arrow = "▾" if self.is_open() else "▸"
        count = f" ({self._set} set)" if self._set else ""
        self.toggle.setText(f"{arrow} {TITLE}{count}")
