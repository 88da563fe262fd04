"""Editing controls off the slide: in presentation mode a panel shows its message, not its knobs.

A control is what a person edits or steps with: buttons (Previous / Play / Next, "Techniques ▸", check
boxes), sliders, combo and spin boxes, line edits, item lists and a panel's own tab bar (the slide keeps the
tab it opened on), and a label that only titles them
("Decode sweep:") or reads out a slider's value. `editing_controls(panel)` finds them by class; a panel can mark more widgets (a caption that only titles a hidden list) with the Qt property
`EDITING_PROPERTY` set to True, or keep a widget of those classes on the slide by setting it to False.
Scroll bars and the parts of a compound widget (a combo box's line edit, a tab bar's scroll buttons) are
never touched on their own.
"""

from __future__ import annotations

from PySide6 import QtWidgets

EDITING_PROPERTY = "editingControl"
EDITING_CLASSES = (QtWidgets.QAbstractButton, QtWidgets.QAbstractSlider, QtWidgets.QComboBox,
                   QtWidgets.QAbstractSpinBox, QtWidgets.QLineEdit, QtWidgets.QListWidget, QtWidgets.QTabBar)
_NEVER_ALONE = (QtWidgets.QScrollBar,)
_COMPOUND = (QtWidgets.QComboBox, QtWidgets.QAbstractSpinBox, QtWidgets.QTabBar, QtWidgets.QAbstractScrollArea)


def _inside_compound(widget: QtWidgets.QWidget, root: QtWidgets.QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, _COMPOUND) and not isinstance(parent, QtWidgets.QListWidget):
            return True
        parent = parent.parentWidget()
    return False


def editing_controls(panel: QtWidgets.QWidget) -> list[QtWidgets.QWidget]:
    """The panel's editing controls that are shown now (see the module docstring)."""
    out = []
    for widget in panel.findChildren(QtWidgets.QWidget):
        marked = widget.property(EDITING_PROPERTY)
        if marked is False or isinstance(widget, _NEVER_ALONE) or not widget.isVisibleTo(panel):
            continue
        if marked is True or (isinstance(widget, EDITING_CLASSES) and not _inside_compound(widget, panel)):
            out.append(widget)
    return out


def _layout_of(widget: QtWidgets.QWidget) -> QtWidgets.QLayout | None:
    """The innermost layout that holds `widget` (searched from its parent's layout)."""
    parent = widget.parentWidget()
    pending = [parent.layout()] if parent is not None and parent.layout() is not None else []
    while pending:
        layout = pending.pop()
        for i in range(layout.count()):
            item = layout.itemAt(i)
            if item.widget() is widget:
                return layout
            if item.layout() is not None:
                pending.append(item.layout())
    return None


def captions_of(controls: list[QtWidgets.QWidget]) -> list[QtWidgets.QLabel]:
    """Labels that only title or read out controls: the ones in a row whose every other widget is one of
    `controls`, either a caption ("Decode sweep:", "Direction:") or, beside a slider, its value ("batch 16")."""
    hidden, out = set(map(id, controls)), []
    for control in controls:
        layout = _layout_of(control)
        if layout is None:
            continue
        widgets = [layout.itemAt(i).widget() for i in range(layout.count()) if layout.itemAt(i).widget()]
        slider_row = any(isinstance(w, QtWidgets.QAbstractSlider) and id(w) in hidden for w in widgets)
        labels = [w for w in widgets if isinstance(w, QtWidgets.QLabel)
                  and (slider_row or w.text().rstrip().endswith(":"))]
        if labels and all(id(w) in hidden or w in labels for w in widgets):
            out += [label for label in labels if label not in out and not label.isHidden()]   # shown with its panel
    return out


class HiddenControls:
    """The controls hidden for a presentation, shown again when it ends."""

    def __init__(self):
        self._hidden: list[QtWidgets.QWidget] = []
        self._on_slide: list[QtWidgets.QWidget] = []

    def hide_in(self, panels) -> None:
        """Hide the panels' editing controls; a panel with `set_on_slide(on)` also lays itself out for a slide
        (the claims table shows whole rows, never a scrolled, cut one)."""
        for panel in panels:
            controls = editing_controls(panel)
            for widget in controls + captions_of(controls):
                widget.hide()
                self._hidden.append(widget)
            if hasattr(panel, "set_on_slide") and panel not in self._on_slide:
                panel.set_on_slide(True)
                self._on_slide.append(panel)

    def restore(self) -> None:
        for widget in self._hidden:
            widget.show()
        for panel in self._on_slide:
            panel.set_on_slide(False)
        self._hidden, self._on_slide = [], []
