"""The triangle's technique checklist as a collapsible side list (it never sits on the plot).

`toggle` (a button the owner puts in its header) shows or hides the list; ticking techniques draws their path on the triangle in the order
ticked; "Apply path" and "Clear" act on that path. The owner fills and restyles the items
(`TrianglePanel._refresh_list`) and listens to `itemChanged` / `itemEntered` of `technique_list`.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from trinity_desktop.model.views import techniques as tq
from trinity_desktop.ui import plot_widgets as pw


class TechniqueList(QtWidgets.QWidget):
    """Toggle button, checklist of catalogue techniques, Apply and Clear."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.toggle = QtWidgets.QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setFont(pw.font(bold=True))
        self.toggle.setAccessibleName("Show the technique list")
        self.toggle.setToolTip("Show or hide the techniques; ticked ones are drawn as a path on the triangle")
        self.toggle.toggled.connect(self.set_expanded)

        self.list_title = QtWidgets.QLabel("Tick to draw the path, in order")
        self.list_title.setFont(pw.font())
        self.list_title.setWordWrap(True)
        self.technique_list = QtWidgets.QListWidget()
        self.technique_list.setFont(pw.font())
        self.technique_list.setMouseTracking(True)
        self.technique_list.setWordWrap(True)
        self.technique_list.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.technique_list.setAccessibleName("Techniques to apply in order")
        self.technique_list.setToolTip("Tick techniques to draw how they move the current scenario, in the "
                                       "order ticked. Greyed: not applicable here or not modelled yet.")
        self.items: dict[str, QtWidgets.QListWidgetItem] = {}
        for key, t in tq.load_techniques().items():
            item = QtWidgets.QListWidgetItem(t.name)
            item.setData(QtCore.Qt.ItemDataRole.UserRole, key)
            item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(QtCore.Qt.CheckState.Unchecked)
            self.technique_list.addItem(item)
            self.items[key] = item
        self.apply_button = QtWidgets.QPushButton("Apply path")
        self.apply_button.setToolTip("Make the end of the drawn path the current scenario (undoable)")
        self.apply_button.setAccessibleName("Apply the technique path")
        self.clear_button = QtWidgets.QPushButton("Clear")
        self.clear_button.setToolTip("Untick every technique and remove the arrows")
        self.clear_button.setAccessibleName("Clear the technique path")

        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list_title)
        layout.addWidget(self.technique_list, 1)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addWidget(self.apply_button)
        buttons.addWidget(self.clear_button)
        layout.addLayout(buttons)
        self.set_expanded(False)

    def set_expanded(self, expanded: bool) -> None:
        """Show the list beside the plot (the plot gives up the room) or fold it into the toggle button."""
        self.toggle.blockSignals(True)
        self.toggle.setChecked(expanded)
        self.toggle.blockSignals(False)
        self.setVisible(expanded)
        self.toggle.setText("Techniques ▾" if expanded else "Techniques ▸")

    def expanded(self) -> bool:
        return self.toggle.isChecked()
