"""Claims dock: every numeric or directional claim of both seeds next to the value the model computes for a
stated scenario, with its verdict (model/claims/catalogue.py). The title counts the verdicts; clicking a row
with a scenario loads it (`scenarioRequested`), and the line under the table says what the row computed and why.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.claims.catalogue import all_claims
from trinity_desktop.model.claims.claim import Claim
from trinity_desktop.ui import theme

COLUMNS = ("Verdict", "Seed", "Claim", "Claimed", "Computed", "Unit", "Shown in")
VERDICT_TEXT = {"agrees": "✓ agrees", "disagrees": "✗ disagrees", "not-computable": "– not\ncomputable"}
NARROW_PX = 820   # below this width the seed, the unit and the panel move into the claim cell and their columns hide
SEED_TEXT = {"trinity": "Trinity", "synthesis": "Synthesis"}
FONT_PT = 12


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def claims_title(claims: tuple[Claim, ...]) -> str:
    """The finding: how many claims the model checks and how many of those it contradicts."""
    n = {v: sum(c.verdict == v for c in claims) for v in VERDICT_TEXT}
    checked = n["agrees"] + n["disagrees"]
    return (f"{checked} of {len(claims)} claims computed: {n['agrees']} agree, {n['disagrees']} disagree "
            f"({n['not-computable']} not computable)")


def _math(text: str) -> str:
    """A unit as read: "≥ 1", not the ASCII ">= 1"."""
    return text.replace(">=", "≥").replace("<=", "≤").replace(" -> ", " → ")


HINT = "Click a claim to load its scenario and read how it was computed."


class ClaimsPanel(QtWidgets.QWidget):
    scenarioRequested = QtCore.Signal(object)

    def __init__(self, parent=None, dock_titles: dict[str, str] | None = None):
        """`dock_titles`: the window's dock titles by objectName ("dock_heatmap" -> "Workload pressure"), to
        name the panel each claim is shown in (the objectName without its prefix otherwise)."""
        super().__init__(parent)
        self.setObjectName("ClaimsPanel")
        self.setAccessibleName("Claims: the source documents' claims checked against the model")
        self.claims = all_claims()
        titles = dock_titles or {}
        self.shown_in = tuple(titles.get(c.panel, c.panel.removeprefix("dock_").replace("_", " "))
                              for c in self.claims)
        font = theme.axis_font(FONT_PT)
        self.title = QtWidgets.QLabel(claims_title(self.claims))
        self.title.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.title.setObjectName("ClaimsTitle")
        title_font = theme.axis_font(FONT_PT + 2)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.title.setWordWrap(True)
        self.title.setAccessibleName("Claims summary")

        self.table = QtWidgets.QTableWidget(len(self.claims), len(COLUMNS))
        self.table.setObjectName("ClaimsTable")
        self.table.setAccessibleName("Claims table")
        self.table.setToolTip("One row per claim of the two source documents (Trinity: the AI Trinity companion "
                              "page; Synthesis: the synthesis of the field). Click a row to load the scenario it was "
                              "computed for.")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setFont(font)
        self.table.horizontalHeader().setFont(font)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(QtCore.Qt.TextElideMode.ElideNone)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        mode = QtWidgets.QHeaderView.ResizeMode
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, mode.Fixed)
        header.setStretchLastSection(False)
        self._narrow: bool | None = None
        bold = QtGui.QFont(font)
        bold.setBold(True)
        for row, c in enumerate(self.claims):
            cells = (VERDICT_TEXT[c.verdict], SEED_TEXT[c.seed], c.text, _number(c.claimed), _number(c.computed),
                     _math(c.unit).replace(" (claim: ", "\n(claim: "), self.shown_in[row])
            for col, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                item.setToolTip(f"{c.id}: {c.note}\nSource: {c.source}. Reproduce: {c.reproduce}")
                if col == 0 and c.verdict == "disagrees":
                    item.setFont(bold)
                if col in (3, 4):
                    item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
        self.table.itemSelectionChanged.connect(self._selected)
        self.table.cellClicked.connect(lambda row, _col: self.load_row(row))

        self._on_slide = False
        self.detail = QtWidgets.QLabel(HINT)
        self.detail.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # names as typed, never HTML
        self.detail.setObjectName("ClaimsDetail")
        self.detail.setFont(font)
        self.detail.setWordWrap(True)
        self.detail.setAccessibleName("Selected claim")

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)

    def resizeEvent(self, event):  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._fit_columns()

    def set_on_slide(self, on: bool) -> None:
        """On a slide the table shows the rows that fit whole, without a scroll bar, and says how many of the
        claims it shows (a scrolled table cut its last row in half); off it, every row and the hint again."""
        self._on_slide = on
        self.table.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff if on
                                              else QtCore.Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        if not on:
            self.detail.setText(HINT)
        self._fit_columns()   # its next pass shows every row again, or those that fit whole

    def _fit_slide_rows(self) -> None:
        for row in range(self.table.rowCount()):   # measured whole (a hidden row has no height)
            self.table.setRowHidden(row, False)
        self.table.resizeRowsToContents()
        if not self._on_slide:
            return
        self.table.scrollToTop()
        room, used, shown = self.table.viewport().height(), 0, 0
        for row in range(self.table.rowCount()):
            used += self.table.rowHeight(row)
            fits = used <= room
            self.table.setRowHidden(row, not fits)
            shown += fits
        total = self.table.rowCount()
        self.detail.setText(f"The first {shown} of {total} claims."
                            if shown < total else f"All {total} claims.")

    def _fit_columns(self) -> None:
        """Fixed columns sized to their text; the unit column a third of the rest, the claim the remainder. A
        narrow panel moves the seed's name and the unit into the claim cell (a word never wider than its cell)."""
        narrow = self.width() < NARROW_PX
        if narrow != self._narrow:
            self._narrow = narrow
            for col in (1, 5, 6):
                self.table.setColumnHidden(col, narrow)
            for row, c in enumerate(self.claims):
                self.table.item(row, 2).setText(f"{SEED_TEXT[c.seed]}: {c.text}\nUnit: {_math(c.unit)}\n"
                                                f"Shown in: {self.shown_in[row]}" if narrow else c.text)
        metrics = QtGui.QFontMetrics(self.table.font())
        pad = 18
        fixed = {0: max(metrics.horizontalAdvance(t) for v in VERDICT_TEXT.values() for t in v.split("\n")),
                 1: max(metrics.horizontalAdvance(t) for t in (*SEED_TEXT.values(), COLUMNS[1])),
                 3: metrics.horizontalAdvance(COLUMNS[3]), 4: metrics.horizontalAdvance(COLUMNS[4]),
                 6: max(metrics.horizontalAdvance(t) for t in (*self.shown_in, COLUMNS[6]))}
        for col, width in fixed.items():
            self.table.setColumnWidth(col, width + pad)
        used = sum(w + pad for col, w in fixed.items() if not (narrow and col in (1, 6)))
        rest = max(self.table.width() - self.table.verticalScrollBar().sizeHint().width() - 4 - used, 120)
        unit = 0 if narrow else int(rest * 0.42)
        self.table.setColumnWidth(5, unit)
        self.table.setColumnWidth(2, rest - unit)
        QtCore.QTimer.singleShot(0, self._fit_slide_rows)

    def _selected(self) -> None:
        rows = {i.row() for i in self.table.selectedItems()}
        if rows:
            c = self.claims[min(rows)]
            where = "its scenario is loaded" if c.scenario is not None else "no single scenario (see the panel)"
            self.detail.setText(f"{c.id} ({VERDICT_TEXT[c.verdict]}): {c.note}. Source {c.source}; {where}; "
                                f"shown in {self.shown_in[min(rows)]}.")

    def load_row(self, row: int) -> None:
        """Emit the scenario a row was computed for (rows without one only show their note)."""
        if 0 <= row < len(self.claims) and self.claims[row].scenario is not None:
            self.scenarioRequested.emit(self.claims[row].scenario)
