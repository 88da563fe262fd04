"""References dock: every entry of resources/references.toml, who cites it, and its citation to copy.

"Used by" is computed, not typed: the hardware presets' per-value sources, the model presets' source, the
workload library's source, the formulas of model/views/provenance.py, and the panels' own citations (given by the
app through `set_panel_citations`). Rows cited by the current scenario's hardware or model are shown in bold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.model.inputs.presets import (
    Reference,
    hardware_presets,
    model_presets,
    references,
    workload_library,
)
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.provenance import FORMULAS
from trinity_desktop.ui import theme

COLUMNS = ("Key", "Authors", "Year", "Title", "arXiv / URL", "Used by")
SHOWN_COLUMNS = ("Authors", "Year", "Title")   # whole, wrapped; the key, arXiv id / URL and users are in the
# filter and the selected citation below the table
COLUMN_SHARES = {"Authors": 0.36, "Title": 0.64}   # of the width the Year column leaves
KEY_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
FONT_PT = 12


def _font(bold: bool = False, size: int = FONT_PT) -> QtGui.QFont:
    font = theme.axis_font(max(size, 11))
    font.setBold(bold)
    return font


def _hardware_users(hw, current: bool = False) -> dict[str, list[str]]:
    """reference key -> ["hardware: H100 SXM (hbm_bw, peak_bf16)"] for one Hardware's per-value sources."""
    by_key: dict[str, list[str]] = {}
    for value_name, source in hw.sources.items():
        for key in (k.strip() for k in str(source).split(",")):
            if key:
                by_key.setdefault(key, []).append(value_name)
    label = f"hardware: {hw.name}" + (" (current scenario)" if current else "")
    return {key: [f"{label} ({', '.join(names)})"] for key, names in by_key.items()}


def compute_used_by(panel_citations: Mapping[str, list[str]] | None = None, extra_hardware=(),
                    extra_models=()) -> dict[str, list[str]]:
    """reference key -> human-readable users: presets, workloads, formulas, panels (in that order)."""
    users: dict[str, list[str]] = {}

    def add(key: str, text: str) -> None:
        for k in (x.strip() for x in str(key).split(",")):
            if k and text not in users.setdefault(k, []):
                users[k].append(text)

    for hw in hardware_presets().values():
        for key, texts in _hardware_users(hw).items():
            for text in texts:
                add(key, text)
    for hw in extra_hardware:
        for key, texts in _hardware_users(hw, current=True).items():
            for text in texts:
                add(key, text)
    for model in model_presets().values():
        if model.source:
            add(model.source, f"model: {model.name}")
    for model in extra_models:
        if model.source:
            add(model.source, f"model: {model.name} (current scenario)")
    for entry in workload_library().values():
        if entry.get("source"):
            add(entry["source"], f"workload: {entry.get('name', entry.get('key', ''))}")
    for name, formula in FORMULAS.items():
        add(formula.source, f"formula: {name}")
    for panel, keys in (panel_citations or {}).items():
        for key in keys:
            add(key, f"panel: {panel}")
    return users


def _breakable(text: str) -> str:
    """A title that wraps inside a path or identifier too: a zero-width space after each "/", "_" and "."
    that joins two words."""
    return re.sub(r"([/_]|\.(?=\w))", "\\1\u200b", text)


def _short_authors(authors: str) -> str:
    """The cell's authors: up to three names whole, else the first and "et al." (the full list is in the
    hover and the selected citation)."""
    names = [n.strip() for n in authors.split(",") if n.strip()]
    return authors if len(names) <= 3 else f"{names[0]} et al."


def _summary(items: list[str]) -> str:
    """Short cell text: counts per kind, e.g. "2 hardware, 1 model, 3 formulas"."""
    if not items:
        return "—"
    counts: dict[str, int] = {}
    for text in items:
        kind = text.split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    plural = {"hardware": "hardware", "model": "models", "workload": "workloads", "formula": "formulas",
              "panel": "panels"}
    return ", ".join(f"{n} {kind if n == 1 else plural.get(kind, kind + 's')}" for kind, n in counts.items())


class _Filter(QtCore.QSortFilterProxyModel):
    """Case-insensitive substring match on any column, plus the full "used by" text kept in a tooltip."""

    needle = ""

    def set_needle(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10 (invalidateFilter is deprecated there)
            self.beginFilterChange()
            self.needle = text.strip().lower()
            self.endFilterChange(QtCore.QSortFilterProxyModel.Direction.Rows)
        else:
            self.needle = text.strip().lower()
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: QtCore.QModelIndex) -> bool:
        needle = self.needle
        if not needle:
            return True
        model = self.sourceModel()
        for col in range(model.columnCount()):
            index = model.index(row, col, parent)
            for role in (QtCore.Qt.ItemDataRole.DisplayRole, QtCore.Qt.ItemDataRole.ToolTipRole):
                text = model.data(index, role)
                if text and needle in str(text).lower():
                    return True
        return False


class ReferencesPanel(QtWidgets.QWidget):
    """A filterable table of references with "used by" and a copy-citation action."""

    focusRequested = QtCore.Signal(str, str)  # ("reference", key) when the user selects a row

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ReferencesPanel")
        self.setAccessibleName("References: papers and datasheets cited by the app")
        self._refs: dict[str, Reference] = dict(references())
        self._panel_citations: dict[str, list[str]] = {}
        self._current: tuple = ((), ())
        self._bold_keys: set[str] = set()
        self._used_by: dict[str, list[str]] = {}
        self._programmatic = False

        self.search = QtWidgets.QLineEdit()
        self.search.setPlaceholderText("Filter by author, title, year, id")
        self.search.setClearButtonEnabled(True)
        self.search.setFont(_font())
        self.search.setToolTip("Show only references whose key, authors, year, title, arXiv id or users "
                               "contain this text (case-insensitive)")
        self.search.setAccessibleName("Filter references")

        self.copy_button = QtWidgets.QPushButton("Copy citation")
        self.copy_button.setFont(_font())
        self.copy_button.setToolTip("Copy the selected reference's citation to the clipboard (Ctrl+C)")
        self.copy_button.setAccessibleName("Copy citation")

        self.model = QtGui.QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(QtCore.Qt.ItemDataRole.UserRole)

        self.table = QtWidgets.QTableView()
        self.table.setModel(self.proxy)
        self.table.setFont(_font())
        self.table.horizontalHeader().setFont(_font(bold=True))
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSortingEnabled(True)
        self.table.setWordWrap(True)   # a cell shows its whole text on as many lines as it needs
        self.table.setTextElideMode(QtCore.Qt.TextElideMode.ElideNone)
        self.table.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.setToolTip("References of the app. Select a row for its full citation, key and link; bold "
                              "rows are cited by the current scenario's hardware or model.")
        self.table.setAccessibleName("References table")

        self.detail = QtWidgets.QLabel("Select a reference to see its full citation.")
        self.detail.setFont(_font())
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setToolTip("The selected reference's citation, and everything in the app that uses it")
        self.detail.setAccessibleName("Selected citation")

        top = QtWidgets.QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.copy_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)

        self.copy_action = QtGui.QAction("Copy citation", self)
        self.copy_action.setShortcut(QtGui.QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.triggered.connect(self.copy_selected)
        self.addAction(self.copy_action)
        self.copy_button.clicked.connect(self.copy_selected)
        self.search.textChanged.connect(self._on_filter_text)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)

        self._fill()
        self.table.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)  # the file's order until a header click
        self.copy_button.setEnabled(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        for col, name in enumerate(COLUMNS):
            self.table.setColumnHidden(col, name not in SHOWN_COLUMNS)
            header.setSectionResizeMode(col, QtWidgets.QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(COLUMNS.index("Year"), QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.table.viewport().installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if obj is self.table.viewport() and event.type() == QtCore.QEvent.Type.Resize:
            self._fit_columns()
        return False

    def _fit_columns(self) -> None:
        """Share the table's width among the shown columns (none runs past it), then give each row the
        height its wrapped cells need."""
        year = self.table.columnWidth(COLUMNS.index("Year"))
        room = max(self.table.viewport().width() - year, 120)
        for name, share in COLUMN_SHARES.items():
            self.table.setColumnWidth(COLUMNS.index(name), int(room * share))
        self.table.resizeRowsToContents()

    # --- filling ------------------------------------------------------------------------------
    def _fill(self) -> None:
        hw, models = self._current
        self._used_by = compute_used_by(self._panel_citations, hw, models)
        self.model.setRowCount(0)
        for key, ref in self._refs.items():
            where = f"arXiv:{ref.arxiv}" if ref.arxiv else ref.url
            users = self._used_by.get(key, [])
            cells = [key, _breakable(_short_authors(ref.authors)), str(ref.year), _breakable(ref.title), where,
                     _summary(users)]
            tips = [ref.note or key, ref.authors, str(ref.year),
                    ref.title + (f"\n{ref.venue}" if ref.venue else "") + (f"\n{ref.note}" if ref.note else ""),
                    where or "no arXiv id or URL", "\n".join(users) or "not cited by a preset, formula or panel"]
            sort_keys = [key.lower(), ref.authors.lower(), ref.year, ref.title.lower(), where.lower(), len(users)]
            row = []
            for text, tip, sort_key in zip(cells, tips, sort_keys, strict=True):
                item = QtGui.QStandardItem(text)
                item.setToolTip(tip)
                item.setData(sort_key, QtCore.Qt.ItemDataRole.UserRole)
                item.setData(key, KEY_ROLE)
                item.setFont(_font(bold=key in self._bold_keys))
                row.append(item)
            self.model.appendRow(row)
        self.table.resizeRowsToContents()

    def set_panel_citations(self, citations: Mapping[str, list[str]]) -> None:
        """Panel title -> reference keys the panel cites; shown in "used by"."""
        selected = self.selected_key()
        self._panel_citations = {str(k): [str(x) for x in v] for k, v in citations.items()}
        self._fill()
        if selected:
            self.select(selected)

    def update_results(self, results: Results) -> None:
        """Mark the references the current scenario's hardware and model cite (bold); a user-loaded
        definition that is not a preset is added to "used by"."""
        sc = results.scenario
        hw, model = sc.hardware, sc.model
        extra_hw = () if hardware_presets().get(hw.key) == hw else (hw,)
        extra_models = () if model_presets().get(model.key) == model else (model,)
        bold = {k.strip() for s in hw.sources.values() for k in str(s).split(",") if k.strip()}
        if model.source:
            bold.add(model.source)
        bold &= set(self._refs)
        if bold == self._bold_keys and (extra_hw, extra_models) == self._current:
            return
        selected = self.selected_key()
        self._bold_keys, self._current = bold, (extra_hw, extra_models)
        self._fill()
        if selected:
            self.select(selected)

    # --- selection, filter, copy ----------------------------------------------------------------
    def _on_filter_text(self, text: str) -> None:
        self.proxy.set_needle(text)

    def filter(self, text: str) -> None:
        """Set the filter text (as if typed in the search box)."""
        self.search.setText(text)

    def row_count(self) -> int:
        """Rows shown (after the filter)."""
        return self.proxy.rowCount()

    def keys(self) -> list[str]:
        """Reference keys of the rows shown, in display order."""
        return [self.proxy.index(r, 0).data(KEY_ROLE) for r in range(self.proxy.rowCount())]

    def used_by(self, key: str) -> list[str]:
        """Everything that cites `key`: "hardware: …", "model: …", "workload: …", "formula: …", "panel: …"."""
        return list(self._used_by.get(key, []))

    def selected_key(self) -> str:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].data(KEY_ROLE) if rows else ""

    def select(self, key: str) -> bool:
        """Select (and scroll to) a reference by key; False when it is filtered out or unknown."""
        for r in range(self.proxy.rowCount()):
            index = self.proxy.index(r, 0)
            if index.data(KEY_ROLE) == key:
                self._programmatic = True
                try:
                    self.table.selectRow(r)
                    self.table.scrollTo(index)
                finally:
                    self._programmatic = False
                return True
        return False

    def set_focus(self, what: str, key: str) -> None:
        """Linked focus: ("reference", key) selects that reference; other kinds are ignored."""
        if what == "reference" and key:
            self.select(key)

    def citation(self, key: str) -> str:
        return self._refs[key].citation()

    def copy_selected(self) -> str:
        """Copy the selected reference's citation to the clipboard; returns it ("" when none is selected)."""
        key = self.selected_key()
        if not key:
            return ""
        text = self.citation(key)
        QtGui.QGuiApplication.clipboard().setText(text)
        return text

    def _on_selection(self, *_args) -> None:
        key = self.selected_key()
        self.copy_button.setEnabled(bool(key))
        if not key:
            self.detail.setText("Select a reference to see its full citation.")
            return
        users = self.used_by(key)
        self.detail.setText(f"{self.citation(key)}\nKey {key}; used by: {_summary(users)}")
        self.detail.setToolTip("\n".join(users) or "not cited by a preset, formula or panel")
        if not self._programmatic:
            self.focusRequested.emit("reference", key)
